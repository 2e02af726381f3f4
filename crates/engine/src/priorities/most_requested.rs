//! MostRequestedPriority: favours the fullest nodes (bin packing), as upstream's
//! `MostRequestedPriorityMap` (kube-scheduler 1.14-1.17, pkg/scheduler/algorithm/priorities/
//! most_requested.go): for cpu and memory, `requested * 10 / capacity` (integer division), 0 when
//! the capacity is 0 or the requests exceed it (upstream 1.14-1.17 scores an overcommitted
//! resource 0, not 10; later versions clamp it to the capacity); the score is the integer mean of
//! the two. `requested` is the node's non-zero requests plus the pod's; capacity is the node's
//! allocatable.

use std::sync::Arc;

use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{ArgumentError, Priority, PriorityArgs, MAX_PRIORITY};
use crate::priorities::resource_allocation::{cpu_and_memory, mul_div};
use crate::priorities::NodeScore;

/// The registry name.
pub const NAME: &str = "MostRequestedPriority";

pub fn build(args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    NodeScore { name: NAME, score }.build(args)
}

/// Upstream's `mostRequestedScore`: the used share of the capacity on a 0..=10 scale.
pub fn most_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    mul_div(requested, MAX_PRIORITY, capacity)
}

/// The score of one node.
fn score(pod: &PodContext, node: &NodeInfo) -> i64 {
    let (cpu, cpu_capacity, memory, memory_capacity) = cpu_and_memory(pod, node);
    (most_requested_score(cpu, cpu_capacity) + most_requested_score(memory, memory_capacity)) / 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priorities::resource_allocation::test_support::{check, node, on, scores, ScoreCase};
    use crate::testing::PodBuilder;

    #[test]
    fn scores_follow_most_requested_score() {
        let cases = vec![
            ScoreCase {
                // a: cpu 3000*10/4000 = 7 (7.5), memory 5000*10/10000 = 5: (7+5)/2 = 6.
                // b: cpu 3000*10/6000 = 5, memory 5: (5+5)/2 = 5.
                name: "differently sized nodes",
                pod: PodBuilder::new("p").req(&[("cpu", "3"), ("memory", "5000")]).build(),
                nodes: vec![node("a", "4", "10000"), node("b", "6", "10000")],
                placed: vec![],
                want: vec![6, 5],
            },
            ScoreCase {
                // The pod asks for nothing: it counts 100m and 200Mi.
                // a: cpu 600+100 = 700 of 1000: 7; memory 312Mi+200Mi = 512Mi of 1Gi:
                //    512*10/1024 = 5; (7+5)/2 = 6.
                // b: empty: cpu 100*10/1000 = 1, memory 200*10/1024 = 1 (1.95); (1+1)/2 = 1.
                name: "non-zero requests",
                pod: PodBuilder::new("p").req(&[]).build(),
                nodes: vec![node("a", "1", "1Gi"), node("b", "1", "1Gi")],
                placed: vec![on("a", "x", &[("cpu", "600m"), ("memory", "312Mi")])],
                want: vec![6, 1],
            },
            ScoreCase {
                // a: cpu 1000+100 = 1100 > 1000: 0 (not 10); memory 824Mi+200Mi = 1Gi, full:
                //    10; (0+10)/2 = 5.
                // b: cpu 900+100 = 1000 = capacity: 10; memory the same 10: 10.
                // c: cpu capacity 0: 0; memory 200Mi of 1Gi: 1; (0+1)/2 = 0.
                name: "over, at and without capacity",
                pod: PodBuilder::new("p").req(&[]).build(),
                nodes: vec![node("a", "1", "1Gi"), node("b", "1", "1Gi"), node("c", "0", "1Gi")],
                placed: vec![
                    on("a", "x", &[("cpu", "1"), ("memory", "824Mi")]),
                    on("b", "y", &[("cpu", "900m"), ("memory", "824Mi")]),
                ],
                want: vec![5, 10, 0],
            },
        ];
        let priority = build(&PriorityArgs {
            name: "MostRequestedPriority",
            argument: None,
            hard_pod_affinity_symmetric_weight: 1,
        })
        .unwrap();
        check(&priority, cases);
    }

    #[test]
    fn most_requested_score_edges() {
        assert_eq!(most_requested_score(0, 0), 0);
        assert_eq!(most_requested_score(0, 7), 0);
        assert_eq!(most_requested_score(7, 7), 10);
        assert_eq!(most_requested_score(8, 7), 0);
        assert_eq!(most_requested_score(i64::MAX - 1, i64::MAX), 9);
    }

    /// upstream: TestMostRequested (1.12-1.16 most_requested_test.go), every case, with its
    /// expected 0..10 scores. `cpuOnly` writes memory as "0", which counts as zero.
    #[test]
    fn upstream_most_requested_table() {
        use crate::priorities::resource_allocation::test_support::upstream::*;
        let two = |cpu: i64, memory: i64| vec![make_node("machine1", cpu, memory), make_node("machine2", cpu, memory)];
        let cases: Vec<Case> = vec![
            ("nothing scheduled, nothing requested", no_resources("p", ""), two(4000, 10000), vec![], vec![0, 0]),
            (
                "nothing scheduled, resources requested, differently sized machines",
                cpu_and_memory("p", ""),
                vec![make_node("machine1", 4000, 10000), make_node("machine2", 6000, 10000)],
                vec![],
                vec![6, 5],
            ),
            (
                // machine1: cpu 6000*10/10000 = 6, memory 0 (the zeros are zeros): (6+0)/2 = 3.
                // machine2: cpu 6, memory 5000*10/20000 = 2.5: 4.
                "no resources requested, pods scheduled with resources",
                no_resources("p", ""),
                two(10000, 20000),
                vec![
                    cpu_only("a", "machine1"),
                    cpu_only("b", "machine1"),
                    cpu_only("c", "machine2"),
                    cpu_and_memory("d", "machine2"),
                ],
                vec![3, 4],
            ),
            (
                "resources requested, pods scheduled with resources",
                cpu_and_memory("p", ""),
                two(10000, 20000),
                vec![cpu_only("a", "machine1"), cpu_and_memory("b", "machine2")],
                vec![4, 5],
            ),
            (
                "resources requested with more than the node, pods scheduled with resources",
                big_cpu_and_memory("p", "machine1"),
                vec![make_node("machine1", 4000, 10000), make_node("machine2", 10000, 8000)],
                vec![],
                vec![4, 2],
            ),
        ];
        let priority = build(&PriorityArgs {
            name: "MostRequestedPriority",
            argument: None,
            hard_pod_affinity_symmetric_weight: 1,
        })
        .unwrap();
        for (name, pod, nodes, placed, want) in cases {
            assert_eq!(scores(&priority, pod, nodes, placed), want, "{name}");
        }
    }
}
