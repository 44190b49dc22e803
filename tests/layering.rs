//! The crate's layering (src/lib.rs): each folder of src/ may use only the folders before it
//! in [`LAYERS`]. Library code never reaches up into `cli` or `server`, and there are no import
//! cycles between folders. Read from the source text, so it also catches paths written out in
//! full (`crate::cli::usage(...)`) and not only `use` lines.

use std::collections::BTreeSet;
use std::path::Path;

/// Bottom to top.
const LAYERS: &[&str] = &[
    "game", "eval", "search", "agents", "matches", "tune", "rl", "ga", "tuners", "runner", "store",
    "server", "cli",
];

/// The files under `dir`, at any depth, whose extension is `extension`.
fn files_with(extension: &str, dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            files_with(extension, &path, out);
        } else if path.extension().is_some_and(|e| e == extension) {
            out.push(path);
        }
    }
}

/// A file's name without its extension (`de` of `src/tuners/de.rs`).
fn stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    files_with("rs", dir, out);
}

/// The top-level modules a file names through `crate::`, in paths and in `use crate::{..}`.
fn modules_used(text: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let code: String = text
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !t.starts_with("//")
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    used.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            used.insert(name);
        }
    }
    used
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    let mut folders_seen = BTreeSet::new();
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src");
        let top = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("a path under src")
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let Some(level) = LAYERS.iter().position(|l| *l == top) else {
            problems.push(format!(
                "src/{} is outside the layers {LAYERS:?}: put it in one of their folders",
                rel.display()
            ));
            continue;
        };
        folders_seen.insert(top.clone());
        let text = std::fs::read_to_string(file).expect("readable source");
        for used in modules_used(&text) {
            if used == top {
                continue;
            }
            match LAYERS.iter().position(|l| *l == used) {
                Some(u) if u < level => {}
                Some(_) => problems.push(format!(
                    "src/{} ({top}) uses crate::{used}, which is not below it",
                    rel.display()
                )),
                None => problems.push(format!(
                    "src/{} uses crate::{used}, which is not a layer",
                    rel.display()
                )),
            }
        }
    }
    assert!(
        problems.is_empty(),
        "layering broken:\n{}",
        problems.join("\n")
    );
    assert_eq!(
        folders_seen.len(),
        LAYERS.len(),
        "every layer should be a folder of src/ with code in it"
    );
}

#[test]
fn the_scanner_sees_full_paths_and_use_groups() {
    let used = modules_used(
        "use crate::{game::Position, eval};\nfn f() { crate::cli::usage(\"x\"); }\n// crate::server",
    );
    let expected: BTreeSet<String> = ["game", "eval", "cli"].map(String::from).into();
    assert_eq!(used, expected);
}

/// The text of a file without its comment lines.
fn code_of(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first identifier of each path that follows `prefix` in `code`: `super::a::B` gives
/// `a`, `super::{a::B, c}` gives `a` and `c`.
fn names_after(code: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Split the group's top level on commas, skipping nested groups.
            let (mut depth, mut start) = (0usize, 0usize);
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        names.push(ident(&group[start..j]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.push(ident(&group[start..j]));
                        start = j + 1;
                    }
                    _ => {}
                }
            }
        } else {
            names.push(ident(rest));
        }
    }
    names.retain(|n| !n.is_empty() && n != "self");
    names
}

/// Whether `code` defines an item called `name` at any level.
fn defines(code: &str, name: &str) -> bool {
    [
        "fn",
        "struct",
        "enum",
        "const",
        "static",
        "trait",
        "type",
        "macro_rules!",
    ]
    .iter()
    .any(|kind| {
        code.match_indices(&format!("{kind} {name}")).any(|(i, m)| {
            code[i + m.len()..]
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
        })
    })
}

