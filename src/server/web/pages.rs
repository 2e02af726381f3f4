//! The three pages, from the reports the CLI prints: the scheduler's pending pods with their
//! summary lines; one pod's explain as a grid (failure groups, nodes × predicates with the deciding
//! predicate marked, the feasible nodes ranked with each priority's score); the what-if form and
//! report. Sized for a large cluster: the grid has a row per failure group (the node it decides,
//! failing for that reason only, where there is one; else its first node) and the best feasible
//! nodes, every node only when asked (`all`).

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::explain::failures::deciding_pass;
use crate::explain::Report as Explained;
use crate::server::web::html::{esc, num, page, table, td, url_value};
use crate::whatif::Report as Whatif;

/// How many feasible nodes the grid and the ranking show without `all`.
pub const TOP: usize = 10;

/// One pending pod on the list: `namespace/name` and its summary line.
pub struct PendingEntry {
    pub namespace: String,
    pub name: String,
    pub summary: String,
}

fn pod_link(prefix: &str, namespace: &str, name: &str) -> String {
    format!(
        "<a href=\"{}/ui/pod?namespace={}&amp;name={}\">{}/{}</a>",
        esc(prefix),
        url_value(namespace),
        url_value(name),
        esc(namespace),
        esc(name)
    )
}

pub fn pending_list(prefix: &str, scheduler: &str, nodes: usize, entries: &[PendingEntry], more: usize) -> String {
    let mut body = format!(
        "<p>Pods of <b>{}</b> waiting to be scheduled, on a cluster of {nodes} nodes, each with what kube-scheduler \
         would say of it now.</p>\n",
        esc(scheduler)
    );
    if entries.is_empty() {
        body.push_str("<p id=\"no-pending\">No pending pod.</p>\n");
    } else {
        let rows: Vec<String> = entries
            .iter()
            .map(|e| format!("<td>{}</td>{}", pod_link(prefix, &e.namespace, &e.name), td(&e.summary)))
            .collect();
        body.push_str(&table("pending", &["POD", "SUMMARY"], &rows));
    }
    if more > 0 {
        let _ = writeln!(body, "<p class=\"muted\">... and {more} more (<code>?limit=N</code> lists more).</p>");
    }
    page(prefix, "Pending pods", &body)
}

