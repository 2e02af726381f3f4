//! Every input a fuzz target (`fuzz/`) ever failed on, kept in `fuzz/regressions/<target>/`, and the
//! hand-written seeds in `fuzz/seeds/<target>/`, replayed through the same checks the targets run
//! (`predicate_extender_testing::fuzz`), so a regression shows in `cargo test` without nightly.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use predicate_extender_testing::fuzz::{check, Harness, TARGETS};

fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join(kind).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

/// Runs every input of `kind` through its target's check; returns how many ran.
fn replay(kind: &str) -> usize {
    let harness = Harness::demo().unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    let mut count = 0;
    for target in TARGETS {
        for file in inputs(kind, target) {
            count += 1;
            let input = std::fs::read(&file).unwrap();
            let outcome = catch_unwind(AssertUnwindSafe(|| check(target, &harness, &input)));
            match outcome {
                Ok(Ok(())) => {}
                Ok(Err(violation)) => failures.push(format!("{}: {violation}", file.display())),
                Err(_) => failures.push(format!("{}: panicked (see the message above)", file.display())),
            }
        }
    }
    assert!(failures.is_empty(), "{} of {count} inputs failed:\n{}", failures.len(), failures.join("\n"));
    count
}

#[test]
fn every_crash_input_the_fuzzers_found_is_handled() {
    let count = replay("regressions");
    assert!(count > 0, "no inputs under fuzz/regressions/");
}

#[test]
fn every_hand_written_seed_passes_its_check() {
    let count = replay("seeds");
    assert!(count >= TARGETS.len(), "fewer seeds than targets under fuzz/seeds/: {count}");
}

#[test]
fn a_target_that_does_not_exist_is_an_error() {
    let harness = Harness::demo().unwrap();
    assert!(check("no-such-target", &harness, b"").is_err());
}

#[test]
fn the_checks_cover_every_fuzz_target_and_no_other() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/fuzz_targets");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut targets: Vec<String> = TARGETS.iter().map(|t| t.to_string()).collect();
    targets.sort();
    assert_eq!(files, targets, "fuzz/fuzz_targets/ and testing::fuzz::TARGETS disagree");
}
