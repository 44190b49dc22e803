//! The fast evaluation path must give bit-identical results to the per-feature definitions,
//! which are the reference the published weights and the GA's records were made with.

use kalah_tuner::agents::{rng_from_seed, Agent, RandomAgent};
use kalah_tuner::eval::{round_to_i64, Evaluator, Feature, WeightedEval, FEATURE_SETS};
use kalah_tuner::game::{parse_kpn, Position, Rules, Side};
use rand::RngExt;

/// Positions of random games on every board size, plus a few with laps and empty sides.
fn positions() -> Vec<Position> {
    let mut out = Vec::new();
    let mut rng = rng_from_seed(7);
    for m in 1..=12usize {
        for n in [1u32, 2, 4, 6, 10, 30] {
            for _ in 0..4 {
                let mut pos = Position::start(m, n).unwrap();
                while !pos.is_game_over() {
                    out.push(pos);
                    let mv = RandomAgent.choose(&pos, &mut rng).mv;
                    pos.play(mv, Rules::Standard).unwrap();
                }
                out.push(pos);
            }
        }
    }
    for kpn in [
        "30,0,0,0,0,0/0/0,0,0,0,0,1/0/S",
        "0,0,0,0,0,1/0/27,0,0,0,0,0/20/N",
        "13,12,11,10,9,8/3/7,6,5,4,3,2/1/S",
        "0,0,0,0,0,0,0,0,0,0,0,100/0/1,0,0,0,0,0,0,0,0,0,0,0/0/S",
    ] {
        out.push(parse_kpn(kpn).unwrap());
    }
    out
}

fn reference(terms: &[(Feature, f64)], pos: &Position, me: Side, rules: Rules) -> f64 {
    terms
        .iter()
        .filter(|&&(_, w)| w != 0.0)
        .map(|&(f, w)| w * f.value(pos, me, rules))
        .sum()
}

#[test]
fn weighted_eval_matches_the_feature_definitions_bit_for_bit() {
    let positions = positions();
    assert!(positions.len() > 5000, "{}", positions.len());
    let mut rng = rng_from_seed(11);
    let mut term_lists: Vec<Vec<(Feature, f64)>> = FEATURE_SETS
        .iter()
        .flat_map(|set| {
            set.presets.iter().map(|(_, w)| {
                set.features
                    .iter()
                    .copied()
                    .zip(w.iter().copied())
                    .collect()
            })
        })
        .collect();
    for _ in 0..20 {
        let mut features = Feature::ALL.to_vec();
        // A random subset in a random order, with random (sometimes zero) weights.
        for i in (1..features.len()).rev() {
            features.swap(i, rng.random_range(0..=i));
        }
        features.truncate(rng.random_range(1..=Feature::ALL.len()));
        term_lists.push(
            features
                .into_iter()
                .map(|f| {
                    let w = if rng.random_range(0..6) == 0 {
                        0.0
                    } else {
                        rng.random_range(-3.0..3.0)
                    };
                    (f, w)
                })
                .collect(),
        );
    }
    for terms in &term_lists {
        let (features, weights): (Vec<Feature>, Vec<f64>) = terms.iter().copied().unzip();
        for rules in [Rules::Standard, Rules::EmptyCapture] {
            let eval = WeightedEval::new(&features, &weights, rules).unwrap();
            for pos in positions.iter().step_by(3) {
                for me in [Side::South, Side::North] {
                    let want = reference(terms, pos, me, rules);
                    let got = eval.raw(pos, me);
                    assert_eq!(got.to_bits(), want.to_bits(), "{terms:?} {pos} {me}");
                    assert_eq!(eval.evaluate(pos, me), (want * 1e6).round() as i64);
                }
            }
        }
    }
}

#[test]
fn rounding_matches_f64_round() {
    let mut rng = rng_from_seed(3);
    let mut values = vec![
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.49999999999999994,
        -0.49999999999999994,
        4503599627370495.5,
        -4503599627370495.5,
        4503599627370497.0,
        9007199254740993.0,
        9.3e18,
        -9.3e18,
        1e300,
        -1e300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        i64::MAX as f64,
        i64::MIN as f64,
    ];
    for _ in 0..100_000 {
        let scale = 10f64.powi(rng.random_range(0..16));
        values.push(rng.random_range(-1.0..1.0) * scale);
        // Exact halves.
        values.push(rng.random_range(-1_000_000i64..1_000_000) as f64 + 0.5);
    }
    for x in values {
        assert_eq!(round_to_i64(x), x.round() as i64, "{x:e}");
    }
}