/// The nodes the grid shows: a node per failure group (the one it decides, else its first), then
/// the best feasible nodes; every node with `all`.
fn grid_nodes(report: &Explained, all: bool) -> Vec<String> {
    if all {
        return report.nodes.iter().map(|n| n.node.clone()).collect();
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    // The node a group decides (failing for that reason only) shows the group best; else its first.
    let failing = report.failures.iter().filter_map(|g| g.deciding.clone().or_else(|| g.examples.first().cloned()));
    let mut ranked: Vec<(usize, String)> =
        report.scores.iter().flat_map(|s| s.nodes.iter().map(|n| (n.rank, n.node.clone()))).collect();
    ranked.sort();
    let best = if report.scores.is_some() {
        ranked.into_iter().map(|(_, n)| n).take(TOP).collect::<Vec<_>>()
    } else {
        report.feasible.iter().take(TOP).cloned().collect()
    };
    for n in failing.chain(best) {
        if seen.insert(n.clone()) {
            out.push(n);
        }
    }
    out
}

pub fn pod_page(prefix: &str, report: &Explained, all: bool) -> String {
    let mut body = format!("<p class=\"summary\" id=\"summary\">{}</p>\n", esc(&report.summary));
    if !report.failures.is_empty() {
        body.push_str("<h2>Why nodes fail, by the predicate and reason that decided them</h2>\n");
        let rows: Vec<String> = report
            .failures
            .iter()
            .map(|g| {
                let more = if g.nodes > g.examples.len() { ", ..." } else { "" };
                format!(
                    "{}{}{}{}{}",
                    td(&g.predicate),
                    td(&g.reason),
                    num(g.nodes),
                    num(g.alone),
                    td(&format!("{}{more}", g.examples.join(", ")))
                )
            })
            .collect();
        body.push_str(&table("failures", &["PREDICATE", "REASON", "NODES", "ALONE", "EXAMPLES"], &rows));
        body.push_str("<p class=\"muted\">ALONE: of those nodes, how many fail for this reason only.</p>\n");
    }

    let shown = grid_nodes(report, all);
    let _ = writeln!(
        body,
        "<h2>Nodes × predicates</h2>\n<p class=\"muted\">{} of {} nodes{}: for each failure group the node it decides (failing \
         for that reason only), or its first node, and the best feasible ones. Every predicate ran; the marked cell is the first that rejects in the pass that decided \
         (what <code>/filter</code> reports).</p>",
        shown.len(),
        report.nodes.len(),
        if all { " (all)" } else { "" }
    );
    if !all {
        let _ = writeln!(
            body,
            "<p><a href=\"?namespace={}&amp;name={}&amp;all\">Show every node</a></p>",
            url_value(report.pod.split_once('/').map_or("", |(ns, _)| ns)),
            url_value(report.pod.split_once('/').map_or(report.pod.as_str(), |(_, n)| n))
        );
    }
    let mut header: Vec<&str> = vec!["NODE"];
    header.extend(report.predicates.iter().map(String::as_str));
    let rows: Vec<String> = shown
        .iter()
        .filter_map(|name| report.nodes.iter().find(|n| &n.node == name))
        .map(|n| {
            let verdicts = deciding_pass(n);
            let deciding = verdicts.iter().position(|v| !v.fits);
            let mut row = format!("<th>{}</th>", esc(&n.node));
            for p in &report.predicates {
                let at = verdicts.iter().position(|v| &v.predicate == p);
                let (class, text) = match at.map(|i| (i, &verdicts[i])) {
                    Some((i, v)) if !v.fits && Some(i) == deciding => ("deciding", v.messages("; ")),
                    Some((_, v)) if !v.fits => ("fail", v.messages("; ")),
                    Some(_) => ("fit", "✓".to_string()),
                    None => ("muted", "-".to_string()),
                };
                let _ =
                    write!(row, "<td id=\"cell-{}-{}\" class=\"{class}\">{}</td>", esc(&n.node), esc(p), esc(&text));
            }
            row
        })
        .collect();
    body.push_str(&table("grid", &header, &rows));

    match &report.scores {
        Some(scores) if !scores.nodes.is_empty() => {
            body.push_str("<h2>Feasible nodes, best first</h2>\n<p class=\"muted\">SCORE is what <code>/prioritize</code> answers (0-10); each priority's 0-10 score, its weight under its name.</p>\n");
            let mut header: Vec<String> = vec!["RANK".into(), "NODE".into(), "SCORE".into()];
            header.extend(scores.priorities.iter().map(|p| format!("{} (weight {})", p.name, p.weight)));
            let header: Vec<&str> = header.iter().map(String::as_str).collect();
            let mut ranked: Vec<_> = scores.nodes.iter().filter(|n| all || n.rank <= TOP).collect();
            ranked.sort_by_key(|n| n.rank);
            let rows: Vec<String> = ranked
                .iter()
                .map(|n| {
                    let mut row = format!("{}<th>{}</th>{}", num(n.rank), esc(&n.node), num(n.score));
                    for p in &n.priorities {
                        row.push_str(&num(p.score));
                    }
                    row
                })
                .collect();
            body.push_str(&table("ranking", &header, &rows));
        }
        Some(_) => body.push_str("<p>No feasible node to score.</p>\n"),
        None => body.push_str("<p>The Policy has no priorities to rank the feasible nodes.</p>\n"),
    }
    if !report.hints.is_empty() {
        body.push_str("<h2>What would change the answer</h2>\n<ul>\n");
        for h in &report.hints {
            let _ = writeln!(body, "<li><b>{}</b> ({} nodes): {}</li>", esc(&h.reason), h.nodes, esc(&h.hint));
        }
        body.push_str("</ul>\n");
    }
    page(prefix, &format!("Pod {}", report.pod), &body)
}

pub fn whatif_page(prefix: &str, scheduler: &str, policy: &str, outcome: Option<Result<&Whatif, &str>>) -> String {
    let mut body = format!(
        "<p>Paste a scheduler Policy (JSON or YAML): it is compared with the Policy this extender serves, on the \
         cluster as it is now, for the pods of one scheduler. Nothing is changed.</p>\n\
         <form method=\"post\" action=\"{}/ui/whatif\">\n<p><label>Scheduler <input name=\"scheduler\" value=\"{}\"></label></p>\n\
         <p><textarea name=\"policy\" spellcheck=\"false\">{}</textarea></p>\n<p><button type=\"submit\">What if</button></p>\n</form>\n",
        esc(prefix),
        esc(scheduler),
        esc(policy)
    );
    match outcome {
        None => {}
        Some(Err(error)) => {
            let _ = writeln!(body, "<p class=\"fail\" id=\"error\">{}</p>", esc(error));
        }
        Some(Ok(r)) => body.push_str(&whatif_report(prefix, r)),
    }
    page(prefix, "What if", &body)
}

fn whatif_report(prefix: &str, r: &Whatif) -> String {
    let p = &r.pending;
    let run = &r.running;
    let nowhere = run.stop_fitting.iter().filter(|s| s.fits_elsewhere == 0).count();
    let mut out = format!(
        "<h2>Report</h2>\n<p class=\"summary\" id=\"pending-summary\">Pending {}: {} become unschedulable, {} become \
         schedulable, {} get another best node.</p>\n<p class=\"summary\" id=\"running-summary\">Running {}: {} would no \
         longer fit where they run, {nowhere} of them on no other node.</p>\n",
        p.checked,
        p.become_unschedulable.len(),
        p.become_schedulable.len(),
        p.best_node_changes.len(),
        run.checked,
        run.stop_fitting.len(),
    );
    let link = |key: &str| match key.split_once('/') {
        Some((ns, name)) => pod_link(prefix, ns, name),
        None => esc(key),
    };
    for (id, what, list) in [
        ("become-unschedulable", "Become unschedulable", &p.become_unschedulable),
        ("become-schedulable", "Become schedulable", &p.become_schedulable),
        ("best-node-changes", "Get another best node", &p.best_node_changes),
    ] {
        if !list.is_empty() {
            let links: Vec<String> = list.iter().map(|k| link(k)).collect();
            let _ = writeln!(out, "<p id=\"{id}\">{what}: {}</p>", links.join(", "));
        }
    }
    if !run.stop_fitting.is_empty() {
        out.push_str("<h2>Running pods that would stop fitting where they run</h2>\n");
        let rows: Vec<String> = run
            .stop_fitting_by_reason
            .iter()
            .map(|g| {
                format!(
                    "{}{}{}{}{}",
                    td(&g.predicate),
                    td(&g.reason),
                    num(g.pods),
                    num(g.fit_nowhere),
                    td(&g.examples.join(", "))
                )
            })
            .collect();
        out.push_str(&table(
            "stop-fitting-by-reason",
            &["PREDICATE", "REASON", "PODS", "NOWHERE ELSE", "EXAMPLES"],
            &rows,
        ));
        let rows: Vec<String> = run
            .stop_fitting
            .iter()
            .map(|s| {
                let reasons: Vec<String> =
                    s.rejected_by.iter().map(|r| format!("{}: {}", r.predicate, r.reason)).collect();
                format!("<td>{}</td>{}{}{}", link(&s.pod), td(&s.node), td(&reasons.join("; ")), num(s.fits_elsewhere))
            })
            .collect();
        out.push_str(&table("stop-fitting", &["POD", "NODE", "REJECTED BY", "FITS ELSEWHERE"], &rows));
    }
    let changed: Vec<String> = r
        .predicates
        .iter()
        .filter(|p| p.before.unwrap_or(0) != p.after.unwrap_or(0))
        .map(|p| {
            let show = |n: Option<usize>| n.map_or_else(|| "-".to_string(), |n| n.to_string());
            format!("{}{}{}", td(&p.predicate), num(show(p.before)), num(show(p.after)))
        })
        .collect();
    if !changed.is_empty() {
        out.push_str("<h2>Predicates whose rejections change</h2>\n");
        out.push_str(&table("predicates", &["PREDICATE", "CURRENT", "NEW"], &changed));
    }
    let pr = &r.priorities;
    if let Some(rank) = pr.mean_rank_of_current_best {
        let _ = writeln!(
            out,
            "<p>Priorities: the best node changes for {} of {} pods scored under both; the current best node ranks \
             {rank:.2} on average under the new Policy.</p>",
            pr.best_node_changed, pr.sampled
        );
    }
    out
}
