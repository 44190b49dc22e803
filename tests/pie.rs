//! The pie rule (shared/DESIGN.md section 9) against an independent implementation:
//! tests/pie/vectors.tsv is written by tests/pie/reference.py, a pure-Python engine that keeps
//! the board by seat (a swap leaves the board alone) where the engine relabels it, and the
//! shared vectors in tests/data/pie.tsv come from a third one.

mod common;

use std::path::Path;

use kalah_tuner::game::{parse_kpn, perft, to_kpn, Pie, Position, Rules, Side, SWAP};
use kalah_tuner::search::Solver;

struct PieVector {
    line: usize,
    rules: Rules,
    setup: String,
    start: Position,
    perft: Vec<u64>,
    value: Option<i32>,
}

fn parse_setup(setup: &str) -> Position {
    if setup.contains('/') {
        parse_kpn(setup).unwrap_or_else(|e| panic!("{setup}: {e}"))
    } else {
        let (m, n) = setup.split_once(',').expect("m,n");
        Position::start(m.parse().unwrap(), n.parse().unwrap())
            .unwrap()
            .with_pie(true)
    }
}

/// Reads a file of `rules <TAB> setup <TAB> perft counts or - <TAB> value or -` lines.
fn read(path: &Path) -> Vec<PieVector> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 4, "{path:?}:{}: four fields", i + 1);
            PieVector {
                line: i + 1,
                rules: f[0].parse().unwrap(),
                setup: f[1].to_string(),
                start: parse_setup(f[1]),
                perft: if f[2] == "-" {
                    Vec::new()
                } else {
                    f[2].split(',').map(|c| c.parse().unwrap()).collect()
                },
                value: (f[3] != "-").then(|| f[3].parse().unwrap()),
            }
        })
        .collect()
}

fn check(vectors: &[PieVector], file: &str) -> (usize, usize) {
    let (mut counts, mut values) = (0, 0);
    for v in vectors {
        // Debug builds stop short of the deepest counts, which are for release runs.
        let limit = if cfg!(debug_assertions) { 6 } else { 99 };
        for (d, &expected) in v.perft.iter().enumerate().take(limit) {
            assert_eq!(
                perft(&v.start, d as u32 + 1, v.rules),
                expected,
                "{file}:{} {} ({}) perft({})",
                v.line,
                v.setup,
                v.rules,
                d + 1
            );
            counts += 1;
        }
        if let Some(expected) = v.value {
            let mut solver = Solver::with_default_table(v.rules);
            let (value, _) = solver.solve(&v.start);
            assert_eq!(
                value, expected,
                "{file}:{} {} ({})",
                v.line, v.setup, v.rules
            );
            // The best moves keep the value, and each move's own value is at most it.
            let (again, best) = solver.best_moves(&v.start);
            assert_eq!(again, expected);
            let by_move = solver.solve_moves(&v.start);
            let top = by_move.iter().map(|&(_, x)| x).max().unwrap();
            assert_eq!(top, expected, "{file}:{} {:?}", v.line, by_move);
            for mv in best {
                assert!(by_move.contains(&(mv, expected)), "{file}:{} {mv}", v.line);
            }
            values += 1;
        }
    }
    (counts, values)
}

#[test]
fn pie_vectors_of_the_independent_reference_match() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pie/vectors.tsv");
    let vectors = read(&path);
    let (counts, values) = check(&vectors, "tests/pie/vectors.tsv");
    assert!(counts >= 50, "{counts} perft counts");
    assert!(values >= 14, "{values} exact values");
    // Kalah(7,7) with the pie rule is there, both capture rules.
    for rules in [Rules::Standard, Rules::EmptyCapture] {
        assert!(vectors
            .iter()
            .any(|v| v.setup == "7,7" && v.rules == rules && v.perft.len() >= 8));
    }
}

#[test]
fn shared_pie_vectors_match() {
    let path = common::testdata_dir().join("pie.tsv");
    let (counts, values) = check(&read(&path), "pie.tsv");
    assert!(
        counts >= 32 && values >= 10,
        "{counts} counts, {values} values"
    );
}

#[test]
fn the_first_move_earns_no_extra_turn_and_offers_the_swap() {
    let start = Position::start(7, 7).unwrap().with_pie(true);
    assert_eq!(start.pie(), Pie::Opening);
    assert_eq!(to_kpn(&start), "7,7,7,7,7,7,7/0/7,7,7,7,7,7,7/0/S");
    let mut pos = start;
    // Move 1 of Kalah(7,7) ends in the store: without the pie rule South would move again.
    let outcome = pos.play(1, Rules::Standard).unwrap();
    assert!(!outcome.extra_turn);
    assert_eq!(pos.side_to_move(), Side::North);
    assert!(pos.swap_available());
    assert_eq!(to_kpn(&pos), "0,8,8,8,8,8,8/1/7,7,7,7,7,7,7/0/N/P");
    assert_eq!(parse_kpn(&to_kpn(&pos)).unwrap(), pos);
    assert!(pos.legal_moves().contains(SWAP));
    assert_eq!(pos.legal_moves().len(), 8);

    // The swap: the first mover takes North's seat and moves next, so with sides naming
    // players the halves trade places and South is to move.
    let mut swapped = pos;
    let outcome = swapped.play(SWAP, Rules::Standard).unwrap();
    assert!(!outcome.extra_turn && !outcome.game_over);
    assert_eq!(to_kpn(&swapped), "7,7,7,7,7,7,7/0/0,8,8,8,8,8,8/1/S");
    assert!(!swapped.swap_available());
    assert!(swapped.play(SWAP, Rules::Standard).is_err());

    // Without the swap the game goes on as usual and the offer is gone.
    let mut kept = pos;
    kept.play(1, Rules::Standard).unwrap();
    assert_eq!(kept.pie(), Pie::Off);
    assert!(!kept.legal_moves().contains(SWAP));

    // Without the pie rule the same first move earns its extra turn.
    let mut plain = Position::start(7, 7).unwrap();
    assert!(plain.play(1, Rules::Standard).unwrap().extra_turn);
    assert!(!plain.legal_moves().contains(SWAP));
}

