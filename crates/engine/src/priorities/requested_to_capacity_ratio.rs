//! RequestedToCapacityRatioPriority: scores each listed resource's utilisation (requested with the
//! pod, over allocatable) through a piecewise linear `shape`, and takes the weighted mean, as
//! upstream's `RequestedToCapacityRatioResourceAllocationPriority` (kube-scheduler 1.15-1.17,
//! pkg/scheduler/algorithm/priorities/requested_to_capacity_ratio.go; Policy argument
//! `requestedToCapacityRatioArguments` of pkg/scheduler/api/types.go:
//! `{"shape": [{"utilization": 0, "score": 0}, ...], "resources": [{"name": "cpu", "weight": 1}]}`).
//!
//! Per resource: `utilization = 100 - (capacity - requested) * 100 / capacity` (integer division),
//! or 100 when the capacity is 0 or the requests exceed it; its score is the shape's value there
//! (integer arithmetic between points, the first point's score before it, the last's after it).
//! Resources whose score is 0 take no part in the mean (upstream's `if resourceScore > 0`); the
//! node's score is `round(sum(score * weight) / sum(weight))`, half away from zero (`math.Round`),
//! or 0 when no resource scored. cpu and memory count non-zero requests (100m / 200Mi for a
//! container that asks none), other resources their real requests (see
//! [`resource_allocation`](super::resource_allocation)).
//!
//! Without an argument (the entry names `RequestedToCapacityRatioPriority` alone) upstream
//! 1.14-1.17 registers the default: shape `{0, 10}, {100, 0}` (least requested) over cpu and
//! memory with weight 1 each; so does this. `resources` left out or empty means that same cpu:1,
//! memory:1; a weight left out or 0 means 1, as upstream.
//!
//! Stricter than upstream (which logs, ignores or fails later): fields must be known and of the
//! right JSON type, both fields of a shape point must be given, resource names must be ones the
//! scheduler counts (`cpu`, `memory`, `ephemeral-storage`, or an extended, `hugepages-*`,
//! `kubernetes.io/` or `attachable-volumes-*` name; upstream silently scores any other name, such
//! as the docs' `CPU`, as a full resource) and listed once.

use std::sync::Arc;

use serde_json::Value;

use crate::cluster::NodeInfo;
use crate::framework::ClusterView;
use crate::framework::{ArgumentError, Candidate, PodContext};
use crate::framework::{Priority, PriorityArgs, Scorer, MAX_PRIORITY};
use crate::priorities::resource_allocation::{mul_div, ResourceKey};

const ARG: &str = "argument.requestedToCapacityRatioArguments";
const MAX_UTILIZATION: i64 = 100;

/// One point of the shape: the score at a utilisation (percent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapePoint {
    pub utilization: i64,
    pub score: i64,
}

/// The validated argument.
#[derive(Debug, PartialEq, Eq)]
pub struct Config {
    /// At least one point, utilisations strictly increasing in 0..=100, scores in 0..=10.
    pub shape: Vec<ShapePoint>,
    /// Each resource once, with its weight (>= 1).
    pub resources: Vec<(ResourceKey, i64)>,
}

impl Config {
    /// Upstream's default: least requested over cpu and memory.
    pub fn default_least_requested() -> Config {
        Config {
            shape: vec![ShapePoint { utilization: 0, score: 10 }, ShapePoint { utilization: 100, score: 0 }],
            resources: default_resources(),
        }
    }

    /// Upstream's `buildBrokenLinearFunction`: the shape's value at utilisation `p`.
    pub fn shape_score(&self, p: i64) -> i64 {
        let mut previous: Option<ShapePoint> = None;
        for point in &self.shape {
            if p <= point.utilization {
                return match previous {
                    None => point.score,
                    Some(prev) => {
                        prev.score
                            + (point.score - prev.score) * (p - prev.utilization)
                                / (point.utilization - prev.utilization)
                    }
                };
            }
            previous = Some(*point);
        }
        previous.map_or(0, |last| last.score)
    }

