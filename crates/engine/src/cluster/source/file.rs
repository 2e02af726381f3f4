//! Reads a cluster from Kubernetes objects: a `List` as `kubectl get ... -o json|yaml` prints it,
//! a single object, or multi-document YAML of objects and lists.

use std::collections::BTreeMap;
use std::io::{BufRead, Read};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_saphyr::Spanned;

use crate::cluster::objects::{Node, Object, Pod};
use crate::cluster::snapshot::Snapshot;
use crate::cluster::source::{json_buffered, json_stream};
use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, PersistentVolume, PersistentVolumeClaim, ReplicationController, Service};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};

use crate::cluster::source::kinds::ModelKind;
use crate::cluster::{ClusterObject, ObjectKind, SchedulerVersion};

/// Why a cluster file could not be read. Every message names the file, the object and the field.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The file could not be opened or read.
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON or YAML of the expected shape.
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    /// One object in the file is invalid.
    #[error("{file}: {location}: {message}")]
    Object { file: String, location: String, message: String },
}

/// The objects read from a source, before they become a [`Snapshot`].
#[derive(Debug, Default)]
pub struct Objects {
    pub nodes: Vec<Node>,
    pub pods: Vec<Pod>,
    /// Namespaces, Services and the volume objects.
    pub others: Vec<ClusterObject>,
    /// Objects of kinds this version does not use, by kind.
    pub skipped: BTreeMap<String, usize>,
}

impl Objects {
    /// The model of these objects, counted as the newest tested kube-scheduler counts them.
    pub fn into_snapshot(self) -> Snapshot {
        self.into_snapshot_for(SchedulerVersion::default())
    }

    /// The model of these objects, counted as `version`'s kube-scheduler counts them.
    pub fn into_snapshot_for(self, version: SchedulerVersion) -> Snapshot {
        log_skipped(&self.skipped);
        let mut snapshot = Snapshot::build_for(version, self.nodes, self.pods);
        for object in self.others {
            snapshot.upsert(object);
        }
        snapshot
    }
}

fn log_skipped(skipped: &BTreeMap<String, usize>) {
    for (kind, count) in skipped {
        tracing::info!(kind = %kind, count, "skipping objects of a kind the extender does not use");
    }
}

/// One object of a file, decoded.
pub(crate) enum Decoded {
    Node(Node),
    Pod(Pod),
    Other(ClusterObject),
    /// Of a kind the extender does not use.
    Skipped(String),
}

/// Where the objects of a file go, in the order the file has them.
pub(crate) trait Sink {
    fn add(&mut self, object: Decoded);
}

impl Sink for Objects {
    fn add(&mut self, object: Decoded) {
        match object {
            Decoded::Node(n) => self.nodes.push(n),
            Decoded::Pod(p) => self.pods.push(p),
            Decoded::Other(o) => self.others.push(o),
            Decoded::Skipped(kind) => *self.skipped.entry(kind).or_default() += 1,
        }
    }
}

/// The model, built as the objects are read: no list of every decoded object is held beside it.
/// The same model as [`Objects::into_snapshot`]: each kind's objects are applied in file order,
/// and the kinds do not touch each other's entries.
#[derive(Default)]
struct SnapshotSink {
    snapshot: Snapshot,
    skipped: BTreeMap<String, usize>,
}

impl Sink for SnapshotSink {
    fn add(&mut self, object: Decoded) {
        match object {
            Decoded::Node(n) => self.snapshot.upsert_node(n),
            Decoded::Pod(p) => self.snapshot.upsert_pod(p),
            Decoded::Other(o) => self.snapshot.upsert(o),
            Decoded::Skipped(kind) => *self.skipped.entry(kind).or_default() += 1,
        }
    }
}

/// Reads a cluster file.
pub fn load_file(path: &Path) -> Result<Objects, SourceError> {
    read_into(path, Objects::default)
}

/// Reads a cluster file straight into a model. A JSON file is read as a stream: its list's items
/// are decoded in parallel while the rest is still being read, and only a few hundred of them are
/// held as text at any moment, never the whole file.
pub fn load_snapshot(path: &Path, version: SchedulerVersion) -> Result<Snapshot, SourceError> {
    let sink = read_into(path, || SnapshotSink { snapshot: Snapshot::empty(version), skipped: BTreeMap::new() })?;
    log_skipped(&sink.skipped);
    Ok(sink.snapshot)
}

