//! Property tests of the rules and the notation.

use kalah_tuner::game::{parse_kpn, to_kpn, Position, Rules, Side};
use proptest::prelude::*;

/// A random position reached by random legal play from the start of a random board.
fn arb_game() -> impl Strategy<Value = (Position, Rules, Vec<usize>)> {
    (
        1usize..=12,
        1u32..=8,
        any::<bool>(),
        prop::collection::vec(0usize..12, 0..200),
    )
        .prop_map(|(m, n, empty_capture, choices)| {
            let rules = if empty_capture {
                Rules::EmptyCapture
            } else {
                Rules::Standard
            };
            (Position::start(m, n).unwrap(), rules, choices)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn seeds_are_conserved_and_games_end_exactly_when_a_side_is_empty(
        (start, rules, choices) in arb_game()
    ) {
        let total = start.total_seeds();
        let mut pos = start;
        for c in choices {
            if pos.is_game_over() {
                break;
            }
            let legal = pos.legal_moves().to_vec();
            let mv = legal[c % legal.len()];
            let mover = pos.side_to_move();
            let before = pos;
            let outcome = pos.play(mv, rules).unwrap();
            prop_assert_eq!(pos.total_seeds(), total, "seeds not conserved after {} in {}", mv, before);
            // Stores never lose seeds.
            prop_assert!(pos.store(Side::South) >= before.store(Side::South));
            prop_assert!(pos.store(Side::North) >= before.store(Side::North));
            let side_empty = before.pits() > 0
                && {
                    let mut t = before;
                    t.play_unchecked(mv, rules);
                    t.seeds_in_pits() == 0
                };
            prop_assert_eq!(outcome.game_over, pos.is_game_over());
            if outcome.game_over {
                // The sweep leaves every pit empty.
                prop_assert_eq!(pos.seeds_in_pits(), 0);
                prop_assert!(side_empty);
                prop_assert!(pos.legal_moves().is_empty());
            } else {
                prop_assert!(pos.seeds_on_side(Side::South) > 0 && pos.seeds_on_side(Side::North) > 0);
                // The same side moves again exactly on an extra turn.
                prop_assert_eq!(pos.side_to_move() == mover, outcome.extra_turn);
                prop_assert!(!pos.legal_moves().is_empty());
            }
            prop_assert_eq!(parse_kpn(&to_kpn(&pos)).unwrap(), pos);
        }
    }

    #[test]
    fn kpn_round_trips(
        south in prop::collection::vec(0u32..40, 1..=12),
        north_seed in prop::collection::vec(0u32..40, 12),
        stores in (0u32..100, 0u32..100),
        north_to_move in any::<bool>(),
    ) {
        let north = &north_seed[..south.len()];
        let side = if north_to_move { Side::North } else { Side::South };
        let pos = Position::new(&south, stores.0, north, stores.1, side).unwrap();
        let text = to_kpn(&pos);
        prop_assert_eq!(parse_kpn(&text).unwrap(), pos);
        prop_assert_eq!(to_kpn(&parse_kpn(&text).unwrap()), text);
    }

    #[test]
    fn parsing_arbitrary_text_never_panics(text in "\\PC{0,60}") {
        let _ = parse_kpn(&text);
    }

    #[test]
    fn parsing_near_miss_kpn_never_panics(text in "[0-9,/SNx-]{0,40}") {
        if let Ok(pos) = parse_kpn(&text) {
            // Whatever parses formats back to an equivalent position.
            prop_assert_eq!(parse_kpn(&to_kpn(&pos)).unwrap(), pos);
        }
    }
}

#[test]
fn kpn_errors_say_what_is_wrong() {
    let cases = [
        ("", "expected 5 fields"),
        ("4,4,4/0/4,4,4/0", "expected 5 fields"),
        ("4,4,4/0/4,4/0/S", "South has 3 pits but North has 2"),
        (
            "4,x,4/0/4,4,4/0/S",
            "South pits, pit 2 must be a non-negative whole number",
        ),
        (
            "4,4,4/-1/4,4,4/0/S",
            "South store must be a non-negative whole number",
        ),
        ("4,4,4/0/4,4,4/0/W", "side to move must be S or N"),
        ("4,,4/0/4,4,4/0/S", "pit 2"),
        ("/0//0/S", "South pits are empty"),
        (
            "1,1,1,1,1,1,1,1,1,1,1,1,1/0/1,1,1,1,1,1,1,1,1,1,1,1,1/0/S",
            "at most 12",
        ),
        ("4,4/0/4,4/99999999999/S", "North store"),
        ("900,900/0/4,4/0/S", "at most 1536"),
    ];
    for (text, expected) in cases {
        let err = parse_kpn(text).expect_err(text).to_string();
        assert!(
            err.contains(expected),
            "{text:?}: {err:?} should mention {expected:?}"
        );
    }
}

#[test]
fn start_and_kpn_agree() {
    let start = Position::start(6, 4).unwrap();
    assert_eq!(to_kpn(&start), "4,4,4,4,4,4/0/4,4,4,4,4,4/0/S");
    assert_eq!(parse_kpn("4,4,4,4,4,4/0/4,4,4,4,4,4/0/S").unwrap(), start);
    assert!(Position::start(0, 4).is_err());
    assert!(Position::start(13, 4).is_err());
    assert!(Position::start(6, 0).is_err());
    assert!(Position::start(12, 65).is_err());
    assert!(Position::start(12, 64).is_ok());
}

#[test]
fn rules_of_design_section_one() {
    let std = Rules::Standard;
    // Extra turn: South's move 3 from the start sows 4 seeds ending in its store.
    let mut pos = Position::start(6, 4).unwrap();
    let out = pos.play(3, std).unwrap();
    assert!(out.extra_turn);
    assert_eq!(to_kpn(&pos), "4,4,0,5,5,5/1/4,4,4,4,4,4/0/S");

    // Capture: the last seed lands in an empty own pit facing seeds.
    let mut pos = parse_kpn("1,0,0,0,0,2/0/3,3,3,3,3,3/0/S").unwrap();
    let out = pos.play(1, std).unwrap();
    assert_eq!(out.captured, 4);
    assert_eq!(to_kpn(&pos), "0,0,0,0,0,2/4/3,3,3,3,0,3/0/N");

    // Facing an empty pit: no capture under standard rules, a capture of one under
    // empty-capture.
    let before = parse_kpn("1,0,0,0,0,2/0/3,3,3,3,0,3/0/S").unwrap();
    let mut pos = before;
    assert_eq!(pos.play(1, std).unwrap().captured, 0);
    assert_eq!(to_kpn(&pos), "0,1,0,0,0,2/0/3,3,3,3,0,3/0/N");
    let mut pos = before;
    assert_eq!(pos.play(1, Rules::EmptyCapture).unwrap().captured, 1);
    assert_eq!(to_kpn(&pos), "0,0,0,0,0,2/1/3,3,3,3,0,3/0/N");

    // A full lap (2m + 1 = 13 seeds) ends in the emptied starting pit and captures.
    let mut pos = parse_kpn("13,0,0,0,0,0/0/1,1,1,1,1,1/0/S").unwrap();
    let out = pos.play(1, std).unwrap();
    assert_eq!(out.captured, 3, "the lap seed plus the two facing it");
    assert_eq!(pos.total_seeds(), 19);

    // North skips South's store and sows into its own.
    let mut pos = parse_kpn("1,1,1,1,1,1/0/0,0,0,0,0,9/0/N").unwrap();
    pos.play(6, std).unwrap();
    assert_eq!(pos.store(Side::South), 0);

    // The game ends after a move that empties a side; the other side keeps its pits.
    let mut pos = parse_kpn("0,0,0,0,0,1/10/2,2,0,0,0,0/5/S").unwrap();
    let out = pos.play(6, std).unwrap();
    assert!(out.game_over && out.extra_turn);
    assert_eq!(pos.final_stores(), (11, 9));

    // Illegal moves are errors, not panics.
    let mut pos = Position::start(6, 4).unwrap();
    assert!(pos.play(0, std).is_err());
    assert!(pos.play(7, std).is_err());
    let mut pos = parse_kpn("0,4,4,4,4,4/0/4,4,4,4,4,4/0/S").unwrap();
    assert!(pos.play(1, std).is_err());
}

#[test]
fn huge_pits_sow_in_whole_laps() {
    // 1536 seeds in one pit of Kalah(12, _): many laps, still conserved and fast.
    let mut south = vec![0u32; 12];
    south[0] = 1500;
    let north = vec![1u32; 12];
    let mut pos = Position::new(&south, 0, &north, 0, Side::South).unwrap();
    let total = pos.total_seeds();
    pos.play(1, Rules::Standard).unwrap();
    assert_eq!(pos.total_seeds(), total);
    assert_eq!(pos.store(Side::North), 0);
}
