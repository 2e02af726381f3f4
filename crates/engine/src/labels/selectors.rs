//! Node selector terms (required node affinity) compiled once per pod and matched per node, with the
//! semantics of `k8s.io/component-helpers/scheduling/corev1/nodeaffinity`.
//!
//! Terms are ORed, the requirements of a term ANDed. A term with nothing in it matches no node. A
//! term with a requirement that `NodeSelectorRequirementsAsSelector` cannot convert never matches,
//! as upstream's `MatchNodeSelectorTerms` skips it (`if err != nil ... continue`); the other terms
//! still apply. A requirement does not convert when its key is not a qualified name, a value is
//! not a valid label value (`labels.NewRequirement`), its operator is unknown, `In`/`NotIn` have no
//! values, `Exists`/`DoesNotExist` have some, or `Gt`/`Lt` do not have exactly one integer; a
//! `matchFields` requirement when it is not `metadata.name` `In`/`NotIn` one value.

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm};

use crate::labels::syntax::{is_qualified_name, is_valid_label_value};
use crate::labels::{LabelKey, LabelMap};

/// What `labels.NewRequirement` checks of every requirement, whatever its operator: the key is a
/// qualified name and every value a valid label value.
fn valid_key_and_values(key: &str, values: &[String]) -> bool {
    is_qualified_name(key) && values.iter().all(|v| is_valid_label_value(v))
}

/// One compiled requirement on a node label.
#[derive(Debug, Clone, PartialEq)]
enum LabelRequirement {
    In(LabelKey, Vec<String>),
    NotIn(LabelKey, Vec<String>),
    Exists(LabelKey),
    DoesNotExist(LabelKey),
    Gt(LabelKey, i64),
    Lt(LabelKey, i64),
}

impl LabelRequirement {
    fn compile(r: &NodeSelectorRequirement) -> Option<Self> {
        let values = r.values.clone().unwrap_or_default();
        if !valid_key_and_values(&r.key, &values) {
            return None;
        }
        let single_int = || match values.as_slice() {
            [v] => v.parse::<i64>().ok(),
            _ => None,
        };
        let key = LabelKey::new(&r.key);
        Some(match r.operator.as_str() {
            "In" if !values.is_empty() => LabelRequirement::In(key, values),
            "NotIn" if !values.is_empty() => LabelRequirement::NotIn(key, values),
            "Exists" if values.is_empty() => LabelRequirement::Exists(key),
            "DoesNotExist" if values.is_empty() => LabelRequirement::DoesNotExist(key),
            "Gt" => LabelRequirement::Gt(key, single_int()?),
            "Lt" => LabelRequirement::Lt(key, single_int()?),
            _ => return None,
        })
    }

    fn matches<L: LabelMap + ?Sized>(&self, labels: &L) -> bool {
        let int_label = |k: &LabelKey| labels.label_by(k).and_then(|v| v.parse::<i64>().ok());
        match self {
            LabelRequirement::In(k, vs) => labels.label_by(k).is_some_and(|v| vs.iter().any(|x| x == v)),
            LabelRequirement::NotIn(k, vs) => labels.label_by(k).is_none_or(|v| !vs.iter().any(|x| x == v)),
            LabelRequirement::Exists(k) => labels.label_by(k).is_some(),
            LabelRequirement::DoesNotExist(k) => labels.label_by(k).is_none(),
            LabelRequirement::Gt(k, n) => int_label(k).is_some_and(|v| v > *n),
            LabelRequirement::Lt(k, n) => int_label(k).is_some_and(|v| v < *n),
        }
    }
}

/// A `matchFields` requirement: only `metadata.name`, with `In` or `NotIn`.
#[derive(Debug, Clone, PartialEq)]
struct NameRequirement {
    negate: bool,
    names: Vec<String>,
}

impl NameRequirement {
    fn compile(r: &NodeSelectorRequirement) -> Option<Self> {
        let names = r.values.clone().unwrap_or_default();
        if r.key != "metadata.name" || names.len() != 1 {
            // Upstream accepts exactly one value for metadata.name field selectors.
            return None;
        }
        match r.operator.as_str() {
            "In" => Some(NameRequirement { negate: false, names }),
            "NotIn" => Some(NameRequirement { negate: true, names }),
            _ => None,
        }
    }

    fn matches(&self, node_name: &str) -> bool {
        self.names.iter().any(|n| n == node_name) != self.negate
    }
}

#[derive(Debug, Clone, PartialEq)]
struct CompiledTerm {
    labels: Vec<LabelRequirement>,
    fields: Vec<NameRequirement>,
}