/// A cluster file opened and past any byte-order mark and whitespace: the reader, what was
/// skipped, and the first byte after it.
fn open(path: &Path, file: &str) -> Result<(impl BufRead, Vec<u8>, Option<u8>), SourceError> {
    let io = |source| SourceError::Io { file: file.to_string(), source };
    let mut reader = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path).map_err(io)?);
    let mut start = Vec::new();
    let first = loop {
        let buf = reader.fill_buf().map_err(io)?;
        let Some(&byte) = buf.first() else { break None };
        let skip = start.len() < 3 && b"\xef\xbb\xbf".starts_with(&[start.as_slice(), &[byte]].concat());
        if !skip && !byte.is_ascii_whitespace() {
            break Some(byte);
        }
        start.push(byte);
        reader.consume(1);
    };
    Ok((reader, start, first))
}

fn read_into<S: Sink + Send>(path: &Path, empty: impl Fn() -> S) -> Result<S, SourceError> {
    let file = path.display().to_string();
    let io = |source| SourceError::Io { file: file.clone(), source };
    // What comes before the first thing in it decides: JSON when that is '{', else YAML.
    let (mut reader, mut start, first) = open(path, &file)?;
    if first == Some(b'{') {
        // The common shape the quick way; anything else (or any error) again the exact way,
        // whose answer or error is the one given.
        let mut sink = empty();
        if json_buffered::read(reader, &mut sink, json_item_decoder(&file)).is_ok() {
            return Ok(sink);
        }
        let (reader, _, _) = open(path, &file)?;
        let mut sink = empty();
        stream_json(&file, reader, &mut sink)?;
        return Ok(sink);
    }
    reader.read_to_end(&mut start).map_err(io)?;
    let text = String::from_utf8(start).map_err(|e| {
        io(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("stream did not contain valid UTF-8: {e}")))
    })?;
    let mut sink = empty();
    parse_yaml(&file, &text, &mut sink)?;
    Ok(sink)
}

/// Parses cluster objects from text; `file` names the source in errors.
pub fn parse_objects(file: &str, text: &str) -> Result<Objects, SourceError> {
    let mut objects = Objects::default();
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        stream_json(file, trimmed.as_bytes(), &mut objects)?;
    } else {
        parse_yaml(file, text, &mut objects)?;
    }
    Ok(objects)
}

/// The fields that say what an object is, read before the object itself.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Header {
    kind: Option<String>,
    metadata: Option<HeaderMeta>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct HeaderMeta {
    name: Option<String>,
    namespace: Option<String>,
}

/// Decodes one JSON item of a list, or `Ok(None)` when it names no kind and the list's kind is
/// not known yet.
fn decode_json_item(
    file: &str,
    index: usize,
    raw: &RawValue,
    default_kind: Option<&str>,
    final_kind: bool,
) -> Result<Option<Decoded>, SourceError> {
    let location = format!("items[{index}]");
    let header: Header = serde_json::from_str(raw.get()).map_err(|e| object_error(file, &location, e))?;
    if header.kind.is_none() && default_kind.is_none() && !final_kind {
        return Ok(None);
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    decode_object(file, &location, header, default_kind, &mut de).map(Some)
}

/// One object of `kind` as JSON (`kind` may be absent from it, as in an informer's objects),
/// decoded and checked as a file's objects are and reduced to what the model keeps; `source` and
/// the failing field name any error. `Ok(None)` for a kind the model does not keep.
pub fn decode_json_object(source: &str, kind: ObjectKind, json: &[u8]) -> Result<Option<ClusterObject>, SourceError> {
    let header: Header = serde_json::from_slice(json).map_err(|e| object_error(source, "object", e))?;
    let mut de = serde_json::Deserializer::from_slice(json);
    Ok(match decode_object(source, "object", header, Some(kind.kind_name()), &mut de)? {
        Decoded::Node(node) => Some(ClusterObject::Node(node)),
        Decoded::Pod(pod) => Some(ClusterObject::Pod(pod)),
        Decoded::Other(object) => Some(object),
        Decoded::Skipped(_) => None,
    })
}

/// Decodes the JSON items of a list in `file`.
fn json_item_decoder(file: &str) -> impl json_stream::DecodeItem + '_ {
    move |index: usize, raw: &RawValue, default_kind: Option<&str>, final_kind: bool| {
        decode_json_item(file, index, raw, default_kind, final_kind)
    }
}

