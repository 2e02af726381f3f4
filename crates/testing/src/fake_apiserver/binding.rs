//! The `pods/binding` subresource, with upstream's checks and messages, and the binding faults.

use std::sync::Arc;
use std::time::Instant;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Value};

use super::status::{details, forbidden_response, internal_error, json_response, not_found, status_response, timeout};
use super::store::{parse, Key};
use super::{now_rfc3339, BindFault, BindingRecord, KindInfo, Shared};

/// A protobuf-encoded Binding as the JSON object it stands for (the fields a Binding sets; an
/// absent one absent, as in a JSON Binding).
pub(super) fn protobuf_as_json(body: &[u8]) -> Result<axum::body::Bytes, String> {
    let binding = predicate_extender::bind::protobuf::Binding::decode_object(body)?;
    let meta = binding.metadata.unwrap_or_default();
    let target = binding.target.unwrap_or_default();
    let object = |fields: Vec<(&str, Option<String>)>| -> Value {
        fields.into_iter().filter_map(|(k, v)| Some((k.to_string(), Value::String(v?)))).collect()
    };
    let json = json!({
        "kind": "Binding",
        "apiVersion": "v1",
        "metadata": object(vec![("name", meta.name), ("namespace", meta.namespace), ("uid", meta.uid)]),
        "target": object(vec![("kind", target.kind), ("name", target.name)]),
    });
    Ok(json.to_string().into_bytes().into())
}

/// Answers a binding request, with the fault the test chose for it, and records what came of it.
pub(super) async fn bind(shared: &Arc<Shared>, ns: &str, name: &str, body: &[u8]) -> Response {
    let pod = format!("{ns}/{name}");
    let node = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|b| b["target"]["name"].as_str().map(str::to_string))
        .unwrap_or_default();
    let fault = shared.lock().take_bind_fault(&pod);
    let record = |status: u16, bound: bool| {
        let record = BindingRecord { pod: pod.clone(), node: node.clone(), status, fault, bound, at: Instant::now() };
        shared.lock().bindings.push(record);
    };
    match fault {
        Some(BindFault::Conflict) => {
            record(409, false);
            let message = format!(
                "Operation cannot be fulfilled on pods {name:?}: the object has been modified; please apply your \
                 changes to the latest version and try again"
            );
            status_response(409, "Conflict", &message, Some(details(name, "", "pods")))
        }
        Some(BindFault::InternalError) => {
            record(500, false);
            internal_error()
        }
        Some(BindFault::HangThenFail(delay)) => {
            // Recorded now: a client that gives up first closes the connection, which cancels this.
            record(504, false);
            tokio::time::sleep(delay).await;
            timeout()
        }
        Some(BindFault::BindThenHang(delay)) => {
            let (response, bound) = bind_now(shared, ns, name, body);
            record(response.status().as_u16(), bound);
            tokio::time::sleep(delay).await;
            response
        }
        None => {
            let (response, bound) = bind_now(shared, ns, name, body);
            record(response.status().as_u16(), bound);
            response
        }
    }
}

