//! The layering rules inside each crate (docs/architecture.md, "Crates" and "Plugins, the framework
//! and the engine"), checked on the source so they stay true. Between the crates Cargo holds the
//! direction (the engine depends on no other crate of the workspace, and nothing ships the test
//! support); inside one crate it cannot, so:
//! - the engine crate's `framework/` imports none of the engine, the plugins, the Policy parser or
//!   the registry, and its `engine/` names no plugin and imports none (its tests may build plans of
//!   real predicates through the registry, as the tests in `tests/` do);
//! - `labels` and `plugin_helpers` stay below the plugins, and the Policy parser names no plugin;
//! - the extender's library (`src/lib.rs` tree) does not use clap, which its binary's command line
//!   (`src/cli/`) does;
//! - no import circle between the top-level modules of either crate.
//!
//! Imports are read by parsing: comments, strings and characters are dropped, every `use` tree is
//! expanded (nested braces, `self`, `super` and `crate` paths, `pub use`, over several lines) and
//! resolved against the file's module, and `crate::`/`super::`/`self::` paths written in code
//! count too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use predicate_engine::registry::{PREDICATES, PREDICATE_ALIASES, PRIORITIES};

/// The extender's sources (this package's).
fn extender_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The engine crate's sources.
fn engine_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/engine/src")
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

// ---- reading Rust source: tokens, `use` trees and paths ----

/// An identifier (keywords included), a number, `::`, or one punctuation character.
#[derive(Debug, Clone, PartialEq)]
struct Token {
    text: String,
    line: usize,
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The tokens of a Rust file, without comments, string, byte-string and character literals
/// (raw ones included) and lifetimes.
fn tokens(text: &str) -> Vec<Token> {
    lex(text, false)
}

/// The name a string literal's token has with [`lex`]'s `literals`.
const STRING_LITERAL: &str = "STRING_LITERAL";

/// [`tokens`], with each string literal (plain, raw, byte, C) a token of its own,
/// [`STRING_LITERAL`], when `literals`.
fn lex(text: &str, literals: bool) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        let starts_raw = |j: usize| {
            // r"..", r#"..."#, br"..": the `r`, then hashes, then a quote.
            let mut k = j + 1;
            while at(k) == '#' {
                k += 1;
            }
            at(k) == '"'
        };
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if i >= chars.len() {
                    break;
                }
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if (c == 'r' && starts_raw(i)) || (c == 'b' && at(i + 1) == 'r' && starts_raw(i + 1)) {
            // A raw string: no escapes, ends at a quote followed by as many hashes.
            if literals {
                out.push(Token { text: STRING_LITERAL.into(), line });
            }
            i += if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while at(i) == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1;
            loop {
                if i >= chars.len() {
                    break;
                }
                if chars[i] == '"' && (1..=hashes).all(|h| at(i + h) == '#') {
                    i += 1 + hashes;
                    break;
                }
                line += usize::from(chars[i] == '\n');
                i += 1;
            }
        } else if c == '"' || ((c == 'b' || c == 'c') && at(i + 1) == '"') {
            if literals {
                out.push(Token { text: STRING_LITERAL.into(), line });
            }
            i += if c == '"' { 1 } else { 2 };
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                line += usize::from(at(i) == '\n');
                i += 1;
            }
            i += 1;
        } else if c == '\'' || (c == 'b' && at(i + 1) == '\'') {
            let q = if c == '\'' { i } else { i + 1 };
            if at(q + 1) == '\\' {
                // '\n', '\'', '\u{..}': to the closing quote.
                i = q + 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(q + 2) == '\'' {
                i = q + 3; // 'x'
            } else {
                // A lifetime or a label: 'a, 'static.
                i = q + 1;
                while is_ident_char(at(i)) {
                    i += 1;
                }
            }
        } else if is_ident_char(c) {
            let start = i;
            while is_ident_char(at(i)) {
                i += 1;
            }
            out.push(Token { text: chars[start..i].iter().collect(), line });
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Token { text: "::".into(), line });
            i += 2;
        } else {
            out.push(Token { text: c.to_string(), line });
            i += 1;
        }
    }
    out
}

/// One path a file reaches: as written, where, and whether only its tests do (under
/// `#[cfg(test)]`).
#[derive(Debug, Clone, PartialEq)]
struct Reach {
    /// The module the path is written in (from the crate root), inline modules included.
    module: Vec<String>,
    /// The path as written (`crate`, `self`, `super` kept), a leading `::` as an empty segment.
    path: Vec<String>,
    line: usize,
    test: bool,
    /// From a `use` item (else a path in code).
    used: bool,
}

