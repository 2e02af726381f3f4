//! An immutable view of the cluster. Requests read one; a change builds the next one, sharing
//! everything it did not touch (persistent hash maps: requests look nodes up by name), so a pod
//! event costs one node's worth of work.

use std::sync::Arc;

use crate::hashing::PersistentHashMap as HashMap;
use imbl::OrdMap;

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, ReplicationController, Service};

use crate::cluster::intern::IStr;
use crate::cluster::label_index::{PodIndex, PodSet};
use crate::cluster::labels::Labels;
use crate::cluster::node_counts::NodeCounts;
use crate::cluster::node_info::{NodeInfo, NodePods, NodeState, PodInfo};
use crate::cluster::objects::{Node, Pod};
use crate::cluster::pod_ident::PodIdRef;
use crate::cluster::volumes::VolumeObjects;
use crate::cluster::{ClusterObject, ObjectKey, ObjectKind, SchedulerVersion};
use crate::labels::selectors::LabelSelector;

/// `(namespace, name)` of a pod.
pub type PodKey = (String, String);

/// `(namespace, name)` of a pod as the pod map keys it: interned (a namespace's text is kept once).
/// Ordered as [`PodKey`]; looked up by borrowed text ([`PodIdRef`]). The label indexes key pods by
/// their record's number instead (`PodInfo::seq`).
pub type PodId = (IStr, IStr);

/// Pending pods nominated to one node.
pub type Nominated = Arc<Vec<Arc<PodInfo>>>;

/// Everything the model has under one node name, so a request finds it with one lookup. A name can
/// have pods (assigned or nominated) before its node object is known.
#[derive(Debug, Clone, Default)]
struct NodeEntry {
    state: Option<Arc<NodeState>>,
    pods: Arc<NodePods>,
    nominated: Nominated,
}

impl NodeEntry {
    fn is_empty(&self) -> bool {
        self.state.is_none() && self.pods.pods().is_empty() && self.nominated.is_empty()
    }
}

/// The cluster at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// By node name: requests look nodes up by name, so a hash map.
    nodes: HashMap<String, NodeEntry>,
    /// Every non-terminal pod, assigned or not. A B-tree, for memory (see `PodIndex`).
    pods: OrdMap<PodId, Arc<PodInfo>>,
    /// Assigned pods by each of their labels: the candidates for an affinity term's selector.
    pods_by_label: PodIndex,
    /// Assigned pods with required anti-affinity, filed under a `key=value` each of their terms'
    /// selectors requires: an incoming pod can only be selected by terms filed under its labels.
    anti_affinity_by_label: PodIndex,
    /// Assigned pods with a required anti-affinity term whose selector requires no `key=value`.
    anti_affinity_unindexed: PodSet,
    /// Assigned pods with terms that score other pods (InterPodAffinityPriority visits only
    /// these).
    scoring_affinity: PodSet,
    node_count: usize,
    /// How many known nodes report each image and carry each label: kept as nodes change, so no
    /// request walks every node for them.
    node_counts: NodeCounts,
    namespaces: HashMap<String, Arc<Namespace>>,
    services: HashMap<PodKey, Arc<Service>>,
    replica_sets: HashMap<PodKey, Arc<ReplicaSet>>,
    replication_controllers: HashMap<PodKey, Arc<ReplicationController>>,
    stateful_sets: HashMap<PodKey, Arc<StatefulSet>>,
    volumes: VolumeObjects,
    /// Whose rules the pods' requests are counted by (fixed for the snapshot's life: every pod in
    /// it was counted so).
    version: SchedulerVersion,
}

/// The `(namespace, name)` of a pod.
pub(crate) fn key_of(pod: &Pod) -> PodKey {
    (pod.metadata.namespace.clone(), pod.metadata.name.clone())
}

/// The interned `(namespace, name)` of a pod.
fn id_of(pod: &Pod) -> PodId {
    (IStr::new(&pod.metadata.namespace), IStr::new(&pod.metadata.name))
}

impl Snapshot {
    /// This snapshot with these volume objects in place of its own (tests, tools).
    pub fn with_volumes(mut self, volumes: VolumeObjects) -> Snapshot {
        self.volumes = volumes;
        self
    }

