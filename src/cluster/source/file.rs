//! Reads a cluster from Kubernetes objects: a `List` as `kubectl get ... -o json|yaml` prints it,
//! a single object, or multi-document YAML of objects and lists.

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_saphyr::Spanned;

use crate::cluster::objects::{Node, Object, Pod};
use crate::cluster::snapshot::Snapshot;
use crate::cluster::ClusterObject;

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
    pub fn into_snapshot(self) -> Snapshot {
        for (kind, count) in &self.skipped {
            tracing::info!(kind = %kind, count, "skipping objects of a kind the extender does not use");
        }
        let mut snapshot = Snapshot::build(self.nodes, self.pods);
        for object in self.others {
            snapshot.upsert(object);
        }
        snapshot
    }
}

/// Reads a cluster file.
pub fn load_file(path: &Path) -> Result<Objects, SourceError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| SourceError::Io { file: file.clone(), source })?;
    parse_objects(&file, &text)
}

/// Parses cluster objects from text; `file` names the source in errors.
pub fn parse_objects(file: &str, text: &str) -> Result<Objects, SourceError> {
    let mut objects = Objects::default();
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        parse_json(file, trimmed, &mut objects)?;
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
    items: Option<IgnoredAny>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct HeaderMeta {
    name: Option<String>,
    namespace: Option<String>,
}

#[derive(Deserialize)]
struct JsonList<'a> {
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

fn parse_json(file: &str, text: &str, out: &mut Objects) -> Result<(), SourceError> {
    let syntax = |e: serde_json::Error| SourceError::Syntax { file: file.to_string(), message: e.to_string() };
    let header: Header = serde_json::from_str(text).map_err(syntax)?;
    if header.items.is_some() {
        let list: JsonList = serde_json::from_str(text).map_err(syntax)?;
        let default_kind = item_kind_of_list(header.kind.as_deref());
        for (i, raw) in list.items.unwrap_or_default().into_iter().enumerate() {
            let location = format!("items[{i}]");
            let item_header: Header = serde_json::from_str(raw.get()).map_err(|e| object_error(file, &location, e))?;
            let mut de = serde_json::Deserializer::from_str(raw.get());
            add_object(file, &location, item_header, default_kind, &mut de, out)?;
        }
        Ok(())
    } else {
        let mut de = serde_json::Deserializer::from_str(text);
        add_object(file, "object", header, None, &mut de, out)
    }
}

fn parse_yaml(file: &str, text: &str, out: &mut Objects) -> Result<(), SourceError> {
    let documents: Vec<Spanned<YamlDocument>> = serde_saphyr::from_multiple_with_options(text, crate::yaml::options())
        .map_err(|e| SourceError::Syntax { file: file.to_string(), message: crate::yaml::message(&e) })?;
    for (d, document) in documents.into_iter().enumerate() {
        let at = format!("document {} at line {}", d + 1, document.referenced.line());
        let YamlDocument { object, items } = document.value;
        let object = serde_json::Value::Object(object);
        let header = Header::deserialize(&object).map_err(|e| object_error(file, &at, e))?;
        let Some(items) = items else {
            add_object(file, &at, header, None, object, out)?;
            continue;
        };
        let default_kind = item_kind_of_list(header.kind.as_deref());
        for (i, item) in items.into_iter().enumerate() {
            let location = format!("document {}, items[{i}] at line {}", d + 1, item.referenced.line());
            let item_header = Header::deserialize(&item.value).map_err(|e| object_error(file, &location, e))?;
            add_object(file, &location, item_header, default_kind, item.value, out)?;
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

fn add_object<'de, D: serde::Deserializer<'de>>(
    file: &str,
    location: &str,
    header: Header,
    default_kind: Option<&str>,
    de: D,
    out: &mut Objects,
) -> Result<(), SourceError> {
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
    match kind {
        "Node" => {
            let Object(node): Object<Node> = decode(de).map_err(|e| object_error(file, &location, e))?;
            if node.metadata.name.is_empty() {
                return Err(object_error(file, &location, "metadata.name: missing"));
            }
            if let Some((path, message)) = node.negative_quantity() {
                return Err(object_error(file, &location, format!("{path}: {message}")));
            }
            out.nodes.push(node);
        }
        "Pod" => {
            let Object(pod): Object<Pod> = decode(de).map_err(|e| object_error(file, &location, e))?;
            if pod.metadata.name.is_empty() {
                return Err(object_error(file, &location, "metadata.name: missing"));
            }
            if let Some((path, message)) = pod.negative_quantity() {
                return Err(object_error(file, &location, format!("{path}: {message}")));
            }
            out.pods.push(pod);
        }
        "Namespace" => out
            .others
            .push(ClusterObject::Namespace(Box::new(decode(de).map_err(|e| object_error(file, &location, e))?))),
        "Service" => {
            out.others.push(ClusterObject::Service(Box::new(decode(de).map_err(|e| object_error(file, &location, e))?)))
        }
        "PersistentVolume" => out
            .others
            .push(ClusterObject::PersistentVolume(Box::new(decode(de).map_err(|e| object_error(file, &location, e))?))),
        "PersistentVolumeClaim" => out.others.push(ClusterObject::PersistentVolumeClaim(Box::new(
            decode(de).map_err(|e| object_error(file, &location, e))?,
        ))),
        "StorageClass" => out
            .others
            .push(ClusterObject::StorageClass(Box::new(decode(de).map_err(|e| object_error(file, &location, e))?))),
        "CSINode" => {
            out.others.push(ClusterObject::CSINode(Box::new(decode(de).map_err(|e| object_error(file, &location, e))?)))
        }
        "ReplicaSet" => out
            .others
            .push(ClusterObject::ReplicaSet(Box::new(decode(de).map_err(|e| object_error(file, &location, e))?))),
        "ReplicationController" => out.others.push(ClusterObject::ReplicationController(Box::new(
            decode(de).map_err(|e| object_error(file, &location, e))?,
        ))),
        "StatefulSet" => out
            .others
            .push(ClusterObject::StatefulSet(Box::new(decode(de).map_err(|e| object_error(file, &location, e))?))),
        other => *out.skipped.entry(other.to_string()).or_default() += 1,
    }
    Ok(())
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
