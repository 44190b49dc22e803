//! Move generation checked against the shared perft vectors.

mod common;

use kalah_tuner::game::{perft, Position};

#[test]
fn every_shared_position_matches_its_perft_counts() {
    let mut checked = 0;
    for v in common::vectors() {
        for (d, &expected) in v.perft.iter().enumerate() {
            let got = perft(&v.position, d as u32 + 1, v.rules);
            assert_eq!(
                got,
                expected,
                "{}:{} {} ({}) perft({})",
                v.file,
                v.line,
                v.kpn,
                v.rules,
                d + 1
            );
            checked += 1;
        }
    }
    assert!(checked > 500);
}

#[test]
fn start_positions_match_their_perft_counts() {
    let lines = common::start_perfts();
    assert_eq!(lines.len(), 3, "expected three start-position perft lines");
    for (rules, m, n, counts) in lines {
        let start = Position::start(m, n).unwrap();
        // Debug builds keep the deepest levels for the release-mode bench; depth 9 still
        // exercises millions of sowings.
        let max_depth = if cfg!(debug_assertions) {
            9
        } else {
            counts.len()
        };
        for (d, &expected) in counts.iter().enumerate().take(max_depth) {
            assert_eq!(
                perft(&start, d as u32 + 1, rules),
                expected,
                "Kalah({m},{n}) {rules} perft({})",
                d + 1
            );
        }
    }
}
