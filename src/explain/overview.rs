//! The tables a person reads on a cluster of any size: the summary line first, then the failing
//! nodes grouped by predicate and reason, the feasible nodes ranked by score (a row per node, a
//! column per priority, so the table is as wide as the plan, not the cluster), and the hints.
//! With `--node`, the named nodes' every predicate instead of the groups and hints.

use crate::explain::failures::FailureGroup;
use crate::explain::report::{NodeScores, Report, Scores};
use crate::explain::table::{cell, paint, plain, render, render_node_detail, Paint, Row, Style};

/// At most this many failure groups are listed; the rest are counted.
pub const MAX_GROUPS: usize = 20;

/// How the caller spells an option, for the closing line: `--top` on the command line, `top=` in
/// the server's query.
pub type Spell<'a> = &'a dyn Fn(&str) -> String;

fn nodes(n: usize) -> String {
    format!("{n} node{}", if n == 1 { "" } else { "s" })
}

/// The default table: summary, failure groups, the top `top` feasible nodes, hints.
pub fn render_overview(report: &Report, top: usize, style: Style, spell: Spell<'_>) -> String {
    let mut out = summary(report, style);
    let evaluated = report.nodes.len();
    if !report.failures.is_empty() {
        let failing = evaluated - report.feasible.len();
        out.push_str(&format!(
            "\nWhy {failing} of {evaluated} nodes fail pod {}, by the predicate and reason that decided them\n\
             (every predicate checked; a node counts under each of its reasons):\n\n",
            report.pod
        ));
        failure_rows(&report.failures, style, &mut out);
    }
    out.push('\n');
    ranking(report, top, &[], style, &mut out);
    if !report.hints.is_empty() {
        out.push_str("\nWhat would change the answer (counted on the cluster's nodes):\n");
        for h in &report.hints {
            out.push_str(&format!("- {} ({}): {}\n", h.reason, nodes(h.nodes), h.hint));
        }
    }
    if let Some(order) = &report.filter_order {
        out.push_str(&format!("\n/filter runs the predicates in this learned order (dynamic): {}\n", order.join(", ")));
    }
    out.push_str(&format!(
        "\nMore: {} for every predicate on a node, {} for more of the ranking, {} for every node in full.\n",
        spell("node NAME"),
        spell("top N"),
        spell("all")
    ));
    out
}

/// `--node`: the summary, every predicate on the named nodes (both passes), and the ranking with
/// the named feasible nodes' rows.
pub fn render_nodes(report: &Report, top: usize, style: Style) -> String {
    let mut out = summary(report, style);
    out.push_str(&format!(
        "\nPod {}: every predicate on the named node(s) (alwaysCheckAllPredicates):\n\n",
        report.pod
    ));
    render_node_detail(report, style, &mut out);
    out.push('\n');
    let named: Vec<&str> = report.nodes.iter().map(|n| n.node.as_str()).collect();
    ranking(report, top, &named, style, &mut out);
    out
}

fn summary(report: &Report, style: Style) -> String {
    format!("{}\n", paint(style, Paint::Bold, &report.summary))
}

fn failure_rows(groups: &[FailureGroup], style: Style, out: &mut String) {
    let header = ["PREDICATE", "REASON", "NODES", "ALONE", "EXAMPLES"];
    let mut rows = vec![Row::Cells(header.iter().map(|h| cell(*h, Paint::Bold)).collect())];
    for g in groups.iter().take(MAX_GROUPS) {
        let mut examples = g.examples.join(", ");
        if g.nodes > g.examples.len() {
            examples.push_str(", ...");
        }
        rows.push(Row::Cells(vec![
            plain(g.predicate.clone()),
            cell(g.reason.clone(), Paint::Red),
            plain(g.nodes.to_string()),
            plain(g.alone.to_string()),
            plain(examples),
        ]));
    }
    render(style, &rows, out);
    if groups.len() > MAX_GROUPS {
        out.push_str(&format!("... and {} more predicate and reason pairs\n", groups.len() - MAX_GROUPS));
    }
    out.push_str("ALONE: of those nodes, how many fail for this reason only.\n");
}

