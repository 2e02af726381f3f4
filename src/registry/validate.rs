//! Building a plugin from its Policy entry, checked the same way for every row: the name (a
//! registered one, or a custom one selected by its argument's key), and whether the entry carries
//! the argument its row declares. Constructors then only read their own argument's contents.

use std::sync::Arc;

use crate::framework::{AnyPredicate, IgnoredResources, Priority, PriorityArgs};
use crate::registry::{predicate_row_named, priority_row_named, Argument, PredicateArgs, PREDICATES, PRIORITIES};

/// Why an entry does not build: the rest of the message after the entry's place in the file,
/// either a field under it (`.argument.labelPreference: ...`) or the entry itself (`: ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryError(String);

impl EntryError {
    fn entry(message: impl std::fmt::Display) -> Self {
        EntryError(format!(": {message}"))
    }

    fn field(field: &str, message: impl std::fmt::Display) -> Self {
        EntryError(format!(".{field}: {message}"))
    }

    /// The full message for the entry at `at` (e.g. `predicates[3] ("HostName")`).
    pub fn at(&self, at: &str) -> String {
        format!("{at}{}", self.0)
    }
}

/// Upstream's rule for custom plugin names: `^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])$`.
fn is_valid_custom_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 2
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// The predicate a Policy entry names, with its static rank. `argument` is the key and value of
/// the entry's keyed argument, if it has one; `ignored` what the Policy's PodFitsResources entry
/// ignores.
pub fn build_predicate(
    name: &str,
    argument: Option<(&str, &serde_json::Value)>,
    ignored: &IgnoredResources,
) -> Result<(usize, Arc<dyn AnyPredicate>), EntryError> {
    let (rank, row) = match (predicate_row_named(name), argument) {
        (Some((rank, row)), None) => {
            if let Argument::Required(key) = row.argument {
                return Err(EntryError::entry(format!("argument.{key}: required by {}", row.name)));
            }
            (rank, row)
        }
        (Some((rank, row)), Some((key, _))) if row.argument.key() == Some(key) => (rank, row),
        (Some((_, row)), Some(_)) => {
            return Err(EntryError::entry(format!("argument: {} takes no argument", row.name)))
        }
        (None, Some((key, _))) => {
            let found = PREDICATES.iter().enumerate().find(|(_, row)| row.argument.key() == Some(key));
            let Some((rank, row)) = found else {
                return Err(EntryError::field(&format!("argument.{key}"), "unknown predicate argument"));
            };
            if !is_valid_custom_name(name) {
                return Err(EntryError::entry(
                    "name: a custom predicate name must be letters, digits and inner '-' only",
                ));
            }
            (rank, row)
        }
        (None, None) => {
            let known: Vec<_> = PREDICATES.iter().map(|row| row.name).collect();
            return Err(EntryError::entry(format!("unknown predicate; this version knows {}", known.join(", "))));
        }
    };
    let args = PredicateArgs { name, argument: argument.map(|(_, value)| value), ignored_resources: ignored };
    let predicate = (row.build)(&args).map_err(EntryError::entry)?;
    Ok((rank, predicate))
}

/// The priority a Policy entry names. `argument` is the entry's `argument` object, which must
/// hold exactly one key.
pub fn build_priority(
    name: &str,
    argument: Option<&serde_json::Value>,
    hard_pod_affinity_symmetric_weight: i64,
) -> Result<Arc<dyn Priority>, EntryError> {
    let argument = match argument {
        None => None,
        Some(serde_json::Value::Object(m)) if m.len() == 1 => m.iter().next(),
        Some(_) => {
            let keys: Vec<_> = PRIORITIES.iter().filter_map(|row| row.argument.key()).collect();
            return Err(EntryError::field("argument", format!("must hold exactly one of {}", keys.join(", "))));
        }
    };
    let row = match (priority_row_named(name), argument) {
        (Some(row), None) => {
            if let Argument::Required(key) = row.argument {
                return Err(EntryError::entry(format!("argument.{key}: required by {}", row.name)));
            }
            row
        }
        (Some(row), Some((key, _))) if row.argument.key() == Some(key.as_str()) => row,
        (Some(row), Some((key, _))) => {
            return Err(EntryError::field(&format!("argument.{key}"), format!("{} takes no such argument", row.name)))
        }
        (None, Some((key, _))) => {
            let Some(row) = PRIORITIES.iter().find(|row| row.argument.key() == Some(key.as_str())) else {
                return Err(EntryError::field(&format!("argument.{key}"), "unknown priority argument"));
            };
            if !is_valid_custom_name(name) {
                return Err(EntryError::entry(
                    "name: a custom priority name must be letters, digits and inner '-' only",
                ));
            }
            row
        }
        (None, None) => {
            let known: Vec<_> = PRIORITIES.iter().map(|row| row.name).collect();
            return Err(EntryError::entry(format!("unknown priority; this version knows {}", known.join(", "))));
        }
    };
    let args = PriorityArgs { name, argument: argument.map(|(_, value)| value), hard_pod_affinity_symmetric_weight };
    (row.build)(&args).map_err(EntryError::entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_without_an_argument_refuses_one_and_one_that_needs_it_asks_for_it() {
        let value = serde_json::json!({"labels": ["a"], "presence": true});
        let ignored = IgnoredResources::default();
        for row in PREDICATES {
            let got = build_predicate(row.name, Some(("labelsPresence", &value)), &ignored).map(|_| ());
            match row.argument.key() {
                Some("labelsPresence") => assert_eq!(got, Ok(()), "{}", row.name),
                _ => assert_eq!(got.unwrap_err().at("p"), format!("p: argument: {} takes no argument", row.name)),
            }
            if let Some(key) = row.argument.key() {
                let got = build_predicate(row.name, None, &ignored).map(|_| ()).unwrap_err();
                assert_eq!(got.at("p"), format!("p: argument.{key}: required by {}", row.name));
            }
        }
        let value = serde_json::json!({"labelPreference": {"label": "ssd", "presence": true}});
        for row in PRIORITIES {
            let got = build_priority(row.name, Some(&value), 1).map(|_| ());
            match row.argument {
                Argument::Required("labelPreference") => assert_eq!(got, Ok(())),
                _ => assert_eq!(
                    got.unwrap_err().at("p"),
                    format!("p.argument.labelPreference: {} takes no such argument", row.name)
                ),
            }
            let without = build_priority(row.name, None, 1).map(|_| ());
            match row.argument {
                Argument::Required(key) => {
                    assert_eq!(without.unwrap_err().at("p"), format!("p: argument.{key}: required by {}", row.name))
                }
                _ => assert_eq!(without, Ok(()), "{}", row.name),
            }
        }
    }

    #[test]
    fn custom_names_follow_upstreams_rule() {
        for (name, valid) in
            [("ab", true), ("a-b", true), ("Zone9", true), ("a", false), ("-a", false), ("a-", false), ("a b", false)]
        {
            assert_eq!(is_valid_custom_name(name), valid, "{name}");
        }
    }
}