/// The import graph between the files of one folder (`mod.rs` and its sibling modules): an
/// edge for every `super::x`, `crate::folder::x` or (in `mod.rs`) `x::` that names a sibling
/// or an item `mod.rs` defines. `mod.rs`'s own re-exports (`pub use`, `pub(crate) use`) are
/// not edges: they are the folder's front door, not a dependency of its code.
fn folder_edges(folder: &Path) -> Vec<(String, String)> {
    let mut modules = BTreeSet::new();
    let mut texts = Vec::new();
    for entry in std::fs::read_dir(folder).expect("readable folder") {
        let path = entry.expect("directory entry").path();
        let name = stem(&path);
        if path.is_dir() || path.extension().is_some_and(|e| e == "rs") {
            modules.insert(name.clone());
        }
        if path.extension().is_some_and(|e| e == "rs") {
            texts.push((
                name,
                code_of(&std::fs::read_to_string(&path).expect("readable")),
            ));
        }
    }
    let folder_name = folder
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let root = texts
        .iter()
        .find(|(n, _)| n == "mod")
        .map(|(_, t)| t.clone())
        .unwrap_or_default();
    // What the root re-exports, by name: `pub use engine::{Evolution, ..}`.
    let mut reexported = std::collections::BTreeMap::new();
    let mut root_code = String::new();
    let mut in_pub_use = false;
    for line in root.lines() {
        let t = line.trim_start();
        let reexport = t.starts_with("pub use ") || t.starts_with("pub(crate) use ");
        if reexport || in_pub_use {
            let body = t
                .trim_start_matches("pub use ")
                .trim_start_matches("pub(crate) use ");
            if !in_pub_use {
                if let Some(module) = body.split("::").next() {
                    for item in body.split(['{', ',', '}', ';']).skip(1) {
                        reexported.insert(item.trim().to_string(), module.to_string());
                    }
                }
            }
            in_pub_use = !t.ends_with(';');
            continue;
        }
        if t.starts_with("mod ") || t.starts_with("pub mod ") || t.starts_with("pub(crate) mod ") {
            continue;
        }
        root_code.push_str(line);
        root_code.push('\n');
    }
    let mut edges = BTreeSet::new();
    for (name, code) in &texts {
        let mut targets = Vec::new();
        if name == "mod" {
            for m in &modules {
                if m != "mod" && !names_after(&root_code, &format!("{m}::")).is_empty() {
                    targets.push(m.clone());
                }
            }
        } else {
            let mut used = names_after(code, "super::");
            used.extend(names_after(code, &format!("crate::{folder_name}::")));
            for n in used {
                if modules.contains(&n) {
                    targets.push(n);
                } else if let Some(m) = reexported.get(&n) {
                    targets.push(m.clone());
                } else if defines(&root_code, &n) {
                    targets.push("mod".into());
                }
            }
        }
        for t in targets {
            if &t != name {
                edges.insert((name.clone(), t));
            }
        }
    }
    edges.into_iter().collect()
}

/// One import cycle among `edges`, if there is any.
fn a_cycle(edges: &[(String, String)]) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &[(String, String)],
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut cycle = path[i..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for (_, to) in edges.iter().filter(|(from, _)| from == node) {
            if let Some(c) = visit(to, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .iter()
        .find_map(|(from, _)| visit(from, edges, &mut Vec::new(), &mut done))
}

#[test]
fn no_folder_has_an_import_cycle_between_its_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    for layer in LAYERS {
        let edges = folder_edges(&src.join(layer));
        if let Some(cycle) = a_cycle(&edges) {
            problems.push(format!("src/{layer}: {}", cycle.join(" -> ")));
        }
    }
    assert!(
        problems.is_empty(),
        "import cycles inside folders (move the shared part into a file both can use):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_cycle_finder_sees_groups_and_reexports() {
    assert_eq!(
        names_after("use super::{engine::{A, B}, config::C};", "super::"),
        ["engine", "config"]
    );
    let edges = vec![
        ("a".to_string(), "b".to_string()),
        ("b".to_string(), "c".to_string()),
        ("c".to_string(), "a".to_string()),
    ];
    assert_eq!(a_cycle(&edges).map(|c| c.len()), Some(4));
    assert_eq!(a_cycle(&edges[..2]), None);
}

/// A clone explains itself: no comment in `src/`, and no page of the README or `docs/`,
/// sends its reader to the design document beside the repository (`../shared/DESIGN.md`)
/// instead of to the code or `docs/`.
#[test]
fn no_comment_cites_the_design_document_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.push(root.join("README.md"));
    markdown_files(&root.join("docs"), &mut files);
    let mut citing = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable source");
        for (i, line) in text.lines().enumerate() {
            if line.contains("DESIGN.md") || line.contains("DESIGN 1") {
                citing.push(format!("{}:{}", file.display(), i + 1));
            }
        }
    }
    assert!(
        citing.is_empty(),
        "cite docs/ or the code instead:\n{}",
        citing.join("\n")
    );
}