    /// Upstream's `resourceScoringFunction`: the score of one resource.
    pub fn resource_score(&self, requested: i64, capacity: i64) -> i64 {
        if capacity == 0 || requested > capacity {
            return self.shape_score(MAX_UTILIZATION);
        }
        self.shape_score(MAX_UTILIZATION - mul_div(capacity - requested, MAX_UTILIZATION, capacity))
    }
}

fn default_resources() -> Vec<(ResourceKey, i64)> {
    vec![(ResourceKey::Memory, 1), (ResourceKey::Cpu, 1)]
}

#[derive(Debug)]
pub struct RequestedToCapacityRatio {
    name: String,
    config: Arc<Config>,
}

/// The registry name.
pub const NAME: &str = "RequestedToCapacityRatioPriority";

pub fn build(args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    let config = match args.argument {
        None => Config::default_least_requested(),
        Some(value) => parse(value)?,
    };
    Ok(Arc::new(RequestedToCapacityRatio { name: args.name.to_string(), config: Arc::new(config) }))
}

fn integer(value: Option<&Value>, at: &str) -> Result<i64, ArgumentError> {
    match value {
        None => Err(ArgumentError::new(at, "missing")),
        Some(v) => v.as_i64().ok_or_else(|| ArgumentError::new(at, format!("must be an integer, found {v}"))),
    }
}

fn object<'a>(value: &'a Value, at: &str, known: &[&str]) -> Result<&'a serde_json::Map<String, Value>, ArgumentError> {
    let map = value
        .as_object()
        .ok_or_else(|| ArgumentError::new(at, format!("must be an object with {}", known.join(", "))))?;
    if let Some(unknown) = map.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(ArgumentError::new(
            format!("{at}.{unknown}"),
            format!("unknown field; expected {}", known.join(" or ")),
        ));
    }
    Ok(map)
}

/// Reads and validates the argument (the value under `requestedToCapacityRatioArguments`).
pub fn parse(value: &Value) -> Result<Config, ArgumentError> {
    let map = object(value, ARG, &["shape", "resources"])?;

    let points = match map.get("shape") {
        None | Some(Value::Null) => {
            return Err(ArgumentError::new(format!("{ARG}.shape"), "missing; give at least one point"))
        }
        Some(Value::Array(points)) => points,
        Some(other) => {
            return Err(ArgumentError::new(format!("{ARG}.shape"), format!("must be a list of points, found {other}")))
        }
    };
    if points.is_empty() {
        return Err(ArgumentError::new(format!("{ARG}.shape"), "must list at least one point"));
    }
    let mut shape: Vec<ShapePoint> = Vec::with_capacity(points.len());
    for (i, point) in points.iter().enumerate() {
        let at = format!("{ARG}.shape[{i}]");
        let p = object(point, &at, &["utilization", "score"])?;
        let utilization = integer(p.get("utilization"), &format!("{at}.utilization"))?;
        let score = integer(p.get("score"), &format!("{at}.score"))?;
        if !(0..=MAX_UTILIZATION).contains(&utilization) {
            return Err(ArgumentError::new(
                format!("{at}.utilization"),
                format!("must be between 0 and {MAX_UTILIZATION}, found {utilization}"),
            ));
        }
        if let Some(prev) = shape.last() {
            if utilization <= prev.utilization {
                return Err(ArgumentError::new(
                    format!("{at}.utilization"),
                    format!("must be greater than the previous point's ({})", prev.utilization),
                ));
            }
        }
        if !(0..=MAX_PRIORITY).contains(&score) {
            return Err(ArgumentError::new(
                format!("{at}.score"),
                format!("must be between 0 and {MAX_PRIORITY}, found {score}"),
            ));
        }
        shape.push(ShapePoint { utilization, score });
    }

    let listed = match map.get("resources") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(list)) => &list[..],
        Some(other) => {
            return Err(ArgumentError::new(
                format!("{ARG}.resources"),
                format!("must be a list of resources, found {other}"),
            ))
        }
    };
    let mut resources: Vec<(ResourceKey, i64)> = Vec::with_capacity(listed.len());
    for (i, resource) in listed.iter().enumerate() {
        let at = format!("{ARG}.resources[{i}]");
        let r = object(resource, &at, &["name", "weight"])?;
        let name = match r.get("name") {
            None => return Err(ArgumentError::new(format!("{at}.name"), "missing")),
            Some(Value::String(s)) if s.is_empty() => {
                return Err(ArgumentError::new(format!("{at}.name"), "must not be empty"))
            }
            Some(Value::String(s)) => s,
            Some(other) => {
                return Err(ArgumentError::new(format!("{at}.name"), format!("must be a string, found {other}")))
            }
        };
        let key = ResourceKey::of(name).ok_or_else(|| {
            ArgumentError::new(
                format!("{at}.name"),
                format!(
                    "{name:?} is not a resource the scheduler counts (cpu, memory, ephemeral-storage, or an \
                 extended, hugepages-*, kubernetes.io/ or attachable-volumes-* resource name)"
                ),
            )
        })?;
        if resources.iter().any(|(k, _)| *k == key) {
            return Err(ArgumentError::new(format!("{at}.name"), format!("{name:?} is listed twice")));
        }
        let weight = match r.get("weight") {
            None | Some(Value::Null) => 0,
            Some(v) => integer(Some(v), &format!("{at}.weight"))?,
        };
        if weight < 0 {
            return Err(ArgumentError::new(
                format!("{at}.weight"),
                format!("must be at least 1 (0 or none means 1), found {weight}"),
            ));
        }
        // Upstream: "weight 0 (or left out) means the default, 1".
        resources.push((key, weight.max(1)));
    }
    if resources.is_empty() {
        resources = default_resources();
    }
    Ok(Config { shape, resources })
}

