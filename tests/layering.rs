//! The layering rule of the framework (docs/architecture.md, "Plugins, the framework and the
//! engine"), checked on the source so it stays true:
//! `src/framework/` imports none of the engine, the plugins, the Policy parser or the registry,
//! and the engine's code names no plugin and imports none (its tests may build plans of real
//! predicates through the registry, as the tests in `tests/` do).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::path::{Path, PathBuf};

use predicate_extender::registry::{PREDICATES, PREDICATE_ALIASES, PRIORITIES};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// A file's code before its test module (every file keeps its tests at the end).
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Whether `word` occurs in `text` as a whole identifier.
fn names(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

const PLUGIN_MODULES: [&str; 4] = ["crate::predicates", "crate::priorities", "crate::policy", "crate::registry"];

#[test]
fn the_framework_imports_no_engine_plugin_policy_or_registry() {
    let files = rust_files(&src().join("framework"));
    assert!(files.len() >= 5, "{files:?}");
    let mut found = Vec::new();
    for path in &files {
        // The whole file: the framework's tests may not reach past it either.
        let text = std::fs::read_to_string(path).unwrap();
        for module in PLUGIN_MODULES.iter().chain(&["crate::engine", "crate::server", "crate::metrics"]) {
            if text.contains(module) {
                found.push(format!("{} uses {module}", path.display()));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_engine_names_no_plugin_and_imports_none() {
    let files = rust_files(&src().join("engine"));
    assert!(files.len() >= 8, "{files:?}");
    let plugin_names: Vec<&str> = PREDICATES
        .iter()
        .map(|row| row.name)
        .chain(PREDICATE_ALIASES.iter().map(|(alias, _)| *alias))
        .chain(PRIORITIES.iter().map(|row| row.name))
        .collect();
    let mut found = Vec::new();
    for path in &files {
        let code = code_of(path);
        for module in PLUGIN_MODULES {
            if code.contains(module) {
                found.push(format!("{} uses {module}", path.display()));
            }
        }
        for name in &plugin_names {
            if names(&code, name) {
                found.push(format!("{} names {name}", path.display()));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The check itself finds what it looks for.
#[test]
fn the_checks_see_what_they_look_for() {
    assert!(names("a GeneralPredicates b", "GeneralPredicates"));
    assert!(names("(MatchInterPodAffinity)", "MatchInterPodAffinity"));
    assert!(!names("MaxCSIVolumeCountPred", "MaxCSIVolumeCount"));
    assert!(!names("HostNames", "HostName"));
    assert!(!code_of(&src().join("engine/fits.rs")).contains("#[cfg(test)]\nmod tests"));
    assert!(std::fs::read_to_string(src().join("engine/fits.rs")).unwrap().contains("#[cfg(test)]\nmod tests"));
}
