//! Requests: `ExtenderArgs` (filter, prioritize) and `ExtenderBindingArgs` (bind).

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::cluster::objects::{Node, Pod};
use crate::wire::fields::{decode_raw, Fields, WireError};

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
    Names(Vec<String>),
    Nodes(RequestNodes<'a>),
}

/// A request's `Nodes`: a `NodeList` whose items are answered back verbatim.
#[derive(Debug)]
pub struct RequestNodes<'a> {
    /// The list's `metadata`, echoed back.
    pub metadata: Option<&'a RawValue>,
    pub items: Vec<RequestNode<'a>>,
}

/// One node of a request's `Nodes`: the fields the engine reads, and the original bytes.
#[derive(Debug)]
pub struct RequestNode<'a> {
    pub raw: &'a RawValue,
    pub node: Node,
}

#[derive(Deserialize)]
struct RawNodeList<'a> {
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

impl<'a> ExtenderArgs<'a> {
    /// Decodes a filter/prioritize body. Errors name the field with Go's names, e.g.
    /// `ExtenderArgs.Pod: missing field`.
    pub fn decode(body: &'a [u8]) -> Result<Self, WireError> {
        const AT: &str = "ExtenderArgs";
        let fields = Fields::parse(body, AT)?;
        let pod: Pod = fields.decode(AT, "Pod")?.ok_or_else(|| WireError::new("ExtenderArgs.Pod", "missing field"))?;
        let names: Option<Vec<String>> = fields.decode(AT, "NodeNames")?;
        let nodes = match fields.get("Nodes") {
            None => None,
            Some(raw) => Some(decode_nodes(raw)?),
        };
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
        Ok(ExtenderArgs { pod, nodes })
    }
}

fn decode_nodes(raw: &RawValue) -> Result<RequestNodes<'_>, WireError> {
    const AT: &str = "ExtenderArgs.Nodes";
    let list: RawNodeList<'_> = serde_json::from_str(raw.get())
        .map_err(|e| WireError::new(AT, format!("expected a NodeList object with items: {e}")))?;
    let raws = list.items.unwrap_or_default();
    let mut items = Vec::with_capacity(raws.len());
    for (i, raw) in raws.into_iter().enumerate() {
        let at = format!("{AT}.items[{i}]");
        if raw.get() == "null" {
            return Err(WireError::new(at, "expected a Node object, found null"));
        }
        let node: Node = decode_raw(raw, &at)?;
        if node.metadata.name.is_empty() {
            return Err(WireError::new(format!("{at}.metadata.name"), "missing: every node needs a name"));
        }
        items.push(RequestNode { raw, node });
    }
    Ok(RequestNodes { metadata: list.metadata.filter(|m| m.get() != "null"), items })
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
