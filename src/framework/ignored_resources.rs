//! The extended resources a Policy tells the resource checks to skip: the argument of its
//! PodFitsResources entry (kube-scheduler's `NodeResourcesFitArgs`), which the Policy-era predicate
//! metadata shared with GeneralPredicates. A Policy-wide setting plugins are built with.

use crate::cluster::resources::is_extended_resource_name;
use crate::labels::syntax;

/// The extended resources the resource check skips.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoredResources {
    /// Full names, e.g. `example.com/foo`.
    resources: Vec<String>,
    /// Prefixes before the `/`, e.g. `example.com`.
    groups: Vec<String>,
}

impl IgnoredResources {
    /// The lists of a Policy argument, validated as upstream's `ValidateNodeResourcesFitArgs`:
    /// every entry a qualified name, and no `/` in a group. The error names the field and entry
    /// (`ignoredResources[1]: ...`).
    pub fn new(resources: Vec<String>, groups: Vec<String>) -> Result<Self, String> {
        for (i, name) in resources.iter().enumerate() {
            if let Some(e) = syntax::qualified_name_error(name) {
                return Err(format!("ignoredResources[{i}]: {e}"));
            }
        }
        for (i, group) in groups.iter().enumerate() {
            if group.contains('/') {
                return Err(format!("ignoredResourceGroups[{i}]: {group:?}: a resource group name can't contain '/'"));
            }
            if let Some(e) = syntax::qualified_name_error(group) {
                return Err(format!("ignoredResourceGroups[{i}]: {e}"));
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
