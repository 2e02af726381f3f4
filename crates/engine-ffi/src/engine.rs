//! The engine as kube-scheduler's plugins use it, in safe Rust: a cluster model written by the
//! scheduler's informers, the plan of the Policy (read again on request), and a scheduling cycle
//! that prepares the pod once and then answers for one node at a time.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use parking_lot::Mutex;
use serde::Deserialize;

use predicate_engine::cluster::model_writer::{Change, ModelWriter};
use predicate_engine::cluster::objects::Pod;
use predicate_engine::cluster::source::decode_json_object;
use predicate_engine::cluster::PodInfo;
use predicate_engine::cluster::{ClusterStore, ObjectKind, SchedulerVersion, Snapshot};
use predicate_engine::engine::fits::{fits_on_node, run_predicates};
use predicate_engine::engine::prioritize::prioritize;
use predicate_engine::engine::{CancelFlag, Candidate, ClusterView, Evaluator, PodContext, Prepared};
use predicate_engine::framework::{MissingState, Reason};
use predicate_engine::policy::{self, Overrides, Plan};

/// How long a pod placed by Reserve counts on its node without the informer confirming the
/// binding. kube-scheduler's own cache never expires an assumed pod: a binding that fails calls
/// Unreserve, and one that succeeds is confirmed by the informer, however long Permit and PreBind
/// (volume binding waits up to ten minutes) take. So does the engine's model; the hour only bounds
/// what an assumption lost both ways would hold.
const ASSUME_TTL: Duration = Duration::from_secs(3600);

/// The settings the plugin passes when it starts (JSON, from its plugin args).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// The Policy file; none: the default plan.
    #[serde(default)]
    pub policy: Option<PathBuf>,
    /// The running kube-scheduler's version (`v1.37.2`): the model counts pods as it does.
    #[serde(default)]
    pub scheduler_version: Option<String>,
    /// Threads scoring the feasible nodes; 0 or 1: on kube-scheduler's own thread (its cycle
    /// waits for the scores anyway, and a pool's wake-ups and idle spinning cost the cores
    /// kube-scheduler runs on).
    #[serde(default)]
    pub parallelism: usize,
}

/// What a reload of the Policy found.
#[derive(Debug, PartialEq, Eq)]
pub enum Reload {
    Unchanged,
    Reloaded,
}

/// The engine inside kube-scheduler.
pub struct InProcess {
    writer: ModelWriter,
    plan: ArcSwap<Plan>,
    policy: Option<(PathBuf, Mutex<Vec<u8>>)>,
    evaluator: Evaluator,
}

/// Why a cycle could not start.
#[derive(Debug, PartialEq, Eq)]
pub enum CycleError {
    /// The model does not have the pod at this resourceVersion: pass the pod itself.
    NeedPod,
    /// The pod passed does not decode.
    BadPod(String),
}

/// One scheduling cycle: the pod prepared against one snapshot of the model.
pub struct Cycle {
    plan: Arc<Plan>,
    snapshot: Arc<Snapshot>,
    prepared: Prepared,
}

/// The engine's answer for one node.
#[derive(Debug, PartialEq, Eq)]
pub enum NodeVerdict {
    Fits,
    /// Some reason preemption cannot resolve (kube-scheduler's UnschedulableAndUnresolvable).
    Unresolvable(String),
    /// Every reason could be resolved by preemption (Unschedulable).
    Unschedulable(String),
    /// The model does not know the node (yet).
    Unknown,
}

/// The message for a node the model does not know yet (an informer event still on its way).
pub const UNKNOWN_NODE: &str = "node is not in the in-process engine's cluster model yet";

impl InProcess {
    /// From the plugin's settings: the Policy read and checked now (an error names the file and
    /// the field), an empty model.
    pub fn new(config: &[u8]) -> Result<InProcess, String> {
        let config: Config = serde_json::from_slice(config).map_err(|e| format!("the engine's settings: {e}"))?;
        let version = match &config.scheduler_version {
            Some(v) => v.parse::<SchedulerVersion>().map_err(|e| e.to_string())?,
            None => SchedulerVersion::default(),
        };
        let (plan, policy) = match &config.policy {
            Some(path) => {
                let loaded = policy::load(path, Overrides::default()).map_err(|e| e.to_string())?;
                (loaded.plan, Some((path.clone(), Mutex::new(loaded.bytes))))
            }
            None => (Plan::default_plan(), None),
        };
        let evaluator = Evaluator::new(config.parallelism).map_err(|e| format!("the scoring threads: {e}"))?;
        let evaluator = if config.parallelism <= 1 { evaluator.inline() } else { evaluator };
        let store = Arc::new(ClusterStore::new(Snapshot::empty(version)));
        Ok(InProcess { writer: ModelWriter::new(store), plan: ArcSwap::from_pointee(plan), policy, evaluator })
    }

