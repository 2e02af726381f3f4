//! An extender that does no scheduling work, for the throughput harness's `null` configuration:
//! /filter passes every candidate, /prioritize scores each 0, /bind posts the Binding (in
//! protobuf, as the extender does), /preempt accepts kube-scheduler's victims. What
//! kube-scheduler spends with it (marshalling, HTTP on loopback, decoding, the extra GC) is the
//! cost of the extender protocol itself, the floor under any extender configured for the same
//! verbs.

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use kube::Client;
use predicate_extender::bind::protobuf::Binding;
use serde_json::{json, Value};
use tokio::net::TcpListener;

async fn filter(Json(args): Json<Value>) -> Json<Value> {
    Json(json!({"NodeNames": args["NodeNames"], "FailedNodes": {}, "FailedAndUnresolvableNodes": {}, "Error": ""}))
}

async fn prioritize(Json(args): Json<Value>) -> Json<Value> {
    let names = args["NodeNames"].as_array().cloned().unwrap_or_default();
    Json(Value::Array(names.into_iter().map(|host| json!({"Host": host, "Score": 0})).collect()))
}

async fn bind(State(client): State<Client>, Json(args): Json<Value>) -> Json<Value> {
    let field = |name: &str| args[name].as_str().unwrap_or_default().to_string();
    // As the extender binds: protobuf, the cheapest Binding for the API server to read.
    let binding = Binding::of(&field("PodNamespace"), &field("PodName"), &field("PodUID"), &field("Node"));
    let result = binding.post(&client).await;
    Json(json!({"Error": result.err().map(|e| e.to_string()).unwrap_or_default()}))
}

async fn preempt(Json(args): Json<Value>) -> Json<Value> {
    Json(json!({"NodeNameToMetaVictims": args["NodeNameToMetaVictims"]}))
}

/// A listener taken now (so its URL can go into kube-scheduler's configuration before the API
/// server exists), served once [`serve`] gets the client.
pub async fn listen() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("null extender: {e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("null extender: {e}"));
    (listener, format!("http://{addr}"))
}

/// Serves the four verbs on `listener` until the task is aborted.
pub fn serve(listener: TcpListener, client: Client) -> tokio::task::JoinHandle<()> {
    let app = Router::new()
        .route("/filter", post(filter))
        .route("/prioritize", post(prioritize))
        .route("/bind", post(bind))
        .route("/preempt", post(preempt))
        .with_state(client);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    })
}
