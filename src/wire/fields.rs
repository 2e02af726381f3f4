//! Go's encoding/json matches object keys to struct fields ASCII-case-insensitively (`"Pod"`,
//! `"pod"`, `"POD"`), and when a key appears twice the later value wins. `Fields` collects a JSON
//! object's members unparsed so each can be looked up that way and decoded with its own path.

use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, Visitor};
use serde::Deserialize;
use serde::Deserializer;
use serde_json::value::RawValue;

use crate::wire::raw_list::{RawList, RawListSeed};

/// The members of one JSON object, in document order, values unparsed; the members named like
/// the list key given to [`Fields::parse_with_list`] split into their items instead.
#[derive(Debug)]
pub struct Fields<'a> {
    members: Vec<(String, &'a RawValue)>,
    lists: Vec<RawList<'a>>,
}

struct FieldsSeed<'k> {
    list_key: Option<&'k str>,
}

impl<'de, 'k> DeserializeSeed<'de> for FieldsSeed<'k> {
    type Value = Fields<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Fields<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, 'k> Visitor<'de> for FieldsSeed<'k> {
    type Value = Fields<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Fields<'de>, M::Error> {
        let mut fields = Fields { members: Vec::new(), lists: Vec::new() };
        while let Some(key) = map.next_key::<String>()? {
            if self.list_key.is_some_and(|list| key.eq_ignore_ascii_case(list)) {
                fields.lists.push(map.next_value_seed(RawListSeed)?);
            } else {
                fields.members.push((key, map.next_value::<&'de RawValue>()?));
            }
        }
        Ok(fields)
    }
}

/// A wire decoding failure: the dotted path of the field (Go names) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct WireError {
    pub path: String,
    pub message: String,
}

impl WireError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        WireError { path: path.into(), message: message.into() }
    }
}

impl<'a> Fields<'a> {
    /// Parses a request body that must be a JSON object; `what` names it in errors.
    pub fn parse(body: &'a [u8], what: &str) -> Result<Self, WireError> {
        Self::parse_seeded(body, what, FieldsSeed { list_key: None })
    }

    /// [`Fields::parse`], splitting the members named `list_key` (a list object such as `Nodes`)
    /// into their items in the same pass: read them with [`Fields::list`].
    pub fn parse_with_list(body: &'a [u8], what: &str, list_key: &str) -> Result<Self, WireError> {
        Self::parse_seeded(body, what, FieldsSeed { list_key: Some(list_key) })
    }

    fn parse_seeded(body: &'a [u8], what: &str, seed: FieldsSeed<'_>) -> Result<Self, WireError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(WireError::new(what, "the request body is empty; expected a JSON object"));
        }
        let mut de = serde_json::Deserializer::from_slice(body);
        let fields = seed.deserialize(&mut de).and_then(|f| de.end().map(|()| f));
        fields.map_err(|e| WireError::new(what, e.to_string()))
    }

    /// The value of a key, matched ASCII-case-insensitively; the last one wins. `null` counts as
    /// absent, as in Go.
    pub fn get(&self, name: &str) -> Option<&'a RawValue> {
        self.members
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
            .filter(|v| v.get() != "null")
    }

    /// The list key's value (see [`Fields::parse_with_list`]); the last one wins, `null` counts
    /// as absent.
    pub fn list(&self) -> Option<&RawList<'a>> {
        self.lists.last().filter(|l| !matches!(l, RawList::Null))
    }

    /// Decodes a member into `T` (which may borrow from the body), with errors at
    /// `<parent>.<name>.<path inside>`.
    pub fn decode<T: Deserialize<'a>>(&self, parent: &str, name: &str) -> Result<Option<T>, WireError> {
        self.get(name).map(|raw| decode_text(raw.get(), format_args!("{parent}.{name}"))).transpose()
    }

    /// Like [`Fields::decode`] for a string member; absent reads as empty.
    pub fn string(&self, parent: &str, name: &str) -> Result<String, WireError> {
        Ok(self.decode::<String>(parent, name)?.unwrap_or_default())
    }
}

/// Decodes JSON text into `T`; errors carry `at` (written out only for an error) plus the path
/// inside the value. Text that is not valid JSON is an error at `at` too.
pub fn decode_text<'t, T: Deserialize<'t>>(text: &'t str, at: impl fmt::Display) -> Result<T, WireError> {
    // Valid input is the rule: decode it directly, and track the path (an allocation per object
    // key, a third of the decoding time of a node) only to say where a bad value is.
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.path().to_string();
        let path = if inner == "." { at.to_string() } else { format!("{at}.{inner}").replace(".[", "[") };
        WireError::new(path, strip_position(&e.inner().to_string()))
    })
}

/// serde_json appends " at line 1 column 57" to its messages: for a field we already name, the
/// position inside its own value only confuses.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) if message[i..].contains(" column ") => message[..i].to_string(),
        _ => message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_ascii_case_insensitively_and_the_last_wins() {
        let body = br#"{"pod":1,"NODENAMES":["a"],"Pod":2}"#;
        let f = Fields::parse(body, "X").unwrap();
        assert_eq!(f.get("Pod").map(|v| v.get()), Some("2"));
        assert_eq!(f.get("NodeNames").map(|v| v.get()), Some("[\"a\"]"));
        assert!(f.get("Nodes").is_none());
    }

    #[test]
    fn null_counts_as_absent() {
        let f = Fields::parse(br#"{"Nodes":null}"#, "X").unwrap();
        assert!(f.get("Nodes").is_none());
    }

    #[test]
    fn errors_carry_the_full_path() {
        let f = Fields::parse(br#"{"NodeNames":["a",3]}"#, "ExtenderArgs").unwrap();
        let e = f.decode::<Vec<String>>("ExtenderArgs", "NodeNames").unwrap_err();
        assert_eq!(e.to_string(), "ExtenderArgs.NodeNames[1]: invalid type: integer `3`, expected a string");
    }

    #[test]
    fn non_objects_are_rejected() {
        for body in [&b"[]"[..], b"\"x\"", b"3", b"null", b"", b"  ", b"{", b"{\"a\":}"] {
            assert!(Fields::parse(body, "X").is_err(), "{}", String::from_utf8_lossy(body));
        }
    }
}
