//! The report as an aligned table for a terminal, coloured when asked: the table machinery, and
//! the full report (`--all`: every predicate on every node, and a score column per feasible node).

use crate::explain::report::{NodeReport, PredicateVerdict, Report, Scores};

/// ANSI colours, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub colour: bool,
}

impl Style {
    /// Colour only for a terminal, and never when `NO_COLOR` is set (to anything but "").
    pub fn for_terminal(is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> Self {
        Style { colour: is_terminal && no_color.is_none_or(|v| v.is_empty()) }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Paint {
    Plain,
    Bold,
    Green,
    Red,
    Dim,
}

impl Paint {
    fn code(self) -> &'static str {
        match self {
            Paint::Plain => "",
            Paint::Bold => "\x1b[1m",
            Paint::Green => "\x1b[32m",
            Paint::Red => "\x1b[31m",
            Paint::Dim => "\x1b[2m",
        }
    }
}

pub(crate) fn paint(style: Style, p: Paint, text: &str) -> String {
    if !style.colour || p == Paint::Plain || text.is_empty() {
        text.to_string()
    } else {
        format!("{}{text}\x1b[0m", p.code())
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Cell {
    text: String,
    paint: Paint,
}

pub(crate) fn cell(text: impl Into<String>, paint: Paint) -> Cell {
    Cell { text: text.into(), paint }
}

pub(crate) fn plain(text: impl Into<String>) -> Cell {
    cell(text, Paint::Plain)
}

pub(crate) enum Row {
    Cells(Vec<Cell>),
    /// A line of its own, indented to the column `indent`.
    Note {
        indent: usize,
        text: String,
    },
}

/// Aligns cells in columns two spaces apart; trailing spaces are trimmed.
pub(crate) fn render(style: Style, rows: &[Row], out: &mut String) {
    let mut widths: Vec<usize> = Vec::new();
    for row in rows {
        if let Row::Cells(cells) = row {
            for (i, c) in cells.iter().enumerate() {
                let w = c.text.chars().count();
                match widths.get_mut(i) {
                    Some(max) => *max = (*max).max(w),
                    None => widths.push(w),
                }
            }
        }
    }
    for row in rows {
        let mut line = String::new();
        match row {
            Row::Cells(cells) => {
                let last = cells.iter().rposition(|c| !c.text.is_empty()).unwrap_or(0);
                for (i, c) in cells.iter().enumerate().take(last + 1) {
                    line.push_str(&paint(style, c.paint, &c.text));
                    if i < last {
                        let pad = widths.get(i).copied().unwrap_or(0).saturating_sub(c.text.chars().count()) + 2;
                        line.push_str(&" ".repeat(pad));
                    }
                }
            }
            Row::Note { indent, text } => {
                let at: usize = widths.iter().take(*indent).map(|w| w + 2).sum();
                line.push_str(&" ".repeat(at));
                line.push_str(&paint(style, Paint::Dim, text));
            }
        }
        out.push_str(&line);
        out.push('\n');
    }
}

fn verdict_cells(v: &PredicateVerdict) -> [Cell; 2] {
    if v.fits {
        [cell("pass", Paint::Green), plain("")]
    } else {
        [cell("fail", Paint::Red), plain(v.messages(", "))]
    }
}

fn same(a: &PredicateVerdict, b: &PredicateVerdict) -> bool {
    a.fits == b.fits && a.reasons == b.reasons
}

pub(crate) fn node_rows(node: &NodeReport, rows: &mut Vec<Row>) {
    let mut first = true;
    let mut push = |rows: &mut Vec<Row>, predicate: &str, pass: &str, v: &PredicateVerdict| {
        let (name, fits) = if first {
            first = false;
            let fits = if node.fits { cell("yes", Paint::Green) } else { cell("no", Paint::Red) };
            (cell(node.node.clone(), Paint::Bold), fits)
        } else {
            (plain(""), plain(""))
        };
        let [verdict, reasons] = verdict_cells(v);
        rows.push(Row::Cells(vec![name, fits, plain(predicate), plain(pass), verdict, reasons]));
    };
    match &node.pass2 {
        None => {
            let pass = if node.nominated_pods.is_empty() { "" } else { "1" };
            for v in &node.pass1 {
                push(rows, &v.predicate, pass, v);
            }
        }
        Some(pass2) => {
            for (i, v1) in node.pass1.iter().enumerate() {
                match pass2.get(i) {
                    Some(v2) if same(v1, v2) => push(rows, &v1.predicate, "1,2", v1),
                    Some(v2) => {
                        push(rows, &v1.predicate, "1", v1);
                        push(rows, &v2.predicate, "2", v2);
                    }
                    None => push(rows, &v1.predicate, "1", v1),
                }
            }
        }
    }
    if first {
        // No predicate ran (an empty plan): still one line for the node.
        let fits = if node.fits { cell("yes", Paint::Green) } else { cell("no", Paint::Red) };
        rows.push(Row::Cells(vec![cell(node.node.clone(), Paint::Bold), fits]));
    }
    if !node.nominated_pods.is_empty() {
        let pass2 = if node.pass2.is_some() { "pass 2 without them" } else { "pass 2 did not run: pass 1 failed" };
        let text = format!("pass 1 with the nominated pod(s) {} added; {pass2}", node.nominated_pods.join(", "));
        rows.push(Row::Note { indent: 2, text });
    }
}

fn score_rows(scores: &Scores, rows: &mut Vec<Row>) {
    let mut header = vec![cell("PRIORITY", Paint::Bold), cell("WEIGHT", Paint::Bold)];
    header.extend(scores.nodes.iter().map(|n| cell(n.node.clone(), Paint::Bold)));
    rows.push(Row::Cells(header));
    for (i, p) in scores.priorities.iter().enumerate() {
        let mut row = vec![plain(p.name.clone()), plain(p.weight.to_string())];
        for n in &scores.nodes {
            let text = n.priorities.get(i).map(|s| format!("{} ({})", s.score, s.weighted)).unwrap_or_default();
            row.push(plain(text));
        }
        rows.push(Row::Cells(row));
    }
    let mut total = vec![cell("SCORE", Paint::Bold), plain("")];
    total.extend(scores.nodes.iter().map(|n| cell(n.score.to_string(), Paint::Bold)));
    rows.push(Row::Cells(total));
}

/// Every predicate's verdict on each node of the report, one row each.
pub(crate) fn render_node_detail(report: &Report, style: Style, out: &mut String) {
    let mut rows = vec![Row::Cells(
        ["NODE", "FITS", "PREDICATE", "PASS", "VERDICT", "REASON"].iter().map(|h| cell(*h, Paint::Bold)).collect(),
    )];
    for node in &report.nodes {
        node_rows(node, &mut rows);
    }
    render(style, &rows, out);
}

/// The full report (`--all`): every predicate on every node, the summary, and the scores with a
/// column per feasible node.
pub fn render_table(report: &Report, style: Style) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "Pod {} on {} node(s), every predicate checked (alwaysCheckAllPredicates)\n\n",
        report.pod,
        report.nodes.len()
    ));
    render_node_detail(report, style, &mut out);
    out.push('\n');
    out.push_str(&paint(style, Paint::Bold, &report.summary));
    out.push('\n');
    if let Some(scores) = &report.scores {
        out.push('\n');
        if scores.nodes.is_empty() {
            out.push_str("No feasible node to score.\n");
        } else {
            out.push_str(
                "Scores of the feasible nodes: score (weight x score) per priority; SCORE is what /prioritize\n\
                 answers: sum of weight x score / sum of weights, rounded to nearest. When\n\
                 NodePreferAvoidPodsPriority weighs at least the others together, it is a veto: a node it\n\
                 scores 0 gets 0, and it is left out of the others' sum.\n\n",
            );
            let mut rows = Vec::new();
            score_rows(scores, &mut rows);
            render(style, &rows, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_and_non_terminals_get_no_colour() {
        use std::ffi::OsStr;
        assert!(Style::for_terminal(true, None).colour);
        assert!(!Style::for_terminal(false, None).colour);
        assert!(!Style::for_terminal(true, Some(OsStr::new("1"))).colour);
        assert!(Style::for_terminal(true, Some(OsStr::new(""))).colour, "NO_COLOR set but empty: colour");
    }

    #[test]
    fn columns_align_on_the_text_not_the_colour_codes() {
        let rows = vec![
            Row::Cells(vec![cell("a", Paint::Red), plain("x")]),
            Row::Cells(vec![cell("long", Paint::Green), plain("y")]),
            Row::Note { indent: 1, text: "note".into() },
        ];
        let mut plain_out = String::new();
        render(Style { colour: false }, &rows, &mut plain_out);
        assert_eq!(plain_out, "a     x\nlong  y\n      note\n");
        let mut coloured = String::new();
        render(Style { colour: true }, &rows, &mut coloured);
        assert_eq!(coloured, "\x1b[31ma\x1b[0m     x\n\x1b[32mlong\x1b[0m  y\n      \x1b[2mnote\x1b[0m\n");
    }
}