/// The ranking: the `top` best-scored feasible nodes and the `named` ones, in rank order.
fn ranking(report: &Report, top: usize, named: &[&str], style: Style, out: &mut String) {
    let feasible = report.feasible.len();
    let Some(scores) = &report.scores else {
        let shown: Vec<&str> = report.feasible.iter().take(top).map(String::as_str).collect();
        out.push_str(&format!("{} feasible; the plan has no priorities to rank them", nodes(feasible)));
        if !shown.is_empty() {
            let more = feasible - shown.len();
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            out.push_str(&format!(": {}{more}", shown.join(", ")));
        }
        out.push_str(".\n");
        return;
    };
    if scores.nodes.is_empty() {
        out.push_str("No feasible node to score.\n");
        return;
    }
    let mut shown: Vec<&NodeScores> =
        scores.nodes.iter().filter(|n| n.rank <= top || named.contains(&n.node.as_str())).collect();
    shown.sort_by_key(|n| n.rank);
    let top_shown = top.min(feasible);
    out.push_str(&format!(
        "Top {top_shown} of {feasible} feasible nodes, best first. SCORE is what /prioritize answers:\n\
         sum of weight x score / sum of weights, rounded to nearest, each priority scoring 0-10\n\
         (NodePreferAvoidPodsPriority, when it weighs at least the others together, is a veto: a\n\
         node it scores 0 gets 0, and it is left out of the others' sum). Equal scores rank by\n\
         the sum of weight x score, then by name.\n\n"
    ));
    score_rows(scores, &shown, style, out);
}

fn score_rows(scores: &Scores, shown: &[&NodeScores], style: Style, out: &mut String) {
    let bold = |t: &str| cell(t, Paint::Bold);
    let mut names = vec![bold("RANK"), bold("NODE"), bold("SCORE")];
    let mut weights = vec![plain(""), plain(""), plain("")];
    for p in &scores.priorities {
        names.push(bold(p.name.strip_suffix("Priority").filter(|s| !s.is_empty()).unwrap_or(&p.name)));
        weights.push(plain(format!("weight {}", p.weight)));
    }
    let mut rows = vec![Row::Cells(names), Row::Cells(weights)];
    let mut previous = 0;
    for n in shown {
        if n.rank > previous + 1 {
            rows.push(Row::Cells(vec![plain("...")]));
        }
        previous = n.rank;
        let mut row = vec![plain(n.rank.to_string()), cell(n.node.clone(), Paint::Bold), bold(&n.score.to_string())];
        row.extend(n.priorities.iter().map(|p| plain(p.score.to_string())));
        rows.push(Row::Cells(row));
    }
    render(style, &rows, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::report::{build, Against};
    use predicate_engine::cluster::Snapshot;
    use predicate_engine::engine::{CancelFlag, Evaluator};
    use predicate_engine::policy::Plan;
    use predicate_engine::testing::{NodeBuilder, PodBuilder};

    fn flag(name: &str) -> String {
        format!("--{name}")
    }

    #[test]
    fn without_priorities_the_feasible_nodes_are_listed_not_ranked() {
        let nodes = ["a", "b", "c", "d"].map(|n| NodeBuilder::new(n).build());
        let snapshot = Snapshot::build(nodes, []);
        let plan =
            Plan::of_predicates(predicate_engine::registry::predicate("CheckNodeCondition").into_iter().collect());
        let evaluator = Evaluator::new(1).unwrap();
        let report = build(
            Against::shipped(&plan, &snapshot),
            PodBuilder::new("p").build(),
            &[],
            &evaluator,
            &CancelFlag::new(),
        )
        .unwrap();
        let text = render_overview(&report, 2, Style { colour: false }, &flag);
        assert_eq!(
            text,
            "4/4 nodes are available.\n\n4 nodes feasible; the plan has no priorities to rank them: a, b and 2 more.\n\n\
             More: --node NAME for every predicate on a node, --top N for more of the ranking, --all for every node in full.\n"
        );
    }
}