/// Expands the `use` tree starting at `tokens[*i]` (after `use`) into whole paths, up to the `;`.
fn use_tree(tokens: &[Token], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    loop {
        let Some(t) = tokens.get(*i) else { return };
        match t.text.as_str() {
            "::" if path.len() == prefix.len() && path.is_empty() => {
                path.push(String::new()); // `::std`: an external crate.
                *i += 1;
            }
            "::" => *i += 1,
            "{" => {
                *i += 1;
                loop {
                    match tokens.get(*i).map(|t| t.text.as_str()) {
                        None => return,
                        Some("}") => {
                            *i += 1;
                            return;
                        }
                        Some(",") => *i += 1,
                        Some(_) => use_tree(tokens, i, &path, out),
                    }
                }
            }
            "*" => {
                *i += 1;
                out.push(path);
                return;
            }
            "self" if !path.is_empty() => {
                // `a::{self, ..}`: `a` itself.
                *i += 1;
                skip_rename(tokens, i);
                out.push(path);
                return;
            }
            "as" | "," | "}" | ";" => {
                skip_rename(tokens, i);
                out.push(path);
                return;
            }
            _ => {
                path.push(t.text.clone());
                *i += 1;
                if tokens.get(*i).is_none_or(|t| t.text != "::") {
                    skip_rename(tokens, i);
                    out.push(path);
                    return;
                }
            }
        }
    }
}

/// Past `as name` (or `as _`), if there.
fn skip_rename(tokens: &[Token], i: &mut usize) {
    if tokens.get(*i).is_some_and(|t| t.text == "as") {
        *i += 2;
    }
}

/// Whether the tokens at `i` are `#[cfg(test)]`.
fn is_cfg_test(tokens: &[Token], i: usize) -> bool {
    let want = ["#", "[", "cfg", "(", "test", ")", "]"];
    want.iter().enumerate().all(|(k, w)| tokens.get(i + k).is_some_and(|t| t.text == *w))
}

