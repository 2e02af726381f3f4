//! Label and field selectors: equality-based only; set-based label selectors are refused with 400
//! rather than ignored.

use std::collections::HashMap;

use serde_json::Value;

#[derive(Default)]
pub(super) struct Selectors {
    labels: Vec<(String, Op)>,
    fields: Vec<(String, Op)>,
}

enum Op {
    Eq(String),
    Ne(String),
    Exists,
    NotExists,
}

impl Selectors {
    pub fn parse(params: &HashMap<String, String>) -> Result<Selectors, String> {
        let mut selectors = Selectors::default();
        for term in params.get("labelSelector").map(String::as_str).unwrap_or("").split(',') {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            if term.contains('(') || term.contains(' ') {
                return Err(format!("unable to parse requirement: set-based selector {term:?} is not supported"));
            }
            selectors.labels.push(parse_term(term, true)?);
        }
        for term in params.get("fieldSelector").map(String::as_str).unwrap_or("").split(',') {
            let term = term.trim();
            if !term.is_empty() {
                selectors.fields.push(parse_term(term, false)?);
            }
        }
        Ok(selectors)
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    /// [`Selectors::matches`] on an object's text, parsed only when there is something to match.
    pub fn matches_text(&self, text: &str) -> bool {
        self.is_empty() || serde_json::from_str::<Value>(text).is_ok_and(|object| self.matches(&object))
    }

    pub fn matches(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        let label_ok = self.labels.iter().all(|(key, op)| op.holds(labels.get(key).and_then(Value::as_str)));
        let field_ok = self.fields.iter().all(|(path, op)| {
            let value = path.split('.').try_fold(object, |v, part| v.get(part));
            let text = match value {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            op.holds(Some(&text))
        });
        label_ok && field_ok
    }
}

impl Op {
    fn holds(&self, value: Option<&str>) -> bool {
        match self {
            Op::Eq(want) => value == Some(want.as_str()),
            Op::Ne(want) => value != Some(want.as_str()),
            Op::Exists => value.is_some(),
            Op::NotExists => value.is_none(),
        }
    }
}

fn parse_term(term: &str, label: bool) -> Result<(String, Op), String> {
    if let Some((k, v)) = term.split_once("!=") {
        return Ok((k.to_string(), Op::Ne(v.to_string())));
    }
    if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Ok((k.to_string(), Op::Eq(v.to_string())));
    }
    if label {
        return Ok(match term.strip_prefix('!') {
            Some(k) => (k.to_string(), Op::NotExists),
            None => (term.to_string(), Op::Exists),
        });
    }
    Err(format!("invalid selector: {term:?}; can't understand {term:?}"))
}
