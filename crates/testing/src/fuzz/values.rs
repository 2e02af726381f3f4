//! The values inside objects: quantities (`"cpu": "100m"`) and label and node selectors, converted
//! as the decoders and the predicates convert them.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as K8sLabelSelector;
use serde::Deserialize;

use crate::fuzz::{ensure, shown, Violation};
use predicate_engine::labels::selectors::{LabelSelector, NodeSelectorTerms};
use predicate_engine::labels::syntax::{is_qualified_name, is_valid_label_value, qualified_name_error};
use predicate_engine::quantity::Quantity;

/// A quantity, as text and as a JSON value (a request's `"cpu": "1.5"` or `"cpu": 1.5`): an error
/// quotes the input; a quantity reads back from what it displays (same milli-units, and the same
/// units unless the milli-units saturate), its units and milli-units agree, the same text in a JSON
/// string decodes to the same quantity, and a minus sign negates it.
pub fn quantity(input: &[u8]) -> Result<(), Violation> {
    if let Ok(text) = std::str::from_utf8(input) {
        let parsed = Quantity::parse(text);
        match &parsed {
            Ok(q) => consistent(q).map_err(|v| format!("quantity {text:?}: {v}"))?,
            Err(e) => {
                ensure(e.input == text && e.to_string().starts_with(&format!("invalid quantity {text:?}: ")), || {
                    format!("quantity {text:?}: the error {e} does not quote the input")
                })?
            }
        }
        let in_json = serde_json::from_str::<Quantity>(&serde_json::Value::from(text).to_string()).ok();
        ensure(in_json == parsed.clone().ok(), || {
            format!("quantity {text:?}: parsed {parsed:?}, but in a JSON string {in_json:?}")
        })?;
        if let (Ok(q), Some(b'0'..=b'9' | b'.')) = (&parsed, input.first()) {
            let negated = Quantity::parse(&format!("-{text}")).map_err(|e| format!("-{text:?} does not parse: {e}"))?;
            let saturated = [i64::MIN, i64::MAX].contains(&q.milli_value());
            ensure(saturated || negated.milli_value() == -q.milli_value(), || {
                format!("quantity {text:?}: -{text} is {} milli-units, not -{}", negated.milli_value(), q.milli_value())
            })?;
        }
    }
    if let Ok(q) = serde_json::from_slice::<Quantity>(input) {
        consistent(&q).map_err(|v| format!("quantity in JSON {}: {v}", shown(input)))?;
    }
    Ok(())
}

fn consistent(q: &Quantity) -> Result<(), Violation> {
    let shown = q.to_string();
    let back = Quantity::parse(&shown).map_err(|e| format!("displays as {shown:?}, which does not parse: {e}"))?;
    let (milli, units) = (i128::from(q.milli_value()), i128::from(q.value()));
    let saturated = [i64::MIN, i64::MAX].contains(&q.milli_value());
    ensure(back.milli_value() == q.milli_value(), || {
        format!("displays as {shown:?}, which is {} milli-units, not {milli}", back.milli_value())
    })?;
    ensure(saturated || back.value() == q.value(), || {
        format!("displays as {shown:?}, which is {} units, not {units}", back.value())
    })?;
    // Both round away from zero: the units are the milli-units rounded on away from zero.
    let agree = saturated
        || match milli.signum() {
            1 => (units - 1) * 1000 < milli && milli <= units * 1000,
            -1 => units * 1000 <= milli && milli < (units + 1) * 1000,
            _ => units == 0,
        };
    ensure(agree, || format!("{units} units and {milli} milli-units disagree"))?;
    ensure(q.is_zero() == (milli == 0), || format!("is_zero() is {} at {milli} milli-units", q.is_zero()))
}

/// One selector case: a label selector, node selector terms, and the node they are matched
/// against (JSON, the API's field names).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SelectorCase {
    #[serde(default)]
    selector: Option<K8sLabelSelector>,
    #[serde(default)]
    terms: Vec<NodeSelectorTerm>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    name: String,
}

