//! An immutable view of the cluster. Requests read one; a change builds the next one, sharing
//! everything it did not touch (persistent maps), so a pod event costs one node's worth of work.

use std::sync::Arc;

use imbl::OrdMap;

use crate::cluster::node_info::{NodeInfo, NodePods, NodeState, PodInfo};
use crate::cluster::objects::{Node, Pod};

/// `(namespace, name)` of a pod.
pub type PodKey = (String, String);

/// The cluster at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    nodes: OrdMap<String, Arc<NodeState>>,
    /// Pods by the node they are assigned to; a node may have pods before its object is known.
    node_pods: OrdMap<String, Arc<NodePods>>,
    /// Pending pods with `status.nominatedNodeName`, by that node.
    nominated: OrdMap<String, Arc<Vec<Arc<PodInfo>>>>,
    /// Every non-terminal pod, assigned or not.
    pods: OrdMap<PodKey, Arc<PodInfo>>,
}

static NO_PODS: std::sync::LazyLock<Arc<NodePods>> = std::sync::LazyLock::new(|| Arc::new(NodePods::default()));

fn key_of(pod: &Pod) -> PodKey {
    (pod.metadata.namespace.clone(), pod.metadata.name.clone())
}

impl Snapshot {
    /// A snapshot of these objects. Terminal pods are left out, as kube-scheduler's cache does.
    pub fn build(nodes: impl IntoIterator<Item = Node>, pods: impl IntoIterator<Item = Pod>) -> Snapshot {
        let mut s = Snapshot::default();
        for n in nodes {
            s.upsert_node(n);
        }
        for p in pods {
            s.upsert_pod(p);
        }
        s
    }

    /// Adds or replaces a node object; its pods stay.
    pub fn upsert_node(&mut self, node: Node) {
        let name = node.metadata.name.clone();
        self.nodes.insert(name, Arc::new(NodeState::new(node)));
    }

    /// Removes a node object. Pods bound to it stay accounted until they are deleted.
    pub fn remove_node(&mut self, name: &str) {
        self.nodes.remove(name);
    }

    /// Adds, replaces or (when terminal) removes a pod, keeping node sums and the nominated index
    /// in step.
    pub fn upsert_pod(&mut self, pod: Pod) {
        let key = key_of(&pod);
        self.remove_pod(&key);
        if pod.is_terminal() {
            return;
        }
        let info = Arc::new(PodInfo::new(pod));
        if !info.pod.spec.node_name.is_empty() {
            let node = info.pod.spec.node_name.clone();
            let mut pods = self.node_pods.get(&node).map(|p| (**p).clone()).unwrap_or_default();
            pods.add(Arc::clone(&info));
            self.node_pods.insert(node, Arc::new(pods));
        } else if !info.pod.status.nominated_node_name.is_empty() {
            let node = info.pod.status.nominated_node_name.clone();
            let mut list = self.nominated.get(&node).map(|l| (**l).clone()).unwrap_or_default();
            list.push(Arc::clone(&info));
            self.nominated.insert(node, Arc::new(list));
        }
        self.pods.insert(key, info);
    }

    /// Removes a pod wherever it is accounted.
    pub fn remove_pod(&mut self, key: &PodKey) {
        let Some(old) = self.pods.remove(key) else { return };
        let node = &old.pod.spec.node_name;
        if !node.is_empty() {
            if let Some(pods) = self.node_pods.get(node) {
                let mut pods = (**pods).clone();
                pods.remove(&old.pod);
                if pods.pods().is_empty() {
                    self.node_pods.remove(node);
                } else {
                    self.node_pods.insert(node.clone(), Arc::new(pods));
                }
            }
        }
        let nominated = &old.pod.status.nominated_node_name;
        if node.is_empty() && !nominated.is_empty() {
            if let Some(list) = self.nominated.get(nominated) {
                let list: Vec<_> = list.iter().filter(|p| !p.pod.is_same_pod(&old.pod)).cloned().collect();
                if list.is_empty() {
                    self.nominated.remove(nominated);
                } else {
                    self.nominated.insert(nominated.clone(), Arc::new(list));
                }
            }
        }
    }

    /// The node and its pods, when the node object is known.
    pub fn node_info(&self, name: &str) -> Option<NodeInfo> {
        let state = self.nodes.get(name)?;
        Some(NodeInfo::new(Arc::clone(state), self.pods_on(name)))
    }

    /// A node object from elsewhere (a request's `Nodes`) with the pods the model has on it.
    pub fn node_info_for(&self, node: Node) -> NodeInfo {
        let pods = self.pods_on(&node.metadata.name);
        NodeInfo::new(Arc::new(NodeState::new(node)), pods)
    }

    /// The pods assigned to a node (empty when none).
    pub fn pods_on(&self, node: &str) -> Arc<NodePods> {
        self.node_pods.get(node).cloned().unwrap_or_else(|| Arc::clone(&NO_PODS))
    }

    /// Pending pods nominated to a node.
    pub fn nominated_on(&self, node: &str) -> &[Arc<PodInfo>] {
        self.nominated.get(node).map(|l| l.as_slice()).unwrap_or(&[])
    }

    pub fn pod(&self, namespace: &str, name: &str) -> Option<&Arc<PodInfo>> {
        self.pods.get(&(namespace.to_string(), name.to_string()))
    }

    pub fn has_node(&self, name: &str) -> bool {
        self.nodes.contains_key(name)
    }

    /// Node names in order.
    pub fn node_names(&self) -> impl Iterator<Item = &str> {
        self.nodes.keys().map(String::as_str)
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
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
    fn an_older_snapshot_is_unchanged_by_a_newer_one() {
        let old = snapshot();
        let mut new = old.clone();
        new.upsert_pod(PodBuilder::new("more").node("n1").req(&[("cpu", "2")]).build());
        assert_eq!(old.node_info("n1").unwrap().pods.requested().milli_cpu, 1000);
        assert_eq!(new.node_info("n1").unwrap().pods.requested().milli_cpu, 3000);
    }
}