    /// An empty model whose pods will be counted as `version`'s kube-scheduler counts them.
    pub fn empty(version: SchedulerVersion) -> Snapshot {
        Snapshot { version, ..Snapshot::default() }
    }

    /// The kube-scheduler whose rules count this model's pods.
    pub fn scheduler_version(&self) -> SchedulerVersion {
        self.version
    }

    /// A snapshot of these objects, counted as the newest tested kube-scheduler counts them (tests
    /// and tools). Terminal pods are left out, as kube-scheduler's cache does.
    pub fn build(nodes: impl IntoIterator<Item = Node>, pods: impl IntoIterator<Item = Pod>) -> Snapshot {
        Snapshot::build_for(SchedulerVersion::default(), nodes, pods)
    }

    /// A snapshot of these objects, counted as `version`'s kube-scheduler counts them.
    pub fn build_for(
        version: SchedulerVersion,
        nodes: impl IntoIterator<Item = Node>,
        pods: impl IntoIterator<Item = Pod>,
    ) -> Snapshot {
        let mut s = Snapshot::empty(version);
        for n in nodes {
            s.upsert_node(n);
        }
        for p in pods {
            s.upsert_pod(p);
        }
        s
    }

    /// Changes the entry of a node name, dropping it when nothing is left in it.
    fn edit(&mut self, name: &str, change: impl FnOnce(&mut NodeEntry)) {
        // Changed where it is, with one search: the path to it is copied where an older snapshot
        // shares it and edited in place where this one owns it (an earlier change of the same
        // batch), and so are the node's pods. No name is copied but a new one.
        if !self.nodes.contains_key(name) {
            self.nodes.insert(name.to_string(), NodeEntry::default());
        }
        let Some(entry) = self.nodes.get_mut(name) else { return };
        let had_node = entry.state.is_some();
        let old_state = entry.state.clone();
        change(entry);
        let unchanged = match (&old_state, &entry.state) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !unchanged {
            if let Some(old) = &old_state {
                self.node_counts.remove(old);
            }
            if let Some(new) = &entry.state {
                self.node_counts.add(new);
            }
        }
        self.node_count = self.node_count + usize::from(entry.state.is_some()) - usize::from(had_node);
        if entry.is_empty() {
            self.nodes.remove(name);
        }
    }

    /// Adds or replaces a node object; its pods stay.
    pub fn upsert_node(&mut self, node: Node) {
        let name = node.metadata.name.clone();
        let state = Arc::new(NodeState::new(node));
        self.edit(&name, |e| e.state = Some(state));
    }

    /// Removes a node object. Pods bound to it stay accounted until they are deleted.
    pub fn remove_node(&mut self, name: &str) {
        self.edit(name, |e| e.state = None);
    }

    /// Adds, replaces or (when terminal) removes a pod, keeping node sums and the nominated pods
    /// in step.
    pub fn upsert_pod(&mut self, pod: Pod) {
        if pod.is_terminal() {
            self.remove_id(&PodIdRef(&pod.metadata.namespace, &pod.metadata.name));
            return;
        }
        let key = id_of(&pod);
        let info = Arc::new(PodInfo::placed(pod, self.version));
        // One search of the pod map: the record replaced comes back, and is taken out of
        // everything else before the new one goes in.
        if let Some(old) = self.pods.insert(key, Arc::clone(&info)) {
            self.unfile(&old);
        }
        let assigned = &info.pod.spec.node_name;
        let nominated = &info.pod.status.nominated_node_name;
        if !assigned.is_empty() {
            self.edit(assigned, |e| Arc::make_mut(&mut e.pods).add(Arc::clone(&info)));
            self.index(&info, true);
        } else if !nominated.is_empty() {
            self.edit(nominated, |e| Arc::make_mut(&mut e.nominated).push(Arc::clone(&info)));
        }
    }

    /// Removes a pod wherever it is accounted.
    pub fn remove_pod(&mut self, (namespace, name): &PodKey) {
        self.remove_id(&PodIdRef(namespace, name));
    }

    fn remove_id(&mut self, key: &PodIdRef<'_>) {
        if let Some(old) = self.pods.remove(key) {
            self.unfile(&old);
        }
    }

