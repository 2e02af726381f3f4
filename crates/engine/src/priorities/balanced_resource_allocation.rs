//! BalancedResourceAllocation: favours nodes whose cpu and memory would be used in the same
//! proportion, as upstream's `BalancedResourceAllocationMap` (kube-scheduler 1.14-1.17,
//! pkg/scheduler/algorithm/priorities/balanced_resource_allocation.go):
//! `cpuFraction = requested / allocatable` (1 when allocatable is 0), the same for memory; 0 when
//! either fraction is >= 1, else `int64((1 - |cpuFraction - memoryFraction|) * 10)` in floating
//! point, truncated. `requested` is the node's non-zero requests plus the pod's.
//!
//! Volumes are not counted: upstream adds a volume fraction (and switches to the variance of the
//! three fractions) only behind the `BalanceAttachedNodeVolumes` feature gate, which is alpha and
//! off by default in every version this follows (1.14-1.17), so the default behaviour is the
//! cpu/memory formula above.

use std::sync::Arc;

use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{ArgumentError, Priority, PriorityArgs, MAX_PRIORITY};
use crate::priorities::resource_allocation::cpu_and_memory;
use crate::priorities::NodeScore;

/// The registry name.
pub const NAME: &str = "BalancedResourceAllocation";

pub fn build(args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    NodeScore { name: NAME, score }.build(args)
}

/// Upstream's `fractionOfCapacity`.
fn fraction_of_capacity(requested: i64, capacity: i64) -> f64 {
    if capacity == 0 {
        return 1.0;
    }
    requested as f64 / capacity as f64
}

/// Upstream's `balancedResourceScorer` without volumes.
pub fn balanced_score(cpu: i64, cpu_capacity: i64, memory: i64, memory_capacity: i64) -> i64 {
    let cpu_fraction = fraction_of_capacity(cpu, cpu_capacity);
    let memory_fraction = fraction_of_capacity(memory, memory_capacity);
    if cpu_fraction >= 1.0 || memory_fraction >= 1.0 {
        // Requested >= capacity: never prefer the node.
        return 0;
    }
    let diff = (cpu_fraction - memory_fraction).abs();
    ((1.0 - diff) * MAX_PRIORITY as f64) as i64
}