/// Node selector terms, compiled.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeSelectorTerms {
    /// Terms that compiled; invalid and empty terms are dropped, as they match nothing.
    terms: Vec<CompiledTerm>,
}

impl NodeSelectorTerms {
    pub fn compile(terms: &[NodeSelectorTerm]) -> Self {
        let compiled = terms
            .iter()
            .filter_map(|t| {
                let exprs = t.match_expressions.as_deref().unwrap_or_default();
                let fields = t.match_fields.as_deref().unwrap_or_default();
                if exprs.is_empty() && fields.is_empty() {
                    return None;
                }
                Some(CompiledTerm {
                    labels: exprs.iter().map(LabelRequirement::compile).collect::<Option<_>>()?,
                    fields: fields.iter().map(NameRequirement::compile).collect::<Option<_>>()?,
                })
            })
            .collect();
        NodeSelectorTerms { terms: compiled }
    }

    /// Whether any term matches the node's labels and name. A node without a name has no fields,
    /// and then `matchFields` are not checked at all (component-helpers' `nodeSelectorTerm.match`
    /// checks them only when `extractNodeFields` found some): how a PV's node affinity is matched,
    /// against a node made of labels only (`CheckNodeAffinity`).
    pub fn matches<L: LabelMap + ?Sized>(&self, node_name: &str, labels: &L) -> bool {
        self.terms.iter().any(|t| {
            t.labels.iter().all(|r| r.matches(labels))
                && (node_name.is_empty() || t.fields.iter().all(|r| r.matches(node_name)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{field_term, requirement as req, term};
    use std::collections::BTreeMap;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn operators() {
        let node = labels(&[("zone", "a"), ("cores", "8"), ("bad", "x")]);
        let cases = [
            ("In matches", req("zone", "In", &["a", "b"]), true),
            ("In misses", req("zone", "In", &["b"]), false),
            ("In on a missing key", req("region", "In", &["a"]), false),
            ("NotIn on another value", req("zone", "NotIn", &["b"]), true),
            ("NotIn on the value", req("zone", "NotIn", &["a"]), false),
            ("NotIn on a missing key matches", req("region", "NotIn", &["a"]), true),
            ("Exists", req("zone", "Exists", &[]), true),
            ("Exists missing", req("region", "Exists", &[]), false),
            ("DoesNotExist", req("region", "DoesNotExist", &[]), true),
            ("DoesNotExist present", req("zone", "DoesNotExist", &[]), false),
            ("Gt", req("cores", "Gt", &["4"]), true),
            ("Gt equal", req("cores", "Gt", &["8"]), false),
            ("Lt", req("cores", "Lt", &["16"]), true),
            ("Lt on a non-integer label", req("bad", "Lt", &["16"]), false),
            ("Gt on a missing label", req("ram", "Gt", &["1"]), false),
            ("invalid: In without values", req("zone", "In", &[]), false),
            ("invalid: Exists with values", req("zone", "Exists", &["a"]), false),
            ("invalid: Gt with a non-integer", req("cores", "Gt", &["four"]), false),
            ("invalid: Gt with two values", req("cores", "Gt", &["1", "2"]), false),
            ("invalid: unknown operator", req("zone", "Equals", &["a"]), false),
            // labels.NewRequirement's syntax checks: NotIn on another value would match, but the
            // value does not parse (TestPodFitsSelector, "Pod with an invalid value in Affinity term").
            ("invalid: NotIn value", req("zone", "NotIn", &["invalid value: ___@#$%^"]), false),
            ("invalid: In value among good ones", req("zone", "In", &["a", "b c"]), false),
            ("invalid: DoesNotExist on a bad key", req("bad key", "DoesNotExist", &[]), false),
            ("invalid: key with two slashes", req("a/b/c", "DoesNotExist", &[]), false),
            ("invalid: uppercase key prefix", req("Example.com/zone", "DoesNotExist", &[]), false),
            ("valid: a prefixed key", req("example.com/zone", "DoesNotExist", &[]), true),
            // 8 > -16, but "-16" is no label value (it must start with an alphanumeric).
            ("invalid: a negative Gt value", req("cores", "Gt", &["-16"]), false),
            ("valid: Gt with leading zeros", req("cores", "Gt", &["0004"]), true),
        ];
        for (name, r, want) in cases {
            let terms = NodeSelectorTerms::compile(&[term(vec![r])]);
            assert_eq!(terms.matches("n1", &node), want, "{name}");
        }
    }

    #[test]
    fn terms_are_ored_and_requirements_anded() {
        let node = labels(&[("zone", "a"), ("disk", "ssd")]);
        let both = term(vec![req("zone", "In", &["a"]), req("disk", "In", &["ssd"])]);
        let one_wrong = term(vec![req("zone", "In", &["a"]), req("disk", "In", &["hdd"])]);
        assert!(NodeSelectorTerms::compile(std::slice::from_ref(&both)).matches("n", &node));
        assert!(!NodeSelectorTerms::compile(std::slice::from_ref(&one_wrong)).matches("n", &node));
        assert!(NodeSelectorTerms::compile(&[one_wrong, both]).matches("n", &node));
    }

    #[test]
    fn empty_and_invalid_terms_match_nothing_but_others_still_apply() {
        let node = labels(&[("zone", "a")]);
        assert!(!NodeSelectorTerms::compile(&[]).matches("n", &node));
        assert!(!NodeSelectorTerms::compile(&[term(vec![])]).matches("n", &node));
        let invalid = term(vec![req("zone", "Bogus", &[])]);
        let valid = term(vec![req("zone", "Exists", &[])]);
        assert!(NodeSelectorTerms::compile(&[invalid, valid]).matches("n", &node));
    }

    #[test]
    fn match_fields_on_the_node_name() {
        let node = labels(&[]);
        let is = |op: &str, name: &str| field_term(vec![req("metadata.name", op, &[name])]);
        assert!(NodeSelectorTerms::compile(&[is("In", "n1")]).matches("n1", &node));
        assert!(!NodeSelectorTerms::compile(&[is("In", "n2")]).matches("n1", &node));
        assert!(NodeSelectorTerms::compile(&[is("NotIn", "n2")]).matches("n1", &node));
        let other_field = field_term(vec![req("metadata.uid", "In", &["n1"])]);
        assert!(!NodeSelectorTerms::compile(std::slice::from_ref(&other_field)).matches("n1", &node));
        // A node without a name has no fields to check (component-helpers' nodeaffinity:
        // `extractNodeFields`, `nodeSelectorTerm.match`): a PV's affinity is matched so.
        assert!(NodeSelectorTerms::compile(&[is("In", "n2")]).matches("", &node));
        assert!(
            !NodeSelectorTerms::compile(&[other_field]).matches("", &node),
            "a term that does not parse still fails"
        );
    }
}

/// A `metav1.LabelSelector` (`matchLabels` and `matchExpressions`, ANDed), compiled, with the
/// semantics of `metav1.LabelSelectorAsSelector`: an empty selector matches everything; one that
/// does not convert matches nothing: a key that is not a qualified name or a value that is not a
/// valid label value (in `matchLabels` too), an unknown operator, `In`/`NotIn` without values,
/// `Exists`/`DoesNotExist` with some.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LabelSelector {
    requirements: Vec<SelectorRequirement>,
    /// Set when the selector could not be compiled: it then matches nothing.
    invalid: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum SelectorRequirement {
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

impl LabelSelector {
    pub fn compile(selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector) -> Self {
        let mut requirements = Vec::new();
        for (k, v) in selector.match_labels.iter().flatten() {
            if !is_qualified_name(k) || !is_valid_label_value(v) {
                return LabelSelector::nothing();
            }
            requirements.push(SelectorRequirement::In(k.clone(), vec![v.clone()]));
        }
        for e in selector.match_expressions.iter().flatten() {
            let values = e.values.clone().unwrap_or_default();
            if !valid_key_and_values(&e.key, &values) {
                return LabelSelector::nothing();
            }
            let r = match e.operator.as_str() {
                "In" if !values.is_empty() => SelectorRequirement::In(e.key.clone(), values),
                "NotIn" if !values.is_empty() => SelectorRequirement::NotIn(e.key.clone(), values),
                "Exists" if values.is_empty() => SelectorRequirement::Exists(e.key.clone()),
                "DoesNotExist" if values.is_empty() => SelectorRequirement::DoesNotExist(e.key.clone()),
                _ => return LabelSelector::nothing(),
            };
            requirements.push(r);
        }
        LabelSelector { requirements, invalid: false }
    }

    /// A selector that matches exactly these labels (a Service's `spec.selector`, a ReplicationController's),
    /// as `labels.SelectorFromSet` builds it: not `LabelSelectorAsSelector`, so no syntax check
    /// (the API server validates these maps when it admits the object).
    pub fn from_map<'a, K: AsRef<str> + 'a, V: AsRef<str> + 'a>(
        labels: impl IntoIterator<Item = (&'a K, &'a V)>,
    ) -> Self {
        let requirements = labels
            .into_iter()
            .map(|(k, v)| SelectorRequirement::In(k.as_ref().to_string(), vec![v.as_ref().to_string()]))
            .collect();
        LabelSelector { requirements, invalid: false }
    }

    /// A selector that matches nothing (a nil selector in an affinity term or a spread constraint).
    pub fn nothing() -> Self {
        LabelSelector { requirements: Vec::new(), invalid: true }
    }

    /// Adds `key In (value)`: how `matchLabelKeys` narrows a selector to the pod's own values.
    pub fn and_equals(&mut self, key: &str, value: &str) {
        self.requirements.push(SelectorRequirement::In(key.to_string(), vec![value.to_string()]));
    }

    /// Whether these labels (a pod's, or a namespace's or volume's map) match.
    pub fn matches(&self, labels: &(impl LabelMap + ?Sized)) -> bool {
        let is_in = |vs: &[String], v: &str| vs.iter().any(|x| x == v);
        !self.invalid
            && self.requirements.iter().all(|r| match r {
                SelectorRequirement::In(k, vs) => labels.label(k).is_some_and(|v| is_in(vs, v)),
                SelectorRequirement::NotIn(k, vs) => labels.label(k).is_none_or(|v| !is_in(vs, v)),
                SelectorRequirement::Exists(k) => labels.label(k).is_some(),
                SelectorRequirement::DoesNotExist(k) => labels.label(k).is_none(),
            })
    }

    /// The `key=value` pairs every matching set of labels must have (`matchLabels` entries and
    /// `In` with a single value): what an index can look matching pods up by.
    pub fn equalities(&self) -> impl Iterator<Item = (&str, &str)> {
        self.requirements.iter().filter_map(|r| match r {
            SelectorRequirement::In(k, vs) if vs.len() == 1 => Some((k.as_str(), vs[0].as_str())),
            _ => None,
        })
    }

    /// True for a compiled empty selector (matches every set of labels).
    pub fn is_everything(&self) -> bool {
        !self.invalid && self.requirements.is_empty()
    }

    /// False when the selector did not convert (or is [`LabelSelector::nothing`]).
    pub fn is_valid(&self) -> bool {
        !self.invalid
    }
}

#[cfg(test)]
mod label_selector_tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector as K8sSelector, LabelSelectorRequirement};
    use std::collections::BTreeMap;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
        }
    }

    #[test]
    fn selectors() {
        let pod = labels(&[("app", "web"), ("tier", "front")]);
        let sel = |ml: &[(&str, &str)], me: Vec<LabelSelectorRequirement>| {
            LabelSelector::compile(&K8sSelector {
                match_labels: (!ml.is_empty()).then(|| labels(ml)),
                match_expressions: (!me.is_empty()).then_some(me),
            })
        };
        let cases = [
            ("empty matches everything", sel(&[], vec![]), true),
            ("matchLabels", sel(&[("app", "web")], vec![]), true),
            ("matchLabels differ", sel(&[("app", "db")], vec![]), false),
            ("In", sel(&[], vec![expr("tier", "In", &["front", "back"])]), true),
            ("NotIn", sel(&[], vec![expr("tier", "NotIn", &["front"])]), false),
            ("NotIn on a missing key", sel(&[], vec![expr("zone", "NotIn", &["a"])]), true),
            ("Exists", sel(&[], vec![expr("app", "Exists", &[])]), true),
            ("DoesNotExist", sel(&[], vec![expr("app", "DoesNotExist", &[])]), false),
            ("ANDed", sel(&[("app", "web")], vec![expr("tier", "In", &["back"])]), false),
            ("invalid operator matches nothing", sel(&[], vec![expr("app", "Gt", &["1"])]), false),
            ("In without values matches nothing", sel(&[], vec![expr("app", "In", &[])]), false),
            ("an invalid key matches nothing", sel(&[], vec![expr("-app", "DoesNotExist", &[])]), false),
            ("an invalid value matches nothing", sel(&[], vec![expr("zone", "NotIn", &["a b"])]), false),
            ("an invalid matchLabels value matches nothing", sel(&[("app", "web!")], vec![]), false),
            ("an invalid matchLabels key matches nothing", sel(&[("app/x/y", "web")], vec![]), false),
            ("an empty value is valid", sel(&[], vec![expr("zone", "NotIn", &[""])]), true),
        ];
        for (name, s, want) in cases {
            assert_eq!(s.matches(&pod), want, "{name}");
        }
        assert!(!LabelSelector::nothing().matches(&pod));
        assert!(LabelSelector::from_map(&labels(&[("app", "web")])).matches(&pod));
    }
}
