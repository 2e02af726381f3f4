//! Typed lists: `limit`/`continue` paging from one consistent snapshot, and the list faults.

use std::collections::HashMap;
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use super::selectors::Selectors;
use super::status::{forbidden_response, internal_error, status_response, text_response};
use super::store::{ContinueSnapshot, Text};
use super::{KindInfo, ListFault, Shared};

const EXPIRED_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You \
     can start a new list without the continue parameter, or use the continue token in this response to retrieve the \
     remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were \
     created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

pub(super) async fn list(
    shared: &Arc<Shared>,
    info: &'static KindInfo,
    ns: Option<&str>,
    params: &HashMap<String, String>,
) -> Response {
    let token = params.get("continue").filter(|c| !c.is_empty());
    let fault = {
        let mut st = shared.lock();
        *st.list_counts.entry(info.kind).or_default() += 1;
        let fault = st.take_list_fault(info.kind, token.is_some());
        if let (Some(ListFault::ExpiredContinue), Some(token)) = (fault, token) {
            st.continues.remove(token.as_str());
        }
        fault
    };
    match fault {
        Some(ListFault::InternalError) => return internal_error(),
        Some(ListFault::ExpiredContinue) => return status_response(410, "Expired", EXPIRED_CONTINUE, None),
        Some(ListFault::Hang(delay)) => tokio::time::sleep(delay).await,
        None => {}
    }
    answer(shared, info, ns, params)
}

fn answer(
    shared: &Arc<Shared>,
    info: &'static KindInfo,
    ns: Option<&str>,
    params: &HashMap<String, String>,
) -> Response {
    let mut st = shared.lock();
    if st.is_forbidden("list", info.plural) {
        return forbidden_response("list", info, ns, None, None);
    }
    let selectors = match Selectors::parse(params) {
        Ok(s) => s,
        Err(message) => return status_response(400, "BadRequest", &message, None),
    };
    let rv_param = params.get("resourceVersion").map(String::as_str).unwrap_or("");
    if !rv_param.is_empty() && rv_param.parse::<u64>().is_err() {
        return status_response(400, "BadRequest", &format!("invalid resource version {rv_param:?}"), None);
    }
    let limit = params.get("limit").and_then(|l| l.parse::<usize>().ok()).filter(|l| *l > 0);
    let (mut items, rv): (Vec<Text>, u64) = match params.get("continue").filter(|c| !c.is_empty()) {
        Some(token) => {
            if !rv_param.is_empty() {
                return status_response(
                    400,
                    "BadRequest",
                    "specifying resource version is not allowed when using continue",
                    None,
                );
            }
            let Some(snapshot) = st.continues.remove(token.as_str()) else {
                return status_response(410, "Expired", EXPIRED_CONTINUE, None);
            };
            if snapshot.kind != info.kind || snapshot.namespace.as_deref() != ns {
                return status_response(400, "BadRequest", "continue key is not valid for this request", None);
            }
            (snapshot.remaining, snapshot.rv)
        }
        None => {
            let items = st
                .of_kind(info)
                .filter(|((_, obj_ns, _), text)| ns.is_none_or(|ns| ns == obj_ns) && selectors.matches_text(text))
                .map(|(_, text)| text.clone())
                .collect();
            (items, st.rv)
        }
    };
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if let Some(limit) = limit.filter(|l| items.len() > *l) {
        let remaining = items.split_off(limit);
        st.next_continue += 1;
        let token = format!("fake-continue-{}-{}", rv, st.next_continue);
        metadata["continue"] = token.clone().into();
        metadata["remainingItemCount"] = remaining.len().into();
        st.continues
            .insert(token, ContinueSnapshot { kind: info.kind, namespace: ns.map(str::to_string), rv, remaining });
    }
    drop(st);
    // Items as stored: without kind and apiVersion, as a typed list's are.
    let mut body = format!(
        r#"{{"kind":"{}List","apiVersion":"{}","metadata":{metadata},"items":["#,
        info.kind,
        info.api_version()
    );
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(item);
    }
    body.push_str("]}");
    text_response(StatusCode::OK, body)
}