/// Label selectors and node selector terms (input: JSON with `selector`, `terms`, `labels`,
/// `name`): the label syntax checks agree with each other; a selector that does not convert
/// matches nothing, an empty one everything, a match has every `key=value` the selector pins, one
/// of only `matchLabels` matches as the same labels as a set; terms are ORed and their
/// requirements ANDed, and an empty term matches nothing.
pub fn selectors(input: &[u8]) -> Result<(), Violation> {
    let Ok(case) = serde_json::from_slice::<SelectorCase>(input) else {
        return Ok(());
    };
    let at = || format!("selectors {}", shown(input));
    let selector = case.selector.clone().unwrap_or_default();
    let mut keys: Vec<&str> = case.labels.keys().map(String::as_str).collect();
    let mut values: Vec<&str> = case.labels.values().map(String::as_str).collect();
    for (k, v) in selector.match_labels.iter().flatten() {
        keys.push(k);
        values.push(v);
    }
    let requirements = case.terms.iter().flat_map(|t| t.match_expressions.iter().flatten());
    for r in requirements.chain(case.terms.iter().flat_map(|t| t.match_fields.iter().flatten())) {
        keys.push(&r.key);
        values.extend(r.values.iter().flatten().map(String::as_str));
    }
    for e in selector.match_expressions.iter().flatten() {
        keys.push(&e.key);
        values.extend(e.values.iter().flatten().map(String::as_str));
    }
    for key in keys {
        let error = qualified_name_error(key);
        ensure(is_qualified_name(key) == error.is_none(), || {
            format!("{}: {key:?} both is and is not qualified", at())
        })?;
        ensure(error.as_ref().is_none_or(|e| e.starts_with(&format!("{key:?}"))), || {
            format!("{}: the error {error:?} does not quote {key:?}", at())
        })?;
    }
    for value in values {
        // A valid label value is a valid name part of a qualified name, when it is not empty.
        let valid = is_valid_label_value(value);
        let as_name = !value.is_empty() && !value.contains('/') && is_qualified_name(value);
        ensure(value.is_empty() || valid == as_name, || {
            format!("{}: {value:?} is a label value: {valid}, a qualified name: {as_name}", at())
        })?;
    }
    label_selector(&selector, &case.labels).map_err(|v| format!("{}: {v}", at()))?;
    node_selector_terms(&case.terms, &case.name, &case.labels).map_err(|v| format!("{}: {v}", at()))
}

fn label_selector(selector: &K8sLabelSelector, labels: &BTreeMap<String, String>) -> Result<(), Violation> {
    let compiled = LabelSelector::compile(selector);
    let matches = compiled.matches(labels);
    let pinned = selector.match_labels.clone().unwrap_or_default();
    let bad_pin = pinned.iter().any(|(k, v)| !is_qualified_name(k) || !is_valid_label_value(v));
    ensure(!bad_pin || !compiled.is_valid(), || "an invalid matchLabels entry converted".to_string())?;
    ensure(compiled.is_valid() || !matches, || "a selector that did not convert matched".to_string())?;
    ensure(!compiled.is_everything() || matches, || "an empty selector did not match".to_string())?;
    let equalities: Vec<(&str, &str)> = compiled.equalities().collect();
    let has = |(k, v): &(&str, &str)| labels.get(*k).is_some_and(|l| l == v);
    ensure(!matches || equalities.iter().all(has), || format!("matched without the pinned {equalities:?}"))?;
    if compiled.is_valid() && selector.match_expressions.as_ref().is_none_or(Vec::is_empty) {
        ensure(matches == LabelSelector::from_map(&pinned).matches(labels), || {
            "matchLabels alone matches unlike the same labels as a set".to_string()
        })?;
        ensure(compiled.matches(&pinned), || "matchLabels alone does not match its own labels".to_string())?;
    }
    Ok(())
}

fn node_selector_terms(
    terms: &[NodeSelectorTerm],
    name: &str,
    labels: &BTreeMap<String, String>,
) -> Result<(), Violation> {
    let one = |t: NodeSelectorTerm| NodeSelectorTerms::compile(&[t]).matches(name, labels);
    let all = NodeSelectorTerms::compile(terms).matches(name, labels);
    let any = terms.iter().any(|t| one(t.clone()));
    ensure(all == any, || format!("the terms match {all}, but some term alone {any}: terms are ORed"))?;
    ensure(!one(NodeSelectorTerm::default()), || "an empty term matched".to_string())?;
    for (i, t) in terms.iter().enumerate() {
        let expressions = t.match_expressions.iter().flatten().map(|r| only(Some(r.clone()), None));
        let fields = t.match_fields.iter().flatten().map(|r| only(None, Some(r.clone())));
        let parts: Vec<bool> = expressions.chain(fields).map(one).collect();
        let whole = one(t.clone());
        let anded = !parts.is_empty() && parts.iter().all(|m| *m);
        ensure(whole == anded, || {
            format!("term {i} matches {whole}, its requirements alone {parts:?}: they are ANDed")
        })?;
    }
    Ok(())
}

/// A term of one requirement.
fn only(expression: Option<NodeSelectorRequirement>, field: Option<NodeSelectorRequirement>) -> NodeSelectorTerm {
    NodeSelectorTerm { match_expressions: expression.map(|e| vec![e]), match_fields: field.map(|f| vec![f]) }
}