    /// The plan in force.
    pub fn plan(&self) -> Arc<Plan> {
        self.plan.load_full()
    }

    /// Reads the Policy file again and puts a changed one in force; a file that does not load
    /// leaves the plan as it was and says why (once per change).
    pub fn reload_policy(&self) -> Result<Reload, String> {
        let Some((path, seen)) = &self.policy else { return Ok(Reload::Unchanged) };
        let bytes = policy::read(path).map_err(|e| e.to_string())?;
        let mut seen = seen.lock();
        if *seen == bytes {
            return Ok(Reload::Unchanged);
        }
        // Remembered before parsing: a broken file is reported once, not at every poll.
        *seen = bytes.clone();
        let plan =
            policy::parse(&path.display().to_string(), &bytes, Overrides::default()).map_err(|e| e.to_string())?;
        self.plan.store(Arc::new(plan));
        Ok(Reload::Reloaded)
    }

    /// An informer's add or update: the object as JSON, of `kind`.
    pub fn upsert(&self, kind: ObjectKind, json: &[u8]) -> Result<(), String> {
        let decoded = decode_json_object("the informer", kind, json);
        let object = decoded.map_err(|e| format!("a {} from the informer: {e}", kind.resource()))?;
        if let Some(object) = object {
            self.writer.apply(vec![Change::Upsert(object)]);
        }
        Ok(())
    }

    /// An informer's delete: the object's namespace (empty for cluster-scoped kinds) and name.
    pub fn delete(&self, kind: ObjectKind, namespace: &str, name: &str) {
        self.writer.apply(vec![Change::Delete(kind, (namespace.to_string(), name.to_string()))]);
    }

    /// Starts a cycle for the pod the model holds as `namespace/name` at `resource_version`, or
    /// for `pod` (JSON) when given and the model's copy is missing or another version.
    pub fn cycle(
        &self,
        namespace: &str,
        name: &str,
        resource_version: &str,
        pod: Option<&[u8]>,
    ) -> Result<Cycle, CycleError> {
        let snapshot = self.writer.store().snapshot();
        let held = snapshot
            .pod(namespace, name)
            .filter(|p| p.pod.metadata.resource_version == resource_version)
            .map(|p| p.pod.clone());
        let pod = match (held, pod) {
            (Some(held), _) => held,
            (None, Some(json)) => serde_json::from_slice::<Pod>(json).map_err(|e| CycleError::BadPod(e.to_string()))?,
            (None, None) => return Err(CycleError::NeedPod),
        };
        let plan = self.plan.load_full();
        let prepared = Prepared::new(&plan, pod, &ClusterView::of(&snapshot));
        Ok(Cycle { plan, snapshot, prepared })
    }

    /// Reserve: the cycle's pod counts on `node` at once, until the informer reports it bound
    /// or Unreserve forgets it.
    pub fn reserve(&self, cycle: &Cycle, node: &str) {
        self.writer.assume(cycle.prepared.pod.pod.clone(), node, ASSUME_TTL);
    }

    /// Ends the assumptions no informer event confirmed within their time-to-live; how many.
    pub fn expire_assumed(&self) -> usize {
        self.writer.expire_assumed(std::time::Instant::now()).len()
    }

    /// Unreserve: the pod stops counting on `node`, back as the informer last had it.
    pub fn unreserve(&self, namespace: &str, name: &str, node: &str) {
        self.writer.forget(&(namespace.to_string(), name.to_string()), node);
    }

    /// How many pods the model holds (for the ABI's tests and the plugin's log).
    pub fn pod_count(&self) -> usize {
        self.writer.store().snapshot().pod_count()
    }
}

