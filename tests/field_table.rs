//! docs/semantics.md's table "Every field the mirrored plugins read" against what it describes:
//!
//! - upstream: every field the Filter and Score plugins the extender mirrors read, per tested minor
//!   (`tests/fixtures/upstream-fields/v1.NN.txt`, `e2e/kube/fields`' output), has its row, with those
//!   minors and readers; and, with Go, the fixtures are what `e2e/kube/fields` lists today;
//! - the model: every path a `read:` row names is kept when decoding (a generated object that has the
//!   field and the same object without it decode to different model objects);
//! - the generators: some case of the oracles' generators (v1.35, v1.36, v1.37 and the v1.22 Policy
//!   oracle) draws every such path.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use predicate_extender_testing::kube_cluster::binaries;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use predicate_engine::cluster::source::parse_objects;
use predicate_engine::cluster::SchedulerVersion;
use predicate_extender_testing::oracle::{generate, Domain};
use serde_json::{json, Value};

const MINORS: [&str; 3] = ["1.35", "1.36", "1.37"];
const SECTION: &str = "## Every field the mirrored plugins read";
/// Cases per generator searched for a field.
const SEEDS: u64 = 600;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(minor: &str) -> String {
    std::fs::read_to_string(root().join(format!("tests/fixtures/upstream-fields/v{minor}.txt"))).unwrap()
}

/// Per field: the minors listing it and the readers of the newest.
fn upstream() -> BTreeMap<String, (Vec<&'static str>, String)> {
    let mut out: BTreeMap<String, (Vec<&'static str>, String)> = BTreeMap::new();
    for minor in MINORS {
        for line in fixture(minor).lines() {
            let parts: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(parts.len(), 3, "v{minor}.txt: {line:?}");
            let entry = out.entry(format!("{} {}", parts[0], parts[1])).or_default();
            entry.0.push(minor);
            entry.1 = parts[2].replace(',', ", ");
        }
    }
    out
}

/// `1.35–1.37`, `1.36–1.37`, `1.37`, or a list where the minors are not contiguous.
fn minors_text(minors: &[&str]) -> String {
    let at = |m: &str| MINORS.iter().position(|x| *x == m).unwrap();
    let contiguous = minors.windows(2).all(|w| at(w[1]) == at(w[0]) + 1);
    match minors {
        [one] => one.to_string(),
        [first, .., last] if contiguous => format!("{first}–{last}"),
        many => many.join(", "),
    }
}

struct Row {
    field: String,
    minors: String,
    readers: String,
    extender: String,
}

fn doc() -> String {
    std::fs::read_to_string(root().join("docs/semantics.md")).unwrap()
}

/// The table's rows.
fn rows(doc: &str) -> Vec<Row> {
    let start = doc.find(SECTION).expect("the section is in docs/semantics.md");
    let section = &doc[start..];
    let end = section.find("\n### ").unwrap_or(section.len());
    section[..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim().trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 4, "a row has four cells: {l}");
            Row {
                field: cells[0].trim_matches('`').to_string(),
                minors: cells[1].to_string(),
                readers: cells[2].to_string(),
                extender: cells[3].to_string(),
            }
        })
        .collect()
}

/// The `Kind:path` list of a `read:` cell (before the first `;`).
fn paths(extender: &str) -> Option<Vec<(String, String)>> {
    let list = extender.strip_prefix("read: ")?;
    let list = list.split(';').next().unwrap_or_default();
    Some(
        list.split(", ")
            .map(|p| {
                let (kind, path) = p.trim().split_once(':').unwrap_or_else(|| panic!("{p:?} is not Kind:path"));
                (kind.to_string(), path.to_string())
            })
            .collect(),
    )
}

#[test]
fn every_field_upstream_reads_has_its_row_with_its_minors_and_readers() {
    let upstream = upstream();
    let doc = doc();
    let rows = rows(&doc);
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for row in &rows {
        if !seen.insert(row.field.clone()) {
            problems.push(format!("{}: two rows", row.field));
        }
        let Some((minors, readers)) = upstream.get(&row.field) else {
            problems.push(format!("{}: no tested minor's plugins read it (tests/fixtures/upstream-fields)", row.field));
            continue;
        };
        if row.minors != minors_text(minors) {
            problems.push(format!(
                "{}: minors {:?}, the fixtures say {:?}",
                row.field,
                row.minors,
                minors_text(minors)
            ));
        }
        if &row.readers != readers {
            problems.push(format!("{}: readers {:?}, the fixtures say {readers:?}", row.field, row.readers));
        }
        let known = row.extender.starts_with("read: ")
            || row.extender.strip_prefix("not read: [").and_then(|r| r.split_once("](#")).is_some_and(|(key, rest)| {
                rest.starts_with(&format!("not-read-{key})")) && doc.contains(&format!("\n#### Not read: {key}\n"))
            });
        if !known {
            problems.push(format!(
                "{}: the extender cell is neither read: nor a defined not-read reason: {}",
                row.field, row.extender
            ));
        }
    }
    for (field, (minors, readers)) in &upstream {
        if !seen.contains(field) {
            problems.push(format!("no row for `{field}` | {} | {readers} |", minors_text(minors)));
        }
    }
    assert!(problems.is_empty(), "docs/semantics.md, \"{SECTION}\":\n{}", problems.join("\n"));
}

