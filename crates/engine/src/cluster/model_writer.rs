//! Applies watch events to the cluster model, and keeps kube-scheduler's "assume" promise: a pod
//! bound by this extender counts on its node at once, before the watch reports the binding, and
//! stops counting if no watch event confirms it within a time-to-live.
//!
//! Every change goes through [`ClusterStore::update`]: requests keep reading the snapshot they
//! started with and see the next one after a pointer swap.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use crate::cluster::objects::Pod;
use crate::cluster::snapshot::{key_of, PodKey};
use crate::cluster::{ClusterObject, ClusterStore, ObjectKey, ObjectKind, Snapshot};

/// One change reported by a watch.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // a pod inline: most changes are pod upserts
pub enum Change {
    /// Added or modified.
    Upsert(ClusterObject),
    Delete(ObjectKind, ObjectKey),
}

/// A pod bound by this extender and not yet seen bound by the watch.
#[derive(Debug, Clone)]
struct Assumption {
    uid: String,
    node: String,
    expires: Instant,
    /// The pod as the watch last reported it (unbound), what the model goes back to on expiry;
    /// `None` when the watch had not reported it, and the pod leaves the model on expiry.
    watched: Option<Pod>,
}

/// Writes the cluster model for the live source and the API-server binder.
#[derive(Debug)]
pub struct ModelWriter {
    store: Arc<ClusterStore>,
    /// Locked only inside `store.update`, so the two locks are always taken in the same order.
    assumed: Mutex<HashMap<PodKey, Assumption>>,
}

impl ModelWriter {
    pub fn new(store: Arc<ClusterStore>) -> Self {
        ModelWriter { store, assumed: Mutex::new(HashMap::new()) }
    }

    pub fn store(&self) -> &Arc<ClusterStore> {
        &self.store
    }

    fn update<T>(&self, change: impl FnOnce(&mut Snapshot, &mut HashMap<PodKey, Assumption>) -> T) -> T {
        let out: Result<T, std::convert::Infallible> = self.store.update(|snapshot| {
            let mut assumed = self.assumed.lock();
            Ok(change(snapshot, &mut assumed))
        });
        match out {
            Ok(v) => v,
            Err(never) => match never {},
        }
    }

    /// Applies a batch of watch events as one new snapshot.
    pub fn apply(&self, changes: Vec<Change>) {
        if changes.is_empty() {
            return;
        }
        self.update(|snapshot, assumed| {
            for change in changes {
                match change {
                    Change::Upsert(ClusterObject::Pod(pod)) => {
                        let pod = reconcile(assumed, pod);
                        snapshot.upsert_pod(pod);
                    }
                    Change::Upsert(object) => snapshot.upsert(object),
                    Change::Delete(kind, key) => {
                        if kind == ObjectKind::Pod {
                            assumed.remove(&key);
                        }
                        snapshot.remove(kind, &key);
                    }
                }
            }
        })
    }

    /// Makes the objects of one kind exactly those of a fresh list, as one new snapshot. Nodes and
    /// pods the model already has at the listed resourceVersion are left as they are, shared with
    /// the snapshot before: a relist after `410 Gone` finds nearly everything unchanged, and
    /// rebuilding it all would hold a second copy of the model for nothing.
    pub fn replace(&self, kind: ObjectKind, objects: Vec<ClusterObject>) {
        let listed: HashSet<ObjectKey> = objects.iter().map(ClusterObject::key).collect();
        self.replace_listed(kind, &listed, objects);
    }

    /// [`ModelWriter::replace`] from a list that kept only some of its objects: every key in
    /// `listed` stays (as the model has it, unless `objects` has it anew), every other key of the
    /// kind goes.
    pub fn replace_listed(&self, kind: ObjectKind, listed: &HashSet<ObjectKey>, objects: Vec<ClusterObject>) {
        self.update(|snapshot, assumed| {
            if kind == ObjectKind::Pod {
                assumed.retain(|key, _| listed.contains(key));
            }
            for key in snapshot.keys(kind) {
                if !listed.contains(&key) {
                    snapshot.remove(kind, &key);
                }
            }
            upsert_new(snapshot, assumed, objects);
        })
    }

    /// The objects of one page of a list, applied as it comes (the upserts of
    /// [`ModelWriter::replace_listed`], which then finishes the list with no objects of its own).
    pub fn upsert_listed(&self, objects: Vec<ClusterObject>) {
        if !objects.is_empty() {
            self.update(|snapshot, assumed| upsert_new(snapshot, assumed, objects));
        }
    }

