//! Replays every `$ curl ...` example of README.md, in order, against the demo cluster and checks
//! that the server prints exactly the line the README shows under it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

mod common;

use common::TestServer;

/// One README example: the path, the request body and the answer shown.
struct Example {
    path: String,
    body: Vec<u8>,
    expected: String,
}

fn readme_examples() -> Vec<Example> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let lines: Vec<&str> = readme.lines().collect();
    let mut examples = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("$ curl -s -XPOST localhost:8888") else { continue };
        let (path, data) = rest.split_once(" -d ").unwrap_or_else(|| panic!("README line {}: no -d", i + 1));
        let body = if let Some(file) = data.strip_prefix('@') {
            std::fs::read(root.join(file)).unwrap_or_else(|e| panic!("README line {}: {file}: {e}", i + 1))
        } else {
            let quoted = data.strip_prefix('\'').and_then(|d| d.strip_suffix('\''));
            quoted.unwrap_or_else(|| panic!("README line {}: body must be @file or '...'", i + 1)).as_bytes().to_vec()
        };
        let expected = lines.get(i + 1).unwrap_or_else(|| panic!("README line {}: no answer shown", i + 1));
        examples.push(Example { path: path.to_string(), body, expected: expected.to_string() });
    }
    examples
}

#[tokio::test(flavor = "multi_thread")]
async fn readme_curl_examples_print_what_the_readme_shows() {
    let examples = readme_examples();
    assert!(examples.len() >= 6, "README lost its examples: found {}", examples.len());
    let server = TestServer::demo().await;
    for ex in &examples {
        let (_, answer) = server.post_text(&ex.path, ex.body.clone()).await;
        assert_eq!(answer, ex.expected, "README example POST {}", ex.path);
    }
    let (status, _) = server.get(&format!("{}/healthz", server.admin)).await;
    assert_eq!(status, 200);
    let (status, body) = server.get(&format!("{}/readyz", server.admin)).await;
    assert_eq!((status, body.as_str()), (200, r#"{"ready":true}"#));
    server.stop().await;
}