#[test]
fn capture_threat_features_on_a_hand_worked_position() {
    // North's move 1 drops its seed into its empty pit 2, taking South's pit 5 (5 seeds, a
    // capture of 6); North's move 3 ends in its empty pit 5, taking South's pit 2 (3 seeds,
    // a capture of 4). South's own moves capture nothing.
    let pos = parse_kpn("0,3,0,0,5,0/0/1,0,2,0,0,0/0/S").unwrap();
    for rules in [Rules::Standard, Rules::EmptyCapture] {
        assert_eq!(Feature::NegOppCapture.value(&pos, Side::South, rules), -6.0);
        assert_eq!(Feature::NegExposed.value(&pos, Side::South, rules), -8.0);
        assert_eq!(Feature::NegExposed.value(&pos, Side::North, rules), 0.0);
    }
    assert_eq!(
        Feature::NegOppCapture.value(&pos, Side::North, Rules::Standard),
        0.0
    );
    // Whoever is to move, the threats are the same: they are read as if the opponent moved.
    let north_to_move = parse_kpn("0,3,0,0,5,0/0/1,0,2,0,0,0/0/N").unwrap();
    assert_eq!(
        Feature::NegExposed.value(&north_to_move, Side::South, Rules::Standard),
        -8.0
    );
}

#[test]
fn ahmed10_counts_on_a_hand_worked_position() {
    // South's pits 0,3,0,0,5,0 and North's 1,0,2,0,0,0.
    let pos = parse_kpn("0,3,0,0,5,0/0/1,0,2,0,0,0/0/S").unwrap();
    let features = kalah_tuner::eval::parse_features("ahmed10").unwrap();
    let values: Vec<f64> = features
        .iter()
        .map(|f| f.value(&pos, Side::South, Rules::Standard))
        .collect();
    assert_eq!(
        values,
        [8.0, 3.0, 4.0, 4.0, 0.0, 1.0, 2.0, 8.0, 1.0, 2.0],
        "H1..H10 for South"
    );
    let north: Vec<f64> = features
        .iter()
        .map(|f| f.value(&pos, Side::North, Rules::Standard))
        .collect();
    assert_eq!(north, [3.0, 8.0, 4.0, 4.0, 1.0, 0.0, 1.0, 2.0, 2.0, 8.0]);
}

/// The board seen from the other chair: the halves exchanged and the other player to move.
/// Every feature is defined for "me", never for a seat, so a player's features (and so any
/// weighted sum and any search) must read the same on both boards.
fn mirror(pos: &Position) -> Position {
    let m = pos.pits();
    let c: Vec<u32> = pos.cells().iter().map(|&s| s as u32).collect();
    Position::new(
        &c[m + 1..2 * m + 1],
        c[2 * m + 1],
        &c[..m],
        c[m],
        pos.side_to_move().opponent(),
    )
    .unwrap()
}

