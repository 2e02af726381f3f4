//! What a plugin is built from (its Policy entry's name and argument, and the Policy-wide
//! settings), and why an argument is refused ([`ArgumentError`], naming the field).
//!
//! The registry checks that an entry carries the argument its row declares before it calls the
//! plugin's `build`; the plugin reads only the argument's contents.

use std::fmt;

/// What a predicate is built from.
#[derive(Debug, Clone, Copy)]
pub struct PredicateArgs<'a> {
    /// The Policy entry's name (a custom name for a plugin selected by its argument's key).
    pub name: &'a str,
    /// The argument: the value under the row's key (e.g. the `labelsPresence` object), or the
    /// whole argument object for a plugin whose argument is its own fields.
    pub argument: Option<&'a serde_json::Value>,
    /// Every predicate entry's argument in the Policy.
    pub policy: PolicyArguments<'a>,
}

impl<'a> PredicateArgs<'a> {
    /// A plugin built without a Policy entry: its registered name, no argument, nothing else in
    /// the Policy.
    pub fn bare(name: &'a str) -> Self {
        PredicateArgs { name, argument: None, policy: PolicyArguments::default() }
    }

    /// The argument of a plugin whose row declares `Required(key)`, decoded; errors name
    /// `argument.<key>`.
    pub fn required<T: serde::de::DeserializeOwned>(&self, key: &str, plugin: &str) -> Result<T, ArgumentError> {
        let field = || format!("argument.{key}");
        let value = self.argument.ok_or_else(|| ArgumentError::new(field(), format!("required by {plugin}")))?;
        T::deserialize(value).map_err(|e| ArgumentError::new(field(), e))
    }
}

/// The arguments of a Policy's predicate entries, by the registered name of the plugin each
/// selects. In the Policy era these were predicate metadata every predicate could read: the
/// argument of one entry may configure another plugin (GeneralPredicates reads what
/// PodFitsResources' entry ignores).
#[derive(Debug, Clone, Copy, Default)]
pub struct PolicyArguments<'a> {
    entries: &'a [(&'static str, &'a serde_json::Value)],
}

impl<'a> PolicyArguments<'a> {
    pub fn new(entries: &'a [(&'static str, &'a serde_json::Value)]) -> Self {
        PolicyArguments { entries }
    }

    /// The argument of the entry that selects `plugin`, if the Policy has one with an argument.
    pub fn of(&self, plugin: &str) -> Option<&'a serde_json::Value> {
        self.entries.iter().find(|(name, _)| *name == plugin).map(|(_, value)| *value)
    }
}

/// What a priority is built from.
#[derive(Debug, Clone, Copy)]
pub struct PriorityArgs<'a> {
    /// The Policy entry's name (a custom name for a plugin selected by its argument's key).
    pub name: &'a str,
    /// The value under the row's argument key (e.g. the `labelPreference` object).
    pub argument: Option<&'a serde_json::Value>,
    /// `hardPodAffinitySymmetricWeight` (1 unless the Policy sets it).
    pub hard_pod_affinity_symmetric_weight: i64,
}

impl<'a> PriorityArgs<'a> {
    /// A plugin built without a Policy entry: its registered name, no argument, the default
    /// symmetric weight.
    pub fn bare(name: &'a str) -> Self {
        PriorityArgs { name, argument: None, hard_pod_affinity_symmetric_weight: 1 }
    }
}

/// Why a plugin refuses its argument: the field under the Policy entry (`argument.labelsPresence.labels`)
/// and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ArgumentError {
    pub field: String,
    pub message: String,
}

impl ArgumentError {
    pub fn new(field: impl Into<String>, message: impl fmt::Display) -> Self {
        ArgumentError { field: field.into(), message: message.to_string() }
    }
}