    /// Takes a pod record out of everything but the pod map: the label indexes, its node or the
    /// pods nominated to one.
    fn unfile(&mut self, old: &Arc<PodInfo>) {
        if !old.pod.spec.node_name.is_empty() {
            self.index(old, false);
        }
        let assigned = &old.pod.spec.node_name;
        let nominated = &old.pod.status.nominated_node_name;
        if !assigned.is_empty() {
            self.edit(assigned, |e| {
                Arc::make_mut(&mut e.pods).remove_info(old);
            });
        } else if !nominated.is_empty() {
            self.edit(nominated, |e| Arc::make_mut(&mut e.nominated).retain(|p| !p.pod.is_same_pod(&old.pod)));
        }
    }

    /// Files an assigned pod in (or removes it from) the label indexes.
    fn index(&mut self, info: &Arc<PodInfo>, add: bool) {
        let seq = info.seq;
        for (k, v) in &info.pod.metadata.labels {
            if add {
                self.pods_by_label.insert(k, v, info);
            } else {
                self.pods_by_label.remove(k, v, seq);
            }
        }
        if info.pod.has_scoring_affinity_terms() {
            if add {
                self.scoring_affinity.insert(seq, Arc::clone(info));
            } else {
                self.scoring_affinity.remove(&seq);
            }
        }
        for term in info.pod.required_anti_affinity_terms() {
            let selector = term.label_selector.as_ref().map(LabelSelector::compile);
            match selector.as_ref().and_then(|s| s.equalities().next()) {
                Some((k, v)) if add => self.anti_affinity_by_label.insert(&IStr::new(k), &IStr::new(v), info),
                Some((k, v)) => self.anti_affinity_by_label.remove(k, v, seq),
                None if add => {
                    self.anti_affinity_unindexed.insert(seq, Arc::clone(info));
                }
                None => {
                    self.anti_affinity_unindexed.remove(&seq);
                }
            }
        }
    }

