//! The tools people run behave like tools: every example (built beside this test by `cargo test`)
//! and every script under bench/ and e2e/ answers `--help` with its usage and exit 0, and refuses an
//! unknown argument with a message and exit 2, never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The examples' binaries: `target/<profile>/examples/<name>`, beside this test's `deps/`.
fn examples() -> Vec<(String, PathBuf)> {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            let name = path.file_stem()?.to_str()?.to_string();
            (path.extension()? == "rs").then(|| (name.clone(), profile.join("examples").join(&name)))
        })
        .collect();
    found.sort();
    found
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn every_example_takes_help_and_refuses_a_bad_argument() {
    let examples = examples();
    assert!(examples.len() >= 7, "{examples:?}");
    for (name, binary) in examples {
        assert!(binary.is_file(), "{}: not built (cargo test builds the examples)", binary.display());
        let help = Command::new(&binary).arg("--help").output().unwrap();
        assert_eq!(help.status.code(), Some(0), "{name} --help: {}", text(&help));
        assert!(text(&help).contains("Usage:"), "{name} --help: {}", text(&help));
        let bad = Command::new(&binary).arg("--no-such-flag").output().unwrap();
        assert_eq!(bad.status.code(), Some(2), "{name} --no-such-flag: {}", text(&bad));
        assert!(text(&bad).contains("--no-such-flag"), "{name}: the message names the argument: {}", text(&bad));
        assert!(!text(&bad).contains("panicked"), "{name}: {}", text(&bad));
    }
}

/// The scripts that build or run nothing before reading their arguments (e2e/dev-cluster.sh and
/// e2e/throughput.sh build first, then hand their arguments to the examples above).
#[test]
fn the_scripts_take_help_and_refuse_a_bad_argument() {
    for (script, bad) in [
        ("bench/load.sh", vec!["--no-such-flag"]),
        ("bench/latency-table.sh", vec!["--no-such-flag"]),
        ("bench/full-nodes-memory.sh", vec!["--no-such-flag"]),
        ("bench/whatif-rounds.sh", vec!["only-one"]),
        ("e2e/build.sh", vec!["--no-such-flag"]),
        ("e2e/node-packages.sh", vec!["--no-such-flag"]),
        (".ci/fuzz-smoke", vec!["--no-such-flag"]),
    ] {
        let help = Command::new("bash").arg(root().join(script)).arg("--help").output().unwrap();
        assert_eq!(help.status.code(), Some(0), "{script} --help: {}", text(&help));
        assert!(text(&help).lines().count() >= 2, "{script} --help: {}", text(&help));
        let refused = Command::new("bash").arg(root().join(script)).args(&bad).output().unwrap();
        assert_eq!(refused.status.code(), Some(2), "{script} {bad:?}: {}", text(&refused));
        assert!(!text(&refused).is_empty(), "{script} {bad:?}: a message");
    }
}
