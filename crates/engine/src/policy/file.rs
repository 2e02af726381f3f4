//! The Policy document as written (kube-scheduler's `kind: Policy`, `apiVersion: v1`, JSON or
//! YAML), decoded with the path of the field that failed.

use serde::Deserialize;

/// The Policy document.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyFile {
    pub kind: Option<String>,
    pub api_version: Option<String>,
    pub predicates: Option<Vec<PredicatePolicy>>,
    pub priorities: Option<Vec<PriorityPolicy>>,
    pub hard_pod_affinity_symmetric_weight: Option<i64>,
    #[serde(default)]
    pub always_check_all_predicates: bool,
    /// `"static"` (the default) or `"dynamic"` (see [`crate::engine::ordering`]).
    pub predicate_ordering: Option<String>,
}

/// One `predicates` entry. Its `argument` is read by the registry, which knows what each plugin
/// takes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PredicatePolicy {
    pub name: String,
    pub order: Option<i64>,
    pub argument: Option<serde_json::Value>,
}

/// One `priorities` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriorityPolicy {
    pub name: String,
    pub weight: i64,
    pub argument: Option<serde_json::Value>,
}

/// Why the text is not a Policy document: the path of the field (none for a syntax error) and
/// the decoder's message, which says the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub path: Option<String>,
    pub message: String,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{path}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Decodes JSON (text starting with `{`) or YAML.
pub fn decode(text: &str) -> Result<PolicyFile, DecodeError> {
    if text.trim_start().starts_with('{') {
        let mut de = serde_json::Deserializer::from_str(text);
        return serde_path_to_error::deserialize(&mut de)
            .map_err(|e| DecodeError { path: named(e.path()), message: e.inner().to_string() });
    }
    // The path of the field that failed, beside serde-saphyr's error (which says the line).
    let mut path = None;
    serde_saphyr::with_deserializer_from_str_with_options(text, crate::yaml::options(), |de| {
        serde_path_to_error::deserialize(de).map_err(|e| {
            path = named(e.path());
            e.into_inner()
        })
    })
    .map_err(|e| DecodeError { path, message: crate::yaml::message(&e) })
}

/// The path, unless it is the document itself (".") or a place serde_path_to_error could not
/// name ("?", a syntax error).
fn named(path: &serde_path_to_error::Path) -> Option<String> {
    let path = path.to_string();
    (path != "." && path != "?").then_some(path)
}