    /// Whether the model has this node or pod at this very version, not assumed: a list may drop
    /// it as its page is read and pass only its key to [`ModelWriter::replace_listed`]. Until then
    /// only an assumption can change it (the kind's watch waits for its list), and an assumption
    /// of a pod the model has never takes the pod out of the model.
    pub fn has_version(&self, object: &ClusterObject) -> bool {
        if let ClusterObject::Pod(pod) = object {
            if self.assumed.lock().contains_key(&key_of(pod)) {
                return false;
            }
        }
        has_version(&self.store.snapshot(), object)
    }

    /// Counts `pod` on `node` now, until the watch confirms the binding or `ttl` passes.
    pub fn assume(&self, pod: Pod, node: &str, ttl: Duration) {
        let key = key_of(&pod);
        self.update(|snapshot, assumed| {
            let current = snapshot.pod(&key.0, &key.1).map(|p| p.pod.clone());
            // The watch may have reported the binding already, between the API server's answer
            // and this: then there is nothing to assume, and an assumption would never be
            // confirmed (its expiry would put the bound pod back to pending).
            if current.as_ref().is_some_and(|p| !p.spec.node_name.is_empty()) {
                return;
            }
            let mut bound = pod.clone();
            bound.spec.node_name = node.to_string();
            let assumption = Assumption {
                uid: pod.metadata.uid.clone(),
                node: node.to_string(),
                expires: Instant::now() + ttl,
                watched: current,
            };
            assumed.insert(key, assumption);
            snapshot.upsert_pod(bound);
        })
    }

    /// Forgets the assumption of this pod on `node`, putting the pod back as the watch last had it
    /// (kube-scheduler's ForgetPod after a failed bind). Nothing changes when the pod is not assumed
    /// there any more: the watch has reported it since, bound or gone. Returns whether it was.
    pub fn forget(&self, key: &PodKey, node: &str) -> bool {
        if self.assumed.lock().get(key).is_none_or(|a| a.node != node) {
            return false; // no new snapshot for nothing
        }
        self.update(|snapshot, assumed| {
            let Some(a) = assumed.remove(key) else { return false };
            if a.node != node {
                assumed.insert(key.clone(), a);
                return false;
            }
            match a.watched {
                Some(pod) => snapshot.upsert_pod(pod),
                None => snapshot.remove_pod(key),
            }
            true
        })
    }

    /// Forgets the assumptions whose time is up, putting their pods back as the watch last had
    /// them. Returns the pods and the nodes they had been assumed on.
    pub fn expire_assumed(&self, now: Instant) -> Vec<(PodKey, String)> {
        let due = |assumed: &HashMap<PodKey, Assumption>| assumed.values().any(|a| a.expires <= now);
        if !due(&self.assumed.lock()) {
            return Vec::new(); // no new snapshot for nothing
        }
        self.update(|snapshot, assumed| {
            let expired: Vec<PodKey> =
                assumed.iter().filter(|(_, a)| a.expires <= now).map(|(k, _)| k.clone()).collect();
            let mut out = Vec::with_capacity(expired.len());
            for key in expired {
                if let Some(a) = assumed.remove(&key) {
                    match a.watched {
                        Some(pod) => snapshot.upsert_pod(pod),
                        None => snapshot.remove_pod(&key),
                    }
                    out.push((key, a.node));
                }
            }
            out
        })
    }

    /// How many pods are assumed and not yet confirmed.
    pub fn assumed_count(&self) -> usize {
        self.assumed.lock().len()
    }
}

/// Upserts the listed objects the model does not have at their version.
fn upsert_new(snapshot: &mut Snapshot, assumed: &mut HashMap<PodKey, Assumption>, objects: Vec<ClusterObject>) {
    for object in objects {
        // An assumed pod always goes through `reconcile`: the model may hold it at the very
        // version listed (bound, when the binder read it from the API server), and only
        // `reconcile` sees that the list confirms the binding and ends the assumption.
        if !is_assumed(assumed, &object) && has_version(snapshot, &object) {
            continue;
        }
        match object {
            ClusterObject::Pod(pod) => snapshot.upsert_pod(reconcile(assumed, pod)),
            other => snapshot.upsert(other),
        }
    }
}

fn is_assumed(assumed: &HashMap<PodKey, Assumption>, object: &ClusterObject) -> bool {
    matches!(object, ClusterObject::Pod(pod) if assumed.contains_key(&key_of(pod)))
}

