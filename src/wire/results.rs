//! Answers, encoded as kube-scheduler's Go types are: every field present, capitalised names.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::value::RawValue;

/// kube-scheduler hands an extender's `Error` to `fmt.Errorf` as the format string, so a bare `%`
/// would be read as a verb; doubled, it prints as itself.
pub fn go_format_safe(message: &str) -> String {
    message.replace('%', "%%")
}

/// `ExtenderFilterResult`.
#[derive(Debug, Serialize, Default)]
#[serde(rename_all = "PascalCase")]
pub struct ExtenderFilterResult<'a> {
    /// The feasible nodes, when the request sent `Nodes`: the request's own objects, verbatim.
    pub nodes: Option<NodeListOut<'a>>,
    /// The feasible nodes, when the request sent `NodeNames`.
    pub node_names: Option<Vec<String>>,
    /// Nodes that fail for reasons preemption could resolve, with the reasons.
    pub failed_nodes: BTreeMap<String, String>,
    /// Nodes that fail for reasons preemption cannot resolve.
    pub failed_and_unresolvable_nodes: BTreeMap<String, String>,
    pub error: String,
}

/// A `NodeList` written back from the request's own bytes.
#[derive(Debug, Serialize)]
pub struct NodeListOut<'a> {
    pub metadata: &'a RawValue,
    pub items: Vec<&'a RawValue>,
}

impl ExtenderFilterResult<'_> {
    /// An answer that carries only an error.
    pub fn error(message: &str) -> Self {
        ExtenderFilterResult { error: go_format_safe(message), ..Default::default() }
    }
}

/// `ExtenderBindingResult`.
#[derive(Debug, Serialize, Default, PartialEq, Eq)]
#[serde(rename_all = "PascalCase")]
pub struct ExtenderBindingResult {
    pub error: String,
}

impl ExtenderBindingResult {
    pub fn error(message: &str) -> Self {
        ExtenderBindingResult { error: go_format_safe(message) }
    }
}

/// One entry of a `HostPriorityList` (the `/prioritize` answer).
#[derive(Debug, Serialize, Clone, PartialEq, Eq)]
#[serde(rename_all = "PascalCase")]
pub struct HostPriority {
    pub host: String,
    /// 0..=10 (`MaxExtenderPriority`).
    pub score: i64,
}

/// `MetaPod`: a victim named by UID.
#[derive(Debug, Serialize, Clone, PartialEq, Eq)]
pub struct MetaPod {
    #[serde(rename = "UID")]
    pub uid: String,
}

/// `MetaVictims`: the victims on one node.
#[derive(Debug, Serialize, Clone, PartialEq, Eq)]
#[serde(rename_all = "PascalCase")]
pub struct MetaVictims {
    pub pods: Vec<MetaPod>,
    #[serde(rename = "NumPDBViolations")]
    pub num_pdb_violations: i64,
}

/// `ExtenderPreemptionResult`.
#[derive(Debug, Serialize, Clone, PartialEq, Eq, Default)]
#[serde(rename_all = "PascalCase")]
pub struct ExtenderPreemptionResult {
    pub node_name_to_meta_victims: BTreeMap<String, MetaVictims>,
}