    /// Adds or replaces any object the model keeps.
    pub fn upsert(&mut self, object: ClusterObject) {
        let ns_name = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
            (m.namespace.clone().unwrap_or_default(), m.name.clone().unwrap_or_default())
        };
        match object {
            ClusterObject::Node(n) => self.upsert_node(n),
            ClusterObject::Pod(p) => self.upsert_pod(p),
            ClusterObject::Namespace(ns) => {
                self.namespaces.insert(ns.metadata.name.clone().unwrap_or_default(), Arc::from(ns));
            }
            ClusterObject::Service(svc) => {
                self.services.insert(ns_name(&svc.metadata), Arc::from(svc));
            }
            ClusterObject::PersistentVolume(pv) => self.volumes.upsert_pv(*pv),
            ClusterObject::PersistentVolumeClaim(pvc) => self.volumes.upsert_pvc(*pvc),
            ClusterObject::StorageClass(sc) => self.volumes.upsert_storage_class(*sc),
            ClusterObject::CSINode(c) => self.volumes.upsert_csi_node(*c),
            ClusterObject::ReplicaSet(rs) => {
                self.replica_sets.insert(ns_name(&rs.metadata), Arc::from(rs));
            }
            ClusterObject::ReplicationController(rc) => {
                self.replication_controllers.insert(ns_name(&rc.metadata), Arc::from(rc));
            }
            ClusterObject::StatefulSet(ss) => {
                self.stateful_sets.insert(ns_name(&ss.metadata), Arc::from(ss));
            }
        }
    }

    /// Removes an object of any kind the model keeps; an unknown key is no change.
    pub fn remove(&mut self, kind: ObjectKind, (namespace, name): &ObjectKey) {
        let key = (namespace.clone(), name.clone());
        match kind {
            ObjectKind::Node => self.remove_node(name),
            ObjectKind::Pod => self.remove_pod(&key),
            ObjectKind::Namespace => {
                self.namespaces.remove(name);
            }
            ObjectKind::Service => {
                self.services.remove(&key);
            }
            ObjectKind::PersistentVolume => self.volumes.remove_pv(name),
            ObjectKind::PersistentVolumeClaim => self.volumes.remove_pvc(namespace, name),
            ObjectKind::StorageClass => self.volumes.remove_storage_class(name),
            ObjectKind::CSINode => self.volumes.remove_csi_node(name),
            ObjectKind::ReplicaSet => {
                self.replica_sets.remove(&key);
            }
            ObjectKind::ReplicationController => {
                self.replication_controllers.remove(&key);
            }
            ObjectKind::StatefulSet => {
                self.stateful_sets.remove(&key);
            }
        }
    }

    /// The `(namespace, name)` of every object of a kind (pods: the non-terminal ones it keeps).
    pub fn keys(&self, kind: ObjectKind) -> Vec<ObjectKey> {
        fn cluster_scoped<V>(map: &HashMap<String, V>) -> Vec<ObjectKey> {
            map.keys().map(|n| (String::new(), n.clone())).collect()
        }
        fn namespaced<V>(map: &HashMap<PodKey, V>) -> Vec<ObjectKey> {
            map.keys().cloned().collect()
        }
        match kind {
            ObjectKind::Node => {
                self.nodes.iter().filter(|(_, e)| e.state.is_some()).map(|(n, _)| (String::new(), n.clone())).collect()
            }
            ObjectKind::Pod => self.pods.keys().map(|(ns, name)| (ns.to_string(), name.to_string())).collect(),
            ObjectKind::Namespace => cluster_scoped(&self.namespaces),
            ObjectKind::Service => namespaced(&self.services),
            ObjectKind::ReplicaSet => namespaced(&self.replica_sets),
            ObjectKind::ReplicationController => namespaced(&self.replication_controllers),
            ObjectKind::StatefulSet => namespaced(&self.stateful_sets),
            ObjectKind::PersistentVolume
            | ObjectKind::PersistentVolumeClaim
            | ObjectKind::StorageClass
            | ObjectKind::CSINode => self.volumes.keys(kind).unwrap_or_default(),
        }
    }

    /// How many objects of a kind the model keeps: what [`Snapshot::keys`] lists, without copying.
    pub fn count(&self, kind: ObjectKind) -> usize {
        match kind {
            ObjectKind::Node => self.node_count,
            ObjectKind::Pod => self.pods.len(),
            ObjectKind::Namespace => self.namespaces.len(),
            ObjectKind::Service => self.services.len(),
            ObjectKind::ReplicaSet => self.replica_sets.len(),
            ObjectKind::ReplicationController => self.replication_controllers.len(),
            ObjectKind::StatefulSet => self.stateful_sets.len(),
            ObjectKind::PersistentVolume
            | ObjectKind::PersistentVolumeClaim
            | ObjectKind::StorageClass
            | ObjectKind::CSINode => self.volumes.count(kind),
        }
    }

    /// Makes the objects of one kind exactly `objects` (a relist): those not listed are removed,
    /// the listed ones added or replaced.
    pub fn replace(&mut self, kind: ObjectKind, objects: Vec<ClusterObject>) {
        let listed: std::collections::HashSet<ObjectKey> = objects.iter().map(ClusterObject::key).collect();
        for key in self.keys(kind) {
            if !listed.contains(&key) {
                self.remove(kind, &key);
            }
        }
        for object in objects {
            self.upsert(object);
        }
    }

    /// Every known node with its pods, in no particular order (what topology counting walks).
    pub fn nodes(&self) -> impl Iterator<Item = NodeInfo> + '_ {
        self.nodes
            .values()
            .filter_map(|e| e.state.as_ref().map(|state| NodeInfo::new(Arc::clone(state), Arc::clone(&e.pods))))
    }

    /// How many known nodes report this image name.
    pub fn nodes_with_image(&self, name: &str) -> usize {
        self.node_counts.nodes_with_image(name)
    }

    /// How many known nodes carry each label key and value.
    pub fn node_counts(&self) -> &NodeCounts {
        &self.node_counts
    }

    /// The labels of a known node.
    pub fn node_label_map(&self, name: &str) -> Option<&std::collections::BTreeMap<String, String>> {
        self.nodes.get(name).and_then(|e| e.state.as_ref()).map(|s| &s.node.metadata.labels)
    }

    /// Assigned pods labelled `key=value`.
    pub fn pods_labelled(&self, key: &str, value: &str) -> impl Iterator<Item = &Arc<PodInfo>> {
        self.pods_by_label.get(key, value)
    }

    /// Assigned pods with required pod affinity, preferred pod affinity or preferred
    /// anti-affinity terms.
    pub fn pods_with_scoring_affinity(&self) -> impl Iterator<Item = &Arc<PodInfo>> {
        self.scoring_affinity.values()
    }

    /// The assigned pods whose required anti-affinity terms could select a pod with these labels:
    /// those filed under one of the labels, and those whose terms cannot be filed. Each pod once.
    pub fn anti_affinity_candidates(&self, labels: &Labels) -> Vec<&Arc<PodInfo>> {
        let mut seen = crate::hashing::HashSet::default();
        labels
            .iter()
            .flat_map(|(k, v)| self.anti_affinity_by_label.get(k, v))
            .chain(self.anti_affinity_unindexed.values())
            .filter(|p| seen.insert(Arc::as_ptr(p)))
            .collect()
    }

    /// A Namespace object, when the model has Namespaces.
    pub fn namespace(&self, name: &str) -> Option<&Arc<Namespace>> {
        self.namespaces.get(name)
    }

    /// Whether the model has any Namespace objects (namespaceSelector needs them).
    pub fn has_namespaces(&self) -> bool {
        !self.namespaces.is_empty()
    }

    /// Every Namespace object.
    pub fn namespaces(&self) -> impl Iterator<Item = &Arc<Namespace>> {
        self.namespaces.values()
    }

    /// The Services of a namespace.
    pub fn services_in<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a Arc<Service>> + 'a {
        self.services.iter().filter(move |((ns, _), _)| ns == namespace).map(|(_, s)| s)
    }

    /// The ReplicaSets of a namespace.
    pub fn replica_sets_in<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a Arc<ReplicaSet>> + 'a {
        self.replica_sets.iter().filter(move |((ns, _), _)| ns == namespace).map(|(_, s)| s)
    }

    /// The ReplicationControllers of a namespace.
    pub fn replication_controllers_in<'a>(
        &'a self,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a Arc<ReplicationController>> + 'a {
        self.replication_controllers.iter().filter(move |((ns, _), _)| ns == namespace).map(|(_, s)| s)
    }

    /// The StatefulSets of a namespace.
    pub fn stateful_sets_in<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a Arc<StatefulSet>> + 'a {
        self.stateful_sets.iter().filter(move |((ns, _), _)| ns == namespace).map(|(_, s)| s)
    }

    /// PersistentVolumes, claims, storage classes and CSINodes.
    pub fn volumes(&self) -> &VolumeObjects {
        &self.volumes
    }

    /// The node with its pods, and the pods nominated to it, when the node object is known.
    pub fn candidate(&self, name: &str) -> Option<(NodeInfo, Nominated)> {
        let entry = self.nodes.get(name)?;
        let state = entry.state.as_ref()?;
        Some((NodeInfo::new(Arc::clone(state), Arc::clone(&entry.pods)), Arc::clone(&entry.nominated)))
    }

    /// A node object from elsewhere (a request's `Nodes`) with the pods the model has on it, and the
    /// pods nominated to it.
    pub fn candidate_for(&self, node: Node) -> (NodeInfo, Nominated) {
        let state = Arc::new(NodeState::new(node));
        match self.nodes.get(state.name()) {
            Some(entry) => (NodeInfo::new(state, Arc::clone(&entry.pods)), Arc::clone(&entry.nominated)),
            None => (NodeInfo::new(state, Arc::default()), Arc::default()),
        }
    }

    /// The node and its pods, when the node object is known.
    pub fn node_info(&self, name: &str) -> Option<NodeInfo> {
        self.candidate(name).map(|(node, _)| node)
    }

    /// Pending pods nominated to a node.
    pub fn nominated_on(&self, node: &str) -> &[Arc<PodInfo>] {
        self.nodes.get(node).map(|e| e.nominated.as_slice()).unwrap_or(&[])
    }

    /// Every pod of the model (non-terminal, assigned or not), by namespace and name.
    pub fn pod_infos(&self) -> impl Iterator<Item = &Arc<PodInfo>> {
        self.pods.values()
    }

    pub fn pod(&self, namespace: &str, name: &str) -> Option<&Arc<PodInfo>> {
        self.pods.get(&PodIdRef(namespace, name))
    }

    pub fn has_node(&self, name: &str) -> bool {
        self.nodes.get(name).is_some_and(|e| e.state.is_some())
    }

    /// Node names, sorted.
    pub fn node_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> =
            self.nodes.iter().filter(|(_, e)| e.state.is_some()).map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        names
    }

    pub fn node_count(&self) -> usize {
        self.node_count
    }

    pub fn pod_count(&self) -> usize {
        self.pods.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{NodeBuilder, PodBuilder};

    fn snapshot() -> Snapshot {
        Snapshot::build(
            [NodeBuilder::new("n1").build(), NodeBuilder::new("n2").build()],
            [
                PodBuilder::new("running").node("n1").req(&[("cpu", "1")]).build(),
                PodBuilder::new("done").node("n1").req(&[("cpu", "1")]).phase("Succeeded").build(),
                PodBuilder::new("failed").node("n1").req(&[("cpu", "1")]).phase("Failed").build(),
                PodBuilder::new("nominee").nominated("n2").priority(10).build(),
                PodBuilder::new("pending").build(),
                PodBuilder::new("early").node("n3").req(&[("cpu", "1")]).build(),
            ],
        )
    }

    #[test]
    fn terminal_pods_hold_nothing() {
        let s = snapshot();
        assert_eq!(s.node_info("n1").unwrap().pods.requested().milli_cpu, 1000);
        assert!(s.pod("default", "done").is_none());
    }

    #[test]
    fn nominated_pods_are_indexed_by_their_node() {
        let s = snapshot();
        assert_eq!(s.nominated_on("n2").len(), 1);
        assert!(s.nominated_on("n1").is_empty());
        assert!(s.node_info("n2").unwrap().pods.pods().is_empty());
    }

    #[test]
    fn pods_of_a_node_not_yet_known_count_once_it_appears() {
        let mut s = snapshot();
        assert!(s.node_info("n3").is_none());
        s.upsert_node(NodeBuilder::new("n3").build());
        assert_eq!(s.node_info("n3").unwrap().pods.requested().milli_cpu, 1000);
    }

    #[test]
    fn binding_a_nominated_pod_moves_it_out_of_the_index() {
        let mut s = snapshot();
        let mut pod = s.pod("default", "nominee").unwrap().pod.clone();
        pod.spec.node_name = "n2".to_string();
        s.upsert_pod(pod);
        assert!(s.nominated_on("n2").is_empty());
        assert_eq!(s.node_info("n2").unwrap().pods.pods().len(), 1);
    }

    #[test]
    fn names_with_nothing_left_are_forgotten() {
        let mut s = snapshot();
        s.remove_pod(&("default".into(), "early".into()));
        assert!(!s.nodes.contains_key("n3"));
        s.remove_node("n1");
        assert!(s.nodes.contains_key("n1"), "its pod still counts");
        assert_eq!(s.node_count(), 1);
        assert_eq!(s.node_names(), ["n2"]);
    }

    #[test]
    fn label_indexes_follow_pod_changes() {
        use k8s_openapi::api::core::v1::{Affinity, PodAffinityTerm, PodAntiAffinity};
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as K8sSelector;
        let anti = |app: Option<&str>| {
            let selector = K8sSelector {
                match_labels: app.map(|a| [("app".to_string(), a.to_string())].into()),
                match_expressions: None,
            };
            Some(Affinity {
                pod_anti_affinity: Some(PodAntiAffinity {
                    required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                        label_selector: Some(selector),
                        topology_key: "zone".into(),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }),
                ..Default::default()
            })
        };
        let mut guard = PodBuilder::new("guard").node("n1").label("app", "guard").build();
        guard.spec.affinity = anti(Some("web"));
        let mut broad = PodBuilder::new("broad").node("n2").build();
        broad.spec.affinity = anti(None);
        let mut s =
            Snapshot::build([], [guard.clone(), broad, PodBuilder::new("w").node("n1").label("app", "web").build()]);
        let web = Labels::from([("app", "web")]);
        let db = Labels::from([("app", "db")]);
        assert_eq!(s.anti_affinity_candidates(&web).len(), 2, "guard by its selector, broad unfiled");
        assert_eq!(s.anti_affinity_candidates(&db).len(), 1, "only the unfiled one");
        assert_eq!(s.pods_labelled("app", "web").count(), 1);
        s.remove_pod(&("default".into(), "guard".into()));
        assert_eq!(s.anti_affinity_candidates(&web).len(), 1);
        assert_eq!(s.pods_labelled("app", "guard").count(), 0);
        let mut moved = s.pod("default", "w").unwrap().pod.clone();
        moved.spec.node_name = "n2".into();
        s.upsert_pod(moved);
        assert_eq!(s.pods_labelled("app", "web").map(|p| p.pod.spec.node_name.as_str()).collect::<Vec<_>>(), ["n2"]);
    }

    #[test]
    fn pods_with_scoring_affinity_terms_are_filed_and_forgotten() {
        use k8s_openapi::api::core::v1::{Affinity, PodAffinity, PodAntiAffinity, WeightedPodAffinityTerm};
        let preferred = || Some(vec![WeightedPodAffinityTerm { weight: 1, ..Default::default() }]);
        let with = |name: &str, node: &str, affinity: Affinity| {
            let mut p = PodBuilder::new(name).node(node).build();
            p.spec.affinity = Some(affinity);
            p
        };
        let required_anti = Affinity {
            pod_anti_affinity: Some(PodAntiAffinity {
                required_during_scheduling_ignored_during_execution: Some(vec![Default::default()]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let soft_affinity = Affinity {
            pod_affinity: Some(PodAffinity {
                preferred_during_scheduling_ignored_during_execution: preferred(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let soft_anti = Affinity {
            pod_anti_affinity: Some(PodAntiAffinity {
                preferred_during_scheduling_ignored_during_execution: preferred(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let hard_affinity = Affinity {
            pod_affinity: Some(PodAffinity {
                required_during_scheduling_ignored_during_execution: Some(vec![Default::default()]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut pending = with("pending", "", soft_affinity.clone());
        pending.status.nominated_node_name = "n1".into();
        let mut s = Snapshot::build(
            [],
            [
                with("anti", "n1", required_anti),
                with("soft", "n1", soft_affinity),
                with("soft-anti", "n2", soft_anti),
                with("hard", "n2", hard_affinity),
                PodBuilder::new("plain").node("n1").build(),
                pending,
            ],
        );
        let filed = |s: &Snapshot| {
            let mut names: Vec<String> = s.pods_with_scoring_affinity().map(|p| p.pod.metadata.name.clone()).collect();
            names.sort();
            names
        };
        assert_eq!(
            filed(&s),
            ["hard", "soft", "soft-anti"],
            "required anti-affinity only filters; pending pods are not placed"
        );
        s.remove_pod(&("default".into(), "soft".into()));
        assert_eq!(filed(&s), ["hard", "soft-anti"]);
    }

    #[test]
    fn the_image_index_follows_node_changes() {
        let with_images = |name: &str, images: &[&[&str]]| {
            let mut n = NodeBuilder::new(name).build();
            n.status.images = images
                .iter()
                .map(|names| k8s_openapi::api::core::v1::ContainerImage {
                    names: Some(names.iter().map(|s| s.to_string()).collect()),
                    size_bytes: Some(1),
                })
                .collect();
            n
        };
        let mut s = Snapshot::build(
            [with_images("a", &[&["nginx:1", "docker.io/nginx:1"]]), with_images("b", &[&["nginx:1"], &["nginx:1"]])],
            [],
        );
        assert_eq!(s.nodes_with_image("nginx:1"), 2, "a name listed twice on one node counts once");
        assert_eq!(s.nodes_with_image("docker.io/nginx:1"), 1);
        s.upsert_node(with_images("a", &[&["redis:7"]]));
        assert_eq!(s.nodes_with_image("nginx:1"), 1);
        assert_eq!(s.nodes_with_image("docker.io/nginx:1"), 0);
        assert_eq!(s.nodes_with_image("redis:7"), 1);
        s.remove_node("b");
        assert_eq!(s.nodes_with_image("nginx:1"), 0);
        s.upsert_pod(PodBuilder::new("p").node("a").build());
        assert_eq!(s.nodes_with_image("redis:7"), 1, "pod changes leave the index alone");
    }

    #[test]
    fn an_older_snapshot_is_unchanged_by_a_newer_one() {
        let old = snapshot();
        let mut new = old.clone();
        new.upsert_pod(PodBuilder::new("more").node("n1").req(&[("cpu", "2")]).build());
        assert_eq!(old.node_info("n1").unwrap().pods.requested().milli_cpu, 1000);
        assert_eq!(new.node_info("n1").unwrap().pods.requested().milli_cpu, 3000);
    }
}
