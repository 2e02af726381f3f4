//! `explain` on 1,000-node clusters: by default the summary line comes first and the whole output
//! fits a screen (at most 100 lines); `--top`, `--node` and `--all` show what they say; and the
//! numbers of a hint match a count made here from the generated objects, not by the explain code.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use clap::Parser;
use gen_cluster::api_objects::pending_pod;
use gen_cluster::cli::{self, GenClusterArgs};
use gen_cluster::generate::{controllers, generate, ClusterSpec};
use predicate_engine::cluster::objects::{Node, Pod};
use predicate_engine::cluster::source::parse_objects;
use predicate_engine::cluster::Snapshot;
use predicate_engine::engine::{CancelFlag, Evaluator};
use predicate_engine::policy::Plan;
use predicate_extender::explain::report::{build, Against, Report};
use predicate_extender::explain::source::single_pod;
use predicate_extender::explain::table::Style;
use predicate_extender::explain::view::View;

const BIN: &str = env!("CARGO_BIN_EXE_predicate-extender");
const SUMMARY: &str = " nodes are available";

fn flag(name: &str) -> String {
    format!("--{name}")
}

/// The 1,000-node example of docs/explain.md, replayed in a temporary directory: its `gen-cluster`
/// commands write the cluster and the pod, and `explain` prints exactly what the page shows.
#[test]
fn on_a_generated_1000_node_cluster_the_summary_comes_first_in_at_most_100_lines() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/explain.md")).unwrap();
    let mut lines = page.lines().skip_while(|l| !l.starts_with("$ gen-cluster --nodes 1000 "));
    let mut generate: Vec<&str> = Vec::new();
    let mut explain = None;
    for line in lines.by_ref() {
        if let Some(command) = line.strip_prefix("$ gen-cluster ") {
            generate.push(command);
        } else {
            explain = Some(line.strip_prefix("$ predicate-extender ").expect("the example is a run of commands"));
            break;
        }
    }
    let shown: Vec<&str> = lines.take_while(|l| !l.starts_with("```")).collect();
    assert!(generate.len() >= 2, "docs/explain.md has the 1,000-node explain example: {generate:?}");
    let explain = explain.expect("the example ends with predicate-extender explain");
    assert!(explain.starts_with("explain "), "{explain}");

    let dir = tempfile::tempdir().unwrap();
    for command in &generate {
        // The gen-cluster binary's own command line, its files written in the temporary directory.
        let argv = std::iter::once("gen-cluster").chain(command.split_whitespace());
        let mut args = GenClusterArgs::try_parse_from(argv).unwrap_or_else(|e| panic!("gen-cluster {command}: {e}"));
        args.out = dir.path().join(&args.out);
        cli::run(&args).unwrap_or_else(|e| panic!("gen-cluster {command}: {e}"));
    }
    let out = Command::new(BIN).current_dir(dir.path()).args(explain.split_whitespace()).output().unwrap();
    assert!(out.status.success(), "{explain}: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let printed: Vec<&str> = stdout.lines().collect();
    assert!(printed.len() <= 100, "{} lines:\n{stdout}", printed.len());
    let first = printed.first().copied().unwrap_or_default();
    assert!(first.contains("/1000 nodes are available"), "the summary line first, got {first:?}");
    assert_eq!(printed, shown, "explain prints what docs/explain.md shows");
}

/// A 1,000-node cluster (20 pods a node, 10% tainted), in memory: the cluster and the pending pod
/// `gen-cluster` writes.
struct Cluster {
    nodes: Vec<Node>,
    pods: Vec<Pod>,
    snapshot: Snapshot,
}

fn cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        let (nodes, pods) = generate(&spec());
        let mut snapshot = Snapshot::build(nodes.clone(), pods.clone());
        for object in controllers(&spec()) {
            snapshot.upsert(object);
        }
        Cluster { nodes, pods, snapshot }
    })
}

fn spec() -> ClusterSpec {
    ClusterSpec { nodes: 1000, pods_per_node: 20, ..ClusterSpec::default() }
}

/// The pending pod; given `cpu` millicores, its app container asks for what makes the pod's
/// requests (its sidecar's included) come to that.
fn pod(cpu: Option<i64>) -> Pod {
    let mut pod = pending_pod(&spec());
    if let Some(cpu) = cpu {
        let containers = pod["spec"]["containers"].as_array().unwrap();
        let others: i64 = containers[1..]
            .iter()
            .map(|c| c["resources"]["requests"]["cpu"].as_str().unwrap().trim_end_matches('m').parse::<i64>().unwrap())
            .sum();
        pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = serde_json::json!(format!("{}m", cpu - others));
    }
    let objects = parse_objects("pod", &pod.to_string()).unwrap_or_else(|e| panic!("{e}"));
    single_pod(objects).unwrap()
}