fn stream_json<R: std::io::Read>(file: &str, reader: R, sink: &mut (impl Sink + Send)) -> Result<(), SourceError> {
    let document = json_stream::read(reader, sink, json_item_decoder(file))
        .map_err(|e| SourceError::Syntax { file: file.to_string(), message: e.to_string() })??;
    if let json_stream::Document::Object(text) = document {
        let header: Header = serde_json::from_str(&text)
            .map_err(|e| SourceError::Syntax { file: file.to_string(), message: e.to_string() })?;
        let mut de = serde_json::Deserializer::from_str(&text);
        sink.add(decode_object(file, "object", header, None, &mut de)?);
    }
    Ok(())
}

fn parse_yaml(file: &str, text: &str, out: &mut impl Sink) -> Result<(), SourceError> {
    let documents: Vec<Spanned<YamlDocument>> = serde_saphyr::from_multiple_with_options(text, crate::yaml::options())
        .map_err(|e| SourceError::Syntax { file: file.to_string(), message: crate::yaml::message(&e) })?;
    for (d, document) in documents.into_iter().enumerate() {
        let at = format!("document {} at line {}", d + 1, document.referenced.line());
        let YamlDocument { object, items } = document.value;
        let object = serde_json::Value::Object(object);
        let header = Header::deserialize(&object).map_err(|e| object_error(file, &at, e))?;
        let Some(items) = items else {
            out.add(decode_object(file, &at, header, None, object)?);
            continue;
        };
        let default_kind = item_kind_of_list(header.kind.as_deref());
        for (i, item) in items.into_iter().enumerate() {
            let location = format!("document {}, items[{i}] at line {}", d + 1, item.referenced.line());
            let item_header = Header::deserialize(&item.value).map_err(|e| object_error(file, &location, e))?;
            out.add(decode_object(file, &location, item_header, default_kind, item.value)?);
        }
    }
    Ok(())
}

/// One YAML document of a cluster file: an object, or a list whose items keep the line they start
/// on (serde-saphyr's `Spanned`), so an error in any object says where to look.
struct YamlDocument {
    /// Every field but `items`.
    object: serde_json::Map<String, serde_json::Value>,
    /// A list's `items` (`items: null` is an empty list).
    items: Option<Vec<Spanned<serde_json::Value>>>,
}

impl<'de> Deserialize<'de> for YamlDocument {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = YamlDocument;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a Kubernetes object or list (a mapping)")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<YamlDocument, A::Error> {
                let mut document = YamlDocument { object: serde_json::Map::new(), items: None };
                while let Some(key) = map.next_key::<String>()? {
                    if key == "items" {
                        let items: Option<Vec<Spanned<serde_json::Value>>> = map
                            .next_value()
                            .map_err(|e| serde::de::Error::custom(format_args!("items: {e} (a list of objects)")))?;
                        document.items = Some(items.unwrap_or_default());
                    } else {
                        let value = map.next_value()?;
                        document.object.insert(key, value);
                    }
                }
                Ok(document)
            }
        }
        de.deserialize_map(Fields)
    }
}

/// `NodeList` holds `Node`s; a plain `List` names each item's kind.
fn item_kind_of_list(list_kind: Option<&str>) -> Option<&str> {
    list_kind.and_then(|k| k.strip_suffix("List")).filter(|k| !k.is_empty())
}

fn object_error(file: &str, location: &str, e: impl std::fmt::Display) -> SourceError {
    SourceError::Object { file: file.to_string(), location: location.to_string(), message: e.to_string() }
}