/// The score of one node.
fn score(pod: &PodContext, node: &NodeInfo) -> i64 {
    let (cpu, cpu_capacity, memory, memory_capacity) = cpu_and_memory(pod, node);
    balanced_score(cpu, cpu_capacity, memory, memory_capacity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priorities::resource_allocation::test_support::{check, node, on, scores, ScoreCase};
    use crate::testing::PodBuilder;

    #[test]
    fn scores_follow_the_fraction_difference() {
        let cases = vec![
            ScoreCase {
                // a: cpu 3000/4000 = 0.75, memory 5000/10000 = 0.5: (1 - 0.25) * 10 = 7.5 -> 7.
                // b: cpu 3000/6000 = 0.5, memory 0.5: 10.
                name: "differently sized nodes",
                pod: PodBuilder::new("p").req(&[("cpu", "3"), ("memory", "5000")]).build(),
                nodes: vec![node("a", "4", "10000"), node("b", "6", "10000")],
                placed: vec![],
                want: vec![7, 10],
            },
            ScoreCase {
                // The pod asks for nothing: it counts 100m and 200Mi.
                // a: cpu (400+100)/1000 = 0.5, memory (312+200)Mi/1Gi = 0.5: 10.
                // b: cpu 100/1000 = 0.1, memory 200/1024 = 0.1953125: diff 0.0953125,
                //    (1 - 0.0953125) * 10 = 9.046875 -> 9.
                // c: cpu (1900+100)/4000 = 0.5, memory (1 byte + 200Mi)/1Gi = 0.1953125009: diff
                //    0.3046874991, (1 - diff) * 10 = 6.953125009 -> 6.
                name: "non-zero requests",
                pod: PodBuilder::new("p").req(&[]).build(),
                nodes: vec![node("a", "1", "1Gi"), node("b", "1", "1Gi"), node("c", "4", "1Gi")],
                placed: vec![
                    on("a", "x", &[("cpu", "400m"), ("memory", "312Mi")]),
                    on("c", "y", &[("cpu", "1900m"), ("memory", "1")]),
                ],
                want: vec![10, 9, 6],
            },
            ScoreCase {
                // a: cpu (900+100)/1000 = 1: fraction >= 1, 0.
                // b: memory (900+200)Mi/1Gi > 1: 0.
                // c: cpu allocatable 0: fraction 1, 0.
                // d: cpu (400+100)/1000 = 0.5, memory (824+200)Mi/1Gi = 1: 0 although cpu is half used.
                name: "full, over and without capacity",
                pod: PodBuilder::new("p").req(&[]).build(),
                nodes: vec![node("a", "1", "1Gi"), node("b", "1", "1Gi"), node("c", "0", "1Gi"), node("d", "1", "1Gi")],
                placed: vec![
                    on("a", "x", &[("cpu", "900m"), ("memory", "1Mi")]),
                    on("b", "y", &[("cpu", "1m"), ("memory", "900Mi")]),
                    on("d", "z", &[("cpu", "400m"), ("memory", "824Mi")]),
                ],
                want: vec![0, 0, 0, 0],
            },
        ];
        let priority = build(&PriorityArgs {
            name: "BalancedResourceAllocation",
            argument: None,
            hard_pod_affinity_symmetric_weight: 1,
        })
        .unwrap();
        check(&priority, cases);
    }

    #[test]
    fn balanced_score_edges() {
        assert_eq!(balanced_score(0, 0, 0, 10), 0);
        assert_eq!(balanced_score(0, 10, 0, 10), 10);
        // Floating point as upstream's: 1 - 0.9 is 0.09999999999999998, times 10 truncates to 0;
        // 1 - 0.8 is 0.19999999999999996, times 10 truncates to 1.
        assert_eq!(balanced_score(9, 10, 0, 10), 0);
        assert_eq!(balanced_score(8, 10, 0, 10), 1);
        // 0.3 - 0.1 is 0.19999999999999998 in floating point; (1 - it) * 10 is 8.000000000000002.
        assert_eq!(balanced_score(3, 10, 1, 10), 8);
    }

    /// upstream: TestBalancedResourceAllocation (1.12-1.16 balanced_resource_allocation_test.go),
    /// every case but "Include volume count on a node for balanced resource allocation" (the
    /// BalanceAttachedNodeVolumes alpha, which this priority does not implement), with its expected
    /// 0..10 scores. `cpuOnly` writes memory as "0", which counts as zero.
    #[test]
    fn upstream_balanced_resource_allocation_table() {
        use crate::priorities::resource_allocation::test_support::upstream::*;
        let two = |cpu: i64, memory: i64| vec![make_node("machine1", cpu, memory), make_node("machine2", cpu, memory)];
        let cases: Vec<Case> = vec![
            ("nothing scheduled, nothing requested", no_resources("p", ""), two(4000, 10000), vec![], vec![10, 10]),
            (
                "nothing scheduled, resources requested, differently sized machines",
                cpu_and_memory("p", ""),
                vec![make_node("machine1", 4000, 10000), make_node("machine2", 6000, 10000)],
                vec![],
                vec![7, 10],
            ),
            (
                "no resources requested, pods scheduled",
                no_resources("p", ""),
                two(4000, 10000),
                vec![
                    no_resources("a", "machine1"),
                    no_resources("b", "machine1"),
                    no_resources("c", "machine2"),
                    no_resources("d", "machine2"),
                ],
                vec![10, 10],
            ),
            (
                // machine1: cpu 6000/10000 = 0.6, memory 0/20000 = 0: 10 - 0.6*10 = 4.
                // machine2: cpu 0.6, memory 5000/20000 = 0.25: 10 - 0.35*10 = 6.5 -> 6.
                "no resources requested, pods scheduled with resources",
                no_resources("p", ""),
                two(10000, 20000),
                vec![
                    cpu_only("a", "machine1"),
                    cpu_only("b", "machine1"),
                    cpu_only("c", "machine2"),
                    cpu_and_memory("d", "machine2"),
                ],
                vec![4, 6],
            ),
            (
                "resources requested, pods scheduled with resources",
                cpu_and_memory("p", ""),
                two(10000, 20000),
                vec![cpu_only("a", "machine1"), cpu_and_memory("b", "machine2")],
                vec![6, 9],
            ),
            (
                "resources requested, pods scheduled with resources, differently sized machines",
                cpu_and_memory("p", ""),
                vec![make_node("machine1", 10000, 20000), make_node("machine2", 10000, 50000)],
                vec![cpu_only("a", "machine1"), cpu_and_memory("b", "machine2")],
                vec![6, 6],
            ),
            (
                "requested resources exceed node capacity",
                cpu_only("p", "machine1"),
                two(4000, 10000),
                vec![cpu_only("a", "machine1"), cpu_and_memory("b", "machine2")],
                vec![0, 0],
            ),
            (
                "zero node resources, pods scheduled with resources",
                no_resources("p", ""),
                two(0, 0),
                vec![cpu_only("a", "machine1"), cpu_and_memory("b", "machine2")],
                vec![0, 0],
            ),
        ];
        let priority = build(&PriorityArgs {
            name: "BalancedResourceAllocation",
            argument: None,
            hard_pod_affinity_symmetric_weight: 1,
        })
        .unwrap();
        for (name, pod, nodes, placed, want) in cases {
            assert_eq!(scores(&priority, pod, nodes, placed), want, "{name}");
        }
    }
}
