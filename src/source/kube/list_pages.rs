//! A kind's list, page by page, decoded in parallel and one page ahead.
//!
//! kube's `Api::list` decodes a page (500 pods, a few megabytes) on the task that asked for it,
//! one object after another, and only then can the next page be asked for. Here a page's body is
//! cut into its items once, on rayon's pool, and as soon as its `continue` token is known the
//! next page is fetched while the items are decoded in parallel; each page's objects are handed
//! on as soon as they are decoded, so no list of every object of the kind is held.

use kube::api::ListParams;
use kube::{Api, Client};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use crate::source::kube::kinds::WatchedKind;
use crate::source::kube::watch_loop::{ListError, WatchSettings};

/// A page as it is cut up: its metadata, and its items as text.
#[derive(Deserialize)]
struct Page<'a> {
    #[serde(default)]
    metadata: kube::api::ListMeta,
    /// `null` is an empty page, as kube reads it.
    #[serde(borrow)]
    items: Option<Vec<&'a RawValue>>,
}

/// Lists every page of a kind, each within the request timeout, handing each page's objects to
/// `page` in order. Returns the list's resourceVersion.
pub(crate) async fn list_pages<K: WatchedKind>(
    api: &Api<K>,
    settings: WatchSettings,
    mut page: impl FnMut(Vec<K>),
) -> Result<String, ListError> {
    let client = api.clone().into_client();
    let mut params = ListParams::default().limit(settings.page_size);
    let mut body = fetch::<K>(&client, &params, settings).await?;
    loop {
        let (metadata, items) = decode_on_pool::<K>(body);
        let metadata = metadata.await.map_err(|_| ListError::Lost)??;
        let next = match metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => {
                params = params.continue_token(&token);
                Some(fetch::<K>(&client, &params, settings))
            }
            None => None,
        };
        let this = async {
            let items = items.await.map_err(|_| ListError::Lost)??;
            page(items);
            Ok::<_, ListError>(())
        };
        match next {
            Some(next) => {
                let (this, next) = tokio::join!(this, next);
                this?;
                body = next?;
            }
            None => {
                this.await?;
                return Ok(metadata.resource_version.unwrap_or_default());
            }
        }
    }
}

/// One page's body, as kube's `Api::list` asks for it.
async fn fetch<K: WatchedKind>(
    client: &Client,
    params: &ListParams,
    settings: WatchSettings,
) -> Result<String, ListError> {
    let mut request = kube::core::Request::new(K::url_path(&(), None))
        .list(params)
        .map_err(|e| ListError::Api(kube::Error::BuildRequest(e)))?;
    request.extensions_mut().insert("list");
    tokio::time::timeout(settings.request_timeout, client.request_text(request))
        .await
        .map_err(|_| ListError::TimedOut(settings.request_timeout))?
        .map_err(ListError::Api)
}

type Decoded<T> = oneshot::Receiver<Result<T, ListError>>;

/// Cuts a page on rayon's pool: its metadata as soon as the page is cut, its items once all are
/// decoded (the first failure, as kube's whole-page decode would report it).
fn decode_on_pool<K: WatchedKind>(body: String) -> (Decoded<kube::api::ListMeta>, Decoded<Vec<K>>) {
    let (meta_tx, meta_rx) = oneshot::channel();
    let (items_tx, items_rx) = oneshot::channel();
    rayon::spawn(move || {
        let serde = |e| ListError::Api(kube::Error::SerdeError(e));
        let page: Page<'_> = match serde_json::from_str(&body) {
            Ok(page) => page,
            Err(e) => {
                let _ = meta_tx.send(Err(serde(e)));
                return;
            }
        };
        let _ = meta_tx.send(Ok(page.metadata));
        let items = decode_items::<K>(page.items.as_deref().unwrap_or_default()).map_err(serde);
        let _ = items_tx.send(items);
    });
    (meta_rx, items_rx)
}

fn decode_items<K: WatchedKind>(items: &[&RawValue]) -> Result<Vec<K>, serde_json::Error> {
    use rayon::prelude::*;
    items.par_iter().map(|raw| serde_json::from_str::<K>(raw.get())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::kube::lean::LeanPod;
    use kube::ResourceExt;

    #[test]
    fn a_page_is_cut_and_decoded_in_order() {
        let items: Vec<String> = (0..300)
            .map(|i| format!(r#"{{"metadata":{{"name":"p{i}","namespace":"ns","resourceVersion":"{i}"}},"spec":{{"nodeName":"n"}}}}"#))
            .collect();
        let body = format!(
            r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"77","continue":"c1"}},"items":[{}]}}"#,
            items.join(",")
        );
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (meta, pods) = runtime.block_on(async {
            let (meta, items) = decode_on_pool::<LeanPod>(body);
            (meta.await.unwrap().unwrap(), items.await.unwrap().unwrap())
        });
        assert_eq!(meta.continue_.as_deref(), Some("c1"));
        assert_eq!(meta.resource_version.as_deref(), Some("77"));
        let names: Vec<String> = pods.iter().map(|p| p.name_any()).collect();
        assert_eq!(names, (0..300).map(|i| format!("p{i}")).collect::<Vec<_>>());
        assert_eq!(pods[299].object.spec.node_name, "n");
    }

    #[test]
    fn a_null_page_is_empty_and_a_bad_item_fails_the_page() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (meta, pods) = runtime.block_on(async {
            let (meta, items) = decode_on_pool::<LeanPod>(r#"{"metadata":{},"items":null}"#.to_string());
            (meta.await.unwrap().unwrap(), items.await.unwrap().unwrap())
        });
        assert_eq!(meta.continue_, None);
        assert!(pods.is_empty());
        let bad = r#"{"metadata":{},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":7}}]}"#;
        let failed = runtime.block_on(async {
            let (meta, items) = decode_on_pool::<LeanPod>(bad.to_string());
            meta.await.unwrap().unwrap();
            items.await.unwrap()
        });
        assert!(matches!(failed, Err(ListError::Api(kube::Error::SerdeError(_)))), "{failed:?}");
        let cut = runtime.block_on(async { decode_on_pool::<LeanPod>("{\"items\":[".to_string()).0.await.unwrap() });
        assert!(matches!(cut, Err(ListError::Api(kube::Error::SerdeError(_)))));
    }
}