fn decode_object<'de, D: serde::Deserializer<'de>>(
    file: &str,
    location: &str,
    header: Header,
    default_kind: Option<&str>,
    de: D,
) -> Result<Decoded, SourceError> {
    let Some(kind) = header.kind.as_deref().or(default_kind) else {
        return Err(object_error(file, location, "kind: missing (every object in a cluster file needs its kind)"));
    };
    let meta = header.metadata.unwrap_or_default();
    let name = match (meta.namespace.as_deref(), meta.name.as_deref()) {
        (Some(ns), Some(n)) if !ns.is_empty() => format!("{ns}/{n}"),
        (_, Some(n)) => n.to_string(),
        _ => String::new(),
    };
    let location = format!("{location} ({kind} {name})");
    let fail = |e: String| object_error(file, &location, e);
    Ok(match kind {
        "Node" => {
            let Object(node): Object<Node> = decode(de).map_err(fail)?;
            if node.metadata.name.is_empty() {
                return Err(fail("metadata.name: missing".to_string()));
            }
            if let Some((path, message)) = node.negative_quantity() {
                return Err(fail(format!("{path}: {message}")));
            }
            Decoded::Node(node)
        }
        "Pod" => {
            let Object(pod): Object<Pod> = decode(de).map_err(fail)?;
            if pod.metadata.name.is_empty() {
                return Err(fail("metadata.name: missing".to_string()));
            }
            if let Some((path, message)) = pod.negative_quantity() {
                return Err(fail(format!("{path}: {message}")));
            }
            Decoded::Pod(pod)
        }
        // Stripped as the watches strip them: a file's model is the live model's shape.
        "Namespace" => Decoded::Other(decode::<Namespace, _>(de).map_err(fail)?.into_object()),
        "Service" => Decoded::Other(decode::<Service, _>(de).map_err(fail)?.into_object()),
        "PersistentVolume" => Decoded::Other(decode::<PersistentVolume, _>(de).map_err(fail)?.into_object()),
        "PersistentVolumeClaim" => Decoded::Other(decode::<PersistentVolumeClaim, _>(de).map_err(fail)?.into_object()),
        "StorageClass" => Decoded::Other(decode::<StorageClass, _>(de).map_err(fail)?.into_object()),
        "CSINode" => Decoded::Other(decode::<CSINode, _>(de).map_err(fail)?.into_object()),
        "ReplicaSet" => Decoded::Other(decode::<ReplicaSet, _>(de).map_err(fail)?.into_object()),
        "ReplicationController" => Decoded::Other(decode::<ReplicationController, _>(de).map_err(fail)?.into_object()),
        "StatefulSet" => Decoded::Other(decode::<StatefulSet, _>(de).map_err(fail)?.into_object()),
        other => Decoded::Skipped(other.to_string()),
    })
}

/// Decodes an object, reporting the path of the field that failed.
fn decode<'de, T: DeserializeOwned, D: serde::Deserializer<'de>>(de: D) -> Result<T, String> {
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.inner().to_string()
        } else {
            format!("{path}: {}", e.inner())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON_LIST: &str = r#"{"kind":"List","apiVersion":"v1","metadata":{},"items":[
        {"kind":"Node","apiVersion":"v1","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"2"}}},
        {"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns"},"spec":{"nodeName":"n1","containers":[{"name":"c","resources":{"requests":{"cpu":"500m"}}}]}},
        {"kind":"Service","apiVersion":"v1","metadata":{"name":"s","namespace":"ns"},"spec":{"selector":{"app":"a"}}},
        {"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm","namespace":"ns"}}
    ]}"#;

    #[test]
    fn reads_a_kubectl_json_list() {
        let objects = parse_objects("c.json", JSON_LIST).unwrap();
        assert_eq!(objects.nodes.len(), 1);
        assert_eq!(objects.pods.len(), 1);
        assert_eq!(objects.skipped.get("ConfigMap"), Some(&1));
        assert_eq!(objects.others.len(), 1);
        let s = objects.into_snapshot();
        assert_eq!(s.services_in("ns").count(), 1);
        assert_eq!(s.node_info("n1").unwrap().pods.requested().milli_cpu, 500);
    }

    #[test]
    fn reads_multi_document_yaml_with_lists_inside() {
        let yaml = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\nstatus:\n  allocatable:\n    cpu: 2\n---\n\
                    apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: p, namespace: ns}\n  spec:\n    nodeName: n1\n---\n";
        let objects = parse_objects("c.yaml", yaml).unwrap();
        assert_eq!(objects.nodes.len(), 1);
        assert_eq!(objects.pods.len(), 1);
        assert_eq!(objects.nodes[0].status.allocatable["cpu"].milli_value(), 2000);
    }

    #[test]
    fn reads_volume_objects_and_namespaces() {
        let yaml = r#"
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: team-a, labels: {team: a}}}
- apiVersion: v1
  kind: PersistentVolume
  metadata: {name: pv-1}
  spec: {capacity: {storage: 10Gi}, accessModes: [ReadWriteOnce], gcePersistentDisk: {pdName: disk-1}}
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: data, namespace: team-a}
  spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, volumeName: pv-1}
- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: fast}, provisioner: pd.csi.storage.gke.io, volumeBindingMode: WaitForFirstConsumer}
- apiVersion: storage.k8s.io/v1
  kind: CSINode
  metadata: {name: n1}
  spec: {drivers: [{name: pd.csi.storage.gke.io, nodeID: n1, allocatable: {count: 15}}]}
"#;
        let s = parse_objects("v.yaml", yaml).unwrap().into_snapshot();
        assert_eq!(
            s.namespace("team-a").and_then(|n| n.metadata.labels.as_ref()).map(|l| l["team"].as_str()),
            Some("a")
        );
        assert!(s.volumes().pv("pv-1").is_some());
        assert!(s.volumes().pvc("team-a", "data").is_some());
        assert!(s.volumes().storage_class("fast").is_some());
        assert!(s.volumes().csi_node("n1").is_some());
    }

    #[test]
    fn reads_the_controllers_that_select_pods() {
        let yaml = r#"
- {apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: web-1, namespace: shop}, spec: {selector: {matchLabels: {app: web}}}}
- {apiVersion: v1, kind: ReplicationController, metadata: {name: legacy, namespace: shop}, spec: {selector: {app: legacy}}}
- {apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, namespace: shop}, spec: {serviceName: db, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}}}}
"#;
        let text = format!("apiVersion: v1\nkind: List\nitems:{yaml}");
        let s = parse_objects("c.yaml", &text).unwrap().into_snapshot();
        assert_eq!(s.replica_sets_in("shop").count(), 1);
        assert_eq!(s.replication_controllers_in("shop").count(), 1);
        assert_eq!(s.stateful_sets_in("shop").count(), 1);
        assert_eq!(s.stateful_sets_in("other").count(), 0);
    }

    #[test]
    fn typed_lists_give_their_items_a_kind() {
        let objects = parse_objects("n.json", r#"{"kind":"NodeList","items":[{"metadata":{"name":"n1"}}]}"#).unwrap();
        assert_eq!(objects.nodes.len(), 1);
    }

    /// A list long enough for several batches, as a stream from a file and from memory.
    fn long_list(kind_first: bool, typed: bool, bad_at: Option<usize>) -> String {
        let items: Vec<String> = (0..700)
            .map(|i| {
                let kind = if typed { String::new() } else { r#""kind":"Pod","#.to_string() };
                let cpu = if bad_at == Some(i) { "lots" } else { "100m" };
                format!(
                    r#"{{{kind}"metadata":{{"name":"p{i}","namespace":"ns"}},"spec":{{"nodeName":"n{}","containers":[{{"resources":{{"requests":{{"cpu":"{cpu}"}}}}}}]}}}}"#,
                    i % 7
                )
            })
            .collect();
        let kind = if typed { "PodList" } else { "List" };
        if kind_first {
            format!(r#"{{"kind":"{kind}","items":[{}]}}"#, items.join(","))
        } else {
            format!(r#"{{"apiVersion":"v1","items":[{}],"kind":"{kind}","metadata":{{}}}}"#, items.join(","))
        }
    }

    #[test]
    fn a_long_list_streams_in_order_whatever_the_field_order() {
        for (kind_first, typed) in [(true, false), (false, false), (true, true), (false, true)] {
            let objects = parse_objects("c.json", &long_list(kind_first, typed, None)).unwrap();
            let names: Vec<&str> = objects.pods.iter().map(|p| p.metadata.name.as_str()).collect();
            let want: Vec<String> = (0..700).map(|i| format!("p{i}")).collect();
            assert_eq!(names, want, "kind first: {kind_first}, typed: {typed}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        std::fs::write(&path, format!("\u{feff}\n  {}", long_list(false, true, None))).unwrap();
        let s = load_snapshot(&path, SchedulerVersion::default()).unwrap();
        assert_eq!(s.pod_count(), 700);
        assert_eq!(s.node_info("n3").map(|n| n.pods.requested().milli_cpu), None, "no node objects");
        assert_eq!(load_file(&path).unwrap().pods.len(), 700);
    }

    #[test]
    fn a_long_list_reports_its_first_bad_item_and_syntax_first() {
        let e = parse_objects("c.json", &long_list(true, false, Some(600))).unwrap_err().to_string();
        assert!(e.starts_with("c.json: items[600] (Pod ns/p600): spec.containers[0].resources.requests.cpu"), "{e}");
        let e = parse_objects("c.json", &long_list(false, true, Some(3))).unwrap_err().to_string();
        assert!(e.starts_with("c.json: items[3] (Pod ns/p3): spec.containers[0]"), "{e}");
        let broken = long_list(true, false, Some(5)).replace(r#""name":"p650""#, r#""name":p650"#);
        let e = parse_objects("c.json", &broken).unwrap_err().to_string();
        assert!(e.starts_with("c.json: expected value at line 1"), "{e}");
    }

    #[test]
    fn a_single_object_and_a_null_list_are_objects() {
        let objects = parse_objects("n.json", r#"{"kind":"Node","metadata":{"name":"n1"},"spec":{}}"#).unwrap();
        assert_eq!(objects.nodes.len(), 1);
        let objects = parse_objects("l.json", r#"{"kind":"List","items":null}"#).unwrap();
        assert_eq!(objects.skipped.get("List"), Some(&1));
    }

    #[test]
    fn errors_name_file_object_and_field() {
        let bad = JSON_LIST.replace("\"500m\"", "\"half\"");
        let e = parse_objects("c.json", &bad).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "c.json: items[1] (Pod ns/p): spec.containers[0].resources.requests.cpu: invalid quantity \"half\""
            ),
            "{e}"
        );

        let e = parse_objects("c.yaml", "kind: Pod\nmetadata:\n  name: p\nspec:\n  containers: 3\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "c.yaml: document 1 at line 1 (Pod p): spec.containers: invalid type: integer `3`, expected a sequence"
        );

        // In a list, the item's own line; an empty document between two is no document.
        let yaml =
            "kind: Node\nmetadata: {name: n1}\n---\n---\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: a}\n\
                    - kind: Pod\n  metadata: {name: b, namespace: ns}\n  spec: {priority: high}\n";
        let e = parse_objects("c.yaml", yaml).unwrap_err().to_string();
        assert_eq!(
            e,
            "c.yaml: document 2, items[1] at line 9 (Pod ns/b): spec.priority: invalid type: string \"high\", expected i32"
        );

        let e = parse_objects("c.yaml", "kind: List\nitems: 3\n").unwrap_err().to_string();
        assert_eq!(e, "c.yaml: items: expected sequence start at line 2, column 8 (a list of objects)");

        let e = parse_objects("c.yaml", "kind: Node\nmetadata: {name: [n1}\n").unwrap_err().to_string();
        assert!(e.starts_with("c.yaml: ") && e.contains("at line 2, column"), "{e}");

        let e = parse_objects("c.json", r#"{"items":[{"metadata":{"name":"x"}}]}"#).unwrap_err().to_string();
        assert_eq!(e, "c.json: items[0]: kind: missing (every object in a cluster file needs its kind)");

        let e = parse_objects("c.json", "{\"kind\":\"List\",").unwrap_err().to_string();
        assert!(e.starts_with("c.json: EOF while parsing"), "{e}");

        let e = parse_objects("c.yaml", "kind: Node\nmetadata: {}\n").unwrap_err().to_string();
        assert_eq!(e, "c.yaml: document 1 at line 1 (Node ): metadata.name: missing");
    }
}