impl Priority for RequestedToCapacityRatio {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&self, pod: &PodContext, _view: &ClusterView<'_>, _candidates: &[Candidate]) -> Box<dyn Scorer> {
        let pod_requests = self.config.resources.iter().map(|(key, _)| key.pod_request(pod)).collect();
        Box::new(RatioScorer { config: Arc::clone(&self.config), pod_requests })
    }
}

struct RatioScorer {
    config: Arc<Config>,
    /// The pod's request of each of `config.resources`, in order.
    pod_requests: Vec<i64>,
}

impl Scorer for RatioScorer {
    fn score(&self, _pod: &PodContext, node: &NodeInfo) -> i64 {
        let mut total: i128 = 0;
        let mut weights: i128 = 0;
        for ((key, weight), pod_request) in self.config.resources.iter().zip(&self.pod_requests) {
            let (requested, capacity) = key.requested_and_allocatable(*pod_request, node);
            let score = self.config.resource_score(requested, capacity);
            if score > 0 {
                total += i128::from(score) * i128::from(*weight);
                weights += i128::from(*weight);
            }
        }
        if weights == 0 {
            return 0;
        }
        // math.Round(total / weights) for non-negative values: half rounds up.
        i64::try_from((2 * total + weights) / (2 * weights)).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::objects::{Node, Pod};
    use crate::priorities::resource_allocation::test_support::upstream::make_node;
    use crate::priorities::resource_allocation::test_support::{alloc_node as node, on, scores};
    use crate::testing::PodBuilder;
    use serde_json::json;

    fn with(argument: Option<&Value>) -> Arc<dyn Priority> {
        build(&PriorityArgs {
            name: "RequestedToCapacityRatioPriority",
            argument,
            hard_pod_affinity_symmetric_weight: 1,
        })
        .unwrap()
    }

    /// The two worked examples of the Kubernetes docs (Scheduling and Eviction, "Resource Bin
    /// Packing", "Node scoring for capacity allocation").
    ///
    /// The docs write memory as "256MB" and "1 GB" but compute with 256 and 1024, so the test uses
    /// 256Mi and 1Gi to follow their arithmetic exactly (with decimal units node 1's memory would
    /// be utilisation 52 and node 2's 77: the same scores, 5 and 7).
    ///
    /// The docs use the raw requests ("CPU: 2"). This priority counts non-zero requests for cpu
    /// and memory, but the non-zero rule only replaces a container's *missing* cpu or memory
    /// request with 100m / 200Mi: every container here, the incoming pod's and the placed ones',
    /// asks for cpu and memory explicitly, so non-zero and raw requests are the same and the docs'
    /// numbers are reproduced as they are.
    #[test]
    fn docs_worked_examples_score_5_and_7() {
        let argument = json!({
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
            "resources": [
                {"name": "intel.com/foo", "weight": 5},
                {"name": "memory", "weight": 1},
                {"name": "cpu", "weight": 3}
            ]
        });
        let pod = PodBuilder::new("p").req(&[("intel.com/foo", "2"), ("memory", "256Mi"), ("cpu", "2")]).build();
        let nodes = vec![
            node("node1", &[("intel.com/foo", "4"), ("memory", "1Gi"), ("cpu", "8")]),
            node("node2", &[("intel.com/foo", "8"), ("memory", "1Gi"), ("cpu", "8")]),
        ];
        let placed = vec![
            on("node1", "used1", &[("intel.com/foo", "1"), ("memory", "256Mi"), ("cpu", "1")]),
            on("node2", "used2", &[("intel.com/foo", "2"), ("memory", "512Mi"), ("cpu", "6")]),
        ];
        // Node 1:
        //   intel.com/foo: requested 2+1 = 3 of 4: 100 - (4-3)*100/4 = 100 - 25 = 75 -> score
        //                  75*10/100 = 7
        //   memory: 256Mi+256Mi = 512Mi of 1024Mi: 100 - 512*100/1024 = 50 -> 5
        //   cpu: 2000m+1000m = 3000m of 8000m: 100 - 5000*100/8000 = 100 - 62 = 38 -> 3
        //   (7*5 + 5*1 + 3*3) / (5+1+3) = 49/9 = 5.44 -> 5
        // Node 2:
        //   intel.com/foo: 2+2 = 4 of 8: 100 - 4*100/8 = 50 -> 5
        //   memory: 256Mi+512Mi = 768Mi of 1024Mi: 100 - 256*100/1024 = 75 -> 7
        //   cpu: 2000m+6000m = 8000m of 8000m: 100 - 0 = 100 -> 10
        //   (5*5 + 7*1 + 10*3) / 9 = 62/9 = 6.89 -> 7 (rounded, as upstream's math.Round; a floor
        //   would give 6)
        assert_eq!(scores(&with(Some(&argument)), pod, nodes, placed), vec![5, 7]);
    }

    #[test]
    fn scores_by_case() {
        struct Case {
            name: &'static str,
            argument: Option<Value>,
            pod: Pod,
            nodes: Vec<Node>,
            placed: Vec<Pod>,
            want: Vec<i64>,
        }
        let bin_packing = json!([{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]);
        let cases = vec![
            Case {
                // Default shape {0,10},{100,0} over cpu:1, memory:1. A pod without containers
                // requests nothing: utilisation 0 -> 10 for both: 10.
                name: "default, nothing requested",
                argument: None,
                pod: PodBuilder::new("p").build(),
                nodes: vec![node("a", &[("cpu", "4"), ("memory", "10000")])],
                placed: vec![],
                want: vec![10],
            },
            Case {
                // Default shape. a: cpu 3000 of 4000: 100 - 1000*100/4000 = 75 -> 10 + (0-10)*75/100
                // = 10 - 7 = 3; memory 5000 of 10000: 50 -> 10 - 5 = 5; round(8/2) = 4.
                // b: cpu 3000 of 6000: 50 -> 5; memory 5; round(10/2) = 5.
                name: "default, differently sized nodes",
                argument: None,
                pod: PodBuilder::new("p").req(&[("cpu", "3"), ("memory", "5000")]).build(),
                nodes: vec![
                    node("a", &[("cpu", "4"), ("memory", "10000")]),
                    node("b", &[("cpu", "6"), ("memory", "10000")]),
                ],
                placed: vec![],
                want: vec![4, 5],
            },
            Case {
                // Default shape; the pod asks for nothing and counts 100m / 200Mi.
                // cpu 100 of 1000: 100 - 900*100/1000 = 10 -> 10 + (-10*10)/100 = 9;
                // memory 200Mi of 1Gi: 100 - 824*100/1024 = 100 - 80 = 20 -> 10 - 2 = 8;
                // round(17/2 = 8.5) = 9 (half away from zero).
                name: "default, non-zero requests, half rounds up",
                argument: None,
                pod: PodBuilder::new("p").req(&[]).build(),
                nodes: vec![node("a", &[("cpu", "1"), ("memory", "1Gi")])],
                placed: vec![],
                want: vec![9],
            },
            Case {
                // Bin packing over intel.com/foo alone (upstream's single-extended test).
                // machine1: 0+2 of 8: 100 - 6*100/8 = 100 - 75 = 25 -> 2.
                // machine2: 2+2 of 4: 100 -> 10.
                name: "one extended resource",
                argument: Some(json!({"shape": bin_packing, "resources": [{"name": "intel.com/foo"}]})),
                pod: PodBuilder::new("p").req(&[("intel.com/foo", "2")]).build(),
                nodes: vec![node("machine1", &[("intel.com/foo", "8")]), node("machine2", &[("intel.com/foo", "4")])],
                placed: vec![on("machine2", "x", &[("intel.com/foo", "2")])],
                want: vec![2, 10],
            },
            Case {
                // Bin packing over intel.com/foo (weight 3) and cpu (weight 1); the pod asks
                // 2 cpu and no foo. foo: 0 of 8, utilisation 0 -> score 0, so it takes no part
                // in the mean (upstream's `if resourceScore > 0`); cpu: 2000 of 4000: 50 -> 5.
                // Score 5*1/1 = 5, not (0*3 + 5*1)/4 = 1.
                name: "resources scoring 0 are left out of the mean",
                argument: Some(json!({"shape": bin_packing, "resources": [
                    {"name": "intel.com/foo", "weight": 3}, {"name": "cpu"}
                ]})),
                pod: PodBuilder::new("p").req(&[("cpu", "2"), ("memory", "1Gi")]).build(),
                nodes: vec![node("a", &[("cpu", "4"), ("intel.com/foo", "8")])],
                placed: vec![],
                want: vec![5],
            },
            Case {
                // Bin packing over intel.com/foo. a has none: capacity 0 scores utilisation 100
                // -> 10 (upstream 1.14-1.17; later versions skip such a resource).
                // b: the placed pods ask 5 of 4: over capacity, utilisation 100 -> 10.
                // c: 1 of 4: 100 - 3*100/4 = 25 -> 2.
                name: "no capacity and overcommitted score as full",
                argument: Some(json!({"shape": bin_packing, "resources": [{"name": "intel.com/foo"}]})),
                pod: PodBuilder::new("p").req(&[("intel.com/foo", "1")]).build(),
                nodes: vec![node("a", &[]), node("b", &[("intel.com/foo", "4")]), node("c", &[("intel.com/foo", "4")])],
                placed: vec![on("b", "x", &[("intel.com/foo", "4")])],
                want: vec![10, 10, 2],
            },
            Case {
                // A three-point shape {0,0},{50,10},{100,0} favours half-full nodes.
                // a: cpu 1000 of 4000: 100 - 75 = 25 -> 0 + 10*25/50 = 5.
                // b: cpu 2000 of 4000: 50 -> 10.
                // c: cpu 3000 of 4000: 75 -> 10 + (0-10)*(75-50)/50 = 10 - 5 = 5.
                name: "a peaked shape",
                argument: Some(json!({"shape": [
                    {"utilization": 0, "score": 0}, {"utilization": 50, "score": 10}, {"utilization": 100, "score": 0}
                ], "resources": [{"name": "cpu", "weight": 2}]})),
                pod: PodBuilder::new("p").req(&[("cpu", "1")]).build(),
                nodes: vec![node("a", &[("cpu", "4")]), node("b", &[("cpu", "4")]), node("c", &[("cpu", "4")])],
                placed: vec![on("b", "x", &[("cpu", "1")]), on("c", "y", &[("cpu", "2")])],
                want: vec![5, 10, 5],
            },
        ];
        for c in cases {
            let priority = with(c.argument.as_ref());
            assert_eq!(scores(&priority, c.pod, c.nodes, c.placed), c.want, "{}", c.name);
        }
    }

    /// upstream: TestRequestedToCapacityRatio (1.15-1.16 requested_to_capacity_ratio_test.go),
    /// every case, default shape and resources. Upstream's `buildResourcesPod` writes every
    /// request, zeros included (`resources{0, 0}` is `cpu: 0, memory: 0`), for the incoming pod
    /// and the placed ones: those zeros count as zero, not as 100m / 200Mi.
    #[test]
    fn upstream_requested_to_capacity_ratio_table() {
        let pod_asking = |name: &str, node: &str, cpu: i64, memory: i64| {
            PodBuilder::new(name)
                .node(node)
                .req(&[("cpu", &format!("{cpu}m")), ("memory", &memory.to_string())])
                .build()
        };
        // (name, (capacity cpu, memory), (used cpu, memory)) per node.
        type Nodes = [(&'static str, (i64, i64), (i64, i64)); 2];
        // (case, the pod's (cpu, memory) requests, nodes, expected scores).
        type Case = (&'static str, (i64, i64), Nodes, Vec<i64>);
        let cases: [Case; 3] = [
            (
                "nothing scheduled, nothing requested (default - least requested nodes have priority)",
                (0, 0),
                [("node1", (4000, 10000), (0, 0)), ("node2", (4000, 10000), (0, 0))],
                vec![10, 10],
            ),
            (
                "nothing scheduled, resources requested, differently sized machines (default - least requested nodes have priority)",
                (3000, 5000),
                [("node1", (4000, 10000), (0, 0)), ("node2", (6000, 10000), (0, 0))],
                vec![4, 5],
            ),
            (
                "no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
                (0, 0),
                [("node1", (4000, 10000), (3000, 5000)), ("node2", (6000, 10000), (3000, 5000))],
                vec![4, 5],
            ),
        ];
        for (name, (cpu, memory), nodes, want) in cases {
            let placed = nodes.iter().map(|(n, _, (c, m))| pod_asking(&format!("used-{n}"), n, *c, *m)).collect();
            let nodes = nodes.iter().map(|(n, (c, m), _)| make_node(n, *c, *m)).collect();
            assert_eq!(scores(&with(None), pod_asking("p", "", cpu, memory), nodes, placed), want, "{name}");
        }
    }

    #[test]
    fn shape_score_is_upstreams_broken_linear_function() {
        let shape = |points: &[(i64, i64)]| Config {
            shape: points.iter().map(|&(utilization, score)| ShapePoint { utilization, score }).collect(),
            resources: default_resources(),
        };
        // {10,1},{90,9}: before the first point its score; between, 1 + 8*(p-10)/80; after, 9.
        let c = shape(&[(10, 1), (90, 9)]);
        for (p, want) in [(-10, 1), (0, 1), (10, 1), (19, 1), (20, 2), (89, 8), (90, 9), (100, 9), (110, 9)] {
            assert_eq!(c.shape_score(p), want, "p={p}");
        }
        // {0,2},{40,10},{100,0}: 20 -> 2 + 8*20/40 = 6; 70 -> 10 + (-10)*30/60 = 5.
        let c = shape(&[(0, 2), (40, 10), (100, 0)]);
        for (p, want) in [(0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)] {
            assert_eq!(c.shape_score(p), want, "p={p}");
        }
        // One point: its score everywhere.
        let c = shape(&[(50, 7)]);
        for p in [0, 50, 100] {
            assert_eq!(c.shape_score(p), 7);
        }
        // The default, truncating toward zero like Go: 25 -> 10 + (-10*25)/100 = 10 - 2 = 8.
        assert_eq!(Config::default_least_requested().shape_score(25), 8);
    }

    #[test]
    fn parses_defaults() {
        let c = parse(&json!({"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]})).unwrap();
        assert_eq!(c.resources, default_resources());
        let c = parse(&json!({"shape": [{"utilization": 0, "score": 0}], "resources": []})).unwrap();
        assert_eq!(c.resources, default_resources());
        let c = parse(&json!({"shape": [{"utilization": 0, "score": 0}], "resources": [
            {"name": "nvidia.com/gpu"}, {"name": "cpu", "weight": 0}, {"name": "memory", "weight": 4}
        ]}))
        .unwrap();
        assert_eq!(
            c.resources,
            vec![
                (ResourceKey::Scalar("nvidia.com/gpu".to_string()), 1),
                (ResourceKey::Cpu, 1),
                (ResourceKey::Memory, 4)
            ]
        );
    }

    #[test]
    fn validation_names_the_field() {
        let ok_shape = json!([{"utilization": 0, "score": 0}]);
        let cases = vec![
            (json!([]), "argument.requestedToCapacityRatioArguments: must be an object with shape, resources"),
            (json!({}), "argument.requestedToCapacityRatioArguments.shape: missing; give at least one point"),
            (json!({"shape": []}), "argument.requestedToCapacityRatioArguments.shape: must list at least one point"),
            (json!({"shape": {}}), "argument.requestedToCapacityRatioArguments.shape: must be a list of points, found {}"),
            (
                json!({"shape": ok_shape, "utilizationShape": []}),
                "argument.requestedToCapacityRatioArguments.utilizationShape: unknown field; expected shape or resources",
            ),
            (
                json!({"shape": [{"utilization": 0}]}),
                "argument.requestedToCapacityRatioArguments.shape[0].score: missing",
            ),
            (
                json!({"shape": [{"utilization": 0.5, "score": 1}]}),
                "argument.requestedToCapacityRatioArguments.shape[0].utilization: must be an integer, found 0.5",
            ),
            (
                json!({"shape": [{"utilization": 0, "score": 0}, {"utilization": 50, "score": 5}, {"utilization": 50, "score": 10}]}),
                "argument.requestedToCapacityRatioArguments.shape[2].utilization: must be greater than the previous point's (50)",
            ),
            (
                json!({"shape": [{"utilization": 60, "score": 0}, {"utilization": 50, "score": 5}]}),
                "argument.requestedToCapacityRatioArguments.shape[1].utilization: must be greater than the previous point's (60)",
            ),
            (
                json!({"shape": [{"utilization": -1, "score": 0}]}),
                "argument.requestedToCapacityRatioArguments.shape[0].utilization: must be between 0 and 100, found -1",
            ),
            (
                json!({"shape": [{"utilization": 0, "score": 0}, {"utilization": 101, "score": 10}]}),
                "argument.requestedToCapacityRatioArguments.shape[1].utilization: must be between 0 and 100, found 101",
            ),
            (
                json!({"shape": [{"utilization": 0, "score": 11}]}),
                "argument.requestedToCapacityRatioArguments.shape[0].score: must be between 0 and 10, found 11",
            ),
            (
                json!({"shape": [{"utilization": 0, "score": -1}]}),
                "argument.requestedToCapacityRatioArguments.shape[0].score: must be between 0 and 10, found -1",
            ),
            (
                json!({"shape": ok_shape, "resources": {"cpu": 1}}),
                "argument.requestedToCapacityRatioArguments.resources: must be a list of resources, found {\"cpu\":1}",
            ),
            (
                json!({"shape": ok_shape, "resources": [{"weight": 1}]}),
                "argument.requestedToCapacityRatioArguments.resources[0].name: missing",
            ),
            (
                json!({"shape": ok_shape, "resources": [{"name": ""}]}),
                "argument.requestedToCapacityRatioArguments.resources[0].name: must not be empty",
            ),
            (
                json!({"shape": ok_shape, "resources": [{"name": "cpu"}, {"name": "CPU"}]}),
                "argument.requestedToCapacityRatioArguments.resources[1].name: \"CPU\" is not a resource the scheduler \
                 counts (cpu, memory, ephemeral-storage, or an extended, hugepages-*, kubernetes.io/ or \
                 attachable-volumes-* resource name)",
            ),
            (
                json!({"shape": ok_shape, "resources": [{"name": "cpu"}, {"name": "cpu", "weight": 2}]}),
                "argument.requestedToCapacityRatioArguments.resources[1].name: \"cpu\" is listed twice",
            ),
            (
                json!({"shape": ok_shape, "resources": [{"name": "cpu", "weight": -1}]}),
                "argument.requestedToCapacityRatioArguments.resources[0].weight: must be at least 1 (0 or none means 1), found -1",
            ),
            (
                json!({"shape": ok_shape, "resources": [{"name": "cpu", "weight": "2"}]}),
                "argument.requestedToCapacityRatioArguments.resources[0].weight: must be an integer, found \"2\"",
            ),
            (
                json!({"shape": ok_shape, "resources": [{"name": "cpu", "wieght": 2}]}),
                "argument.requestedToCapacityRatioArguments.resources[0].wieght: unknown field; expected name or weight",
            ),
        ];
        for (argument, want) in cases {
            let got = build(&PriorityArgs {
                name: "RequestedToCapacityRatioPriority",
                argument: Some(&argument),
                hard_pod_affinity_symmetric_weight: 1,
            })
            .map(|_| ())
            .unwrap_err();
            assert_eq!(got.to_string(), want, "{argument}");
        }
    }

    /// The docs' Policy (YAML), and an invalid shape's error as the Policy loader reports it.
    #[test]
    fn through_a_policy_file() {
        let text = "apiVersion: v1
kind: Policy
priorities:
  - name: RequestedToCapacityRatioPriority
    weight: 2
    argument:
      requestedToCapacityRatioArguments:
        shape:
          - utilization: 0
            score: 0
          - utilization: 100
            score: 10
        resources:
          - name: intel.com/foo
            weight: 3
          - name: intel.com/bar
            weight: 5
";
        let plan = crate::policy::parse("policy.yaml", text.as_bytes(), crate::policy::Overrides::default()).unwrap();
        assert_eq!(plan.priority_names(), vec![("RequestedToCapacityRatioPriority", 2)]);

        let bad = text.replace("utilization: 100", "utilization: 0");
        let err = crate::policy::parse("policy.yaml", bad.as_bytes(), crate::policy::Overrides::default())
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "policy.yaml: priorities[0] (\"RequestedToCapacityRatioPriority\"): \
             argument.requestedToCapacityRatioArguments.shape[1].utilization: must be greater than the previous \
             point's (0)"
        );
    }

    #[test]
    fn keeps_a_custom_name() {
        let argument = json!({"shape": [{"utilization": 0, "score": 0}]});
        let p =
            build(&PriorityArgs { name: "binpack", argument: Some(&argument), hard_pod_affinity_symmetric_weight: 1 })
                .unwrap();
        assert_eq!(p.name(), "binpack");
        assert_eq!(with(None).name(), "RequestedToCapacityRatioPriority");
    }
}
