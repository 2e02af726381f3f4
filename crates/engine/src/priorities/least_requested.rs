//! LeastRequestedPriority: favours nodes with the most room left, as upstream's
//! `LeastRequestedPriorityMap` (kube-scheduler 1.14-1.17, pkg/scheduler/algorithm/priorities/
//! least_requested.go): for cpu and memory, `(capacity - requested) * 10 / capacity` (integer
//! division), 0 when the capacity is 0 or the requests exceed it; the score is the integer mean
//! of the two. `requested` is the node's non-zero requests plus the pod's (see
//! [`resource_allocation`](super::resource_allocation)); capacity is the node's allocatable.

use std::sync::Arc;

use crate::cluster::NodeInfo;
use crate::framework::PodContext;
use crate::framework::{ArgumentError, Priority, PriorityArgs, MAX_PRIORITY};
use crate::priorities::resource_allocation::{cpu_and_memory, mul_div};
use crate::priorities::NodeScore;

/// The registry name.
pub const NAME: &str = "LeastRequestedPriority";

pub fn build(args: &PriorityArgs<'_>) -> Result<Arc<dyn Priority>, ArgumentError> {
    NodeScore { name: NAME, score }.build(args)
}

/// Upstream's `leastRequestedScore`: the unused share of the capacity on a 0..=10 scale.
pub fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    mul_div(capacity - requested, MAX_PRIORITY, capacity)
}

