//! Every agent against one suite of positions, search against plain minimax, and the perfect
//! agent against the exact values.

mod common;

use kalah_tuner::agents::{
    rng_from_seed, spec::parse_spec_list, Agent, AgentSpec, MoveValue, RandomAgent,
};
use kalah_tuner::eval::{feature_set, Feature, StoreDiff, WeightedEval};
use kalah_tuner::game::{parse_kpn, Position, Rules};
use kalah_tuner::search::{minimax_plain, AlphaBeta, Solver};

/// The shared positions plus positions of random games on every board size, including laps
/// and near-empty sides.
fn suite() -> Vec<(Position, Rules)> {
    let mut out: Vec<(Position, Rules)> = common::vectors()
        .into_iter()
        .map(|v| (v.position, v.rules))
        .collect();
    let mut rng = rng_from_seed(99);
    for m in 1..=12usize {
        for n in [1u32, 3, 6] {
            for rules in [Rules::Standard, Rules::EmptyCapture] {
                let mut pos = Position::start(m, n).unwrap();
                let mut ply = 0;
                while !pos.is_game_over() {
                    if ply % 7 == 3 {
                        out.push((pos, rules));
                    }
                    let mv = RandomAgent.choose(&pos, &mut rng).mv;
                    pos.play(mv, rules).unwrap();
                    ply += 1;
                }
            }
        }
    }
    for kpn in [
        "30,0,0,0,0,0/0/0,0,0,0,0,1/0/S",
        "0,0,0,0,0,1/0/27,0,0,0,0,0/20/N",
        "1/0/1/0/S",
        "0,0,0,0,0,0,0,0,0,0,0,100/0/1,0,0,0,0,0,0,0,0,0,0,0/0/S",
    ] {
        out.push((parse_kpn(kpn).unwrap(), Rules::Standard));
    }
    out.retain(|(p, _)| !p.is_game_over());
    out
}

const EVERY_KIND: &[&str] = &[
    "random",
    "greedy",
    "minimax:3",
    "heuristic:hunter10:published:2",
    "heuristic:abrams3:published2:2",
    "heuristic:divilly6:2",
    "heuristic:capturable_diff+store_diff:0.5,1:2",
    r#"{"kind":"heuristic","features":"abrams3","weights":[0.6,0.5,0.4],"depth":2,"time_ms":5}"#,
    r#"{"kind":"minimax","depth":6,"time_ms":2,"ties":"first"}"#,
    "pekar",
    "pekar-minimax:2",
    r#"{"kind":"perfect","max_seeds":14,"fallback_depth":2}"#,
    "mcts:200",
    "a3c",
    r#"{"kind":"a3c","sample":true}"#,
    r#"{"kind":"mcts","iterations":100,"c":1.5,"epsilon":1.0,"reuse":true,"ties":"first"}"#,
    r#"{"kind":"mcts","iterations":50,"epsilon":0.0,"time_ms":1}"#,
];

#[test]
fn every_agent_plays_a_legal_move_in_every_suite_position() {
    let suite = suite();
    assert!(suite.len() > 300, "suite has {} positions", suite.len());
    for text in EVERY_KIND {
        let spec = AgentSpec::parse(text).unwrap();
        for (i, (pos, rules)) in suite.iter().enumerate() {
            let mut agent = spec.build(*rules).unwrap();
            let decision = agent.choose(pos, &mut rng_from_seed(i as u64));
            assert!(
                pos.is_legal(decision.mv),
                "{text} chose illegal move {} in {pos}",
                decision.mv
            );
        }
    }
}

#[test]
fn search_agents_count_nodes_and_are_deterministic_for_a_seed() {
    let pos = Position::start(6, 4).unwrap();
    for text in [
        "minimax:4",
        "heuristic:hunter10:published:3",
        "pekar-minimax:3",
        "perfect:12",
        "mcts:1000",
        r#"{"kind":"mcts","iterations":300,"reuse":true}"#,
    ] {
        let spec = AgentSpec::parse(text).unwrap();
        let a = spec
            .build(Rules::Standard)
            .unwrap()
            .choose(&pos, &mut rng_from_seed(5));
        let b = spec
            .build(Rules::Standard)
            .unwrap()
            .choose(&pos, &mut rng_from_seed(5));
        assert_eq!(a, b, "{text}");
        assert!(a.nodes > 1, "{text} reported {} nodes", a.nodes);
    }
}

