//! Which part of a report a person gets, chosen the same way on the command line (`--node`,
//! `--top`, `--all`, `--format`) and in the server's query (`node=`, `top=`, `all`, `Accept`).

use crate::explain::overview::{render_nodes, render_overview, Spell};
use crate::explain::report::Report;
use crate::explain::table::{render_table, Style};

/// Feasible nodes ranked by default.
pub const DEFAULT_TOP: usize = 10;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct View {
    /// Nodes to show with every predicate, both passes; the JSON report keeps only these in
    /// `nodes`.
    pub nodes: Vec<String>,
    /// How many of the ranked feasible nodes the table shows (`DEFAULT_TOP` when not given).
    pub top: Option<usize>,
    /// Every node in full: the report as it was before the overview existed.
    pub all: bool,
}

impl View {
    /// Refuses options that do not go together, rather than ignoring one of them. `spell` names an
    /// option as the caller's user typed it.
    pub fn check(&self, json: bool, spell: Spell<'_>) -> Result<(), String> {
        let (all, top, node) = (spell("all"), spell("top"), spell("node"));
        if self.all && !self.nodes.is_empty() {
            return Err(format!("{all} and {node} do not go together: {all} shows every node in full"));
        }
        if self.all && self.top.is_some() {
            return Err(format!("{all} and {top} do not go together: {all} shows every feasible node's scores"));
        }
        if json && self.top.is_some() {
            return Err(format!("{top} is for the table: the JSON report always holds every feasible node's scores"));
        }
        if json && self.all {
            return Err(format!("{all} is for the table: the JSON report always holds every node in full"));
        }
        Ok(())
    }

    /// The table for this view.
    pub fn render(&self, report: &Report, style: Style, spell: Spell<'_>) -> String {
        let top = self.top.unwrap_or(DEFAULT_TOP);
        if self.all {
            render_table(report, style)
        } else if self.nodes.is_empty() {
            render_overview(report, top, style, spell)
        } else {
            render_nodes(report, top, style)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_that_would_be_ignored_are_refused() {
        let flag = |name: &str| format!("--{name}");
        let view = |nodes: &[&str], top: Option<usize>, all: bool| View {
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
            top,
            all,
        };
        let cases = [
            (view(&[], None, false), false, None),
            (view(&["a"], Some(3), false), false, None),
            (view(&["a"], None, false), true, None),
            (view(&[], None, true), false, None),
            (view(&["a"], None, true), false, Some("--all and --node do not go together")),
            (view(&[], Some(3), true), false, Some("--all and --top do not go together")),
            (view(&[], Some(3), false), true, Some("--top is for the table")),
            (view(&[], None, true), true, Some("--all is for the table")),
        ];
        for (v, json, want) in cases {
            let got = v.check(json, &flag);
            match want {
                None => assert_eq!(got, Ok(()), "{v:?} json={json}"),
                Some(w) => assert!(got.as_ref().is_err_and(|e| e.starts_with(w)), "{v:?} json={json}: {got:?}"),
            }
        }
    }
}
