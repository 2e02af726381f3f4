//! A list object (`{"metadata": ..., "items": [...]}`) split into its items' raw bytes while the
//! enclosing body is parsed, so a `Nodes` request is scanned once before its items are decoded,
//! not once for the body and again for the list (on a 50 MB body each serial pass took as long
//! as decoding every node in parallel).
//!
//! Nothing here fails on a value of the wrong type: what was found is recorded, so the caller
//! reports it at its own path. Malformed JSON still fails the whole parse.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// What a list member held.
#[derive(Debug)]
pub enum RawList<'a> {
    Null,
    /// An object: its `metadata` (unparsed) and its `items`, each element unparsed. Other members
    /// are skipped; a repeated member, the last wins.
    Object {
        metadata: Option<&'a RawValue>,
        items: Items<'a>,
    },
    /// Anything else, described ("a string", "an array", ...).
    Other(&'static str),
}

/// A list's `items`.
#[derive(Debug, Default)]
pub enum Items<'a> {
    /// Absent or `null`: no items.
    #[default]
    None,
    Array(Vec<&'a RawValue>),
    /// Not an array, described.
    Other(&'static str),
}

/// Reads a [`RawList`] (`DeserializeSeed`, so it plugs into a parse already under way).
pub struct RawListSeed;

impl<'de> DeserializeSeed<'de> for RawListSeed {
    type Value = RawList<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RawList<'de>, D::Error> {
        d.deserialize_any(ListVisitor)
    }
}

struct ItemsSeed;

impl<'de> DeserializeSeed<'de> for ItemsSeed {
    type Value = Items<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Items<'de>, D::Error> {
        d.deserialize_any(ItemsVisitor)
    }
}

/// Implements the `visit_*` methods of the value kinds a visitor does not want: each is consumed
/// and recorded as `$other(description)`.
macro_rules! record_other_kinds {
    ($value:ty, $other:path) => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<$value, E> {
            Ok($other("a boolean"))
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<$value, E> {
            Ok($other("a number"))
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<$value, E> {
            Ok($other("a number"))
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<$value, E> {
            Ok($other("a number"))
        }
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<$value, E> {
            Ok($other("a string"))
        }
    };
}

struct ListVisitor;

impl<'de> Visitor<'de> for ListVisitor {
    type Value = RawList<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list object")
    }

    record_other_kinds!(RawList<'de>, RawList::Other);

    fn visit_unit<E: serde::de::Error>(self) -> Result<RawList<'de>, E> {
        Ok(RawList::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawList<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(RawList::Other("an array"))
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<RawList<'de>, M::Error> {
        let (mut metadata, mut items) = (None, Items::None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "metadata" => metadata = Some(map.next_value::<&'de RawValue>()?),
                "items" => items = map.next_value_seed(ItemsSeed)?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(RawList::Object { metadata, items })
    }
}

struct ItemsVisitor;

impl<'de> Visitor<'de> for ItemsVisitor {
    type Value = Items<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of items")
    }

    record_other_kinds!(Items<'de>, Items::Other);

    fn visit_unit<E: serde::de::Error>(self) -> Result<Items<'de>, E> {
        Ok(Items::None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            items.push(item);
        }
        Ok(Items::Array(items))
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Items<'de>, M::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Items::Other("an object"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(json: &str) -> RawList<'_> {
        let mut de = serde_json::Deserializer::from_str(json);
        let list = RawListSeed.deserialize(&mut de).unwrap();
        de.end().unwrap();
        list
    }

    #[test]
    fn splits_a_list_into_its_items_bytes() {
        let RawList::Object { metadata, items: Items::Array(items) } =
            split(r#"{"kind":"NodeList","metadata":{"resourceVersion":"7"},"items":[{"a":1}, null ,[2]],"x":{}}"#)
        else {
            panic!("an object with items")
        };
        assert_eq!(metadata.map(RawValue::get), Some(r#"{"resourceVersion":"7"}"#));
        assert_eq!(items.iter().map(|i| i.get()).collect::<Vec<_>>(), [r#"{"a":1}"#, "null", "[2]"]);
    }

    #[test]
    fn records_what_was_found_instead_of_failing() {
        let described = |json: &str| match split(json) {
            RawList::Null => "null".to_string(),
            RawList::Other(what) => what.to_string(),
            RawList::Object { items: Items::None, .. } => "no items".to_string(),
            RawList::Object { items: Items::Other(what), .. } => format!("items {what}"),
            RawList::Object { items: Items::Array(a), .. } => format!("{} items", a.len()),
        };
        let cases = [
            ("null", "null"),
            (r#""node-a""#, "a string"),
            ("3", "a number"),
            ("true", "a boolean"),
            (r#"[{"a":1},{}]"#, "an array"),
            ("{}", "no items"),
            (r#"{"items":null}"#, "no items"),
            (r#"{"items":{"n":{}}}"#, "items an object"),
            (r#"{"items":"x"}"#, "items a string"),
            (r#"{"items":[1],"items":[1,2]}"#, "2 items"),
        ];
        for (json, want) in cases {
            assert_eq!(described(json), want, "{json}");
        }
    }

    #[test]
    fn malformed_json_still_fails() {
        for json in [r#"{"items":[1,}"#, r#"{"items":"#, "[1"] {
            let mut de = serde_json::Deserializer::from_str(json);
            assert!(RawListSeed.deserialize(&mut de).is_err(), "{json}");
        }
    }
}