/// Every path a file's code reaches: the paths of its `use` trees, and the `crate::`, `self::`
/// and `super::` paths written in its code. `module` is the file's module from the crate root.
fn reaches(text: &str, module: &[String]) -> Vec<Reach> {
    let tokens = tokens(text);
    let mut out = Vec::new();
    // The inline modules open at each brace depth (`mod tests {`), and which are test-only; the
    // brace depth at which a `#[cfg(test)]` item ends.
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut test_until: Option<usize> = None;
    let mut pending_test = false;
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        let current: Vec<String> = module.iter().cloned().chain(inline.iter().map(|(_, m)| m.clone())).collect();
        let test = test_until.is_some() || pending_test;
        match t.text.as_str() {
            "#" if is_cfg_test(&tokens, i) => {
                pending_test = true;
                i += 7;
                continue;
            }
            "#" => {
                // Another attribute: skip it whole, it does not end a pending `#[cfg(test)]`.
                let mut brackets = 0;
                i += 1;
                while let Some(t) = tokens.get(i) {
                    i += 1;
                    match t.text.as_str() {
                        "[" => brackets += 1,
                        "]" => {
                            brackets -= 1;
                            if brackets == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                continue;
            }
            "{" => {
                if pending_test && test_until.is_none() {
                    test_until = Some(depth);
                }
                pending_test = false;
                depth += 1;
                if i >= 2 && tokens[i - 2].text == "mod" {
                    inline.push((depth, tokens[i - 1].text.clone()));
                }
            }
            "}" => {
                if inline.last().is_some_and(|(d, _)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                if test_until == Some(depth) {
                    test_until = None;
                }
            }
            ";" if test_until.is_none() => pending_test = false,
            "use" if tokens.get(i + 1).is_some_and(|t| t.text != "<") => {
                let line = t.line;
                i += 1;
                let mut paths = Vec::new();
                while tokens.get(i).is_some_and(|t| t.text != ";") {
                    let before = i;
                    use_tree(&tokens, &mut i, &[], &mut paths);
                    if i == before {
                        i += 1; // not a tree: do not stop here
                    }
                }
                for path in paths {
                    out.push(Reach { module: current.clone(), path, line, test, used: true });
                }
                if test_until.is_none() {
                    pending_test = false;
                }
                continue;
            }
            "crate" | "self" | "super"
                if tokens.get(i + 1).is_some_and(|t| t.text == "::")
                    && (i == 0 || !matches!(tokens[i - 1].text.as_str(), "::" | "$")) =>
            {
                let line = t.line;
                let mut path = vec![t.text.clone()];
                i += 1;
                while tokens.get(i).is_some_and(|t| t.text == "::")
                    && tokens.get(i + 1).is_some_and(|t| t.text.starts_with(is_ident_char))
                {
                    path.push(tokens[i + 1].text.clone());
                    i += 2;
                }
                out.push(Reach { module: current, path, line, test, used: false });
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The module a path names, from the crate root; `None` for another crate's (`std`, `serde`, the
/// library as the binary names it).
fn resolve(reach: &Reach, modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut path = reach.path.iter().cloned().peekable();
    let mut base: Vec<String> = match path.peek().map(String::as_str) {
        Some("crate") => {
            path.next();
            Vec::new()
        }
        Some("self") => {
            path.next();
            reach.module.clone()
        }
        Some("super") => {
            let mut base = reach.module.clone();
            while path.peek().is_some_and(|s| s == "super") {
                path.next();
                base.pop();
            }
            base
        }
        Some(first) => {
            // A child module of the file's own module (`use file::load_file;` in `source/mod.rs`).
            let mut child = reach.module.clone();
            child.push(first.to_string());
            if !modules.contains(&child) {
                return None;
            }
            reach.module.clone()
        }
        None => return None,
    };
    base.extend(path);
    Some(base)
}

/// A source file of the crate rooted at `src/lib.rs` or `src/main.rs`, with its module path.
struct SourceFile {
    path: PathBuf,
    module: Vec<String>,
    text: String,
    /// Compiled for the tests only (declared `#[cfg(test)] mod name;`).
    test_only: bool,
}

/// The module path of a file under `src/`: `a/b.rs` and `a/b/mod.rs` are `a::b`.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// A library's files: everything under `root` but a binary (`main.rs` and `cli/`).
fn library_files(root: &Path) -> Vec<SourceFile> {
    let root = root.to_path_buf();
    let files: Vec<SourceFile> = rust_files(&root)
        .into_iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(&root).unwrap().to_path_buf();
            if relative == Path::new("main.rs") || relative.starts_with("cli") {
                return None;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            Some(SourceFile { module: module_of(&relative), path, text, test_only: false })
        })
        .collect();
    // `#[cfg(test)] mod name;`: that file, and any under it, is tests only.
    let test_modules: Vec<Vec<String>> = files
        .iter()
        .flat_map(|f| test_only_children(&f.text).into_iter().map(|child| [f.module.clone(), vec![child]].concat()))
        .collect();
    files
        .into_iter()
        .map(|f| SourceFile { test_only: test_modules.iter().any(|m| f.module.starts_with(m)), ..f })
        .collect()
}

/// The modules a file declares under `#[cfg(test)]` without a body (`mod name;`: a file).
fn test_only_children(text: &str) -> Vec<String> {
    let tokens = tokens(text);
    (0..tokens.len())
        .filter(|&i| is_cfg_test(&tokens, i))
        .filter_map(|i| {
            let rest: Vec<&str> = tokens[i + 7..].iter().take(4).map(|t| t.text.as_str()).collect();
            match rest.as_slice() {
                ["mod", name, ";", ..] | ["pub", "mod", name, ";"] => Some(name.to_string()),
                _ => None,
            }
        })
        .collect()
}

fn module_set(files: &[SourceFile]) -> BTreeSet<Vec<String>> {
    files.iter().map(|f| f.module.clone()).collect()
}

/// The modules (from the crate root) a file reaches, with the line; test-only paths when `tests`.
fn reached_modules(file: &SourceFile, modules: &BTreeSet<Vec<String>>, tests: bool) -> Vec<(Vec<String>, usize)> {
    if file.test_only && !tests {
        return Vec::new();
    }
    reaches(&file.text, &file.module)
        .into_iter()
        .filter(|r| tests || !r.test)
        .filter_map(|r| resolve(&r, modules).map(|m| (m, r.line)))
        .collect()
}

fn display(path: &Path) -> String {
    path.strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap_or(path).display().to_string()
}

// ---- the rules ----

const PLUGIN_MODULES: [&str; 4] = ["predicates", "priorities", "policy", "registry"];

#[test]
fn the_framework_imports_no_engine_plugin_policy_or_registry() {
    let files = library_files(&engine_src());
    let modules = module_set(&files);
    let framework: Vec<&SourceFile> =
        files.iter().filter(|f| f.module.first().is_some_and(|m| m == "framework")).collect();
    assert!(framework.len() >= 5, "{:?}", framework.iter().map(|f| &f.path).collect::<Vec<_>>());
    let mut found = Vec::new();
    for file in framework {
        // The whole file: the framework's tests may not reach past it either.
        for (module, line) in reached_modules(file, &modules, true) {
            let top = module.first().map(String::as_str).unwrap_or_default();
            if PLUGIN_MODULES.iter().chain(&["engine", "server", "metrics"]).any(|m| *m == top) {
                found.push(format!("{}:{line} uses crate::{}", display(&file.path), module.join("::")));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_engine_names_no_plugin_and_imports_none() {
    let files = library_files(&engine_src());
    let modules = module_set(&files);
    let engine: Vec<&SourceFile> = files.iter().filter(|f| f.module.first().is_some_and(|m| m == "engine")).collect();
    assert!(engine.len() >= 8, "{:?}", engine.iter().map(|f| &f.path).collect::<Vec<_>>());
    let plugin_names: Vec<&str> = PREDICATES
        .iter()
        .map(|row| row.name)
        .chain(PREDICATE_ALIASES.iter().map(|(alias, _)| *alias))
        .chain(PRIORITIES.iter().map(|row| row.name))
        .collect();
    let mut found = Vec::new();
    for file in engine {
        for (module, line) in reached_modules(file, &modules, false) {
            if module.first().is_some_and(|top| PLUGIN_MODULES.contains(&top.as_str())) {
                found.push(format!("{}:{line} uses crate::{}", display(&file.path), module.join("::")));
            }
        }
        // Names in comments count too: the engine does not talk about a plugin either.
        let code = code_of(&file.path);
        for name in &plugin_names {
            if names(&code, name) {
                found.push(format!("{} names {name}", display(&file.path)));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_extender_library_uses_no_clap() {
    assert!(extender_src().join("cli/mod.rs").is_file(), "the command line is src/cli/");
    let files = library_files(&extender_src());
    assert!(files.len() >= 30, "{:?}", files.iter().map(|f| &f.path).collect::<Vec<_>>());
    let mut found = Vec::new();
    for file in &files {
        for reach in reaches(&file.text, &file.module) {
            if reach.path.first().is_some_and(|s| s == "clap") || reach.path.get(1).is_some_and(|s| s == "clap") {
                found.push(format!("{}:{} uses clap ({})", display(&file.path), reach.line, reach.path.join("::")));
            }
        }
        if let Some(t) = tokens(&file.text).iter().find(|t| t.text == "clap") {
            found.push(format!("{}:{} names clap: the command line belongs to src/cli/", display(&file.path), t.line));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The import graph between a crate's top-level modules (`<root>/<name>/` or `<root>/<name>.rs`):
/// module → the modules it reaches → where (file:line), from code outside `#[cfg(test)]`.
fn top_level_graph(root: &Path) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let files = library_files(root);
    let modules = module_set(&files);
    let mut graph: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for file in &files {
        let Some(from) = file.module.first() else { continue };
        graph.entry(from.clone()).or_default();
        for (module, line) in reached_modules(file, &modules, false) {
            let Some(to) = module.first() else { continue };
            if to != from && modules.contains(&vec![to.clone()]) {
                let at = format!("{}:{line}", display(&file.path));
                graph.entry(from.clone()).or_default().entry(to.clone()).or_default().push(at);
            }
        }
    }
    graph
}

/// The groups of modules that reach each other (strongly connected, more than one module).
fn circles(graph: &BTreeMap<String, BTreeMap<String, Vec<String>>>) -> Vec<BTreeSet<String>> {
    let reachable = |start: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start.to_string()];
        while let Some(m) = stack.pop() {
            for next in graph.get(&m).into_iter().flat_map(|edges| edges.keys()) {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|m| (m, reachable(m))).collect();
    let mut groups: Vec<BTreeSet<String>> = Vec::new();
    for m in graph.keys() {
        let group: BTreeSet<String> =
            graph.keys().filter(|n| *n == m || (reach[m].contains(*n) && reach[*n].contains(m))).cloned().collect();
        if group.len() > 1 && !groups.contains(&group) {
            groups.push(group);
        }
    }
    groups
}

/// Circles through a helper file at the crate root, left to issue 26 item 4 (the shared plugin
/// helpers in one module, reached without an arrow back up): `selectors.rs` reads the cluster's
/// label maps while the cluster's snapshot keeps selectors; `topology_spread.rs` takes
/// `tolerates()` from a predicate while a predicate uses it. Never a circle between two folders.
#[test]
fn no_import_circle_between_top_level_modules() {
    let engine = top_level_graph(&engine_src());
    assert!(engine.len() >= 12, "{:?}", engine.keys().collect::<Vec<_>>());
    assert!(engine["engine"].contains_key("cluster"), "the graph sees the engine's imports: {:?}", engine["engine"]);
    let extender = top_level_graph(&extender_src());
    assert!(extender.len() >= 8, "{:?}", extender.keys().collect::<Vec<_>>());
    assert!(extender["server"].contains_key("wire"), "the graph sees the server's imports: {:?}", extender["server"]);
    let mut report = Vec::new();
    for graph in [&engine, &extender] {
        report.extend(circle_report(graph));
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// Each circle of `graph`, with the imports that close it.
fn circle_report(graph: &BTreeMap<String, BTreeMap<String, Vec<String>>>) -> Vec<String> {
    let mut report = Vec::new();
    for group in circles(graph) {
        report.push(format!("a circle between {}:", group.iter().cloned().collect::<Vec<_>>().join(", ")));
        for from in &group {
            for (to, at) in &graph[from] {
                if group.contains(to) {
                    report.push(format!("  {from} -> {to}: {}", at.join(", ")));
                }
            }
        }
    }
    report
}

/// The low rooms of the layering (docs/architecture.md): `labels` imports nothing else of the
/// crate; `plugin_helpers` imports no plugin and nothing that runs plugins; and the Policy parser
/// names no plugin (it builds every entry through the registry).
#[test]
fn labels_and_plugin_helpers_stay_below_the_plugins_and_the_policy_names_none() {
    let graph = top_level_graph(&engine_src());
    assert!(graph["labels"].is_empty(), "labels imports {:?}", graph["labels"]);
    let above = ["predicates", "priorities", "registry", "policy", "engine", "server", "explain", "metrics", "bind"];
    let reached: Vec<_> = graph["plugin_helpers"].keys().filter(|m| above.contains(&m.as_str())).collect();
    assert!(reached.is_empty(), "plugin_helpers imports {reached:?}: {:?}", graph["plugin_helpers"]);
    assert!(
        !graph["policy"].contains_key("predicates") && !graph["policy"].contains_key("priorities"),
        "{:?}",
        graph["policy"]
    );
    let plugins: Vec<&str> = PREDICATES.iter().map(|r| r.name).chain(PRIORITIES.iter().map(|r| r.name)).collect();
    assert!(plugins.len() >= 38, "{plugins:?}");
    let mut named = Vec::new();
    for path in rust_files(&engine_src().join("policy")) {
        if path.file_name().is_some_and(|f| f == "tests.rs") {
            continue; // the loader's tests load Policies that list plugins
        }
        let code = code_of(&path);
        named.extend(plugins.iter().filter(|p| names(&code, p)).map(|p| format!("{}: {p}", display(&path))));
    }
    assert!(named.is_empty(), "the Policy parser names plugins: {named:?}");
}

// ---- the checks find what they look for ----

fn paths_of(text: &str, module: &[&str]) -> Vec<(String, bool)> {
    let module: Vec<String> = module.iter().map(|s| s.to_string()).collect();
    reaches(text, &module).into_iter().filter(|r| r.used).map(|r| (r.path.join("::"), r.test)).collect()
}

#[test]
fn use_trees_are_expanded() {
    let text = r##"
        // use crate::commented::Out;
        /* use crate::block::{Out}; /* nested */ */
        pub use crate::{predicates::{a, b::{self, C as D}}, engine as e,
            framework::*};
        pub(crate) use super::sibling::{self as s, Thing};
        use ::std::sync::Arc;
        use serde::Deserialize;
        const S: &str = "use crate::string::Out;";
        const R: &str = r#"use crate::raw::Out;"#;
        const C: char = '{';
        fn f<'a>(x: &'a str) -> impl Sized + use<'a> { x }
        #[cfg(test)]
        #[allow(dead_code)]
        mod tests {
            use super::*;
            use crate::engine::{self, Plan};
        }
        use self::child::Item;
    "##;
    let got = paths_of(text, &["cluster", "source"]);
    let want = [
        ("crate::predicates::a", false),
        ("crate::predicates::b", false),
        ("crate::predicates::b::C", false),
        ("crate::engine", false),
        ("crate::framework", false),
        ("super::sibling", false),
        ("super::sibling::Thing", false),
        ("::std::sync::Arc", false),
        ("serde::Deserialize", false),
        ("super", true),
        ("crate::engine", true),
        ("crate::engine::Plan", true),
        ("self::child::Item", false),
    ];
    let want: Vec<(String, bool)> = want.iter().map(|(p, t)| (p.to_string(), *t)).collect();
    assert_eq!(got, want);

    let modules: BTreeSet<Vec<String>> =
        [vec!["cluster"], vec!["cluster", "source"], vec!["cluster", "source", "file"], vec!["cluster", "sibling"]]
            .iter()
            .map(|m| m.iter().map(|s| s.to_string()).collect())
            .collect();
    let module = ["cluster", "source"].map(String::from).to_vec();
    let resolved = |path: &str, inline: &[&str]| {
        let mut m = module.clone();
        m.extend(inline.iter().map(|s| s.to_string()));
        let path = path.split("::").map(String::from).collect();
        resolve(&Reach { module: m, path, line: 1, test: false, used: true }, &modules).map(|m| m.join("::"))
    };
    assert_eq!(resolved("super::sibling::Thing", &[]).as_deref(), Some("cluster::sibling::Thing"));
    assert_eq!(resolved("super::super::engine", &["tests"]).as_deref(), Some("cluster::engine"));
    assert_eq!(resolved("super", &["tests"]).as_deref(), Some("cluster::source"));
    assert_eq!(resolved("self::file::X", &[]).as_deref(), Some("cluster::source::file::X"));
    assert_eq!(resolved("file::X", &[]).as_deref(), Some("cluster::source::file::X"), "a child module");
    assert_eq!(resolved("crate::engine::Plan", &[]).as_deref(), Some("engine::Plan"));
    assert_eq!(resolved("serde::Deserialize", &[]), None, "another crate");
    assert_eq!(resolved("::std::sync", &[]), None, "another crate");
}

#[test]
fn paths_in_code_count_and_circles_are_found() {
    let text = "fn f() { let x = crate::engine::Plan::default(); let y = super::kinds::KIND; std::mem::drop(x); }\n\
                #[cfg(test)]\nfn g() { crate::server::start(); }\n\
                macro_rules! m { () => { $crate::wire::X } }";
    let reached: Vec<(String, bool)> = reaches(text, &["cluster".to_string()])
        .into_iter()
        .filter(|r| !r.used)
        .map(|r| (r.path.join("::"), r.test))
        .collect();
    assert_eq!(
        reached,
        [("crate::engine::Plan::default", false), ("super::kinds::KIND", false), ("crate::server::start", true)]
            .map(|(p, t)| (p.to_string(), t))
    );

    let edge = |from: &str, to: &[&str]| -> (String, BTreeMap<String, Vec<String>>) {
        (from.to_string(), to.iter().map(|t| (t.to_string(), vec!["x.rs:1".to_string()])).collect())
    };
    let graph: BTreeMap<String, BTreeMap<String, Vec<String>>> =
        [edge("a", &["b"]), edge("b", &["c"]), edge("c", &["a", "d"]), edge("d", &[]), edge("e", &["d"])].into();
    assert_eq!(circles(&graph), vec![BTreeSet::from(["a", "b", "c"].map(String::from))]);
    assert!(circles(&[edge("a", &["b"]), edge("b", &[])].into()).is_empty());
    assert_eq!(test_only_children("#[cfg(test)]\nmod props;\npub mod kept;\n#[cfg(test)]\nmod tests {}"), ["props"]);

    assert!(names("a GeneralPredicates b", "GeneralPredicates"));
    assert!(names("(MatchInterPodAffinity)", "MatchInterPodAffinity"));
    assert!(!names("MaxCSIVolumeCountPred", "MaxCSIVolumeCount"));
    assert!(!names("HostNames", "HostName"));
    assert!(!code_of(&engine_src().join("engine/fits.rs")).contains("#[cfg(test)]\nmod tests"));
    assert!(std::fs::read_to_string(engine_src().join("engine/fits.rs")).unwrap().contains("#[cfg(test)]\nmod tests"));
}

/// A /filter's large `Nodes` body is decoded without `status.images` (`server::streamed_nodes`,
/// `cluster::node_images::without_images`): nothing a /filter evaluates may read node images.
#[test]
fn no_predicate_reads_node_images() {
    let mut read = Vec::new();
    for dir in ["predicates", "framework", "engine", "plugin_helpers"] {
        for path in rust_files(&engine_src().join(dir)) {
            let code = code_of(&path);
            let uses = ["images", "NodeImages", "ImageName", "image_locality"].iter().any(|w| names(&code, w));
            if uses {
                read.push(display(&path));
            }
        }
    }
    assert!(read.is_empty(), "node images read where a /filter evaluates: {read:?}");
}

// ---- the readers of a reason read its cause, never its words ----

/// The methods that compare or match text.
const TEXT_MATCHING: [&str; 13] = [
    "starts_with",
    "strip_prefix",
    "ends_with",
    "strip_suffix",
    "contains",
    "find",
    "rfind",
    "split_once",
    "matches",
    "eq",
    "ne",
    "trim_start_matches",
    "trim_end_matches",
];

/// An identifier that names a reason's text: `reason`, `reasons`, `g.reason`, `message`.
fn names_reason_text(ident: &str) -> bool {
    let ident = ident.to_ascii_lowercase();
    ident.contains("reason") || ident.contains("message")
}

/// Where the postfix chain ending just before `end` starts (`g.reason.as_str()`,
/// `status.reasons[0]`): back over identifiers, `.`, `::` and bracketed groups.
fn chain_start(t: &[Token], end: usize) -> usize {
    let mut k = end;
    while k > 0 {
        let prev = t[k - 1].text.as_str();
        if prev == ")" || prev == "]" {
            let (open, close) = if prev == ")" { ("(", ")") } else { ("[", "]") };
            let mut depth = 0;
            let mut j = k - 1;
            loop {
                if t[j].text == close {
                    depth += 1;
                } else if t[j].text == open {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                if j == 0 {
                    return 0;
                }
                j -= 1;
            }
            k = j;
        } else if prev == "." || prev == "::" || prev == "?" || prev.chars().all(is_ident_char) {
            k -= 1;
        } else {
            break;
        }
    }
    k
}

/// Where the postfix chain starting at `start` ends (exclusive), and the methods it calls.
fn chain_end(t: &[Token], start: usize) -> (usize, Vec<String>) {
    let mut methods = Vec::new();
    let text = |j: usize| t.get(j).map_or("", |t| t.text.as_str());
    let mut j = start;
    while j < t.len() {
        let s = text(j);
        if s == "(" || s == "[" {
            let (open, close) = if s == "(" { ("(", ")") } else { ("[", "]") };
            let mut depth = 0;
            while j < t.len() {
                if t[j].text == open {
                    depth += 1;
                } else if t[j].text == close {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                j += 1;
            }
            j += 1;
        } else if s == "." || s == "::" || s == "?" {
            j += 1;
        } else if s.chars().all(is_ident_char) && !s.is_empty() {
            if text(j + 1) == "(" && matches!(text(j.wrapping_sub(1)), "." | "::") {
                methods.push(s.to_string());
            }
            j += 1;
        } else {
            break;
        }
    }
    (j, methods)
}

/// Whether a bracketed group around `i` (not past a block or a statement) is the arguments of a
/// chain that names a reason's text: `v.reasons.iter().any(|r| r.contains("taint"))`.
fn inside_reason_chain(t: &[Token], i: usize) -> bool {
    let mut depth = 0;
    let mut k = i;
    while k > 0 {
        k -= 1;
        match t[k].text.as_str() {
            ")" | "]" => depth += 1,
            "(" | "[" if depth > 0 => depth -= 1,
            "(" | "[" => {
                let start = chain_start(t, k);
                if t[start..k].iter().any(|t| names_reason_text(&t.text)) {
                    return true;
                }
            }
            "{" | "}" | ";" if depth == 0 => return false,
            _ => {}
        }
    }
    false
}

/// Where a reader looks into a reason's words: what `the_readers_of_a_reason_never_match_its_words`
/// forbids, as `line: what`. In the code given (comments, strings and tests aside), it finds
///
/// 1. an engine reason constant named at all (`ERR_...`): a reader matches a `Cause` instead;
/// 2. a `.message` field compared (`==`, `!=`) or matched (a [`TEXT_MATCHING`] method called on
///    it, `.message.as_str().starts_with(..)`);
/// 3. a [`TEXT_MATCHING`] method called with a string literal on a chain that names a reason's
///    text (an identifier with `reason` or `message` in it: `reason.strip_prefix("Insufficient ")`),
///    or inside the arguments of such a chain (`reasons.iter().any(|r| r.contains("taint"))`);
/// 4. `==` or `!=` between a string literal and such a chain, or inside the arguments of one;
/// 5. a `match` on such a chain with a string literal for a pattern.
///
/// A reason's text may still be shown, joined, counted and sorted: the groups of a table are the
/// reasons as people read them.
fn reason_text_readings(code: &str) -> Vec<String> {
    let t = lex(code, true);
    let text = |j: usize| t.get(j).map_or("", |t| t.text.as_str());
    let is_literal = |j: usize| text(j) == STRING_LITERAL || (text(j) == "&" && text(j + 1) == STRING_LITERAL);
    let chain_names_reason = |from: usize, to: usize| t[from..to].iter().any(|t| names_reason_text(&t.text));
    let is_comparison = |j: usize| matches!(text(j), "=" | "!") && text(j + 1) == "=";
    let mut found = Vec::new();
    for i in 0..t.len() {
        let line = t[i].line;
        if t[i].text.starts_with("ERR_") {
            found.push(format!("{line}: names the reason constant {}", t[i].text));
        }
        if text(i) == "." && text(i + 1) == "message" && text(i + 2) != "(" {
            let (end, methods) = chain_end(&t, i + 2);
            let mut start = chain_start(&t, i);
            while start > 0 && matches!(text(start - 1), "&" | "*") {
                start -= 1;
            }
            let compared = is_comparison(end) || (start >= 2 && is_comparison(start - 2));
            if compared || methods.iter().any(|m| TEXT_MATCHING.contains(&m.as_str())) {
                found.push(format!("{line}: compares or matches a reason's .message"));
            }
        }
        if text(i) == "." && TEXT_MATCHING.contains(&text(i + 1)) && text(i + 2) == "(" && is_literal(i + 3) {
            let start = chain_start(&t, i);
            if chain_names_reason(start, i) || inside_reason_chain(&t, start) {
                found.push(format!("{line}: .{}(\"...\") on a reason's text", text(i + 1)));
            }
        }
        if is_comparison(i) {
            let start = chain_start(&t, i);
            let (end, _) = chain_end(&t, i + 2);
            let left_literal = i > 0 && text(i - 1) == STRING_LITERAL;
            let right_literal = is_literal(i + 2);
            let context = inside_reason_chain(&t, if left_literal { i - 1 } else { start });
            let left_reason = right_literal && (chain_names_reason(start, i) || context);
            if left_reason || (left_literal && (chain_names_reason(i + 2, end) || context)) {
                found.push(format!("{line}: a reason's text compared with a string literal"));
            }
        }
        if text(i) == "match" {
            let (end, _) = chain_end(&t, i + 1);
            if text(end) == "{" && chain_names_reason(i + 1, end) {
                let mut depth = 0;
                let mut j = end;
                while j < t.len() {
                    match text(j) {
                        "{" => depth += 1,
                        "}" => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    let pattern = text(j) == STRING_LITERAL
                        && (text(j + 1) == "|" || (text(j + 1) == "=" && text(j + 2) == ">") || text(j + 1) == "if");
                    if depth == 1 && pattern {
                        found.push(format!("{line}: a match on a reason's text with a string literal pattern"));
                        break;
                    }
                    j += 1;
                }
            }
        }
    }
    found
}

/// What explain (its hints, failure groups and kube-scheduler view), whatif, the metrics and the
/// web pages decide about a reason, they decide by its type (`framework::Cause`, `ReasonKind`):
/// none looks into its words, which are upstream's and only shown
/// ([`reason_text_readings`] says precisely what counts as looking).
#[test]
fn the_readers_of_a_reason_never_match_its_words() {
    let readers = ["explain", "whatif", "metrics", "server/web"];
    let mut found = Vec::new();
    let mut files = 0;
    for dir in readers {
        for path in rust_files(&extender_src().join(dir)) {
            files += 1;
            for reading in reason_text_readings(&code_of(&path)) {
                found.push(format!("{}:{reading}", display(&path)));
            }
        }
    }
    assert!(files >= 25, "{files} files");
    assert!(found.is_empty(), "a reader of a reason looks into its words:\n{}", found.join("\n"));
}

/// The check finds what the readers did before reasons had types, and passes what they may do.
#[test]
fn reason_text_readings_are_found() {
    // From explain's hints, failure groups and kube-scheduler stand-ins, as they were.
    let before = [
        r#"fn hint_for(pod: &PodContext, evaluated: &[EvaluatedNode], g: &FailureGroup) -> Option<String> {
    let reason = g.reason.as_str();
    if reason == ERR_TAINTS_TOLERATIONS_NOT_MATCH.message {
        return taints_hint(pod, evaluated, g, effects);
    }
    match reason.strip_prefix("Insufficient ") {
        Some("pods") | None => None,
        Some(resource) => resource_hint(pod, evaluated, g, resource),
    }
}"#,
        "let general = &*ERR_POD_AFFINITY_NOT_MATCH.message;",
        "let message = match plugin { Plugin::NodeName if reason == ERR_POD_NOT_MATCH_HOST_NAME => NODE_NAME, _ => x };",
        r#"if r.message.starts_with("Insufficient") { }"#,
        r#"if reason.message.as_ref() == other { }"#,
        r#"if other != r.message { }"#,
        r#"let short = g.reasons[0].as_str() == "Insufficient cpu";"#,
        r#"let short = "Insufficient cpu" == g.reason;"#,
        r#"if v.reasons.iter().any(|r| r.contains("taint")) { }"#,
        r##"match h.reason.as_str() { r#"node(s) were unschedulable"# => 1, _ => 0 }"##,
    ];
    let found: Vec<usize> = before.iter().map(|code| reason_text_readings(code).len()).collect();
    assert!(found.iter().all(|n| *n > 0), "{found:?}");
    assert_eq!(reason_text_readings(before[0]).len(), 3, "{:?}", reason_text_readings(before[0]));

    let allowed = [
        // Shown, joined, grouped, sorted: the tables are reasons as people read them.
        "let text = r.message.to_string(); let all = v.reasons.join(\", \");",
        "groups.sort_by(|a, b| a.reason.cmp(&b.reason)); counts.entry(reason.as_str());",
        // Decided by the type.
        "match &g.given.cause { Cause::HostPortConflict => ports_hint(evaluated, g), _ => None }",
        // Text that is not a reason's.
        r#"if name.starts_with("hugepages-") || text.ends_with(": ") { } match s.by.as_str() { "" => 1, _ => 2 }"#,
        r#"let e = Error { message: "a" }; if e.message.is_empty() { } // reason == "x""#,
        r#"let s = "reason.starts_with(\"x\")"; let c = '"'; let raw = r"reason == ""#,
    ];
    for code in allowed {
        assert_eq!(reason_text_readings(code), Vec::<String>::new(), "{code}");
    }
}
