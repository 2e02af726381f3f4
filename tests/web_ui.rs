//! The web pages (`serve --web`) loaded in headless Chromium, as a person would open them: the
//! pending pods listed with their summary lines, a pod's grid with the deciding predicate marked on
//! a known node, the what-if report for a Policy; the rendered DOM is read, and a screenshot of each
//! page is saved under `target/web-ui/`. Without Chromium the test says SKIPPED, except under CI
//! (`CI=true`, as `.ci/run` sets, after `.ci/install-chromium`), where it fails.
//!
//! Chromium is kept on loopback: every host but 127.0.0.1 resolves to nothing, any other
//! connection goes to a proxy port nobody listens on, and its background networking is off.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{cluster, config, fixture_path, TestServer};

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|name| {
        let out = Command::new("sh").arg("-c").arg(format!("command -v {name}")).output().ok()?;
        let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
    })
}

fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// Headless Chromium on `url` with `extra` flags (`--dump-dom`, `--screenshot=...`): its stdout.
fn headless(browser: &Path, profile: &Path, url: &str, extra: &[String]) -> String {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
            "--proxy-server=http://127.0.0.1:9",
            "--proxy-bypass-list=127.0.0.1",
            "--window-size=1400,1000",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", browser.display()));
    assert!(out.status.success(), "chromium on {url}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn shots() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/web-ui");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The rendered DOM and a screenshot of the page.
fn open(browser: &Path, profile: &Path, url: &str, shot: &str) -> String {
    let path = shots().join(shot);
    let _ = std::fs::remove_file(&path);
    headless(browser, profile, url, &[format!("--screenshot={}", path.display())]);
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    assert!(size > 10_000, "{}: a screenshot of {size} bytes", path.display());
    headless(browser, profile, url, &["--dump-dom".to_string()])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_render_the_pending_pods_a_pods_grid_and_a_whatif_report() {
    let Some(browser) = chromium() else {
        assert!(!required(), "CI: chromium is missing (.ci/install-chromium installs Debian's package)");
        eprintln!("SKIPPED web_ui: no chromium on PATH");
        return;
    };
    let text = std::fs::read_to_string(fixture_path("whatif").join("cluster.yaml")).unwrap();
    let mut c = config(cluster(&text));
    c.web = true;
    c.url_prefix = "/scheduler".to_string();
    let server = TestServer::start(c).await;
    let base = format!("{}/scheduler", server.base);
    let profile = tempfile::tempdir().unwrap();
    let (browser, profile_path) = (browser.clone(), profile.path().to_path_buf());

    let pages = tokio::task::spawn_blocking(move || {
        let list = open(&browser, &profile_path, &format!("{base}/ui"), "pending.png");
        let pod = open(&browser, &profile_path, &format!("{base}/ui/pod?namespace=shop&name=wait-2"), "pod.png");
        let policy = std::fs::read_to_string(fixture_path("whatif").join("needs-ssd.json")).unwrap();
        let query: String = form_urlencoded::Serializer::new(String::new()).append_pair("policy", &policy).finish();
        let whatif = open(&browser, &profile_path, &format!("{base}/ui/whatif?{query}"), "whatif.png");
        (list, pod, whatif)
    });
    let (list, pod, whatif) = tokio::time::timeout(Duration::from_secs(120), pages).await.unwrap().unwrap();

    // The pending pods, each with its summary line.
    assert!(list.contains(r#"<a href="/scheduler/ui/pod?namespace=shop&amp;name=wait-1">shop/wait-1</a>"#), "{list}");
    assert!(list.contains("<td>2/3 nodes are available: 1 Insufficient cpu.</td>"), "{list}");
    assert!(list.contains("<td>1/3 nodes are available: 2 Insufficient cpu.</td>"), "{list}");

    // wait-2 (1500m) fits a only: b (1.4 cpu free) and c (full) fail for cpu, one group, whose first
    // node b has a row; the resources predicate decides there, and the grid marks that cell.
    assert!(
        pod.contains(r#"<p class="summary" id="summary">1/3 nodes are available: 2 Insufficient cpu.</p>"#),
        "{pod}"
    );
    assert!(
        pod.contains(r#"<td id="cell-b-GeneralPredicates" class="deciding">Insufficient cpu</td>"#),
        "the deciding predicate of node b: {pod}"
    );
    assert!(pod.contains(r#"<td id="cell-a-GeneralPredicates" class="fit">✓</td>"#), "{pod}");
    assert!(!pod.contains("cell-c-"), "one row per failure group, not per node: {pod}");
    assert!(pod.contains(r#"<table id="ranking">"#), "the feasible node ranked: {pod}");

    // The what-if report for the pasted Policy against the served (default) one.
    assert!(
        whatif.contains("Running 3: 1 would no longer fit where they run, 0 of them on no other node."),
        "{whatif}"
    );
    assert!(whatif.contains(r#"<a href="/scheduler/ui/pod?namespace=shop&amp;name=web-2">shop/web-2</a>"#), "{whatif}");
    assert!(
        whatif.contains("NeedsSSD: node(s) didn&#39;t have the requested labels")
            || whatif.contains("NeedsSSD: node(s) didn't have the requested labels"),
        "{whatif}"
    );
    server.stop().await;
}

#[tokio::test]
async fn off_by_default_and_never_on_the_admin_listener() {
    let text = std::fs::read_to_string(fixture_path("whatif").join("cluster.yaml")).unwrap();
    let server = TestServer::start(config(cluster(&text))).await;
    let off = server.client.get(format!("{}/ui", server.base)).send().await.unwrap();
    assert_eq!(off.status().as_u16(), 404, "no --web: no pages");
    server.stop().await;

    let mut c = config(cluster(&text));
    c.web = true;
    let server = TestServer::start(c).await;
    let on = server.client.get(format!("{}/ui", server.base)).send().await.unwrap();
    assert_eq!(on.status().as_u16(), 200);
    assert_eq!(on.headers()["content-type"], "text/html; charset=utf-8");
    let admin = server.client.get(format!("{}/ui", server.admin)).send().await.unwrap();
    assert_eq!(admin.status().as_u16(), 404, "not on the admin listener");
    let missing = server.client.get(format!("{}/ui/pod?namespace=shop&name=nope", server.base)).send().await.unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    assert!(missing.text().await.unwrap().contains("the cluster has no pod shop/nope"));
    let bad = server.client.get(format!("{}/ui/whatif?policy=%7B%22kind%22%3A1%7D", server.base)).send().await.unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    assert!(bad.text().await.unwrap().contains("id=\"error\""));
    server.stop().await;
}