#[test]
fn a_player_is_valued_the_same_from_either_chair_and_across_the_pie_swap() {
    use kalah_tuner::game::SWAP;
    use kalah_tuner::search::AlphaBeta;
    let mut rng = rng_from_seed(37);
    let random_weights = |rng: &mut kalah_tuner::agents::GameRng, n: usize| -> Vec<f64> {
        (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
    };
    let all = Feature::ALL.to_vec();
    let positions = positions();
    for (i, pos) in positions.iter().enumerate().filter(|(i, _)| i % 7 == 0) {
        let mirrored = mirror(pos);
        let me = pos.side_to_move();
        let weights = random_weights(&mut rng, all.len());
        for rules in [Rules::Standard, Rules::EmptyCapture] {
            for &f in &all {
                for side in [Side::South, Side::North] {
                    assert_eq!(
                        f.value(pos, side, rules),
                        f.value(&mirrored, side.opponent(), rules),
                        "{f} for {side} on {pos} and its mirror image {mirrored}"
                    );
                }
            }
            let eval = WeightedEval::new(&all, &weights, rules).unwrap();
            assert_eq!(
                eval.evaluate(pos, me),
                eval.evaluate(&mirrored, me.opponent()),
                "weighted sum on {pos} and {mirrored}"
            );
            if !pos.is_game_over() && i % 3 == 0 && pos.pits() <= 8 {
                let a = AlphaBeta::new(&eval, rules).search_depth(pos, 3);
                let b = AlphaBeta::new(&eval, rules).search_depth(&mirrored, 3);
                assert_eq!(
                    (a.value, &a.best_moves),
                    (b.value, &b.best_moves),
                    "search on {pos} and {mirrored}"
                );
            }
        }
    }

    // The pie rule: once North swaps, North owns the half South sowed, and the first mover,
    // now in North's chair, is to move. Sides name players, so the position after the swap
    // is the mirror image of the board as the seats see it: the swapper is scored on what
    // it took over, never on the chair it started in.
    for (m, n) in [(6, 4), (7, 7), (4, 3)] {
        let start = Position::start(m, n).unwrap().with_pie(true);
        for mv in start.legal_moves().to_vec() {
            let mut offer = start;
            offer.play(mv, Rules::Standard).unwrap();
            assert!(offer.swap_available());
            let mut swapped = offer;
            swapped.play(SWAP, Rules::Standard).unwrap();
            let seats = offer.with_side_to_move(Side::North);
            assert_eq!(
                swapped.cells(),
                mirror(&seats).cells(),
                "swap after move {mv}"
            );
            assert_eq!(swapped.side_to_move(), mirror(&seats).side_to_move());
            let weights = random_weights(&mut rng, all.len());
            let eval = WeightedEval::new(&all, &weights, Rules::Standard).unwrap();
            // The swapper (North) after the swap is South of the seat view before it.
            assert_eq!(
                eval.evaluate(&swapped, Side::North),
                eval.evaluate(&seats, Side::South)
            );
            assert_eq!(
                eval.evaluate(&swapped, Side::South),
                eval.evaluate(&seats, Side::North)
            );
            // The first mover, to move after the swap, searches the same game from either
            // description of it.
            let a = AlphaBeta::new(&eval, Rules::Standard).search_depth(&swapped, 3);
            let b = AlphaBeta::new(&eval, Rules::Standard).search_depth(&seats, 3);
            assert_eq!((a.value, &a.best_moves), (b.value, &b.best_moves));
        }
    }
}

/// The capture features work out each pit's capture without playing it; playing every move
/// is the definition they must match, on random boards of every size whose pits hold from
/// nothing to two laps (a move of exactly one lap lands in its own emptied pit).
#[test]
fn captures_worked_out_without_playing_match_playing_every_move() {
    use kalah_tuner::eval::{best_capture, exposed_seeds};
    let played = |pos: &Position, side: Side, rules: Rules| -> (u32, u32) {
        let view = pos.with_side_to_move(side);
        let mut best = 0;
        let mut taken = [0u32; kalah_tuner::game::MAX_PITS];
        for mv in view.legal_moves().into_iter() {
            let mut child = view;
            let captured = child.play_unchecked(mv, rules).captured as u32;
            best = best.max(captured);
            if captured > 1 {
                let pit = view.opposite(view.landing_cell(side, mv));
                let index = pit - view.first_pit(side.opponent());
                taken[index] = taken[index].max(captured - 1);
            }
        }
        (best, taken.iter().sum())
    };
    let mut rng = rng_from_seed(41);
    let mut positions = positions();
    for m in 1..=12usize {
        let lap = 2 * m as u32 + 1;
        for _ in 0..400 {
            let mut pits = || -> Vec<u32> {
                (0..m)
                    .map(|_| match rng.random_range(0..4) {
                        0 => 0,
                        1 => rng.random_range(1..=3),
                        2 => rng.random_range(lap - 1..=lap + 1),
                        _ => rng.random_range(0..=2 * lap),
                    })
                    .collect()
            };
            let (south, north) = (pits(), pits());
            let side = if rng.random_range(0..2) == 0 {
                Side::South
            } else {
                Side::North
            };
            positions.push(Position::new(&south, 3, &north, 5, side).unwrap());
        }
    }
    let mut captures = 0;
    for pos in &positions {
        for rules in [Rules::Standard, Rules::EmptyCapture] {
            for side in [Side::South, Side::North] {
                let (best, _) = played(pos, side, rules);
                let (_, exposed) = played(pos, side.opponent(), rules);
                captures += (best > 0) as usize;
                assert_eq!(
                    best_capture(pos, side, rules),
                    best,
                    "best capture of {side} on {pos} ({rules})"
                );
                assert_eq!(
                    exposed_seeds(pos, side, rules),
                    exposed,
                    "seeds of {side} exposed on {pos} ({rules})"
                );
            }
        }
    }
    assert!(captures > 1000, "the boards hold captures ({captures})");
}
