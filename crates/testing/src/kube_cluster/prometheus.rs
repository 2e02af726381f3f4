//! The harness's one reader of the Prometheus text format (kube-scheduler's, kube-apiserver's and
//! the extender's `/metrics`), and the sums, differences and quantiles the tests and the
//! throughput harness take of what it reads.

use std::collections::HashMap;

/// One sample line: `name{label="value",...} value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample<'a> {
    pub name: &'a str,
    /// What is between the braces, as written (empty without labels).
    pub labels: &'a str,
    pub value: f64,
}

impl Sample<'_> {
    /// The value of label `key`, as written (escapes left in).
    pub fn label(&self, key: &str) -> Option<&str> {
        let mut rest = self.labels;
        while !rest.is_empty() {
            let (name, after) = rest.split_once("=\"")?;
            let end = closing_quote(after)?;
            if name.trim_start_matches(',').trim() == key {
                return Some(&after[..end]);
            }
            rest = &after[end + 1..];
        }
        None
    }

    /// Whether the series carries every one of `pairs`, each written `key="value"`.
    pub fn has_all(&self, pairs: &[&str]) -> bool {
        pairs.iter().all(|pair| match pair.split_once("=\"") {
            Some((key, value)) => value.strip_suffix('"').is_some_and(|value| self.label(key) == Some(value)),
            None => false,
        })
    }
}

/// Where a label value that starts at `text`'s beginning ends: its closing quote, past escaped ones.
fn closing_quote(text: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some(i),
            _ => escaped = false,
        }
    }
    None
}

/// Every sample of the text; comments, blank lines and lines that do not parse are skipped.
pub fn samples(text: &str) -> impl Iterator<Item = Sample<'_>> {
    text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).filter_map(|line| {
        let (series, value) = match line.find('{') {
            Some(open) => {
                let close = open + 1 + line[open + 1..].rfind('}')?;
                let value = line[close + 1..].split_whitespace().next()?;
                ((&line[..open], &line[open + 1..close]), value)
            }
            None => {
                let mut parts = line.split_whitespace();
                ((parts.next()?, ""), parts.next()?)
            }
        };
        Some(Sample { name: series.0, labels: series.1, value: value.parse().ok()? })
    })
}

/// The sum of the samples named `name` that carry every one of `labels` (each `key="value"`).
pub fn metric_sum(text: &str, name: &str, labels: &[&str]) -> f64 {
    samples(text).filter(|s| s.name == name && s.has_all(labels)).map(|s| s.value).sum()
}

/// How much each counter `name` grew between two scrapes, summed by the values of `keys`
/// (`"key=value,..."`, the keys a series lacks left out), the grown ones only, most first.
pub fn counter_deltas(before: &str, after: &str, name: &str, keys: &[&str]) -> Vec<(String, f64)> {
    let by_keys = |text: &str| {
        let mut out: HashMap<String, f64> = HashMap::new();
        for sample in samples(text).filter(|s| s.name == name) {
            let id: Vec<String> = keys
                .iter()
                .filter_map(|k| Some(format!("{k}={}", sample.label(k).filter(|v| !v.is_empty())?)))
                .collect();
            *out.entry(id.join(",")).or_default() += sample.value;
        }
        out
    };
    let old = by_keys(before);
    let mut deltas: Vec<(String, f64)> = by_keys(after)
        .into_iter()
        .map(|(id, v)| {
            let d = v - old.get(&id).copied().unwrap_or(0.0);
            (id, d)
        })
        .filter(|(_, d)| *d > 0.0)
        .collect();
    deltas.sort_by(|a, b| b.1.total_cmp(&a.1));
    deltas
}

/// The mean of histogram `name` between two scrapes (its `_sum` and `_count` differences), over
/// the series that carry every one of `labels`; 0 when nothing was observed.
pub fn mean_between(before: &str, after: &str, name: &str, labels: &[&str]) -> f64 {
    let delta = |suffix: &str| {
        let series = format!("{name}{suffix}");
        metric_sum(after, &series, labels) - metric_sum(before, &series, labels)
    };
    let count = delta("_count");
    if count > 0.0 {
        delta("_sum") / count
    } else {
        0.0
    }
}

/// Quantile `q` of what histogram `name` observed between two scrapes, all its series together,
/// linear within a bucket (as PromQL's `histogram_quantile`); 0 when it observed nothing.
pub fn quantile_between(before: &str, after: &str, name: &str, q: f64) -> f64 {
    let bucket = format!("{name}_bucket");
    // Cumulative counts by upper bound, every series's added.
    let by_bound = |text: &str| {
        let mut counts: Vec<(f64, f64)> = samples(text)
            .filter(|s| s.name == bucket)
            .filter_map(|s| {
                let le = s.label("le")?;
                let le = if le == "+Inf" { f64::INFINITY } else { le.parse().ok()? };
                Some((le, s.value))
            })
            .collect();
        counts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut merged: Vec<(f64, f64)> = Vec::new();
        for (le, count) in counts {
            match merged.last_mut() {
                Some((last, total)) if *last == le => *total += count,
                _ => merged.push((le, count)),
            }
        }
        merged
    };
    let old = by_bound(before);
    let delta: Vec<(f64, f64)> = by_bound(after)
        .into_iter()
        .map(|(le, count)| (le, count - old.iter().find(|(l, _)| *l == le).map_or(0.0, |(_, c)| *c)))
        .collect();
    let total = delta.last().map_or(0.0, |b| b.1);
    if total <= 0.0 {
        return 0.0;
    }
    let rank = q * total;
    let mut previous = (0.0, 0.0);
    for (le, count) in delta {
        if count >= rank {
            if le.is_infinite() {
                return previous.0;
            }
            let within = if count > previous.1 { (rank - previous.1) / (count - previous.1) } else { 0.0 };
            return previous.0 + (le - previous.0) * within;
        }
        previous = (le, count);
    }
    previous.0
}
