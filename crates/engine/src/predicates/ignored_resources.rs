//! The extended resources a Policy tells the resource checks to skip: the argument of its
//! PodFitsResources entry (kube-scheduler's `NodeResourcesFitArgs`: `ignoredResources`,
//! `ignoredResourceGroups`), which the Policy-era predicate metadata shared with
//! GeneralPredicates.

use serde::Deserialize;

use crate::cluster::resources::is_extended_resource_name;
use crate::framework::ArgumentError;
use crate::labels::syntax;

/// The fields of the argument, the argument object itself (no key above them).
pub const FIELDS: &[&str] = &["ignoredResources", "ignoredResourceGroups"];

/// The extended resources the resource check skips.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoredResources {
    /// Full names, e.g. `example.com/foo`.
    resources: Vec<String>,
    /// Prefixes before the `/`, e.g. `example.com`.
    groups: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Fields {
    #[serde(default)]
    ignored_resources: Vec<String>,
    #[serde(default)]
    ignored_resource_groups: Vec<String>,
}

impl IgnoredResources {
    /// What the PodFitsResources entry's argument (the object holding [`FIELDS`]) ignores; none
    /// without one.
    pub fn from_argument(argument: Option<&serde_json::Value>) -> Result<Self, ArgumentError> {
        let Some(value) = argument else { return Ok(IgnoredResources::default()) };
        let fields: Fields = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let field = if path == "." { "argument".to_string() } else { format!("argument.{path}") };
            ArgumentError::new(field, e.inner())
        })?;
        IgnoredResources::new(fields.ignored_resources, fields.ignored_resource_groups)
    }

    /// The lists, validated as upstream's `ValidateNodeResourcesFitArgs`: every entry a qualified
    /// name, and no `/` in a group. The error names the field and entry
    /// (`argument.ignoredResources[1]`).
    pub fn new(resources: Vec<String>, groups: Vec<String>) -> Result<Self, ArgumentError> {
        for (i, name) in resources.iter().enumerate() {
            if let Some(e) = syntax::qualified_name_error(name) {
                return Err(ArgumentError::new(format!("argument.ignoredResources[{i}]"), e));
            }
        }
        for (i, group) in groups.iter().enumerate() {
            let field = || format!("argument.ignoredResourceGroups[{i}]");
            if group.contains('/') {
                return Err(ArgumentError::new(field(), format!("{group:?}: a resource group name can't contain '/'")));
            }
            if let Some(e) = syntax::qualified_name_error(group) {
                return Err(ArgumentError::new(field(), e));
            }
        }
        Ok(IgnoredResources { resources, groups })
    }

    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.groups.is_empty()
    }

    /// Whether the check skips this resource: only extended resources can be skipped, as upstream
    /// (cpu, memory, hugepages and `kubernetes.io/` names are always checked).
    pub fn ignores(&self, name: &str) -> bool {
        if self.is_empty() || !is_extended_resource_name(name) {
            return false;
        }
        let group = name.split_once('/').map_or(name, |(g, _)| g);
        self.resources.iter().any(|r| r == name) || self.groups.iter().any(|g| g == group)
    }
}
