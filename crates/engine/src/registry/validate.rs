//! Building plugins from their Policy entries, checked the same way for every row: the name (a
//! registered one, or a custom one selected by its argument's key), and whether the entry carries
//! the argument its row declares. Constructors then only read their own argument's contents.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::framework::{AnyPredicate, ArgumentError, PolicyArguments, PredicateArgs, Priority, PriorityArgs};
use crate::registry::{predicate_name, Argument, PredicateRow, PriorityRow, PREDICATES, PRIORITIES};

/// A predicate or a priority, in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginKind {
    Predicate,
    Priority,
}

impl fmt::Display for PluginKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PluginKind::Predicate => "predicate",
            PluginKind::Priority => "priority",
        })
    }
}

/// Why a Policy entry does not build. The message is what follows the entry's place in the file
/// (`predicates[3] ("HostName"): ...`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error("unknown {kind}; this version knows {}", known.join(", "))]
    Unknown { kind: PluginKind, known: Vec<&'static str> },
    #[error("name: a custom {kind} name must be letters, digits and inner '-' only")]
    CustomName { kind: PluginKind },
    #[error("argument: must be an object")]
    NotAnObject,
    #[error("argument: must hold exactly one of {}", keys.join(", "))]
    NotOneKey { keys: Vec<&'static str> },
    #[error("argument.{key}: unknown {kind} argument")]
    UnknownArgument { kind: PluginKind, key: String },
    #[error("argument.{key}: required by {plugin}")]
    Required { key: &'static str, plugin: &'static str },
    #[error("argument: {plugin} takes no argument")]
    TakesNone { plugin: &'static str },
    #[error("argument.{key}: {plugin} takes no such argument")]
    NoSuchArgument { key: String, plugin: &'static str },
    #[error("argument.{field}: {plugin} takes only {}", fields.join(" and "))]
    UnknownField { field: String, plugin: &'static str, fields: &'static [&'static str] },
    /// The plugin refused the argument's contents.
    #[error(transparent)]
    Argument(#[from] ArgumentError),
}

/// What a registry row is to the checks: its name and its argument.
trait Row {
    fn name(&self) -> &'static str;
    fn argument(&self) -> Argument;
}

impl Row for PredicateRow {
    fn name(&self) -> &'static str {
        self.name
    }
    fn argument(&self) -> Argument {
        self.argument
    }
}

impl Row for PriorityRow {
    fn name(&self) -> &'static str {
        self.name
    }
    fn argument(&self) -> Argument {
        self.argument
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

/// The only key of an object, if it has exactly one.
fn single(map: &serde_json::Map<String, Value>) -> Option<(&str, &Value)> {
    let mut keys = map.iter();
    match (keys.next(), keys.next()) {
        (Some((key, value)), None) => Some((key.as_str(), value)),
        _ => None,
    }
}

/// The row an entry selects (its index in `rows`) and the argument its `build` gets: the value
/// under the row's key, or the whole object for a row whose argument is its fields.
fn resolve<'v, R: Row>(
    kind: PluginKind,
    rows: &[R],
    name: &str,
    argument: Option<&'v Value>,
) -> Result<(usize, Option<&'v Value>), EntryError> {
    let object = match argument {
        None => None,
        Some(Value::Object(map)) => Some(map),
        Some(_) => return Err(EntryError::NotAnObject),
    };
    let keys = || rows.iter().filter_map(|row| row.argument().key()).collect();
    let Some(index) = rows.iter().position(|row| row.name() == name) else {
        // Not registered: a custom name for the plugin its argument's key selects.
        let Some(map) = object else {
            return Err(EntryError::Unknown { kind, known: rows.iter().map(Row::name).collect() });
        };
        let Some((key, value)) = single(map) else { return Err(EntryError::NotOneKey { keys: keys() }) };
        let Some(index) = rows.iter().position(|row| row.argument().key() == Some(key)) else {
            return Err(EntryError::UnknownArgument { kind, key: key.to_string() });
        };
        if !is_valid_custom_name(name) {
            return Err(EntryError::CustomName { kind });
        }
        return Ok((index, Some(value)));
    };
    let plugin = rows[index].name();
    let value = match (rows[index].argument(), object) {
        (Argument::Required(key), None) => return Err(EntryError::Required { key, plugin }),
        (_, None) => None,
        (Argument::None, Some(_)) => return Err(EntryError::TakesNone { plugin }),
        (Argument::Fields(fields), Some(map)) => {
            if let Some(field) = map.keys().find(|k| !fields.contains(&k.as_str())) {
                return Err(EntryError::UnknownField { field: field.clone(), plugin, fields });
            }
            argument
        }
        (Argument::Optional(key) | Argument::Required(key), Some(map)) => match single(map) {
            Some((k, value)) if k == key => Some(value),
            Some((k, _)) => return Err(EntryError::NoSuchArgument { key: k.to_string(), plugin }),
            None => return Err(EntryError::NotOneKey { keys: vec![key] }),
        },
    };
    Ok((index, value))
}

/// A predicate entry of a Policy: its name and its `argument` object.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    pub name: &'a str,
    pub argument: Option<&'a Value>,
}

/// A predicate built for an entry, with its static rank (its row's position).
pub struct Ranked {
    pub rank: usize,
    pub predicate: Arc<dyn AnyPredicate>,
}

/// The predicates the entries name, each with its static rank, in entry order; or the index of
/// the first entry that does not build and why. Every entry is resolved before any is built, so
/// a plugin may read another entry's argument ([`PolicyArguments`]).
pub fn build_predicates(entries: &[Entry<'_>]) -> Result<Vec<Ranked>, (usize, EntryError)> {
    let mut resolved = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let name = predicate_name(entry.name);
        let (rank, value) = resolve(PluginKind::Predicate, PREDICATES, name, entry.argument).map_err(|e| (i, e))?;
        resolved.push((rank, value));
    }
    let arguments: Vec<(&'static str, &Value)> =
        resolved.iter().filter_map(|(rank, value)| Some((PREDICATES[*rank].name, (*value)?))).collect();
    let policy = PolicyArguments::new(&arguments);
    let mut out = Vec::with_capacity(entries.len());
    for (i, (entry, (rank, value))) in entries.iter().zip(resolved).enumerate() {
        let args = PredicateArgs { name: entry.name, argument: value, policy };
        let predicate = (PREDICATES[rank].build)(&args).map_err(|e| (i, EntryError::from(e)))?;
        out.push(Ranked { rank, predicate });
    }
    Ok(out)
}

/// The priority a Policy entry names, with its `argument` object.
pub fn build_priority(
    name: &str,
    argument: Option<&Value>,
    hard_pod_affinity_symmetric_weight: i64,
) -> Result<Arc<dyn Priority>, EntryError> {
    let (index, value) = resolve(PluginKind::Priority, PRIORITIES, name, argument)?;
    let args = PriorityArgs { name, argument: value, hard_pod_affinity_symmetric_weight };
    Ok((PRIORITIES[index].build)(&args)?)
}

/// The registered predicate a Policy entry selects (its name or alias, or under a custom name the
/// plugin its argument's key selects); `None` when the entry does not resolve.
pub fn predicate_plugin(name: &str, argument: Option<&Value>) -> Option<&'static str> {
    let (index, _) = resolve(PluginKind::Predicate, PREDICATES, predicate_name(name), argument).ok()?;
    Some(PREDICATES[index].name)
}

/// The registered priority a Policy entry selects, as [`predicate_plugin`] does for predicates.
pub fn priority_plugin(name: &str, argument: Option<&Value>) -> Option<&'static str> {
    let (index, _) = resolve(PluginKind::Priority, PRIORITIES, name, argument).ok()?;
    Some(PRIORITIES[index].name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Why the entry is refused, or `None` when it builds.
    fn predicate(name: &str, argument: Option<&Value>) -> Option<String> {
        build_predicates(&[Entry { name, argument }]).err().map(|(_, e)| e.to_string())
    }

    #[test]
    fn a_plugin_without_an_argument_refuses_one_and_one_that_needs_it_asks_for_it() {
        let value = serde_json::json!({"labelsPresence": {"labels": ["a"], "presence": true}});
        for row in PREDICATES {
            let got = predicate(row.name, Some(&value));
            match row.argument {
                Argument::Required("labelsPresence") => assert_eq!(got, None, "{}", row.name),
                Argument::None => assert_eq!(got.unwrap(), format!("argument: {} takes no argument", row.name)),
                Argument::Fields(_) => {
                    assert_eq!(
                        got.unwrap(),
                        format!(
                            "argument.labelsPresence: {} takes only ignoredResources and ignoredResourceGroups",
                            row.name
                        )
                    )
                }
                Argument::Optional(_) | Argument::Required(_) => {
                    assert_eq!(got.unwrap(), format!("argument.labelsPresence: {} takes no such argument", row.name))
                }
            }
            if let Argument::Required(key) = row.argument {
                assert_eq!(predicate(row.name, None).unwrap(), format!("argument.{key}: required by {}", row.name));
            }
        }
        let value = serde_json::json!({"labelPreference": {"label": "ssd", "presence": true}});
        for row in PRIORITIES {
            let got = build_priority(row.name, Some(&value), 1).err().map(|e| e.to_string());
            match row.argument {
                Argument::Required("labelPreference") => assert_eq!(got, None),
                Argument::None => assert_eq!(got.unwrap(), format!("argument: {} takes no argument", row.name)),
                _ => assert_eq!(got.unwrap(), format!("argument.labelPreference: {} takes no such argument", row.name)),
            }
            let without = build_priority(row.name, None, 1).err().map(|e| e.to_string());
            match row.argument {
                Argument::Required(key) => {
                    assert_eq!(without.unwrap(), format!("argument.{key}: required by {}", row.name))
                }
                _ => assert_eq!(without, None, "{}", row.name),
            }
        }
    }

    #[test]
    fn a_custom_name_is_selected_by_its_arguments_key() {
        let value = serde_json::json!({"labelsPresence": {"labels": ["a"], "presence": true}});
        assert_eq!(predicate("ZoneRequired", Some(&value)), None);
        assert_eq!(predicate("ZoneRequired", None).unwrap().split(';').next(), Some("unknown predicate"));
        assert_eq!(
            predicate("Zone Required", Some(&value)).unwrap(),
            "name: a custom predicate name must be letters, digits and inner '-' only"
        );
        let bogus = serde_json::json!({"bogus": {}});
        assert_eq!(predicate("Custom", Some(&bogus)).unwrap(), "argument.bogus: unknown predicate argument");
        let two = serde_json::json!({"labelsPresence": {}, "serviceAffinity": {}});
        assert!(predicate("Custom", Some(&two))
            .unwrap()
            .starts_with("argument: must hold exactly one of labelsPresence, serviceAffinity"));
        assert_eq!(predicate("Custom", Some(&serde_json::json!([1]))).unwrap(), "argument: must be an object");
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
