//! A development cluster on 127.0.0.1 for people: the same etcd, kube-apiserver,
//! kube-controller-manager (PV binder), kube-scheduler (shipped configuration) and extender (live
//! mode) as the end-to-end tests, loaded with a generated cluster (`gen-cluster`), until Ctrl-C.
//! Run it with `e2e/dev-cluster.sh [--nodes N] [--pods-per-node N] [--seed N]`, which builds what it
//! needs first.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a development tool: a panic says what failed

use predicate_extender_testing::kube_cluster;

use clap::Parser;
use gen_cluster::{ClusterSpec, Output};
use kube_cluster::objects::{create, SCHEDULER_NAME};
use kube_cluster::{extender_binary, Cluster, Options};
use serde_json::{json, Value};

#[derive(Debug, Parser)]
#[command(about = "etcd, kube-apiserver, kube-scheduler and the extender on 127.0.0.1, with a generated cluster")]
struct Args {
    /// Nodes of the generated cluster.
    #[arg(long, default_value_t = 20)]
    nodes: u32,
    /// Pods running on each node.
    #[arg(long, default_value_t = 5)]
    pods_per_node: u32,
    /// The generator's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Keep the directory (logs, kubeconfigs, etcd data) after Ctrl-C.
    #[arg(long)]
    keep: bool,
}

/// What the API server refuses or ignores on create, and what would tie objects to the
/// generator's made-up identities.
fn for_create(mut object: Value) -> Value {
    if let Some(meta) = object["metadata"].as_object_mut() {
        for field in ["resourceVersion", "uid", "creationTimestamp", "managedFields", "selfLink", "ownerReferences"] {
            meta.remove(field);
        }
    }
    if object["kind"] == "Service" {
        if let Some(spec) = object["spec"].as_object_mut() {
            spec.remove("clusterIP");
            spec.remove("clusterIPs");
        }
    }
    object
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let binaries = match kube_cluster::binaries::built(kube_cluster::NEWEST) {
        Ok(b) => b,
        Err(why) => {
            eprintln!("dev-cluster: {why}");
            std::process::exit(1);
        }
    };
    eprintln!("dev-cluster: starting etcd, kube-apiserver, kube-controller-manager, the extender and kube-scheduler");
    let options = Options { controller_manager: true, ..Options::default() };
    let mut cluster = Cluster::start_with(binaries.clone(), "dev-cluster", options).await;
    if args.keep {
        cluster.keep();
    }

    let generated = cluster.dir.join("generated.json");
    // `gen-cluster --nodes N --pods-per-node P --seed S`, its other flags' defaults.
    let spec = ClusterSpec {
        nodes: args.nodes as usize,
        pods_per_node: args.pods_per_node as usize,
        seed: args.seed,
        ..ClusterSpec::default()
    };
    gen_cluster::run(&spec, Output::Cluster, &generated).unwrap_or_else(|e| panic!("gen-cluster: {e}"));
    let list: Value = serde_json::from_slice(&std::fs::read(&generated).unwrap()).unwrap();
    let items = list["items"].as_array().cloned().unwrap_or_default();
    let namespaces: std::collections::BTreeSet<String> = items
        .iter()
        .filter_map(|o| o.pointer("/metadata/namespace").and_then(Value::as_str).map(str::to_string))
        .collect();
    for ns in &namespaces {
        create(&cluster.client, json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})).await;
    }
    // Nodes first (pods name them), then everything else.
    let (nodes, rest): (Vec<Value>, Vec<Value>) = items.into_iter().partition(|o| o["kind"] == "Node");
    eprintln!("dev-cluster: loading {} nodes and {} other objects", nodes.len(), rest.len());
    for object in nodes.into_iter().chain(rest) {
        create(&cluster.client, for_create(object)).await;
    }

    let pod_file = cluster.dir.join("pending-pod.json");
    // `gen-cluster --nodes N --seed S --pending-pod`.
    let pending_spec = ClusterSpec { nodes: args.nodes as usize, seed: args.seed, ..ClusterSpec::default() };
    gen_cluster::run(&pending_spec, Output::PendingPod, &pod_file)
        .unwrap_or_else(|e| panic!("gen-cluster --pending-pod: {e}"));
    let mut pending: Value = serde_json::from_slice(&std::fs::read(&pod_file).unwrap()).unwrap();
    pending["spec"]["schedulerName"] = json!(SCHEDULER_NAME);
    std::fs::write(&pod_file, serde_json::to_string_pretty(&for_create(pending)).unwrap()).unwrap();

    let kubeconfig = cluster.admin_kubeconfig.display().to_string();
    println!(
        "\nReady: Kubernetes (kube-apiserver, kube-scheduler, kube-controller-manager) and etcd from {bins}\n\
         \n  export KUBECONFIG={kubeconfig}\n\
         \n  # why would this pod fit, or not (the extender's explain, on the live cluster):\
         \n  {bin} explain --kubeconfig {kubeconfig} --pod {pod}\
         \n  # schedule it through kube-scheduler and the extender (kubectl built beside the cluster):\
         \n  {kubectl} create -f {pod}\
         \n  {kubectl} get -f {pod} -o wide\
         \n\
         \n  extender verbs:   http://{verbs}   (filter, prioritize, preempt, bind)\
         \n  extender metrics: http://{admin}/metrics\
         \n  logs:             {dir}/*.log\n\
         \nCtrl-C stops everything{kept}.",
        bins = binaries.dir.display(),
        bin = extender_binary().display(),
        kubectl = binaries.path("kubectl").display(),
        pod = pod_file.display(),
        verbs = cluster.extender_addr,
        admin = cluster.extender_admin_addr,
        dir = cluster.dir.display(),
        kept = if args.keep { " and keeps that directory" } else { " and removes that directory" },
    );
    let _ = tokio::signal::ctrl_c().await;
    eprintln!("dev-cluster: stopping");
}