/// The values at `path` in `value` (`[]` steps into every element of a list).
fn values_at<'a>(value: &'a Value, path: &str) -> Vec<&'a Value> {
    let mut current = vec![value];
    for step in path.split('.') {
        let (key, each) = match step.strip_suffix("[]") {
            Some(k) => (k, true),
            None => (step, false),
        };
        let mut next = Vec::new();
        for v in current {
            let Some(child) = v.get(key).filter(|c| !c.is_null()) else { continue };
            if each {
                next.extend(child.as_array().into_iter().flatten());
            } else {
                next.push(child);
            }
        }
        current = next;
    }
    current
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// `value` without anything at `path`.
fn without(value: &Value, path: &str) -> Value {
    fn strip(v: &mut Value, steps: &[&str]) {
        let Some((step, rest)) = steps.split_first() else { return };
        let (key, each) = match step.strip_suffix("[]") {
            Some(k) => (k, true),
            None => (*step, false),
        };
        let Some(map) = v.as_object_mut() else { return };
        if rest.is_empty() && !each {
            map.remove(key);
            return;
        }
        let Some(child) = map.get_mut(key) else { return };
        if each {
            for element in child.as_array_mut().into_iter().flatten() {
                if rest.is_empty() {
                    *element = json!({});
                } else {
                    strip(element, rest);
                }
            }
        } else {
            strip(child, rest);
        }
    }
    let mut out = value.clone();
    let steps: Vec<&str> = path.split('.').collect();
    strip(&mut out, &steps);
    out
}

/// The model the file and live sources build of one object (`Debug`), or why it does not decode.
fn decoded(object: &Value) -> String {
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [object]}).to_string();
    match parse_objects("object", &list) {
        Ok(objects) => format!("{:?} {:?} {:?}", objects.nodes, objects.pods, objects.others),
        Err(e) => format!("error: {e}"),
    }
}

/// Every object the oracles' generators draw, by kind (the pod to schedule among the Pods).
fn generated() -> BTreeMap<String, Vec<Value>> {
    let mut by_kind: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut add = |objects: Vec<Value>, pod: Value| {
        for o in objects.into_iter().chain(std::iter::once(pod)) {
            let kind = o["kind"].as_str().unwrap_or_default().to_string();
            by_kind.entry(kind).or_default().push(o);
        }
    };
    for version in SchedulerVersion::ALL {
        for seed in 0..SEEDS {
            let case = generate(&Domain::for_version(version), seed);
            add(case.objects, case.pod);
        }
    }
    for seed in 0..SEEDS {
        let case = predicate_extender_testing::policy_oracle::generate(seed).case;
        add(case.objects, case.pod);
    }
    by_kind
}

#[test]
fn every_path_the_table_reads_is_kept_by_the_model_and_drawn_by_the_generators() {
    let doc = doc();
    let rows = rows(&doc);
    let objects = generated();
    let mut problems = Vec::new();
    let mut checked = 0;
    for row in &rows {
        let Some(paths) = paths(&row.extender) else { continue };
        for (kind, path) in paths {
            let candidates = objects.get(&kind).map(Vec::as_slice).unwrap_or_default();
            // A value that is there but empty (`{}`, `[]`, `""`) says nothing of whether the model
            // keeps the field: a Node's `spec: {}` decodes as no spec at all.
            let Some(object) = candidates.iter().find(|o| values_at(o, &path).into_iter().any(|v| !is_empty(v))) else {
                problems.push(format!("{}: no generated {kind} has {path}", row.field));
                continue;
            };
            checked += 1;
            if decoded(object) == decoded(&without(object, &path)) {
                problems.push(format!(
                    "{}: the model drops {kind}:{path} (the object decodes the same without it)",
                    row.field
                ));
            }
        }
    }
    assert!(problems.is_empty(), "docs/semantics.md, \"{SECTION}\":\n{}", problems.join("\n"));
    assert!(checked > 150, "only {checked} paths checked");
}

predicate_extender_testing::on_each_minor!(the_fixture_is_what_the_lister_finds_in_upstreams_code);

/// `e2e/kube/fields`, built for the minor by e2e/build.sh, lists what the fixture holds.
async fn the_fixture_is_what_the_lister_finds_in_upstreams_code(minor: &str) {
    let Some(bin) = binaries::binaries_of(minor, "field_table") else { return };
    let out = std::process::Command::new(bin.path("fields")).current_dir(root().join("e2e/kube")).output().unwrap();
    assert!(out.status.success(), "fields: {}", String::from_utf8_lossy(&out.stderr));
    let listed = String::from_utf8(out.stdout).unwrap();
    assert!(
        listed == fixture(minor),
        "Kubernetes {minor}: e2e/kube/fields lists other fields than tests/fixtures/upstream-fields/v{minor}.txt; \
         update the fixture and the table in docs/semantics.md. Now:\n{listed}"
    );
}