/// Every error type a user can cause is found by the front ends through the registry of
/// `UserErrorKind`s, so each `impl UserError for T` registers `T` beside it.
#[test]
fn every_user_error_is_registered() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut unregistered = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable source");
        for line in text.lines() {
            let Some(rest) = line.split("UserError for ").nth(1) else {
                continue;
            };
            if !line.trim_start().starts_with("impl") {
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let short = name.rsplit("::").next().unwrap_or(&name).to_string();
            if !text.contains(&format!("UserErrorKind::of::<{short}>()"))
                && !text.contains(&format!("UserErrorKind::of::<{name}>()"))
            {
                unregistered.push(format!("{}: {name}", file.display()));
            }
        }
    }
    assert!(
        unregistered.is_empty(),
        "user errors with no `inventory::submit! {{ UserErrorKind::of::<T>() }}` beside them: {unregistered:?}"
    );
}

/// The Markdown pages under `dir`, at any depth.
fn markdown_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    files_with("md", dir, out);
}

/// The README and docs/ pages, whose links a reader follows.
fn manual_pages(root: &Path) -> Vec<std::path::PathBuf> {
    let mut files = vec![root.join("README.md")];
    markdown_files(&root.join("docs"), &mut files);
    files.sort();
    files
}

/// Pages of docs/ that are not the manual's prose: the measured figures and the references
/// generated from the code.
fn is_figures_or_generated(docs_relative: &Path) -> bool {
    docs_relative.starts_with("results")
        || docs_relative == Path::new("results.md")
        || docs_relative == Path::new("reference/cli.md")
        || docs_relative == Path::new("reference/config.md")
        || docs_relative == Path::new("reference/api.md")
}

/// The manual stays short enough to read: its prose (every page of docs/ but the results and
/// the generated references, code blocks included) is at most 25,000 words.
#[test]
fn the_manual_is_at_most_25000_words() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = root.join("docs");
    let mut pages = Vec::new();
    markdown_files(&docs, &mut pages);
    let mut counts: Vec<(usize, String)> = pages
        .iter()
        .filter_map(|page| {
            let relative = page.strip_prefix(&docs).ok()?;
            if is_figures_or_generated(relative) {
                return None;
            }
            let text = std::fs::read_to_string(page).expect("a readable page");
            Some((
                text.split_whitespace().count(),
                relative.display().to_string(),
            ))
        })
        .collect();
    counts.sort();
    let total: usize = counts.iter().map(|(n, _)| n).sum();
    assert!(
        total <= 25_000,
        "the manual's prose is {total} words, over 25,000; the longest pages: {:?}",
        counts.iter().rev().take(5).collect::<Vec<_>>()
    );
}

