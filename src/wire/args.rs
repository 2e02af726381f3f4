//! Requests: `ExtenderArgs` (filter, prioritize) and `ExtenderBindingArgs` (bind).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::wire::fields::{decode_text, Fields, WireError};
use crate::wire::predecoded::Predecoded;
use crate::wire::raw_list::{Items, RawList};
use predicate_engine::cluster::objects::{Node, Object, Pod};
use predicate_engine::hashing::HashMap;

/// `ExtenderArgs`: the pod and the candidate nodes, either as full objects (`Nodes`) or, when the
/// extender is `nodeCacheCapable`, as names (`NodeNames`).
#[derive(Debug)]
pub struct ExtenderArgs<'a> {
    pub pod: Pod,
    pub nodes: Candidates<'a>,
}

/// The candidate nodes of a request, in the form they came in.
#[derive(Debug)]
pub enum Candidates<'a> {
    /// Borrowed from the body unless a name has escapes: 5,000 names allocated one by one were a
    /// sixth of a /filter.
    Names(Vec<Cow<'a, str>>),
    Nodes(RequestNodes<'a>),
}

impl Candidates<'_> {
    /// How many nodes the request asks about.
    pub fn len(&self) -> usize {
        match self {
            Candidates::Names(names) => names.len(),
            Candidates::Nodes(list) => list.items.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A request's `Nodes`: a `NodeList` whose items are answered back verbatim.
#[derive(Debug)]
pub struct RequestNodes<'a> {
    /// The list's `metadata`, echoed back.
    pub metadata: Option<&'a RawValue>,
    pub items: Vec<RequestNode<'a>>,
}

/// One node of a request's `Nodes`: the fields the engine reads, and the original bytes (or, for a
/// streamed body, the placeholder the answer's writer replaces with them).
#[derive(Debug)]
pub struct RequestNode<'a> {
    pub raw: &'a RawValue,
    pub node: Node,
}

impl<'a> ExtenderArgs<'a> {
    /// Decodes a filter/prioritize body. Errors name the field with Go's names, e.g.
    /// `ExtenderArgs.Pod: missing field`.
    pub fn decode(body: &'a [u8]) -> Result<Self, WireError> {
        Self::decode_with(body, None)
    }

    /// [`ExtenderArgs::decode`] of a streamed body's skeleton: the `Nodes` items that are
    /// placeholders were decoded as they arrived and are taken from `predecoded`.
    pub fn decode_with(body: &'a [u8], predecoded: Option<&Predecoded>) -> Result<Self, WireError> {
        const AT: &str = "ExtenderArgs";
        let fields = Fields::parse_with_list(body, AT, "Nodes")?;
        if let Some(e) = predecoded.and_then(Predecoded::syntax_error) {
            return Err(e.clone());
        }
        let pod = fields
            .decode::<Object<Pod>>(AT, "Pod")?
            .ok_or_else(|| WireError::new("ExtenderArgs.Pod", "missing field"))?
            .0;
        if let Some((path, message)) = pod.negative_quantity() {
            return Err(WireError::new(format!("ExtenderArgs.Pod.{path}"), message));
        }
        let names: Option<Vec<NodeName<'a>>> = fields.decode(AT, "NodeNames")?;
        let names = names.map(|names| names.into_iter().map(|n| n.0).collect());
        let nodes = fields.list().map(|list| decode_nodes(list, body, predecoded)).transpose()?;
        let nodes = match (nodes, names) {
            (Some(_), Some(_)) => {
                return Err(WireError::new(
                    AT,
                    "both Nodes and NodeNames are set; send one (NodeNames when the extender is nodeCacheCapable, else Nodes)",
                ))
            }
            (None, None) => {
                return Err(WireError::new(AT, "neither Nodes nor NodeNames is set; send the candidate nodes in one of them"))
            }
            (Some(nodes), None) => Candidates::Nodes(nodes),
            (None, Some(names)) => Candidates::Names(names),
        };
        named_once(&nodes)?;
        Ok(ExtenderArgs { pod, nodes })
    }
}

/// One of `NodeNames`, borrowed from the body when it has no escapes.
#[derive(Deserialize)]
struct NodeName<'a>(#[serde(borrow)] Cow<'a, str>);

/// Refuses a request that names a node twice: kube-scheduler never sends one, and no answer to it
/// is well-formed (two `Nodes` items of one name can pass and fail at once, and kube-scheduler
/// adds up a host's /prioritize scores).
fn named_once(nodes: &Candidates<'_>) -> Result<(), WireError> {
    let (at, names): (&str, Vec<&str>) = match nodes {
        Candidates::Names(names) => ("ExtenderArgs.NodeNames", names.iter().map(|n| n.as_ref()).collect()),
        Candidates::Nodes(list) => {
            ("ExtenderArgs.Nodes.items", list.items.iter().map(|i| i.node.metadata.name.as_str()).collect())
        }
    };
    let mut first = HashMap::with_capacity_and_hasher(names.len(), Default::default());
    for (i, name) in names.into_iter().enumerate() {
        if let Some(j) = first.insert(name, i) {
            let path = match nodes {
                Candidates::Names(_) => format!("{at}[{i}]"),
                Candidates::Nodes(_) => format!("{at}[{i}].metadata.name"),
            };
            return Err(WireError::new(
                path,
                format!("node {name:?} is named twice (first at [{j}]); name each node once"),
            ));
        }
    }
    Ok(())
}