/// Whether the model has this node or pod at this very version (same UID and resourceVersion:
/// the API server changes the version with every change of the object). An assumed pod is kept
/// with the version the watch last reported, so a list that still shows that version leaves the
/// assumption as it is, as [`reconcile`] would.
fn has_version(snapshot: &Snapshot, object: &ClusterObject) -> bool {
    let same = |have: (&str, &str), want: (&str, &str)| !want.0.is_empty() && have == want;
    fn pod_version(p: &Pod) -> (&str, &str) {
        (&p.metadata.resource_version, &p.metadata.uid)
    }
    match object {
        ClusterObject::Pod(pod) => snapshot
            .pod(&pod.metadata.namespace, &pod.metadata.name)
            .is_some_and(|p| same(pod_version(&p.pod), pod_version(pod))),
        ClusterObject::Node(node) => snapshot.node_info(&node.metadata.name).is_some_and(|n| {
            let have = &n.node().metadata;
            same((&have.resource_version, &have.uid), (&node.metadata.resource_version, &node.metadata.uid))
        }),
        _ => false,
    }
}

/// The pod to keep for a watched pod that may be assumed. A report that it is bound (anywhere),
/// terminal, or a different pod under the same name ends the assumption; an older report of it
/// unbound keeps it on the assumed node.
fn reconcile(assumed: &mut HashMap<PodKey, Assumption>, mut pod: Pod) -> Pod {
    let key = key_of(&pod);
    let Some(a) = assumed.get_mut(&key) else { return pod };
    let same_pod = a.uid.is_empty() || pod.metadata.uid.is_empty() || a.uid == pod.metadata.uid;
    if !same_pod || !pod.spec.node_name.is_empty() || pod.is_terminal() {
        assumed.remove(&key);
        return pod;
    }
    a.watched = Some(pod.clone());
    pod.spec.node_name = a.node.clone();
    pod
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{NodeBuilder, PodBuilder};

    fn writer() -> ModelWriter {
        let snapshot = Snapshot::build(
            [NodeBuilder::new("n1").build(), NodeBuilder::new("n2").build()],
            [PodBuilder::new("p").uid("u1").req(&[("cpu", "1")]).build()],
        );
        ModelWriter::new(Arc::new(ClusterStore::new(snapshot)))
    }

    fn cpu_on(w: &ModelWriter, node: &str) -> i64 {
        w.store.snapshot().node_info(node).unwrap().pods.requested().milli_cpu
    }

    fn pending() -> Pod {
        PodBuilder::new("p").uid("u1").req(&[("cpu", "1")]).build()
    }

    fn bound(node: &str) -> Pod {
        PodBuilder::new("p").uid("u1").node(node).req(&[("cpu", "1")]).build()
    }

    const TTL: Duration = Duration::from_secs(30);

    #[test]
    fn an_assumed_pod_counts_until_the_watch_confirms_it() {
        let w = writer();
        w.assume(pending(), "n1", TTL);
        assert_eq!(cpu_on(&w, "n1"), 1000);
        // A late event from before the binding does not undo the assumption.
        w.apply(vec![Change::Upsert(ClusterObject::Pod(pending()))]);
        assert_eq!(cpu_on(&w, "n1"), 1000);
        assert_eq!(w.assumed_count(), 1);
        // The watch confirms: the assumption is over, the pod stays.
        w.apply(vec![Change::Upsert(ClusterObject::Pod(bound("n1")))]);
        assert_eq!(w.assumed_count(), 0);
        assert!(w.expire_assumed(Instant::now() + TTL * 2).is_empty());
        assert_eq!(cpu_on(&w, "n1"), 1000);
    }

    #[test]
    fn a_pod_the_watch_never_reported_leaves_the_model_on_expiry() {
        let w = writer();
        let stranger = PodBuilder::new("s").uid("u9").req(&[("cpu", "2")]).build();
        w.assume(stranger, "n2", TTL);
        assert_eq!(cpu_on(&w, "n2"), 2000);
        w.expire_assumed(Instant::now() + TTL);
        assert_eq!(cpu_on(&w, "n2"), 0);
        assert!(w.store.snapshot().pod("default", "s").is_none(), "no pending ghost left behind");
    }

    #[test]
    fn nothing_is_assumed_when_the_watch_already_reported_the_binding() {
        let w = writer();
        w.apply(vec![Change::Upsert(ClusterObject::Pod(bound("n1")))]);
        w.assume(pending(), "n1", TTL);
        assert_eq!(w.assumed_count(), 0);
        assert!(w.expire_assumed(Instant::now() + TTL * 2).is_empty());
        assert_eq!(cpu_on(&w, "n1"), 1000, "still bound");
    }

    #[test]
    fn an_unconfirmed_assumption_expires_back_to_the_watched_pod() {
        let w = writer();
        w.assume(pending(), "n1", TTL);
        assert!(w.expire_assumed(Instant::now()).is_empty(), "not yet");
        let expired = w.expire_assumed(Instant::now() + TTL);
        assert_eq!(expired, vec![(("default".to_string(), "p".to_string()), "n1".to_string())]);
        assert_eq!(cpu_on(&w, "n1"), 0);
        assert!(w.store.snapshot().pod("default", "p").unwrap().pod.spec.node_name.is_empty());
    }

    #[test]
    fn a_forgotten_assumption_goes_back_to_the_watched_pod_at_once() {
        let w = writer();
        let key = ("default".to_string(), "p".to_string());
        w.assume(pending(), "n1", TTL);
        assert!(!w.forget(&key, "n2"), "assumed on n1, not n2");
        assert_eq!(cpu_on(&w, "n1"), 1000);
        assert!(w.forget(&key, "n1"));
        assert_eq!((cpu_on(&w, "n1"), w.assumed_count()), (0, 0));
        assert!(w.store.snapshot().pod("default", "p").unwrap().pod.spec.node_name.is_empty());
        // Confirmed by the watch meanwhile: nothing to forget, the pod stays bound.
        w.assume(pending(), "n1", TTL);
        w.apply(vec![Change::Upsert(ClusterObject::Pod(bound("n1")))]);
        assert!(!w.forget(&key, "n1"));
        assert_eq!(cpu_on(&w, "n1"), 1000);
        // Never reported by the watch: it leaves the model.
        let stranger = PodBuilder::new("s").uid("u9").req(&[("cpu", "2")]).build();
        w.assume(stranger, "n2", TTL);
        assert!(w.forget(&("default".to_string(), "s".to_string()), "n2"));
        assert!(w.store.snapshot().pod("default", "s").is_none());
    }

    #[test]
    fn the_watch_wins_when_it_sees_the_pod_elsewhere_deleted_or_recreated() {
        let cases: Vec<(&str, Change, i64, i64)> = vec![
            ("bound elsewhere", Change::Upsert(ClusterObject::Pod(bound("n2"))), 0, 1000),
            ("deleted", Change::Delete(ObjectKind::Pod, ("default".into(), "p".into())), 0, 0),
            (
                "recreated with another uid",
                Change::Upsert(ClusterObject::Pod(PodBuilder::new("p").uid("u2").req(&[("cpu", "1")]).build())),
                0,
                0,
            ),
        ];
        for (name, change, n1, n2) in cases {
            let w = writer();
            w.assume(pending(), "n1", TTL);
            w.apply(vec![change]);
            assert_eq!(w.assumed_count(), 0, "{name}");
            assert_eq!((cpu_on(&w, "n1"), cpu_on(&w, "n2")), (n1, n2), "{name}");
        }
    }

    #[test]
    fn a_relist_replaces_a_kind_and_keeps_or_ends_assumptions() {
        let w = writer();
        w.assume(pending(), "n1", TTL);
        // The relist still shows the pod unbound (the list predates the binding): kept.
        let other = PodBuilder::new("q").node("n2").req(&[("cpu", "2")]).build();
        w.replace(ObjectKind::Pod, vec![ClusterObject::Pod(pending()), ClusterObject::Pod(other)]);
        assert_eq!((cpu_on(&w, "n1"), cpu_on(&w, "n2")), (1000, 2000));
        assert_eq!(w.assumed_count(), 1);
        // A relist without the pod: it is gone, and so is the assumption.
        w.replace(ObjectKind::Pod, vec![]);
        assert_eq!((cpu_on(&w, "n1"), cpu_on(&w, "n2")), (0, 0));
        assert_eq!(w.assumed_count(), 0);
        assert_eq!(w.store.snapshot().pod_count(), 0);
    }

    #[test]
    fn a_relist_leaves_what_the_model_has_at_that_version_and_replaces_the_rest() {
        let at = |mut pod: Pod, version: &str| {
            pod.metadata.resource_version = version.to_string();
            ClusterObject::Pod(pod)
        };
        let running = |name: &str, cpu: &str| PodBuilder::new(name).uid(name).node("n2").req(&[("cpu", cpu)]).build();
        let w = writer();
        w.replace(ObjectKind::Pod, vec![at(pending(), "5"), at(running("a", "1"), "6"), at(running("b", "1"), "7")]);
        w.assume(pending(), "n1", TTL);
        let before = w.store.snapshot();

        // a unchanged, b at a new version, p still unbound at the version it was assumed from.
        w.replace(ObjectKind::Pod, vec![at(pending(), "5"), at(running("a", "1"), "6"), at(running("b", "2"), "9")]);
        let after = w.store.snapshot();
        let info = |s: &Snapshot, name: &str| Arc::clone(s.pod("default", name).unwrap());
        assert!(Arc::ptr_eq(&info(&before, "a"), &info(&after, "a")), "unchanged: shared, not rebuilt");
        assert!(!Arc::ptr_eq(&info(&before, "b"), &info(&after, "b")), "a new version is taken");
        assert_eq!((cpu_on(&w, "n1"), cpu_on(&w, "n2")), (1000, 3000), "p still assumed on n1, b now 2 cpu");
        assert_eq!(w.assumed_count(), 1);

        // The list shows p bound at a newer version: the assumption is over.
        w.replace(ObjectKind::Pod, vec![at(bound("n1"), "10"), at(running("a", "1"), "6"), at(running("b", "2"), "9")]);
        assert_eq!(w.assumed_count(), 0);
        assert_eq!((cpu_on(&w, "n1"), cpu_on(&w, "n2")), (1000, 3000));
    }

    #[test]
    fn a_list_may_drop_what_the_model_has_at_that_version_unless_it_is_assumed() {
        let at = |mut pod: Pod, version: &str| {
            pod.metadata.resource_version = version.to_string();
            ClusterObject::Pod(pod)
        };
        let w = writer();
        w.replace(ObjectKind::Pod, vec![at(pending(), "5")]);
        assert!(w.has_version(&at(pending(), "5")));
        assert!(!w.has_version(&at(pending(), "6")), "another version");
        assert!(!w.has_version(&at(PodBuilder::new("p").uid("u2").build(), "5")), "another pod");
        assert!(!w.has_version(&at(PodBuilder::new("q").build(), "5")), "not in the model");
        w.assume(pending(), "n1", TTL);
        assert!(!w.has_version(&at(pending(), "5")), "assumed: kept by the list");

        // The listed keys keep what the model has; the others go.
        let listed: HashSet<ObjectKey> = [("default".to_string(), "p".to_string())].into();
        w.replace_listed(ObjectKind::Pod, &listed, vec![]);
        assert_eq!(cpu_on(&w, "n1"), 1000, "p stays, assumed");
        w.replace_listed(ObjectKind::Pod, &HashSet::new(), vec![]);
        assert_eq!(w.store.snapshot().pod_count(), 0);
    }

    /// Found by the soak: a pod bound while the pod watch relisted, that the model did not have
    /// yet, is assumed from the API server's copy, which is already bound and carries the
    /// binding's resourceVersion. The relist then lists it at that very version; skipped as
    /// "unchanged", the assumption stayed, no watch event followed (the binding predates the
    /// list), and on expiry the pod left the model while the API server had it bound.
    #[test]
    fn a_relist_confirms_a_binding_assumed_at_the_listed_version() {
        let at = |mut pod: Pod, version: &str| {
            pod.metadata.resource_version = version.to_string();
            pod
        };
        let w = writer();
        w.replace(ObjectKind::Pod, vec![]);
        // What the binder assumes when the model lacks the pod: the API server's pod (bound at
        // version 9) with its node name cleared.
        let mut read_back = at(bound("n1"), "9");
        read_back.spec.node_name.clear();
        w.assume(read_back, "n1", TTL);
        assert_eq!((w.assumed_count(), cpu_on(&w, "n1")), (1, 1000));

        w.replace(ObjectKind::Pod, vec![ClusterObject::Pod(at(bound("n1"), "9"))]);
        assert_eq!(w.assumed_count(), 0, "the list shows the binding: nothing left to assume");
        assert!(w.expire_assumed(Instant::now() + TTL * 2).is_empty());
        assert_eq!(cpu_on(&w, "n1"), 1000, "still bound after the time-to-live");
        assert_eq!(w.store.snapshot().pod("default", "p").unwrap().pod.spec.node_name, "n1");
    }

    #[test]
    fn a_relist_of_nodes_removes_the_unlisted() {
        let w = writer();
        w.replace(ObjectKind::Node, vec![ClusterObject::Node(NodeBuilder::new("n3").build())]);
        assert_eq!(w.store.snapshot().node_names(), vec!["n3"]);
    }
}