/// Every page of docs/ is in the site's table of contents (docs/SUMMARY.md), so that the
/// built manual leaves none out.
#[test]
fn every_page_is_in_the_table_of_contents() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = root.join("docs");
    let summary = std::fs::read_to_string(docs.join("SUMMARY.md")).expect("docs/SUMMARY.md");
    let mut pages = Vec::new();
    markdown_files(&docs, &mut pages);
    let missing: Vec<String> = pages
        .iter()
        .filter_map(|page| page.strip_prefix(&docs).ok())
        .map(|relative| relative.display().to_string())
        .filter(|relative| relative != "SUMMARY.md" && !summary.contains(&format!("]({relative})")))
        .collect();
    assert!(
        missing.is_empty(),
        "pages missing from docs/SUMMARY.md: {missing:?}"
    );
}

/// A page's text without its fenced code blocks and inline code spans, where `](` is code,
/// not a link.
fn prose_of(text: &str) -> String {
    let mut prose = String::new();
    for line in unfenced_lines(text) {
        // Odd-numbered pieces between backticks are code spans.
        for (i, piece) in line.split('`').enumerate() {
            if i % 2 == 0 {
                prose.push_str(piece);
            }
        }
        prose.push('\n');
    }
    prose
}

/// The anchors GitHub gives a page's headings: lower case, letters, digits, `-` and `_`
/// kept, spaces made `-`, everything else dropped; a repeated heading gets `-1`, `-2`, ...
fn anchors_of(text: &str) -> BTreeSet<String> {
    let mut anchors = BTreeSet::new();
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for line in prose_with_headings(text) {
        let slug: String = line
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let count = seen.entry(slug.clone()).or_insert(0);
        let anchor = if *count == 0 {
            slug.clone()
        } else {
            format!("{slug}-{count}")
        };
        *count += 1;
        anchors.insert(anchor);
    }
    anchors
}

/// The text of each heading outside code blocks, code spans kept as their text.
fn prose_with_headings(text: &str) -> Vec<String> {
    unfenced_lines(text)
        .filter(|line| line.starts_with('#'))
        .map(|line| line.trim_start_matches('#').trim().replace('`', ""))
        .collect()
}

/// The lines of a page outside its fenced code blocks.
fn unfenced_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// Every relative link and anchor in the README and docs/ resolves: the file exists and, for
/// a link to a page with `#anchor`, one of its headings makes that anchor.
#[test]
fn every_link_in_the_manual_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in manual_pages(root) {
        let text = std::fs::read_to_string(&page).expect("a readable page");
        let prose = prose_of(&text);
        let mut rest = prose.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = rest[..end].trim();
            rest = &rest[end..];
            if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target, None),
            };
            let file = if path.is_empty() {
                page.clone()
            } else {
                page.parent().expect("a folder").join(path)
            };
            let here = page
                .strip_prefix(root)
                .unwrap_or(&page)
                .display()
                .to_string();
            if !file.exists() {
                broken.push(format!("{here}: {target} (no such file)"));
                continue;
            }
            if let Some(anchor) = anchor {
                if file.extension().is_some_and(|e| e == "md") {
                    let target_text = std::fs::read_to_string(&file).expect("a readable page");
                    if !anchors_of(&target_text).contains(anchor) {
                        broken.push(format!("{here}: {target} (no such heading)"));
                    }
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser right?"
    );
    assert!(
        broken.is_empty(),
        "broken links in the manual:\n{}",
        broken.join("\n")
    );
}

