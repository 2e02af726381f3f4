//! The what-if report as a person reads it: a few summary lines, the running pods that would stop
//! fitting grouped by reason, the predicates whose rejections change, how the ranking moves; with
//! `all`, every pod that changes and every predicate.

use crate::explain::table::{cell, paint, plain, render as table, Paint, Row, Style};
use crate::whatif::report::{Report, StoppedPod};

/// At most this many reason groups are listed without `all`.
pub const MAX_GROUPS: usize = 20;

/// Pods named per group, unless every one is asked for.
const EXAMPLES: usize = 3;

fn pods(n: usize) -> String {
    format!("{n} pod{}", if n == 1 { "" } else { "s" })
}

fn count(n: Option<usize>) -> String {
    n.map_or_else(|| "-".to_string(), |n| n.to_string())
}

/// The report; `spell` says how the caller spells an option (`--all`, `?all`).
pub fn render(report: &Report, all: bool, style: Style, spell: &dyn Fn(&str) -> String) -> String {
    let bold = |t: &str| paint(style, Paint::Bold, t);
    let mut out = format!(
        "What-if: the new Policy ({}) against the current one ({}), {}'s pods on {} nodes.\n\n",
        report.new.source, report.current.source, report.scheduler, report.nodes
    );
    if !report.other_schedulers.is_empty() {
        let whose: Vec<String> =
            report.other_schedulers.iter().map(|s| format!("{}'s {}", s.scheduler, pods(s.pods))).collect();
        out.push_str(&format!(
            "No pod of this cluster is {}'s; there are {}: {} NAME looks at another scheduler's.\n\n",
            report.scheduler,
            whose.join(", "),
            spell("scheduler")
        ));
    }
    let p = &report.pending;
    out.push_str(&bold(&format!(
        "Pending {}: {} become unschedulable, {} become schedulable, {} get another best node.",
        pods(p.checked),
        p.become_unschedulable.len(),
        p.become_schedulable.len(),
        p.best_node_changes.len()
    )));
    out.push('\n');
    let r = &report.running;
    let nowhere = r.stop_fitting.iter().filter(|s| s.fits_elsewhere == 0).count();
    out.push_str(&bold(&format!(
        "Running {}: {} would no longer fit where they run, {nowhere} of them on no other node.",
        pods(r.checked),
        r.stop_fitting.len()
    )));
    out.push('\n');
    if r.not_fitting_now > 0 || r.on_unknown_nodes > 0 {
        out.push_str(&format!(
            "({} already do not fit where they run under the current Policy, {} of which would under the new one; \
             {} run on nodes the cluster has no Node for.)\n",
            r.not_fitting_now, r.start_fitting, r.on_unknown_nodes
        ));
    }
    for (what, groups, reason_under) in [
        ("become unschedulable, by the node each fits best now", &p.become_unschedulable_by_reason, "new"),
        ("become schedulable, by the node each would fit best", &p.become_schedulable_by_reason, "current"),
    ] {
        if groups.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\nPending pods that {what}, and why kube-scheduler would reject that node under the {reason_under} Policy:\n\n"
        ));
        let header = ["NODE", "REJECTED BY", "PODS", "EXAMPLES"];
        let mut rows = vec![Row::Cells(header.iter().map(|h| cell(*h, Paint::Bold)).collect())];
        let shown = if all { usize::MAX } else { MAX_GROUPS };
        for g in groups.iter().take(shown) {
            let listed = if all { g.pods.len() } else { EXAMPLES.min(g.pods.len()) };
            let mut examples = g.pods[..listed].join(", ");
            if g.pods.len() > listed {
                examples.push_str(", ...");
            }
            rows.push(Row::Cells(vec![
                plain(g.node.clone()),
                cell(g.reason.clone(), Paint::Red),
                plain(g.pods.len().to_string()),
                plain(examples),
            ]));
        }
        table(style, &rows, &mut out);
        if groups.len() > shown {
            out.push_str(&format!("... and {} more\n", groups.len() - shown));
        }
    }
    if all && !p.best_node_changes.is_empty() {
        out.push_str(&format!("\nGet another best node: {}\n", p.best_node_changes.join(", ")));
    }

    if !r.stop_fitting_by_reason.is_empty() {
        out.push_str(
            "\nWhy running pods would stop fitting where they run (a pod counts under each of its reasons):\n\n",
        );
        let header = ["PREDICATE", "REASON", "PODS", "NOWHERE ELSE", "EXAMPLES"];
        let mut rows = vec![Row::Cells(header.iter().map(|h| cell(*h, Paint::Bold)).collect())];
        let shown = if all { usize::MAX } else { MAX_GROUPS };
        for g in r.stop_fitting_by_reason.iter().take(shown) {
            let mut examples = g.examples.join(", ");
            if g.pods > g.examples.len() {
                examples.push_str(", ...");
            }
            rows.push(Row::Cells(vec![
                plain(g.predicate.clone()),
                cell(g.reason.clone(), Paint::Red),
                plain(g.pods.to_string()),
                plain(g.fit_nowhere.to_string()),
                plain(examples),
            ]));
        }
        table(style, &rows, &mut out);
        if r.stop_fitting_by_reason.len() > shown {
            out.push_str(&format!("... and {} more\n", r.stop_fitting_by_reason.len() - shown));
        }
        out.push_str("NOWHERE ELSE: of those pods, how many fit no other node under the new Policy.\n");
        if all {
            out.push('\n');
            for s in &r.stop_fitting {
                out.push_str(&stopped_line(s));
            }
        }
    }

    let changed: Vec<_> =
        report.predicates.iter().filter(|p| all || p.before.unwrap_or(0) != p.after.unwrap_or(0)).collect();
    if !changed.is_empty() {
        out.push_str(&format!(
            "\n{}node checks each predicate rejects (pending pods on every node, running pods on their own;\n\
             - where the Policy does not run it):\n\n",
            if all { "Every predicate: " } else { "Predicates whose rejections change: " }
        ));
        let mut rows =
            vec![Row::Cells(["PREDICATE", "CURRENT", "NEW"].iter().map(|h| cell(*h, Paint::Bold)).collect())];
        for p in changed {
            rows.push(Row::Cells(vec![plain(p.predicate.clone()), plain(count(p.before)), plain(count(p.after))]));
        }
        table(style, &rows, &mut out);
    }

    let pr = &report.priorities;
    let weights: Vec<String> = pr
        .weights
        .iter()
        .filter(|w| w.before != w.after)
        .map(|w| {
            let show = |x: Option<i64>| x.map_or_else(|| "-".to_string(), |x| x.to_string());
            format!("{} {} -> {}", w.name, show(w.before), show(w.after))
        })
        .collect();
    out.push_str(&format!(
        "\nPriorities: {}.\n",
        if weights.is_empty() { "the same weights".to_string() } else { format!("weights {}", weights.join(", ")) }
    ));
    match pr.mean_rank_of_current_best {
        Some(rank) => out.push_str(&format!(
            "The best node changes for {} of {} scored under both (pending pods, and a sample of running\n\
             ones as if placed now); the current best node ranks {rank:.2} on average under the new Policy\n\
             (1: still the best).\n",
            pr.best_node_changed,
            pods(pr.sampled)
        )),
        None => out.push_str("No pod was scored under both (a Policy without priorities, or no pods).\n"),
    }
    if !all {
        out.push_str(&format!("\nMore: {} for every pod that changes and every predicate.\n", spell("all")));
    }
    out
}

fn stopped_line(s: &StoppedPod) -> String {
    let reasons: Vec<String> = s.rejected_by.iter().map(|r| format!("{}: {}", r.predicate, r.reason)).collect();
    format!("{} on {}: {}; fits {} other node(s)\n", s.pod, s.node, reasons.join("; "), s.fits_elsewhere)
}
