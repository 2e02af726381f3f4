//! Every relative link in README.md and docs/*.md leads somewhere: `[text](path)` names a file or
//! directory that exists (relative to the page), and `[text](path#anchor)` or `[text](#anchor)`
//! names a heading of that Markdown file, by GitHub's slug rule (lowercase, spaces to `-`,
//! punctuation other than `-` and `_` dropped, `-1`, `-2`, ... for repeated headings). Links to
//! `http(s)://` and `mailto:` are not followed. Code blocks and code spans are not links.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// One link as written: the line it is on (1-based) and its destination.
#[derive(Debug, PartialEq)]
struct Link {
    line: usize,
    target: String,
}

/// The page with its fenced code blocks and code spans blanked out (newlines kept, so line numbers
/// stay right): what is left is prose, headings and links.
fn prose(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut fence: Option<&str> = None;
    for line in markdown.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if open == m => fence = None,
            (None, None) => {
                out.push_str(line);
                continue;
            }
            _ => {}
        }
        out.push_str(if line.ends_with('\n') { "\n" } else { "" });
    }
    blank_code_spans(&out)
}

/// Replaces each code span (a run of N backticks up to the next run of exactly N, possibly on a
/// later line) by spaces, keeping its newlines. An unclosed run stays as it is.
fn blank_code_spans(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let close = loop {
            if j >= chars.len() {
                break None;
            }
            if chars[j] == '`' {
                let m = run_at(j);
                if m == n {
                    break Some(j);
                }
                j += m;
            } else {
                j += 1;
            }
        };
        match close {
            Some(j) => {
                for c in &chars[i..j + n] {
                    out.push(if *c == '\n' { '\n' } else { ' ' });
                }
                i = j + n;
            }
            None => {
                out.extend(&chars[i..i + n]);
                i += n;
            }
        }
    }
    out
}

/// The inline links of a page: every `](destination)` outside code, with an optional `"title"`
/// after the destination dropped.
fn links(markdown: &str) -> Vec<Link> {
    let mut found = Vec::new();
    for (i, line) in prose(markdown).lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let inside = after[..end].trim();
            let target = inside.trim_start_matches('<').split(['>', ' ']).next().unwrap_or_default();
            found.push(Link { line: i + 1, target: target.to_string() });
            rest = &after[end + 1..];
        }
    }
    found
}

/// GitHub's anchor for a heading's text: lowercase, spaces to `-`, every other character that is
/// not alphanumeric, `-` or `_` dropped. Link syntax in the heading counts by its text only.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        let tail = &rest[open + 1..];
        match tail.find("](").and_then(|close| tail[close..].find(')').map(|end| (close, close + end))) {
            Some((close, end)) => {
                text.push_str(&rest[..open]);
                text.push_str(&tail[..close]);
                rest = &tail[end + 1..];
            }
            None => break,
        }
    }
    text.push_str(rest);
    text.trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// The anchors a page's headings get (ATX headings outside code blocks), with GitHub's `-1`, `-2`
/// suffixes for a slug already taken.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut fence: Option<&str> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if let Some(m) = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m)) {
            fence = match fence {
                None => Some(m),
                Some(open) if open == m => None,
                other => other,
            };
            continue;
        }
        if fence.is_some() {
            continue;
        }
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !trimmed[hashes..].starts_with([' ', '\t']) {
            continue;
        }
        let text = trimmed[hashes..].trim().trim_end_matches('#').trim();
        let base = slug(text);
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 { base.clone() } else { format!("{base}-{n}") });
        *n += 1;
    }
    out
}

/// `base/relative`, with `.` and `..` resolved lexically.
fn join(base: &Path, relative: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for part in base.join(relative).components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Every dead link of the pages (paths relative to `root`), as `page:line: link (why)`.
fn dead_links(root: &Path, pages: &[PathBuf]) -> Vec<String> {
    let mut dead = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(root.join(page)).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        let dir = page.parent().unwrap_or(Path::new(""));
        for link in links(&text) {
            let t = link.target.as_str();
            if t.is_empty() || t.contains("://") || t.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match t.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (t, None),
            };
            let target = if path.is_empty() { page.clone() } else { join(dir, path) };
            let at = format!("{}:{}: ({t})", page.display(), link.line);
            let full = root.join(&target);
            if !full.exists() {
                dead.push(format!("{at}: {} does not exist", target.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if full.is_dir() || full.extension().is_none_or(|e| e != "md") {
                dead.push(format!("{at}: an anchor into {}, which is not a Markdown file", target.display()));
                continue;
            }
            let headings = anchors(&std::fs::read_to_string(&full).unwrap());
            if !headings.contains(anchor) {
                dead.push(format!("{at}: {} has no heading #{anchor}", target.display()));
            }
        }
    }
    dead
}

/// README.md and every docs/*.md, relative to the crate's root.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| Path::new("docs").join(p.file_name().unwrap()))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

#[test]
fn every_relative_link_of_the_readme_and_docs_leads_to_a_file_and_heading_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = pages(root);
    assert!(pages.len() >= 7, "README.md and the docs pages: {pages:?}");
    let checked: usize = pages.iter().map(|p| links(&std::fs::read_to_string(root.join(p)).unwrap()).len()).sum();
    assert!(checked >= 50, "the pages link to each other: found {checked} links");
    let dead = dead_links(root, &pages);
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}

#[test]
fn the_checker_finds_dead_files_and_anchors_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::create_dir(dir.path().join("config")).unwrap();
    std::fs::write(
        dir.path().join("README.md"),
        "# Title\n\n## The `serve` command: flags, and more\n\n## Notes\n\n## Notes\n\n\
         [ok](docs/a.md) [ok](docs/a.md#the-pods-part) [ok](#the-serve-command-flags-and-more)\n\
         [ok](#notes-1) [ok](config/) [ok](https://example.com/x#y) [ok](mailto:a@b) `[no](code.md)`\n\
         ```\n[no](fenced.md)\n```\n\
         [dead](docs/missing.md)\n\
         [dead](docs/a.md#no-such-heading) [dead](#notes-2)\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("docs/a.md"),
        "# A\n\n```sh\n# not a heading\n```\n\n## The pod's part\n\n[ok](../README.md#title) [dead](#not-a-heading)\n",
    )
    .unwrap();
    let pages = pages(dir.path());
    let dead = dead_links(dir.path(), &pages);
    assert_eq!(
        dead,
        [
            "README.md:14: (docs/missing.md): docs/missing.md does not exist",
            "README.md:15: (docs/a.md#no-such-heading): docs/a.md has no heading #no-such-heading",
            "README.md:15: (#notes-2): README.md has no heading #notes-2",
            "docs/a.md:9: (#not-a-heading): docs/a.md has no heading #not-a-heading",
        ]
    );
}

#[test]
fn slugs_follow_github() {
    assert_eq!(slug("Running it in a cluster"), "running-it-in-a-cluster");
    assert_eq!(slug("The evaluator's workers"), "the-evaluators-workers");
    assert_eq!(slug("Over HTTP: `POST /explain`"), "over-http-post-explain");
    assert_eq!(slug("A request, from kube-scheduler to the answer"), "a-request-from-kube-scheduler-to-the-answer");
    assert_eq!(slug("Fault tests in `cargo test`"), "fault-tests-in-cargo-test");
    assert_eq!(slug("snake_case and [a link](x.md)"), "snake_case-and-a-link");
}