#[test]
fn anchors_follow_github() {
    let anchors = anchors_of(
        "# The defaults for Kalah(6,5)\n## The committed player: `configs/mankalah-tuned.json`\n\
         ## Figures\n```\n# not a heading\n```\n## Figures\n",
    );
    let want: BTreeSet<String> = [
        "the-defaults-for-kalah65",
        "the-committed-player-configsmankalah-tunedjson",
        "figures",
        "figures-1",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(anchors, want);
}

/// The manual says how to use the product, not how it came to be: no page of the README or
/// docs/ cites an issue by number ("issue 12", "issue #12", "#12)").
#[test]
fn no_page_cites_an_issue_number() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut citing = Vec::new();
    for page in manual_pages(root) {
        let text = std::fs::read_to_string(&page).expect("a readable page");
        for (i, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let cites = lower.match_indices("issue").any(|(at, word)| {
                let after = lower[at + word.len()..].trim_start_matches(['s', ' ', '#']);
                after.starts_with(|c: char| c.is_ascii_digit())
            }) || lower.match_indices('#').any(|(at, _)| {
                let digits: String = lower[at + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                !digits.is_empty()
                    && (at == 0 || lower[..at].ends_with([' ', '(']))
                    && lower[at + 1 + digits.len()..].starts_with([')', ' ', ',', '.'])
            });
            if cites {
                let here = page
                    .strip_prefix(root)
                    .unwrap_or(&page)
                    .display()
                    .to_string();
                citing.push(format!("{here}:{}: {line}", i + 1));
            }
        }
    }
    assert!(
        citing.is_empty(),
        "pages citing an issue number:\n{}",
        citing.join("\n")
    );
}

/// Whether `line` holds `pattern` as a path of its own: not the tail of a longer name or
/// path (`serde::de::Error` does not name the tuner `de`).
fn names(line: &str, pattern: &str) -> bool {
    line.match_indices(pattern).any(|(i, _)| {
        let before = &line[..i];
        // `x::de::` is `x`'s module `de`, unless `x` is this crate's `tuners` or the file's parent.
        let joined = before.ends_with("::");
        let inside_a_name = before
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        !inside_a_name
            && (!joined || pattern.starts_with("tuners::") || pattern.starts_with("super::"))
    })
}

#[test]
fn the_tuner_scanner_sees_paths_of_their_own() {
    assert!(names("use super::de::DeConfig;", "super::de::"));
    assert!(names("crate::tuners::de::DeConfig", "tuners::de::"));
    assert!(names("pub(crate) mod de;", "mod de;"));
    assert!(!names("use serde::{Deserialize};", "de::{"));
    assert!(!names("serde::de::Error::custom", "use de::"));
    assert!(!names("x.map_err(serde::de::Error::custom)", "de::{"));
}

/// A population tuner is its own file plus the line that compiles it: nothing else in src/
/// names its module (its `mod` line, and the `pub use` that offers its types to the library's
/// users, aside), so adding one, as differential evolution was, touches that file, one line of
/// src/tuners/mod.rs, its tests and its docs; the registry offers it everywhere else.
#[test]
fn each_population_tuner_is_its_own_file_plus_one_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let folder = root.join("src/tuners");
    // The frames the tuners stand in, and the form every tuner's config is shown by.
    let shared = ["mod", "population", "learning", "schema"];
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut tuners = Vec::new();
    for entry in std::fs::read_dir(&folder).expect("src/tuners") {
        let path = entry.expect("directory entry").path();
        let name = stem(&path);
        if !shared.contains(&name.as_str()) {
            tuners.push((name, path));
        }
    }
    assert!(tuners.iter().any(|(name, _)| name == "de"), "{tuners:?}");
    for (name, own) in &tuners {
        let named_by = [
            format!("tuners::{name}::"),
            format!("super::{name}::"),
            format!("use {name}::"),
            format!("{name}::{{"),
            format!("mod {name};"),
        ];
        let allowed = |file: &Path, line: &str| {
            file == folder.join("mod.rs")
                && (line == format!("pub(crate) mod {name};")
                    || line.starts_with(&format!("pub use {name}::")))
        };
        for file in files.iter().filter(|f| *f != own) {
            let text = std::fs::read_to_string(file).expect("a source file");
            for line in text.lines().map(str::trim) {
                if line.starts_with("//") || allowed(file, line) {
                    continue;
                }
                assert!(
                    !named_by.iter().any(|n| names(line, n)),
                    "{} names the tuner {name}: {line}",
                    file.display()
                );
            }
        }
    }
}