fn report(pod: Pod, detail: &[&str]) -> Report {
    let detail: Vec<String> = detail.iter().map(|n| n.to_string()).collect();
    let evaluator = Evaluator::new(2).unwrap();
    let plan = Plan::default_plan();
    build(Against::shipped(&plan, &cluster().snapshot), pod, &detail, &evaluator, &CancelFlag::new())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn render(report: &Report, view: View) -> String {
    view.render(report, Style { colour: false }, &flag)
}

/// The ranked rows of a table: (rank, node), read from the lines under the RANK header and its
/// weights line.
fn ranked_rows(table: &str) -> Vec<(usize, String)> {
    let mut lines = table.lines().skip_while(|l| !l.starts_with("RANK ")).skip(2);
    let mut rows = Vec::new();
    for line in lines.by_ref().take_while(|l| !l.is_empty()) {
        let mut cols = line.split_whitespace();
        match (cols.next(), cols.next()) {
            (Some("..."), _) => continue,
            (Some(rank), Some(node)) => rows.push((rank.parse().unwrap(), node.to_string())),
            _ => panic!("not a ranked row: {line:?}"),
        }
    }
    rows
}

#[test]
fn the_top_n_feasible_nodes_are_ranked_best_first() {
    let r = report(pod(None), &[]);
    let scores = r.scores.as_ref().unwrap();
    // The ranking, recomputed here from each node's per-priority scores and the plan's weights
    // (docs/policy.md, "Priorities in the Policy file"): NodePreferAvoidPodsPriority, weighing at least
    // the others together, vetoes a node it scores 0; SCORE is otherwise the others' weighted mean
    // rounded half up. Best SCORE first, then the larger sum of every weighted score, then the name.
    const AVOID: &str = "NodePreferAvoidPodsPriority";
    let avoid_weight: i64 = scores.priorities.iter().filter(|p| p.name == AVOID).map(|p| p.weight).sum();
    let others_weight: i64 = scores.priorities.iter().filter(|p| p.name != AVOID).map(|p| p.weight).sum();
    assert!(avoid_weight >= others_weight && others_weight > 0, "the default plan's avoid weight is a veto");
    let mut expected: Vec<(i64, i64, &str)> = scores
        .nodes
        .iter()
        .map(|n| {
            let weighted = n.priorities.iter().zip(&scores.priorities);
            let sum: i64 = weighted.clone().map(|(s, p)| s.score * p.weight).sum();
            let vetoed = weighted.clone().any(|(s, p)| p.name == AVOID && s.score == 0);
            let others: i64 = weighted.filter(|(_, p)| p.name != AVOID).map(|(s, p)| s.score * p.weight).sum();
            let want = if vetoed { 0 } else { (2 * others + others_weight) / (2 * others_weight) };
            assert_eq!(n.score, want, "{}", n.node);
            (n.score, sum, n.node.as_str())
        })
        .collect();
    expected.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(b.2)));
    for top in [3, 10, 25] {
        let view = View { top: (top != 10).then_some(top), ..View::default() };
        let table = render(&r, view);
        let rows = ranked_rows(&table);
        let want: Vec<(usize, String)> =
            expected.iter().take(top).enumerate().map(|(i, (_, _, n))| (i + 1, n.to_string())).collect();
        assert_eq!(rows, want, "--top {top}");
        assert!(table.contains(&format!("Top {top} of {} feasible nodes", r.feasible.len())), "{table}");
    }
}