impl Cycle {
    /// The pod against one node: kube-scheduler's `podFitsOnNode` over the plan's predicates, with
    /// the nominated pods of the model.
    pub fn filter(&self, node: &str) -> NodeVerdict {
        let Some((info, nominated)) = self.snapshot.candidate(node) else { return NodeVerdict::Unknown };
        verdict(fits_on_node(&self.plan, &self.prepared, &info, &nominated))
    }

    /// [`Cycle::filter`] on the node as kube-scheduler's framework has changed it for a simulation
    /// (its PreFilterExtensions' RemovePod and AddPod): `removed` and `added` are pods of the model,
    /// by `(namespace, name)`. Preemption removes lower-priority pods to see whether the pod then
    /// fits, and adds back the ones it can spare; kube-scheduler's own double pass adds the
    /// nominated pods. One pass on the changed node: kube-scheduler runs the passes itself here.
    pub fn filter_adjusted(&self, node: &str, removed: &[(&str, &str)], added: &[(&str, &str)]) -> NodeVerdict {
        let Some((info, _)) = self.snapshot.candidate(node) else { return NodeVerdict::Unknown };
        let find = |keys: &[(&str, &str)]| -> Vec<Arc<PodInfo>> {
            keys.iter().filter_map(|(ns, name)| self.snapshot.pod(ns, name).cloned()).collect()
        };
        // A pod removed and added back (a victim preemption can spare) is where it was.
        let (removed, added): (Vec<_>, Vec<_>) = {
            let (r, a) = (find(removed), find(added));
            let back = |p: &Arc<PodInfo>, other: &[Arc<PodInfo>]| other.iter().any(|o| o.pod.is_same_pod(&p.pod));
            (
                r.iter().filter(|p| !back(p, &a)).cloned().collect(),
                a.iter().filter(|p| !back(p, &r) && p.pod.spec.node_name != node).cloned().collect(),
            )
        };
        let removed: Vec<&Arc<PodInfo>> = removed.iter().collect();
        let added: Vec<&Arc<PodInfo>> = added.iter().collect();
        let without = info.without_pods(&removed);
        let prepared_without = self.prepared.with_removed_pods(&info, &removed);
        let prepared_without = prepared_without.as_ref().unwrap_or(&self.prepared);
        let changed = without.with_added_pods(added.iter().copied());
        let prepared = prepared_without.with_added_pods(&without, &added);
        let prepared = prepared.as_ref().unwrap_or(prepared_without);
        verdict(run_predicates(&self.plan, prepared, &changed))
    }

    /// The plan's priorities over the feasible nodes, combined and weighted as the extender's
    /// `/prioritize` answers them (0..=10 each; the plugin scales them to kube-scheduler's 0..=100).
    pub fn scores(&self, evaluator: &InProcess, nodes: &[&str]) -> Vec<i64> {
        let candidates: Vec<Candidate> = nodes
            .iter()
            .map(|n| match self.snapshot.candidate(n) {
                Some((info, nominated)) => Candidate::Known(info, nominated),
                None => Candidate::Unknown((*n).to_string()),
            })
            .collect();
        let view = ClusterView::of(&self.snapshot);
        let pod = PodContext::for_version(self.prepared.pod.pod.clone(), self.snapshot.scheduler_version());
        // Never cancelled: kube-scheduler's cycle waits for its PreScore.
        prioritize(&evaluator.evaluator, &self.plan, &pod, &view, &candidates, &CancelFlag::new())
            .unwrap_or_else(|_| vec![0; nodes.len()])
    }
}

// The plugin calls an engine and its cycles from many goroutines at once (Filter runs on
// kube-scheduler's parallel workers): both must be shareable across threads.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<InProcess>();
    shareable::<Cycle>();
};

/// The verdict of a node's reasons: resolvable by preemption or not, as `/filter` splits them.
fn verdict(reasons: Result<Vec<Reason>, MissingState>) -> NodeVerdict {
    match reasons {
        Ok(reasons) if reasons.is_empty() => NodeVerdict::Fits,
        Ok(reasons) => {
            let text = predicate_engine::framework::reason::joined(&reasons).into_owned();
            if reasons.iter().all(Reason::is_resolvable) {
                NodeVerdict::Unschedulable(text)
            } else {
                NodeVerdict::Unresolvable(text)
            }
        }
        Err(missing) => NodeVerdict::Unresolvable(missing.to_string()),
    }
}