fn decode_nodes<'a>(
    list: &RawList<'a>,
    body: &[u8],
    predecoded: Option<&Predecoded>,
) -> Result<RequestNodes<'a>, WireError> {
    const AT: &str = "ExtenderArgs.Nodes";
    let expected = |found: &str| format!("expected a NodeList object with items, found {found}");
    let (metadata, items) = match list {
        RawList::Object { metadata, items } => (*metadata, items),
        RawList::Other(found) => return Err(WireError::new(AT, expected(found))),
        RawList::Null => (None, &Items::None),
    };
    let items = match items {
        Items::Array(items) => items.as_slice(),
        Items::None => &[],
        Items::Other(found) => return Err(WireError::new(AT, expected(&format!("items {found}")))),
    };
    if let Some(meta) = metadata {
        if !(meta.get().starts_with('{') || meta.get() == "null") {
            return Err(WireError::new(format!("{AT}.metadata"), "expected an object (a ListMeta)"));
        }
    }
    let mut taken = predecoded.map(|p| p.take(body, items)).unwrap_or_default();
    taken.resize_with(items.len(), || None);
    // Nodes decode independently (in parallel on the evaluator's pool). The first failing item, in
    // list order, is the one reported.
    let decoded = predicate_engine::parallel::map_where_running(taken, |i, pre| {
        let raw: &'a RawValue = items[i];
        pre.unwrap_or_else(|| decode_node(i, raw.get())).map(|node| RequestNode { raw, node })
    });
    let items = decoded.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(RequestNodes { metadata: metadata.filter(|m| m.get() != "null"), items })
}

/// The path of `Nodes.items[i]`, written out only for an error (not once per node of every
/// request).
pub struct ItemPath(pub usize);

impl std::fmt::Display for ItemPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ExtenderArgs.Nodes.items[{}]", self.0)
    }
}

/// Decodes `Nodes.items[i]` from its text, with errors at that path.
pub fn decode_node(i: usize, text: &str) -> Result<Node, WireError> {
    let at = ItemPath(i);
    if text == "null" {
        return Err(WireError::new(at.to_string(), "expected a Node object, found null"));
    }
    let Object(node): Object<Node> = decode_text(text, &at)?;
    if node.metadata.name.is_empty() {
        return Err(WireError::new(format!("{at}.metadata.name"), "missing: every node needs a name"));
    }
    if let Some((path, message)) = node.negative_quantity() {
        return Err(WireError::new(format!("{at}.{path}"), message));
    }
    Ok(node)
}

/// `ExtenderBindingArgs`: bind `PodNamespace/PodName` (UID `PodUID`) to `Node`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtenderBindingArgs {
    pub pod_name: String,
    pub pod_namespace: String,
    pub pod_uid: String,
    pub node: String,
}

