//! `gen-cluster` as a command: the same seed writes the same bytes, another seed other bytes, and
//! bad flags or an unwritable file exit 2 with a message. What the clusters hold and a server on
//! them: the extender's tests/gen_cluster.rs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_gen-cluster");
const SHAPE: [&str; 8] = ["--nodes", "60", "--pods-per-node", "10", "--zones", "3", "--nominated", "5"];

/// Runs `gen-cluster` with these arguments; returns the exit code and stderr.
fn gen(args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN).args(args).output().expect("run the binary");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).to_string())
}

fn gen_ok(dir: &Path, file: &str, extra: &[&str]) -> PathBuf {
    let path = dir.join(file);
    let mut args: Vec<&str> = SHAPE.to_vec();
    args.extend_from_slice(extra);
    let out = path.to_str().expect("utf-8 temp path");
    args.extend_from_slice(&["--out", out]);
    let (code, stderr) = gen(&args);
    assert_eq!(code, 0, "gen-cluster {args:?}: {stderr}");
    assert!(stderr.contains("wrote"), "{stderr}");
    path
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_same_seed_writes_the_same_bytes_and_another_seed_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let a = read(&gen_ok(dir.path(), "a.json", &["--seed", "7"]));
    let b = read(&gen_ok(dir.path(), "b.json", &["--seed", "7"]));
    let c = read(&gen_ok(dir.path(), "c.json", &["--seed", "8"]));
    assert!(a.len() > 60 * 12_000, "{} bytes", a.len());
    assert!(a == b, "same seed, different bytes");
    assert!(a != c, "another seed, same bytes");
    for mode in ["node-names", "nodes"] {
        let x = read(&gen_ok(dir.path(), "x.json", &["--seed", "7", "--extender-args", mode]));
        let y = read(&gen_ok(dir.path(), "y.json", &["--seed", "7", "--extender-args", mode]));
        assert!(x == y, "{mode}: same seed, different bytes");
    }
}

#[test]
fn bad_flags_and_unwritable_files_exit_2_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("c.json");
    for (args, expect) in [
        (vec!["--nodes", "10", "--out", missing.to_str().unwrap()], "cannot create"),
        (vec!["--nodes", "ten", "--out", "x.json"], "--nodes"),
        (vec!["--nodes", "2", "--pods-per-node", "2", "--nominated", "5", "--out", "x.json"], "--nominated 5"),
    ] {
        let (code, stderr) = gen(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert!(!Path::new("x.json").exists());
}