/// The score of one node.
fn score(pod: &PodContext, node: &NodeInfo) -> i64 {
    let (cpu, cpu_capacity, memory, memory_capacity) = cpu_and_memory(pod, node);
    (least_requested_score(cpu, cpu_capacity) + least_requested_score(memory, memory_capacity)) / 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priorities::resource_allocation::test_support::{check, node, on, scores, ScoreCase};
    use crate::testing::PodBuilder;

    #[test]
    fn scores_follow_least_requested_score() {
        let cases = vec![
            ScoreCase {
                // cpu (4000-3000)*10/4000 = 2 (2.5), memory (10000-5000)*10/10000 = 5: (2+5)/2 = 3.
                // cpu (6000-3000)*10/6000 = 5, memory 5: (5+5)/2 = 5.
                name: "differently sized nodes",
                pod: PodBuilder::new("p").req(&[("cpu", "3"), ("memory", "5000")]).build(),
                nodes: vec![node("a", "4", "10000"), node("b", "6", "10000")],
                placed: vec![],
                want: vec![3, 5],
            },
            ScoreCase {
                // The pod asks for nothing: it counts 100m and 200Mi.
                // a: cpu 400+100 = 500 of 1000: 500*10/1000 = 5; memory 312Mi+200Mi = 512Mi of
                //    1Gi: 512*10/1024 = 5; (5+5)/2 = 5.
                // b: empty: cpu 900*10/1000 = 9, memory 824*10/1024 = 8 (8.05); (9+8)/2 = 8.
                name: "non-zero requests of a pod that asks for nothing",
                pod: PodBuilder::new("p").req(&[]).build(),
                nodes: vec![node("a", "1", "1Gi"), node("b", "1", "1Gi")],
                placed: vec![on("a", "x", &[("cpu", "400m"), ("memory", "312Mi")])],
                want: vec![5, 8],
            },
            ScoreCase {
                // A placed pod without requests counts 100m / 200Mi on its node too.
                // a: cpu 100+100 = 200 of 1000: 800*10/1000 = 8; memory 200Mi+200Mi of 1Gi:
                //    624*10/1024 = 6 (6.09); (8+6)/2 = 7.
                name: "non-zero requests of placed pods",
                pod: PodBuilder::new("p").req(&[]).build(),
                nodes: vec![node("a", "1", "1Gi")],
                placed: vec![on("a", "x", &[])],
                want: vec![7],
            },
            ScoreCase {
                // a: cpu 1000+100 = 1100 > 1000: 0; memory 256Mi+200Mi = 456Mi: 568*10/1024 = 5
                //    (5.5); (0+5)/2 = 2.
                // b: cpu 900+100 = 1000 = capacity: 0*10/1000 = 0; memory the same 5; (0+5)/2 = 2.
                // c: cpu capacity 0: 0; memory 200Mi of 1Gi: 824*10/1024 = 8; (0+8)/2 = 4.
                name: "over, at and without capacity",
                pod: PodBuilder::new("p").req(&[]).build(),
                nodes: vec![node("a", "1", "1Gi"), node("b", "1", "1Gi"), node("c", "0", "1Gi")],
                placed: vec![
                    on("a", "x", &[("cpu", "1"), ("memory", "256Mi")]),
                    on("b", "y", &[("cpu", "900m"), ("memory", "256Mi")]),
                ],
                want: vec![2, 2, 4],
            },
        ];
        let priority = build(&PriorityArgs {
            name: "LeastRequestedPriority",
            argument: None,
            hard_pod_affinity_symmetric_weight: 1,
        })
        .unwrap();
        check(&priority, cases);
    }

    /// upstream: TestLeastRequested (1.12-1.16 least_requested_test.go), every case, with its
    /// expected 0..10 scores. `cpuOnly` writes memory as "0": an explicit zero counts as zero
    /// (not as the 200Mi default), on the node and in the incoming pod.
    #[test]
    fn upstream_least_requested_table() {
        use crate::priorities::resource_allocation::test_support::upstream::*;
        let two = |cpu: i64, memory: i64| vec![make_node("machine1", cpu, memory), make_node("machine2", cpu, memory)];
        let empty_on = |node: &str, name: &str| no_resources(name, node);
        let cases: Vec<Case> = vec![
            ("nothing scheduled, nothing requested", no_resources("p", ""), two(4000, 10000), vec![], vec![10, 10]),
            (
                // machine1: cpu (4000-3000)*10/4000 = 2.5, memory 5: (2.5+5)/2 = 3.
                "nothing scheduled, resources requested, differently sized machines",
                cpu_and_memory("p", ""),
                vec![make_node("machine1", 4000, 10000), make_node("machine2", 6000, 10000)],
                vec![],
                vec![3, 5],
            ),
            (
                "no resources requested, pods scheduled",
                no_resources("p", ""),
                two(4000, 10000),
                vec![
                    empty_on("machine1", "a"),
                    empty_on("machine1", "b"),
                    empty_on("machine2", "c"),
                    empty_on("machine2", "d"),
                ],
                vec![10, 10],
            ),
            (
                // machine1: cpu (10000-6000)*10/10000 = 4, memory 20000 of 20000 free = 10: 7.
                // machine2: cpu 4, memory (20000-5000)*10/20000 = 7.5: 5.
                "no resources requested, pods scheduled with resources",
                no_resources("p", ""),
                two(10000, 20000),
                vec![
                    cpu_only("a", "machine1"),
                    cpu_only("b", "machine1"),
                    cpu_only("c", "machine2"),
                    cpu_and_memory("d", "machine2"),
                ],
                vec![7, 5],
            ),
            (
                "resources requested, pods scheduled with resources",
                cpu_and_memory("p", ""),
                two(10000, 20000),
                vec![cpu_only("a", "machine1"), cpu_and_memory("b", "machine2")],
                vec![5, 4],
            ),
            (
                "resources requested, pods scheduled with resources, differently sized machines",
                cpu_and_memory("p", ""),
                vec![make_node("machine1", 10000, 20000), make_node("machine2", 10000, 50000)],
                vec![cpu_only("a", "machine1"), cpu_and_memory("b", "machine2")],
                vec![5, 6],
            ),
            (
                // cpu 6000 of 4000: 0. machine1 memory 0 of 10000: 10, (0+10)/2 = 5; machine2
                // memory 5000 of 10000: 5, (0+5)/2 = 2.
                "requested resources exceed node capacity",
                cpu_only("p", "machine1"),
                two(4000, 10000),
                vec![cpu_only("a", "machine1"), cpu_and_memory("b", "machine2")],
                vec![5, 2],
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
            name: "LeastRequestedPriority",
            argument: None,
            hard_pod_affinity_symmetric_weight: 1,
        })
        .unwrap();
        for (name, pod, nodes, placed, want) in cases {
            assert_eq!(scores(&priority, pod, nodes, placed), want, "{name}");
        }
    }

    #[test]
    fn least_requested_score_edges() {
        assert_eq!(least_requested_score(0, 0), 0);
        assert_eq!(least_requested_score(0, 7), 10);
        assert_eq!(least_requested_score(8, 7), 0);
        assert_eq!(least_requested_score(7, 7), 0);
        assert_eq!(least_requested_score(1, i64::MAX), 9);
    }
}