impl ExtenderBindingArgs {
    pub fn decode(body: &[u8]) -> Result<Self, WireError> {
        const AT: &str = "ExtenderBindingArgs";
        let fields = Fields::parse(body, AT)?;
        let args = ExtenderBindingArgs {
            pod_name: fields.string(AT, "PodName")?,
            pod_namespace: fields.string(AT, "PodNamespace")?,
            pod_uid: fields.string(AT, "PodUID")?,
            node: fields.string(AT, "Node")?,
        };
        for (name, value) in [("PodName", &args.pod_name), ("PodNamespace", &args.pod_namespace), ("Node", &args.node)]
        {
            if value.is_empty() {
                return Err(WireError::new(format!("{AT}.{name}"), "missing field"));
            }
        }
        Ok(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POD: &str = r#"{"metadata":{"name":"p","namespace":"ns","uid":"u"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"7910m"}}}]}}"#;

    #[test]
    fn decodes_what_kube_scheduler_sends_in_both_casings() {
        let names_new = format!(r#"{{"Pod":{POD},"Nodes":null,"NodeNames":["a","b"]}}"#);
        let names_old = format!(r#"{{"pod":{POD},"nodenames":["a","b"]}}"#);
        for body in [names_new, names_old] {
            let args = ExtenderArgs::decode(body.as_bytes()).unwrap();
            assert_eq!(args.pod.metadata.name, "p");
            assert!(matches!(&args.nodes, Candidates::Names(n) if n == &["a", "b"]));
        }
        let node = r#"{"metadata":{"name":"a","managedFields":[{"manager":"kubelet"}]},"status":{"allocatable":{"cpu":"2"},"images":[{"names":["x"],"sizeBytes":1}]}}"#;
        let nodes_new = format!(r#"{{"Pod":{POD},"Nodes":{{"metadata":{{}},"items":[{node}]}},"NodeNames":null}}"#);
        let nodes_old = format!(r#"{{"pod":{POD},"nodes":{{"metadata":{{}},"items":[{node}]}}}}"#);
        for body in [nodes_new, nodes_old] {
            let args = ExtenderArgs::decode(body.as_bytes()).unwrap();
            let Candidates::Nodes(list) = &args.nodes else { panic!("Nodes mode") };
            assert_eq!(list.items.len(), 1);
            assert_eq!(list.items[0].raw.get(), node, "the node's bytes are kept verbatim");
            assert_eq!(list.items[0].node.status.allocatable["cpu"].milli_value(), 2000);
            assert_eq!(list.metadata.map(RawValue::get), Some("{}"));
        }
    }

    #[test]
    fn go_escapes_decode() {
        let body = r#"{"Pod":{"metadata":{"name":"p","labels":{"q":"a\u0026b"}}},"NodeNames":[]}"#;
        let args = ExtenderArgs::decode(body.as_bytes()).unwrap();
        assert_eq!(args.pod.metadata.labels["q"], "a&b");
    }

    #[test]
    fn request_errors() {
        let cases = [
            (r#"{"NodeNames":[]}"#.to_string(), "ExtenderArgs.Pod: missing field"),
            (r#"{"Pod":null,"NodeNames":[]}"#.to_string(), "ExtenderArgs.Pod: missing field"),
            (format!(r#"{{"Pod":{POD}}}"#), "ExtenderArgs: neither Nodes nor NodeNames is set; send the candidate nodes in one of them"),
            (format!(r#"{{"Pod":{POD},"Nodes":null,"NodeNames":null}}"#), "ExtenderArgs: neither Nodes nor NodeNames is set; send the candidate nodes in one of them"),
            (format!(r#"{{"Pod":{POD},"Nodes":{{"items":[]}},"NodeNames":[]}}"#), "ExtenderArgs: both Nodes and NodeNames are set; send one (NodeNames when the extender is nodeCacheCapable, else Nodes)"),
            (format!(r#"{{"Pod":{POD},"Nodes":{{"items":[{{"metadata":{{}}}}]}}}}"#), "ExtenderArgs.Nodes.items[0].metadata.name: missing: every node needs a name"),
            (format!(r#"{{"Pod":{POD},"Nodes":{{"items":[{{"metadata":{{"name":"a"}},"spec":{{"taints":"x"}}}}]}}}}"#), "ExtenderArgs.Nodes.items[0].spec.taints: invalid type: string \"x\", expected a sequence"),
            (r#"{"Pod":{"spec":{"priority":"high"}},"NodeNames":[]}"#.to_string(), "ExtenderArgs.Pod.spec.priority: invalid type: string \"high\", expected i32"),
            // Found by the fuzz target `filter` (fuzz/regressions/filter/): a node named twice.
            (format!(r#"{{"Pod":{POD},"NodeNames":["a","b","a"]}}"#), "ExtenderArgs.NodeNames[2]: node \"a\" is named twice (first at [0]); name each node once"),
            (format!(r#"{{"Pod":{POD},"Nodes":{{"items":[{{"metadata":{{"name":"a"}}}},{{"metadata":{{"name":"a"}}}}]}}}}"#), "ExtenderArgs.Nodes.items[1].metadata.name: node \"a\" is named twice (first at [0]); name each node once"),
        ];
        for (body, want) in cases {
            assert_eq!(ExtenderArgs::decode(body.as_bytes()).unwrap_err().to_string(), want, "{body}");
        }
    }

    #[test]
    fn binding_args_in_both_casings() {
        let want = ExtenderBindingArgs {
            pod_name: "p".into(),
            pod_namespace: "ns".into(),
            pod_uid: "u".into(),
            node: "n".into(),
        };
        for body in [
            r#"{"PodName":"p","PodNamespace":"ns","PodUID":"u","Node":"n"}"#,
            r#"{"podName":"p","podNamespace":"ns","podUID":"u","node":"n"}"#,
            r#"{"podname":"p","podnamespace":"ns","poduid":"u","node":"n"}"#,
        ] {
            assert_eq!(ExtenderBindingArgs::decode(body.as_bytes()).unwrap(), want, "{body}");
        }
        let e = ExtenderBindingArgs::decode(br#"{"PodName":"p","PodNamespace":"ns"}"#).unwrap_err();
        assert_eq!(e.to_string(), "ExtenderBindingArgs.Node: missing field");
        let e = ExtenderBindingArgs::decode(br#"{"PodName":1}"#).unwrap_err();
        assert_eq!(e.to_string(), "ExtenderBindingArgs.PodName: invalid type: integer `1`, expected a string");
    }
}
