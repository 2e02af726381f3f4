//! kube-scheduler's one-line summary of a scheduling failure (`FitError.Error()` in
//! `pkg/scheduler/core/generic_scheduler.go`): `0/6 nodes are available: ` then, for every reason
//! any node failed with, `<count> <reason>`, the strings sorted, joined with `, `, and a final `.`.
//! A node with two reasons counts once for each. kube-scheduler prints it only when no node fits;
//! here the first number is the feasible nodes, so it reads the same way when some do.

use std::collections::BTreeMap;

use crate::explain::report::NodeReport;

pub fn summary_line<'a>(nodes: impl IntoIterator<Item = &'a NodeReport>) -> String {
    let (mut feasible, mut total) = (0, 0);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for node in nodes {
        total += 1;
        if node.fits {
            feasible += 1;
        }
        for reason in &node.reasons {
            *counts.entry(reason.as_str()).or_default() += 1;
        }
    }
    let mut histogram: Vec<String> = counts.into_iter().map(|(reason, n)| format!("{n} {reason}")).collect();
    // As upstream: the whole "<count> <reason>" strings are sorted, so "10 ..." sorts before "2 ...".
    histogram.sort();
    let head = format!("{feasible}/{total} nodes are available");
    if histogram.is_empty() {
        format!("{head}.")
    } else {
        format!("{head}: {}.", histogram.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(fits: bool, reasons: &[&str]) -> NodeReport {
        NodeReport {
            node: "n".to_string(),
            fits,
            reasons: reasons.iter().map(|r| r.to_string()).collect(),
            nominated_pods: vec![],
            pass1: vec![],
            pass2: None,
        }
    }

    #[test]
    fn upstream_format() {
        let cpu = "Insufficient cpu";
        let taint = "node(s) had taints that the pod didn't tolerate";
        let selector = "node(s) didn't match node selector";
        let cases: Vec<(Vec<NodeReport>, &str)> = vec![
            (
                vec![
                    node(false, &[cpu]),
                    node(false, &[cpu]),
                    node(false, &[taint]),
                    node(false, &[selector]),
                    node(false, &[selector]),
                    node(false, &[selector]),
                ],
                "0/6 nodes are available: 1 node(s) had taints that the pod didn't tolerate, 2 Insufficient cpu, 3 node(s) didn't match node selector.",
            ),
            (
                vec![node(true, &[]), node(false, &[cpu, selector])],
                "1/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match node selector.",
            ),
            (vec![node(true, &[]), node(true, &[])], "2/2 nodes are available."),
            (vec![], "0/0 nodes are available."),
        ];
        for (nodes, want) in cases {
            assert_eq!(summary_line(&nodes), want);
        }
        // String order, as Go's sort.Strings: "10 x" before "2 y".
        let mut many: Vec<NodeReport> = (0..10).map(|_| node(false, &["z"])).collect();
        many.extend([node(false, &["a"]), node(false, &["a"])]);
        assert_eq!(summary_line(&many), "0/12 nodes are available: 10 z, 2 a.");
    }
}