#[test]
fn named_nodes_get_every_predicate_and_their_rank_in_the_whole_cluster() {
    let r = report(pod(None), &[]);
    let scores = r.scores.as_ref().unwrap();
    let far = scores.nodes.iter().find(|n| n.rank == 500).unwrap().node.clone();
    let tainted = cluster().nodes.iter().find(|n| !n.spec.taints.is_empty()).unwrap().metadata.name.clone();
    let named = report(pod(None), &[&far, &tainted]);
    let table = render(&named, View { nodes: vec![far.clone(), tainted.clone()], ..View::default() });
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines[0], r.summary, "the summary of the whole cluster, first");
    let predicates = Plan::default_plan().predicates.len();
    for node in [&far, &tainted] {
        let at = lines.iter().position(|l| l.starts_with(&format!("{node} "))).unwrap_or_else(|| panic!("{table}"));
        let rows = lines[at..].iter().take_while(|l| l.starts_with(node.as_str()) || l.starts_with(' ')).count();
        // Every predicate, and the note on the nominated pods when there are some.
        assert!(rows == predicates || rows == predicates + 1, "{node}: {rows} rows\n{table}");
    }
    let taints = lines.iter().find(|l| l.contains(" PodToleratesNodeTaints ") && l.contains(" fail "));
    assert!(taints.is_some_and(|l| l.ends_with("node(s) had taints that the pod didn't tolerate")), "{table}");
    let rows = ranked_rows(&table);
    assert_eq!(rows.len(), 11, "the top 10 and the named feasible node: {rows:?}");
    assert_eq!(rows.last(), Some(&(500, far.clone())));
    assert!(table.contains("\n...\n") || table.contains("\n...  "), "a gap before rank 500:\n{table}");
}

#[test]
fn all_prints_every_predicate_on_every_node_and_a_column_per_feasible_node() {
    let r = report(pod(None), &[]);
    let table = render(&r, View { all: true, ..View::default() });
    let predicates = Plan::default_plan().predicates.len();
    assert!(table.starts_with("Pod shop/checkout-api-6c9f7d5b8-x2x7q on 1000 node(s)"), "the full report's layout");
    assert!(table.lines().count() > 1000 * predicates, "{} lines", table.lines().count());
    let header = table.lines().find(|l| l.starts_with("PRIORITY ")).unwrap();
    assert_eq!(header.split_whitespace().count(), 2 + r.feasible.len(), "PRIORITY, WEIGHT, a column per node");
}

/// cpu in millicores as the hints print it: cores, up to three decimals.
fn cores(m: i64) -> String {
    let text = format!("{}.{:03}", m / 1000, m % 1000);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[test]
fn the_cpu_hint_names_the_most_free_cpu_where_nothing_else_fails() {
    let c = cluster();
    // Free cpu per node, counted here: allocatable minus the containers' requests of its pods.
    let milli = |q: Option<&predicate_engine::quantity::Quantity>| q.map_or(0, |q| q.milli_value());
    let free = |n: &Node| {
        let used: i64 = c
            .pods
            .iter()
            .filter(|p| p.spec.node_name == n.metadata.name)
            .flat_map(|p| &p.spec.containers)
            .map(|ct| milli(ct.resources.requests.get("cpu")))
            .sum();
        milli(n.status.allocatable.get("cpu")) - used
    };
    let frees: Vec<(i64, &Node)> = c.nodes.iter().map(|n| (free(n), n)).collect();
    let untainted = || frees.iter().filter(|(_, n)| n.spec.taints.is_empty());
    let (low, high) = (untainted().map(|f| f.0).min().unwrap(), untainted().map(|f| f.0).max().unwrap());
    // A request, in whole cores, that about half of the untainted nodes cannot take.
    let want = (low + high) / 2 / 1000 * 1000;
    assert!(low < want && want <= high, "{low}..{high}: {want}");
    let short = frees.iter().filter(|(f, _)| *f < want).count();
    let short_alone: Vec<&(i64, &Node)> = untainted().filter(|(f, _)| *f < want).collect();
    let (most, node) =
        short_alone.iter().fold(
            (i64::MIN, ""),
            |best, (f, n)| {
                if *f > best.0 {
                    (*f, n.metadata.name.as_str())
                } else {
                    best
                }
            },
        );

    let r = report(pod(Some(want)), &[]);
    let group = r.failures.iter().find(|g| g.reason == "Insufficient cpu").unwrap();
    assert_eq!((group.nodes, group.alone), (short, short_alone.len()));
    let hint = r.hints.iter().find(|h| h.reason == "Insufficient cpu").unwrap();
    assert_eq!(
        hint.hint,
        format!(
            "the pod requests {} cpu; the most free cpu on a node where nothing else fails is {} ({node})",
            cores(want),
            cores(most)
        )
    );
    let table = render(&r, View::default());
    assert!(table.starts_with(&r.summary) && r.summary.contains(SUMMARY));
    assert!(table.lines().count() <= 100, "{table}");
    assert!(table.contains(&format!("- Insufficient cpu ({short} nodes): {}", hint.hint)), "{table}");
}
