//! Answers, encoded as kube-scheduler's Go types are: every field present, capitalised names.

use std::borrow::Cow;
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
    pub node_names: Option<Vec<&'a str>>,
    /// Nodes that fail for reasons preemption could resolve, with the reasons. Borrowed: an answer
    /// names thousands of nodes, and copying each name and reason was a third of encoding it.
    pub failed_nodes: BTreeMap<&'a str, Cow<'a, str>>,
    /// Nodes that fail for reasons preemption cannot resolve.
    pub failed_and_unresolvable_nodes: BTreeMap<&'a str, Cow<'a, str>>,
    pub error: String,
}

/// A `NodeList` written back from the request's own bytes.
#[derive(Debug, Serialize)]
pub struct NodeListOut<'a> {
    /// The request's list metadata; `{}` when it had none.
    #[serde(serialize_with = "metadata_or_empty")]
    pub metadata: Option<&'a RawValue>,
    pub items: Vec<&'a RawValue>,
}

fn metadata_or_empty<S: serde::Serializer>(metadata: &Option<&RawValue>, s: S) -> Result<S::Ok, S::Error> {
    match metadata {
        Some(raw) => raw.serialize(s),
        None => serde::ser::SerializeMap::end(s.serialize_map(Some(0))?),
    }
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
    /// Not in upstream's type, which has no error field: written only on non-200 answers, for
    /// people and logs (kube-scheduler reads no body then; Go would ignore the field anyway).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
}

impl ExtenderPreemptionResult {
    /// An answer that carries only an error.
    pub fn error(message: &str) -> Self {
        ExtenderPreemptionResult { error: go_format_safe(message), ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_result_encodes_every_field_as_go_does() {
        let mut r = ExtenderFilterResult { node_names: Some(vec!["a"]), ..Default::default() };
        r.failed_nodes.insert("b", "Insufficient cpu".into());
        r.failed_and_unresolvable_nodes.insert("c", "node(s) didn't match node selector".into());
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"Nodes":null,"NodeNames":["a"],"FailedNodes":{"b":"Insufficient cpu"},"FailedAndUnresolvableNodes":{"c":"node(s) didn't match node selector"},"Error":""}"#
        );
    }

    #[test]
    fn nodes_are_written_back_verbatim() {
        let meta = RawValue::from_string(r#"{"resourceVersion":"7"}"#.into()).unwrap();
        let node = RawValue::from_string(r#"{"metadata": {"name": "a"},  "x": "\u0026"}"#.into()).unwrap();
        let r = ExtenderFilterResult {
            nodes: Some(NodeListOut { metadata: Some(&meta), items: vec![&node] }),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"Nodes":{"metadata":{"resourceVersion":"7"},"items":[{"metadata": {"name": "a"},  "x": "\u0026"}]},"NodeNames":null,"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""}"#
        );
    }

    #[test]
    fn errors_are_safe_as_go_format_strings() {
        let r = ExtenderBindingResult::error("cpu at 100% on node a");
        assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"Error":"cpu at 100%% on node a"}"#);
    }

    #[test]
    fn other_results() {
        let p = vec![HostPriority { host: "a".into(), score: 10 }];
        assert_eq!(serde_json::to_string(&p).unwrap(), r#"[{"Host":"a","Score":10}]"#);
        let mut r = ExtenderPreemptionResult::default();
        r.node_name_to_meta_victims
            .insert("n1".into(), MetaVictims { pods: vec![MetaPod { uid: "u1".into() }], num_pdb_violations: 0 });
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"}],"NumPDBViolations":0}}}"#
        );
        assert_eq!(
            serde_json::to_string(&ExtenderPreemptionResult::error("bad")).unwrap(),
            r#"{"NodeNameToMetaVictims":{},"Error":"bad"}"#
        );
    }
}