#[test]
fn ties_break_by_the_seed_or_by_the_first_move() {
    // From the start, minimax depth 6 finds two equally good moves (3 and 6).
    let pos = Position::start(6, 4).unwrap();
    let result = AlphaBeta::new(&StoreDiff, Rules::Standard).search_depth(&pos, 6);
    assert!(result.best_moves.len() >= 2, "{:?}", result.best_moves);
    let random = AgentSpec::parse("minimax:6").unwrap();
    let chosen: std::collections::BTreeSet<usize> = (0..40)
        .map(|s| {
            random
                .build(Rules::Standard)
                .unwrap()
                .choose(&pos, &mut rng_from_seed(s))
                .mv
        })
        .collect();
    assert_eq!(
        chosen.iter().copied().collect::<Vec<_>>(),
        result.best_moves
    );
    let first = AgentSpec::parse(r#"{"kind":"minimax","depth":6,"ties":"first"}"#).unwrap();
    for s in 0..10 {
        let mv = first
            .build(Rules::Standard)
            .unwrap()
            .choose(&pos, &mut rng_from_seed(s))
            .mv;
        assert_eq!(mv, result.best_moves[0]);
    }
}

#[test]
fn alpha_beta_equals_plain_minimax_on_random_positions() {
    let hunter = feature_set("hunter10").unwrap();
    let weighted =
        WeightedEval::new(hunter.features, hunter.presets[0].1, Rules::Standard).unwrap();
    let capt = WeightedEval::new(
        &[
            Feature::CapturableDiff,
            Feature::OverflowDiff,
            Feature::StoreDiff,
        ],
        &[0.3, 0.2, 1.0],
        Rules::EmptyCapture,
    )
    .unwrap();
    let mut checked = 0;
    for (i, (pos, rules)) in suite().iter().enumerate().step_by(3) {
        let depth = 1 + (i % 4) as u32;
        let plain = minimax_plain(pos, depth, &StoreDiff, *rules);
        let best = plain.iter().map(|&(_, v)| v).max().unwrap();
        let best_moves: Vec<usize> = plain
            .iter()
            .filter(|&&(_, v)| v == best)
            .map(|&(m, _)| m)
            .collect();
        let ab = AlphaBeta::new(&StoreDiff, *rules).search_depth(pos, depth);
        assert_eq!(
            (ab.value, &ab.best_moves),
            (best, &best_moves),
            "minimax {pos} depth {depth}"
        );

        let eval: &WeightedEval = if i % 2 == 0 { &weighted } else { &capt };
        let plain = minimax_plain(pos, depth.min(3), eval, *rules);
        let best = plain.iter().map(|&(_, v)| v).max().unwrap();
        let best_moves: Vec<usize> = plain
            .iter()
            .filter(|&&(_, v)| v == best)
            .map(|&(m, _)| m)
            .collect();
        let ab = AlphaBeta::new(eval, *rules).search_depth(pos, depth.min(3));
        assert_eq!(
            (ab.value, &ab.best_moves),
            (best, &best_moves),
            "heuristic {pos} depth {}",
            depth.min(3)
        );
        checked += 1;
    }
    assert!(checked > 100);
}

#[test]
fn perfect_agent_keeps_the_exact_value_of_every_shared_position() {
    let mut checked = 0;
    for v in common::vectors() {
        let Some(expected) = v.value else { continue };
        if v.position.is_game_over() {
            continue;
        }
        let mut agent = AgentSpec::parse("perfect:32")
            .unwrap()
            .build(v.rules)
            .unwrap();
        let decision = agent.choose(&v.position, &mut rng_from_seed(1));
        // The chosen move must keep the value: solve the position after it.
        let mut child = v.position;
        child.play(decision.mv, v.rules).unwrap();
        let (after, _) = Solver::with_default_table(v.rules).solve(&child);
        let mine = if child.side_to_move() == v.position.side_to_move() {
            after
        } else {
            -after
        };
        assert_eq!(
            mine, expected,
            "{}:{} {} move {}",
            v.file, v.line, v.kpn, decision.mv
        );
        assert_eq!(decision.value, Some(MoveValue::ExactMargin(expected)));
        checked += 1;
    }
    assert!(checked >= 20);
}

#[test]
fn greedy_takes_the_biggest_haul_with_chained_extra_turns() {
    // Move 6 (1 seed) ends in the store; then move 5 (2 seeds) and move 6 again do too; then
    // move 1 captures the 5 seeds facing pit 2: 1 + 1 + 1 + 6 = 9. Capturing at once (move 1)
    // gives only 6.
    let pos = parse_kpn("1,0,0,0,2,1/0/0,0,0,0,5,1/0/S").unwrap();
    let mut agent = AgentSpec::parse("greedy")
        .unwrap()
        .build(Rules::Standard)
        .unwrap();
    let d = agent.choose(&pos, &mut rng_from_seed(0));
    assert_eq!(d.value, Some(MoveValue::SeedsThisTurn(9)));
    assert_eq!(d.mv, 6);
}

#[test]
fn pekar_follows_its_rule_list() {
    let rules = Rules::Standard;
    let pekar = AgentSpec::parse(r#"{"kind":"pekar","ties":"first"}"#).unwrap();
    let choose = |kpn: &str| {
        pekar
            .build(rules)
            .unwrap()
            .choose(&parse_kpn(kpn).unwrap(), &mut rng_from_seed(0))
            .mv
    };
    // LastSeedToKalaha: the nearest pit that ends in the store (move 6 with 1 seed).
    assert_eq!(choose("4,4,4,4,2,1/0/4,4,4,4,4,4/0/S"), 6);
    // LastSeedToTarget: move 1 (1 seed) lands in empty pit 2, facing 7 seeds.
    assert_eq!(choose("1,0,5,5,5,5/0/3,3,3,3,7,3/0/S"), 1);
    // ... including the lap case: 13 seeds come back to their own emptied pit.
    assert_eq!(choose("13,7,7,7,7,7/0/3,3,3,3,3,9/0/S"), 1);
    // OpponentSeedToStash: North's move 1 (1 seed) would land in its empty pit 2 and take
    // South's pit 5 (9 seeds): South sows pit 5.
    assert_eq!(choose("2,2,2,9,9,9/0/1,0,3,3,3,3/0/S"), 5);
    // FirstNonEmptyPit: nothing else applies; the non-empty pit nearest the store.
    assert_eq!(choose("0,0,0,4,0,2/0/2,2,2,2,2,2/0/S"), 6);
}

#[test]
fn pekar_minimax_prefers_safe_moves_and_plays_full_games() {
    let spec = AgentSpec::parse("pekar-minimax:4").unwrap();
    let pos = Position::start(6, 4).unwrap();
    let d = spec
        .build(Rules::Standard)
        .unwrap()
        .choose(&pos, &mut rng_from_seed(0));
    // From the start, move 3 ends in the store: LastSeedToKalaha makes it without branching.
    assert_eq!(d.mv, 3);
}

#[test]
fn specs_parse_from_strings_and_json_and_name_the_bad_field() {
    let s = AgentSpec::parse("heuristic:hunter10:published:4").unwrap();
    assert_eq!(s.to_string(), "heuristic:hunter10:published:4");
    let json = serde_json::to_string(&s).unwrap();
    assert_eq!(AgentSpec::parse(&json).unwrap(), s);
    assert_eq!(
        AgentSpec::parse("heuristic:hunter10:6")
            .unwrap()
            .to_string(),
        "heuristic:hunter10:published:6"
    );
    assert_eq!(
        AgentSpec::parse("minimax").unwrap().to_string(),
        "minimax:4"
    );

    let list = parse_spec_list("heuristic:abrams3:0.5,0.4,0.3:7,minimax:4,random").unwrap();
    assert_eq!(list.len(), 3);
    assert_eq!(list[0].to_string(), "heuristic:abrams3:0.5,0.4,0.3:7");
    let list = parse_spec_list(r#"["random", {"kind":"minimax","depth":2}]"#).unwrap();
    assert_eq!(list[1].to_string(), "minimax:2");

    for (text, field) in [
        ("alphazero", "kind"),
        ("minimax:x", "depth"),
        ("minimax:0", "depth"),
        ("minimax:99", "depth"),
        ("heuristic:nosuchset", "features"),
        ("heuristic:hunter10:nosuch", "weights"),
        ("heuristic:abrams3:1,2", "weights"),
        ("heuristic:store_diff+side_diff:published", "weights"),
        ("heuristic:abrams3:1,2,1e9", "weights"),
        (r#"{"kind":"minimax","depth":"deep"}"#, "json"),
        (r#"{"kind":"minimax","dpeth":3}"#, "json"),
        (r#"{"kind":"minimax","depth":3,"time_ms":0}"#, "time_ms"),
        ("random:3", "spec"),
        ("mcts:0", "iterations"),
        ("mcts:many", "iterations"),
        ("mcts:100:x", "c"),
        ("mcts:100:0.7:1.5", "epsilon"),
        (r#"{"kind":"mcts","c":-1}"#, "c"),
        ("", "json"),
    ] {
        let err = AgentSpec::parse(text).expect_err(text);
        assert_eq!(err.field, field, "{text}: {err}");
    }
}

#[test]
fn mcts_specs_round_trip_and_whole_games_repeat_for_a_seed() {
    let s = AgentSpec::parse("mcts:4000").unwrap();
    assert_eq!(s.to_string(), "mcts:4000");
    let json =
        AgentSpec::parse(r#"{"kind":"mcts","iterations":4000,"c":0.707,"epsilon":0.1}"#).unwrap();
    assert_eq!(json.to_string(), "mcts:4000:0.707:0.1");
    assert_eq!(AgentSpec::parse(&json.to_string()).unwrap(), json);
    assert_eq!(
        AgentSpec::parse(&serde_json::to_string(&s).unwrap()).unwrap(),
        s
    );

    // A whole game of MCTS (with tree reuse) against greedy repeats move for move.
    use kalah_tuner::matches::{game_rng, play_game, Seats};
    let spec = AgentSpec::parse(r#"{"kind":"mcts","iterations":400,"reuse":true}"#).unwrap();
    let greedy = AgentSpec::parse("greedy").unwrap();
    let game = || {
        let mut a = spec.build(Rules::Standard).unwrap();
        let mut b = greedy.build(Rules::Standard).unwrap();
        let (mut ra, mut rb) = (game_rng(3, &[1]), game_rng(3, &[2]));
        let seats = Seats::new(&mut *a, &mut *b, &mut ra, &mut rb);
        play_game(seats, Position::start(6, 4).unwrap(), Rules::Standard)
    };
    assert_eq!(game(), game());
}

#[test]
fn mcts_beats_random() {
    use kalah_tuner::matches::{play_match, Setup};
    let setup = Setup {
        opening_plies: 2,
        seed: 4,
        ..Setup::default()
    };
    let report = play_match(
        &AgentSpec::parse("mcts:300").unwrap(),
        &AgentSpec::parse("random").unwrap(),
        20,
        &setup,
        true,
        false,
    )
    .unwrap();
    assert!(report.a_total.wins >= 18, "{:?}", report.a_total);
}

/// Files named by specs at the command line are read only when they are regular files, and
/// only up to a cap: a FIFO would block the reader for good, /dev/zero would fill memory.
#[test]
fn spec_files_are_regular_and_capped() {
    use kalah_tuner::agents::files::{MAX_EXPORT_BYTES, MAX_MODEL_BYTES};
    let dir = std::env::temp_dir().join(format!("kalah-spec-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("pipe");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // Sparse: takes no disk space.
    let big = dir.join("big");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(MAX_MODEL_BYTES.max(MAX_EXPORT_BYTES) + 1)
        .unwrap();
    let texts: Vec<String> = [&fifo, std::path::Path::new("/dev/zero"), &big]
        .iter()
        .flat_map(|p| {
            [
                format!("a3c:{}", p.display()),
                format!("export:{}", p.display()),
            ]
        })
        .collect();
    let (tx, rx) = std::sync::mpsc::channel();
    let parsing = texts.clone();
    std::thread::spawn(move || {
        let results: Vec<_> = parsing.iter().map(|t| AgentSpec::parse(t)).collect();
        let _ = tx.send(results);
    });
    let results = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("parsing returns instead of waiting on a FIFO or reading without end");
    for (text, result) in texts.iter().zip(results) {
        let err = result.expect_err(text).to_string();
        assert!(
            err.contains("not a regular file") || err.contains("larger than"),
            "{text}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// `depth: "adaptive"` searches each root as deep as Ahmed's table says for its number of
/// legal moves: the same move and value as the fixed depth it picks, on positions with every
/// count of moves a Kalah(6,4) game reaches.
#[test]
fn adaptive_depth_searches_as_deep_as_the_table_says() {
    use kalah_tuner::search::depth::adaptive_depth;
    let adaptive = AgentSpec::parse("minimax:adaptive").unwrap();
    assert_eq!(adaptive.to_string(), "minimax:adaptive");
    let json = serde_json::to_value(&adaptive).unwrap();
    assert_eq!(json["depth"], "adaptive");
    assert_eq!(AgentSpec::from_json(&json).unwrap(), adaptive);
    let heuristic = AgentSpec::parse("heuristic:hunter10:adaptive").unwrap();
    assert_eq!(
        heuristic.to_string(),
        "heuristic:hunter10:published:adaptive"
    );
    let err = AgentSpec::parse("minimax:deep").unwrap_err().to_string();
    assert!(err.contains("adaptive"), "{err}");

    let mut rng = rng_from_seed(7);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..60 {
        let mut pos = Position::start(6, 4).unwrap();
        while !pos.is_game_over() {
            let moves = pos.legal_moves().len();
            if seen.insert(moves) {
                let depth = adaptive_depth(moves);
                let fixed = AgentSpec::parse(&format!(
                    r#"{{"kind":"minimax","depth":{depth},"ties":"first"}}"#
                ))
                .unwrap();
                let first =
                    AgentSpec::parse(r#"{"kind":"minimax","depth":"adaptive","ties":"first"}"#)
                        .unwrap();
                let a = first
                    .build(Rules::Standard)
                    .unwrap()
                    .choose(&pos, &mut rng_from_seed(1));
                let b = fixed
                    .build(Rules::Standard)
                    .unwrap()
                    .choose(&pos, &mut rng_from_seed(1));
                assert_eq!(
                    (a.mv, a.value),
                    (b.mv, b.value),
                    "{moves} moves, depth {depth}"
                );
            }
            let mv = RandomAgent.choose(&pos, &mut rng).mv;
            pos.play(mv, Rules::Standard).unwrap();
        }
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![1, 2, 3, 4, 5, 6]);
}

/// A spent budget stops every searching agent at once with a legal move and says why, so the
/// owner can discard the result; an unspent one changes nothing.
#[test]
fn budgets_stop_searches_with_a_legal_move_and_a_reason() {
    use kalah_tuner::agents::{Budget, Stopped};
    use std::time::{Duration, Instant};

    let big = Position::start(12, 8).unwrap();
    let twelve = parse_kpn("1,1,1,1,1,1,1,1,1,1,1,1/13/1,1,1,1,1,1,1,1,1,1,0,0/15/S").unwrap();
    let cases = [
        ("minimax:14", big),
        ("pekar-minimax:12", big),
        ("perfect:22", twelve),
    ];
    for (spec, pos) in cases {
        let budget = Budget::new(None, 1_000_000);
        let mut agent = spec
            .parse::<AgentSpec>()
            .unwrap()
            .build_within(Rules::Standard, &budget)
            .unwrap();
        let decision = agent.choose(&pos, &mut rng_from_seed(1));
        assert!(pos.legal_moves().contains(decision.mv), "{spec}");
        assert_eq!(budget.stopped(), Some(Stopped::Nodes(1_000_000)), "{spec}");
    }

    let budget = Budget::new(Some(Duration::from_millis(200)), u64::MAX);
    let mut mcts = r#"{"kind": "mcts", "iterations": 1000000}"#
        .parse::<AgentSpec>()
        .unwrap()
        .build_within(Rules::Standard, &budget)
        .unwrap();
    let started = Instant::now();
    let decision = mcts.choose(&big, &mut rng_from_seed(1));
    assert!(big.legal_moves().contains(decision.mv));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(budget.stopped(), Some(Stopped::Deadline(200)));

    // A budget that is not spent leaves the moves as they are.
    let start = Position::start(6, 4).unwrap();
    for spec in ["minimax:6", "perfect:20", "pekar-minimax:4"] {
        let spec: AgentSpec = spec.parse().unwrap();
        let free = spec
            .build(Rules::Standard)
            .unwrap()
            .choose(&start, &mut rng_from_seed(3));
        let budget = Budget::new(Some(Duration::from_secs(600)), 1_000_000_000);
        let bounded = spec
            .build_within(Rules::Standard, &budget)
            .unwrap()
            .choose(&start, &mut rng_from_seed(3));
        assert_eq!(free, bounded, "{spec}");
        assert_eq!(budget.stopped(), None);
    }
}

/// Equal-time matches: `@20ms` after a short spec puts a search on the clock, the report
/// writes it back the same way, and `with_time_per_move` lifts alpha-beta's depth so that
/// the clock decides.
#[test]
fn time_budgets_in_short_specs_and_for_equal_time_matches() {
    let spec = AgentSpec::parse("minimax:6@20ms").unwrap();
    assert!(matches!(
        spec,
        AgentSpec::Minimax {
            time_ms: Some(20),
            nodes: None,
            ..
        }
    ));
    assert_eq!(spec.to_string(), "minimax:6@20ms");
    assert_eq!(AgentSpec::parse(&spec.to_string()).unwrap(), spec);
    let mcts = AgentSpec::parse("mcts:4000@15ms").unwrap();
    assert_eq!(mcts.to_string(), "mcts:4000@15ms");
    let heuristic = AgentSpec::parse("heuristic:hunter10:published:4@7ms").unwrap();
    assert_eq!(heuristic.to_string(), "heuristic:hunter10:published:4@7ms");
    for (bad, field) in [
        ("random@5ms", "time_ms"),
        ("greedy@5ms", "time_ms"),
        ("minimax:4@0ms", "time_ms"),
        ("minimax:4@600000ms", "time_ms"),
    ] {
        let e = AgentSpec::parse(bad).unwrap_err();
        assert_eq!(e.field, field, "{bad}: {e}");
    }
    // Not a time suffix: read as before (and refused as before).
    assert!(AgentSpec::parse("minimax:4@5").is_err());

    let (timed, on_clock) = AgentSpec::parse("minimax:4")
        .unwrap()
        .with_time_per_move(20);
    assert!(on_clock);
    assert_eq!(timed.to_string(), "minimax:20@20ms");
    timed.validate().unwrap();
    let (greedy, on_clock) = AgentSpec::parse("greedy").unwrap().with_time_per_move(20);
    assert!(!on_clock);
    assert_eq!(greedy.to_string(), "greedy");
    let mut agent = timed.build(Rules::Standard).unwrap();
    let decision = agent.choose(&Position::start(6, 4).unwrap(), &mut rng_from_seed(1));
    assert!(Position::start(6, 4).unwrap().is_legal(decision.mv));
}

/// Equal cost that reproduces: a node budget stops iterative deepening at the same place on
/// every run, so two runs give the same move, value, depth and node count.
#[test]
fn node_budgets_reproduce_and_bound_the_search() {
    let spec = AgentSpec::parse("minimax:20@50000nodes").unwrap();
    assert_eq!(spec.to_string(), "minimax:20@50000nodes");
    assert_eq!(AgentSpec::parse(&spec.to_string()).unwrap(), spec);
    assert_eq!(
        AgentSpec::parse(r#"{"kind":"minimax","time_ms":5,"nodes":100}"#)
            .unwrap_err()
            .field,
        "nodes"
    );
    assert_eq!(
        AgentSpec::parse("mcts:100@5nodes").unwrap_err().field,
        "nodes"
    );
    let (mcts, counts) = AgentSpec::parse("mcts:4000")
        .unwrap()
        .with_nodes_per_move(700);
    assert!(counts);
    assert_eq!(mcts.to_string(), "mcts:700");

    let eval = StoreDiff;
    let start = Position::start(6, 4).unwrap();
    let run = |n| AlphaBeta::new(&eval, Rules::Standard).search_nodes(&start, n, 20);
    let (a, b) = (run(50_000), run(50_000));
    assert_eq!(a, b);
    assert!(a.depth >= 2 && a.depth < 20, "depth {}", a.depth);
    // Never more than one 4096-node check past the budget in the iteration it abandons.
    assert!(a.nodes < 50_000 + 4096, "{} nodes", a.nodes);
    // The completed iteration is a plain fixed-depth search.
    let fixed = AlphaBeta::new(&eval, Rules::Standard).search_depth(&start, a.depth);
    assert_eq!((fixed.value, &fixed.best_moves), (a.value, &a.best_moves));
    assert!(run(500_000).depth > a.depth);
}
