//! The in-process overlay on the real node (docs/in-process.md): the extender's Deployment switched
//! with one `kubectl apply -k` of `overlays/in-process` as an operator applies it (kustomize, only
//! the image overridden), a rolling update of the same Deployment; the in-process
//! kube-scheduler's image (image/build.sh in-process-scheduler) runs on the kubelet as both
//! replicas, with no sidecar; pods of the profile are bound once each, by kube-scheduler itself; the
//! leader's kube-scheduler (and the engine inside it) is killed through the runtime, kubelet
//! restarts it, and the pods created meanwhile are bound once each too.

use super::*;

/// The shipped in-process image's name, and the one imported here.
pub(crate) const IN_PROCESS_IMAGE_SHIPPED: &str = "registry.example.com/predicate-scheduler-in-process";
pub(crate) const IN_PROCESS_IMAGE: &str = "localhost/predicate-scheduler-in-process";
pub(crate) const IN_PROCESS_TAG: &str = "e2e";

/// The in-process image's archive, from the binary `e2e/build.sh inprocess` links for the newest
/// minor.
pub(crate) fn image(dir: &Path) -> Option<PathBuf> {
    let binary = kube_cluster::binaries::in_process_scheduler(kube_cluster::binaries::NEWEST, TEST)?;
    let out = dir.join("in-process.oci.tar");
    build_image("in-process-scheduler", Some(&binary), &format!("{IN_PROCESS_IMAGE}:{IN_PROCESS_TAG}"), &out);
    Some(out)
}

/// Every binding of `pods` in the test namespace, once each, by kube-scheduler.
fn assert_bound_once_each_by_kube_scheduler(cluster: &Cluster, pods: &[String]) {
    let bindings = kube_cluster::bindings::bindings(cluster, NS);
    for pod in pods {
        let by: Vec<&String> = bindings.iter().filter(|(p, _)| p == pod).map(|(_, agent)| agent).collect();
        assert_eq!(by.len(), 1, "{pod} bound {} times: {by:?}", by.len());
        assert!(by[0].starts_with(kube_cluster::bindings::KUBE_SCHEDULER), "{pod} bound by {}", by[0]);
    }
}

pub(crate) async fn the_in_process_overlay_runs_on_a_real_kubelet(
    binaries: &Binaries,
    cluster: &Cluster,
    node: &RealNode,
) {
    let overlay = cluster.dir.join("in-process-overlay");
    std::fs::create_dir_all(&overlay).unwrap();
    std::fs::write(
        overlay.join("kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - {base}\n\
             images:\n  - name: {IN_PROCESS_IMAGE_SHIPPED}\n    newName: {IN_PROCESS_IMAGE}\n    newTag: {IN_PROCESS_TAG}\n",
            base = relative_to(&overlay, &repo().join("overlays/in-process")).display()
        ),
    )
    .unwrap();
    kubectl(binaries, cluster, &["apply", "-k", overlay.to_str().unwrap()]);
    let deployments: Api<Deployment> = Api::namespaced(cluster.client.clone(), DEPLOYMENT_NS);
    eventually("the in-process Deployment is Available with both replicas", DEADLINE * 3, || async {
        let d = deployments.get_opt(DEPLOYMENT).await.ok()??;
        let status = d.status?;
        let image = d.spec.template.spec?.containers.first()?.image.clone()?;
        let available = status
            .conditions?
            .iter()
            .any(|c| c.type_.as_deref() == Some("Available") && c.status.as_deref() == Some("True"));
        // Both pods the new template's, available, and no pod of the old one left.
        let rolled = status.updated_replicas == Some(2)
            && status.available_replicas == Some(2)
            && status.replicas == Some(2)
            && d.metadata.generation == status.observed_generation;
        (image == format!("{IN_PROCESS_IMAGE}:{IN_PROCESS_TAG}") && available && rolled).then_some(())
    })
    .await;
    let pods = eventually("two running pods of the in-process image, no sidecar", DEADLINE, || async {
        let pods = deployment_pods(cluster).await;
        let ours = pods.iter().all(|p| {
            let running = p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
            let spec = p.spec.as_ref();
            running
                && spec.is_some_and(|s| s.init_containers.as_ref().is_none_or(Vec::is_empty))
                && spec.and_then(|s| s.containers.first()).and_then(|c| c.image.as_deref())
                    == Some(format!("{IN_PROCESS_IMAGE}:{IN_PROCESS_TAG}").as_str())
        });
        (pods.len() == 2 && ours).then_some(pods)
    })
    .await;
    for pod in &pods {
        let name = pod.metadata.name.as_deref().unwrap();
        assert_eq!(pod.spec.as_ref().unwrap().node_name.as_deref(), Some(NODE_NAME), "{name}");
        let log = container_log(node, pod, "kube-scheduler").join("\n");
        assert!(log.contains("The predicate engine is in the scheduling cycle"), "{name}: {log}");
    }

    // Pods of the profile: bound by kube-scheduler (no extender in the cluster's path), once each.
    let c = &cluster.client;
    let first: Vec<String> = (0..6).map(|i| format!("in-process-{i}")).collect();
    for name in &first {
        create(c, test_pod(name, json!({}), json!({}))).await;
    }
    for name in &first {
        wait_bound(cluster, NS, name).await;
    }
    assert_bound_once_each_by_kube_scheduler(cluster, &first);

    // The leader's kube-scheduler killed (as an OOM kill would): the engine goes with it; kubelet
    // restarts the container, a replica takes or keeps the Lease, and the pods created meanwhile
    // are bound once each.
    let leader = eventually("a replica of the in-process Deployment holds the Lease", DEADLINE, || async {
        let holder = leader(cluster).await;
        pods.iter().any(|p| p.metadata.name.as_deref() == Some(holder.as_str())).then_some(holder)
    })
    .await;
    let ids = node.container_ids(&leader, "kube-scheduler");
    assert_eq!(ids.len(), 1, "{ids:?}");
    node.ctr(&["tasks", "kill", "--signal", "SIGKILL", &ids[0]]).unwrap();
    let later: Vec<String> = (0..6).map(|i| format!("in-process-after-kill-{i}")).collect();
    for name in &later {
        create(c, test_pod(name, json!({}), json!({}))).await;
    }
    let pod_api: Api<Pod> = Api::namespaced(c.clone(), DEPLOYMENT_NS);
    eventually("kubelet restarted the killed kube-scheduler", DEADLINE * 2, || async {
        let pod = pod_api.get_opt(&leader).await.ok()??;
        let status = pod.status?.container_statuses?.into_iter().find(|s| s.name == "kube-scheduler")?;
        (status.restart_count >= 1 && status.ready).then_some(())
    })
    .await;
    for name in &later {
        wait_bound(cluster, NS, name).await;
    }
    assert_bound_once_each_by_kube_scheduler(cluster, &first);
    assert_bound_once_each_by_kube_scheduler(cluster, &later);
    // Left in place: the chart's part removes the Deployment and its objects, whichever mode they
    // are in (the overlay's objects are the base's, tests/helm_chart.rs).
}
