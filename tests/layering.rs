//! The crate's layering (src/lib.rs): each folder of src/ may use only the folders before it
//! in [`LAYERS`]. Library code never reaches up into `cli` or `server`, and there are no import
//! cycles between folders. Read from the source text, so it also catches paths written out in
//! full (`crate::cli::usage(...)`) and not only `use` lines.

use std::collections::BTreeSet;
use std::path::Path;

/// Bottom to top.
const LAYERS: &[&str] = &[
    "game", "eval", "search", "agents", "matches", "rl", "ga", "store", "server", "cli",
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable src folder") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
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