/// `BindingREST.Create`: the answer, and whether the pod was bound.
fn bind_now(shared: &Arc<Shared>, ns: &str, name: &str, body: &[u8]) -> (Response, bool) {
    let pods = KindInfo::by_kind("Pod").expect("Pod is a known kind");
    if shared.lock().is_forbidden("create", "pods/binding") {
        return (forbidden_response("create", pods, Some(ns), Some(name), Some("binding")), false);
    }
    let refused = |response: Response| (response, false);
    let binding: Value = match serde_json::from_slice::<Value>(body) {
        Ok(v) if v.is_object() => v,
        Ok(_) => {
            return refused(status_response(400, "BadRequest", "the body of the request is not a JSON object", None))
        }
        Err(e) => {
            return refused(status_response(
                400,
                "BadRequest",
                &format!("couldn't get version/kind; json parse error: {e}"),
                None,
            ))
        }
    };
    if let Some(kind) = binding["kind"].as_str().filter(|k| *k != "Binding") {
        return refused(status_response(400, "BadRequest", &format!("not a Binding object: kind {kind:?}"), None));
    }
    if binding["metadata"]["namespace"].as_str().is_some_and(|n| !n.is_empty() && n != ns) {
        return refused(status_response(
            400,
            "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request",
            None,
        ));
    }
    if binding["metadata"]["name"].as_str().unwrap_or("") != name {
        return refused(status_response(400, "BadRequest", "name in URL does not match name in Binding object", None));
    }
    // ValidatePodBinding, returned by BindingREST.Create as a plain aggregate error: HTTP 500, no reason.
    let target_kind = binding["target"]["kind"].as_str().unwrap_or("");
    let target_name = binding["target"]["name"].as_str().unwrap_or("");
    let mut errors = Vec::new();
    if !target_kind.is_empty() && target_kind != "Node" {
        errors
            .push(format!("target.kind: Unsupported value: {target_kind:?}: supported values: \"Node\", \"<empty>\""));
    }
    if target_name.is_empty() {
        errors.push("target.name: Required value".to_string());
    }
    if !errors.is_empty() {
        let message = if errors.len() == 1 { errors.remove(0) } else { format!("[{}]", errors.join(", ")) };
        return refused(status_response(500, "", &message, None));
    }

    let mut st = shared.lock();
    let key: Key = (pods.kind, ns.to_string(), name.to_string());
    let Some(pod) = st.objects.get(&key).map(|text| parse(pods, text)) else {
        return refused(not_found(pods, name));
    };
    // Storage preconditions (etcd3 store checks them before the update function runs).
    let storage_conflict = |what: &str, want: &str, have: &str| {
        let message = format!(
            "Operation cannot be fulfilled on pods {name:?}: StorageError: invalid object, Code: 4, Key: \
             /registry/pods/{ns}/{name}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: {what} in \
             precondition: {want}, {what} in object meta: {have}"
        );
        refused(status_response(409, "Conflict", &message, Some(details(name, "", "pods"))))
    };
    let pod_uid = pod["metadata"]["uid"].as_str().unwrap_or("");
    if let Some(uid) = binding["metadata"]["uid"].as_str().filter(|u| !u.is_empty() && *u != pod_uid) {
        return storage_conflict("UID", uid, pod_uid);
    }
    let pod_rv = pod["metadata"]["resourceVersion"].as_str().unwrap_or("");
    if let Some(rv) = binding["metadata"]["resourceVersion"].as_str().filter(|r| !r.is_empty() && *r != pod_rv) {
        return storage_conflict("ResourceVersion", rv, pod_rv);
    }
    let binding_conflict = |reason: String| {
        let message = format!("Operation cannot be fulfilled on pods/binding {name:?}: {reason}");
        refused(status_response(409, "Conflict", &message, Some(details(name, "", "pods/binding"))))
    };
    if !pod["metadata"]["deletionTimestamp"].is_null() {
        return binding_conflict(format!("pod {name} is being deleted, cannot be assigned to a host"));
    }
    if let Some(node) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        return binding_conflict(format!("pod {name} is already assigned to node {node:?}"));
    }
    if pod["spec"]["schedulingGates"].as_array().is_some_and(|g| !g.is_empty()) {
        return binding_conflict(format!("pod {name} has non-empty .spec.schedulingGates"));
    }

    let mut updated = pod;
    updated["spec"]["nodeName"] = target_name.into();
    if let Some(annotations) = binding["metadata"]["annotations"].as_object() {
        if !updated["metadata"]["annotations"].is_object() {
            updated["metadata"]["annotations"] = json!({});
        }
        for (k, v) in annotations {
            updated["metadata"]["annotations"][k] = v.clone();
        }
    }
    set_pod_scheduled(&mut updated);
    st.update(pods, &key, updated);
    drop(st);
    shared.notify();
    let ok = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
    (json_response(StatusCode::CREATED, &ok), true)
}

/// `podutil.UpdatePodCondition(PodScheduled=True)`: replaces the condition, keeping its transition time
/// when the status does not change.
fn set_pod_scheduled(pod: &mut Value) {
    if !pod["status"].is_object() {
        pod["status"] = json!({});
    }
    if !pod["status"]["conditions"].is_array() {
        pod["status"]["conditions"] = json!([]);
    }
    let Some(conditions) = pod["status"]["conditions"].as_array_mut() else { return };
    let mut condition = json!({"type": "PodScheduled", "status": "True", "lastTransitionTime": now_rfc3339()});
    match conditions.iter_mut().find(|c| c["type"] == "PodScheduled") {
        Some(existing) => {
            if existing["status"] == "True" && !existing["lastTransitionTime"].is_null() {
                condition["lastTransitionTime"] = existing["lastTransitionTime"].clone();
            }
            *existing = condition;
        }
        None => conditions.push(condition),
    }
}
