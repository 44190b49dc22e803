//! Reads the test vectors: the repository's copy in tests/data (of ../shared/testdata, kept
//! equal to it by tests/testdata_copy.rs), or the folder named by KALAH_TESTDATA. A missing
//! folder fails the tests: the vectors are not optional.
#![allow(dead_code)]

use std::path::PathBuf;

use kalah_tuner::game::{parse_kpn, Position, Rules};

pub fn testdata_dir() -> PathBuf {
    match std::env::var_os("KALAH_TESTDATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
    }
}

pub struct Vector {
    pub file: String,
    pub line: usize,
    pub rules: Rules,
    pub kpn: String,
    pub position: Position,
    pub perft: Vec<u64>,
    pub value: Option<i32>,
}

pub fn vectors() -> Vec<Vector> {
    let mut out = Vec::new();
    for file in ["positions-standard.tsv", "positions-empty-capture.tsv"] {
        let path = testdata_dir().join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read test vectors {}: {e}", path.display()));
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), 4, "{file}:{}: expected 4 columns", i + 1);
            let rules: Rules = cols[0].parse().expect("rules column");
            let position = parse_kpn(cols[1]).expect("KPN column");
            let perft = cols[2]
                .split(',')
                .map(|s| s.parse().expect("perft count"))
                .collect();
            let value = match cols[3] {
                "-" => None,
                v => Some(v.parse().expect("exact value")),
            };
            out.push(Vector {
                file: file.to_string(),
                line: i + 1,
                rules,
                kpn: cols[1].to_string(),
                position,
                perft,
                value,
            });
        }
    }
    assert!(
        out.len() >= 100,
        "expected the shared vectors, found {}",
        out.len()
    );
    out
}

/// A table of the README: rows `| m | v1 | v2 | ... |` after a header naming columns n.
pub struct StartTable {
    pub rules: Rules,
    pub entries: Vec<(usize, u32, i32)>,
}

/// Parses the README's start-position tables and perft lines so the tests use them as written.
pub fn readme() -> String {
    let path = testdata_dir().join("README.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

pub fn start_tables() -> Vec<StartTable> {
    let text = readme();
    let mut tables = Vec::new();
    let mut current: Option<StartTable> = None;
    let mut columns: Vec<u32> = Vec::new();
    for line in text.lines() {
        if line.starts_with("Exact values of the start position") {
            if let Some(t) = current.take() {
                tables.push(t);
            }
            let rules = if line.contains("empty-capture") {
                Rules::EmptyCapture
            } else {
                Rules::Standard
            };
            current = Some(StartTable {
                rules,
                entries: Vec::new(),
            });
            columns.clear();
            continue;
        }
        let Some(table) = current.as_mut() else {
            continue;
        };
        if line.starts_with("| m") {
            columns = line
                .split('|')
                .skip(2)
                .filter_map(|c| c.trim().parse().ok())
                .collect();
        } else if line.starts_with("|---") {
            continue;
        } else if line.starts_with('|') {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let m: usize = cells[1].parse().expect("row m");
            for (k, &n) in columns.iter().enumerate() {
                let v: i32 = cells[2 + k].parse().expect("table value");
                table.entries.push((m, n, v));
            }
        } else if !line.trim().is_empty() && !table.entries.is_empty() {
            tables.push(current.take().unwrap());
        }
    }
    if let Some(t) = current.take() {
        tables.push(t);
    }
    tables
}

/// The start-position perft lines of the README: (rules, m, n, counts).
pub fn start_perfts() -> Vec<(Rules, usize, u32, Vec<u64>)> {
    let text = readme();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(rest) = line.strip_prefix("Kalah(") {
            // "Kalah(m,n), <rules> ..., depths 1..D:" followed by a line of counts.
            if !line.trim_end().ends_with(':') {
                continue;
            }
            let (board, tail) = rest.split_once(')').expect("Kalah(m,n)");
            let (m, n) = board.split_once(',').expect("m,n");
            let rules = if tail.contains("empty-capture") {
                Rules::EmptyCapture
            } else {
                Rules::Standard
            };
            let counts = lines[i + 1]
                .split(',')
                .map(|s| s.trim().parse().expect("perft count"))
                .collect();
            out.push((rules, m.parse().unwrap(), n.parse().unwrap(), counts));
        }
    }
    out
}