#[test]
fn kpn_p_field_is_checked() {
    for bad in [
        // South to move.
        "0,8,8,8,8,8,8/1/7,7,7,7,7,7,7/0/S/P",
        // Not what any first move leaves.
        "1,8,8,8,8,8,7/1/7,7,7,7,7,7,7/0/N/P",
        "4,4,4,4,4,4/0/4,4,4,4,4,4/0/N/P",
        // Not P.
        "0,8,8,8,8,8,8/1/7,7,7,7,7,7,7/0/N/X",
        "0,8,8,8,8,8,8/1/7,7,7,7,7,7,7/0/N/P/P",
    ] {
        let e = parse_kpn(bad).expect_err(bad).to_string();
        assert!(e.contains("invalid KPN"), "{bad}: {e}");
    }
    let ok = parse_kpn("4,4,4,4,0,5/1/5,5,4,4,4,4/0/N/P").unwrap();
    assert!(ok.swap_available());
    // A mid-game position is past the pie rule's plies: with_pie leaves it alone.
    let mid = parse_kpn("4,4,4,4,0,5/1/5,5,4,4,4,4/0/N").unwrap();
    assert_eq!(mid.with_pie(true).pie(), Pie::Off);
}

#[test]
fn with_the_pie_rule_the_first_mover_never_wins() {
    // The second player swaps whenever the first move favours the mover.
    for (m, n) in [(2, 2), (3, 2), (3, 3), (4, 2)] {
        let start = Position::start(m, n).unwrap().with_pie(true);
        let (value, _) = Solver::with_default_table(Rules::Standard).solve(&start);
        assert!(value <= 0, "Kalah({m},{n}): {value}");
    }
}

/// Searches whose root is one of the pie rule's two special plies score their leaves
/// antisymmetrically (`search::zero_sum`), so that what the swap gives one player it takes
/// from the other. With own-side features (side seeds, mobility) a plain weighted sum let
/// both players value one position well for themselves: a tuned player valued its first
/// move +15.73 and, offered the swap after it, swapping at +15.73 too (issue 37).
#[test]
fn the_pie_plies_are_searched_as_a_zero_sum_game() {
    use kalah_tuner::agents::rng_from_seed;
    use kalah_tuner::eval::{Evaluator, Feature, StoreDiff, WeightedEval};
    use kalah_tuner::search::{minimax_plain, zero_sum, AlphaBeta, KeptTable};
    use rand::RngExt;

    let mut rng = rng_from_seed(3737);
    let all = Feature::ALL.to_vec();
    for (m, n, depth) in [(7, 7, 3), (6, 4, 4), (4, 3, 5)] {
        let start = Position::start(m, n).unwrap().with_pie(true);
        for _ in 0..3 {
            let weights: Vec<f64> = (0..all.len())
                .map(|_| rng.random_range(-1.0..1.0))
                .collect();
            let eval = WeightedEval::new(&all, &weights, Rules::Standard).unwrap();
            let first = AlphaBeta::new(&eval, Rules::Standard).search_depth(&start, depth);
            let plain = minimax_plain(&start, depth, &eval, Rules::Standard);
            let best = plain.iter().map(|&(_, v)| v).max().unwrap();
            assert_eq!(
                first.value, best,
                "{m}x{n}: alpha-beta agrees with plain minimax"
            );
            for &(mv, value) in &plain {
                // The first move never earns an extra turn: the offer is one turn down.
                let mut offer = start;
                offer.play(mv, Rules::Standard).unwrap();
                let reply = AlphaBeta::new(&eval, Rules::Standard).search_depth(&offer, depth - 1);
                assert_eq!(
                    value, -reply.value,
                    "{m}x{n} move {mv}: the first mover's value is the swap-offered player's, negated"
                );
                let plain_reply = minimax_plain(&offer, depth - 1, &eval, Rules::Standard);
                assert_eq!(
                    reply.value,
                    plain_reply.iter().map(|&(_, v)| v).max().unwrap()
                );
                // Swapping is valued for the swapper: the first mover's leaf scores, negated.
                let mut swapped = offer;
                swapped.play(SWAP, Rules::Standard).unwrap();
                let leaf = zero_sum(&eval, &swapped, Side::North);
                assert_eq!(leaf, -zero_sum(&eval, &swapped, Side::South));
            }
            // A table kept through the pie plies and into the game changes no result.
            let mut kept = KeptTable::default();
            let mut pos = start;
            for ply in 0..4 {
                let mut fresh = AlphaBeta::new(&eval, Rules::Standard);
                let want = fresh.search_depth(&pos, depth);
                let got = AlphaBeta::new(&eval, Rules::Standard)
                    .search_depth_keeping(&pos, depth, &mut kept);
                assert_eq!(
                    (got.value, &got.best_moves),
                    (want.value, &want.best_moves),
                    "{m}x{n} ply {ply}"
                );
                pos.play(want.best_moves[0], Rules::Standard).unwrap();
                if pos.is_game_over() {
                    break;
                }
            }
        }
        // An evaluator that is already antisymmetric is left exactly as it was.
        for mv in start.legal_moves() {
            let mut offer = start;
            offer.play(mv, Rules::Standard).unwrap();
            for side in [Side::South, Side::North] {
                assert_eq!(
                    zero_sum(&StoreDiff, &offer, side),
                    StoreDiff.evaluate(&offer, side)
                );
            }
        }
    }
}
