//! Matches and tournaments: reproducible whatever the thread count, with sound statistics.

use kalah_tuner::agents::{spec::parse_spec_list, AgentSpec};
use kalah_tuner::matches::sprt::{Sprt, Verdict};
use kalah_tuner::matches::{play_match, play_tournament, Setup, TournamentConfig};

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

#[test]
fn a_match_is_the_same_on_one_and_two_threads() {
    let a = AgentSpec::parse("heuristic:hunter10:published:2").unwrap();
    let b = AgentSpec::parse("minimax:2").unwrap();
    let setup = Setup {
        opening_plies: 4,
        seed: 42,
        ..Setup::default()
    };
    let one = pool(1)
        .install(|| play_match(&a, &b, 40, &setup, true, true))
        .unwrap();
    let two = pool(2)
        .install(|| play_match(&a, &b, 40, &setup, true, true))
        .unwrap();
    assert_eq!(
        serde_json::to_string(&one).unwrap(),
        serde_json::to_string(&two).unwrap()
    );
    // Colour-swapped pairs share their opening.
    for pair in one.game_list.chunks(2) {
        assert_eq!(pair[0].record.opening, pair[1].record.opening);
        assert_eq!(pair[0].record.start, pair[1].record.start);
        assert!(pair[0].a_first && !pair[1].a_first);
    }
    // Another seed gives other openings.
    let other = play_match(
        &a,
        &b,
        40,
        &Setup {
            seed: 43,
            ..setup.clone()
        },
        true,
        true,
    )
    .unwrap();
    assert_ne!(
        one.game_list
            .iter()
            .map(|g| &g.record.opening)
            .collect::<Vec<_>>(),
        other
            .game_list
            .iter()
            .map(|g| &g.record.opening)
            .collect::<Vec<_>>()
    );
}

#[test]
fn minimax_beats_random() {
    let a = AgentSpec::parse("minimax:4").unwrap();
    let b = AgentSpec::parse("random").unwrap();
    let setup = Setup {
        seed: 1,
        ..Setup::default()
    };
    let report = play_match(&a, &b, 200, &setup, true, false).unwrap();
    assert_eq!(report.games, 200);
    assert_eq!(report.a_first.games(), 100);
    assert!(report.a_total.win_rate() >= 0.95, "{:?}", report.a_total);
    assert!(report.a_score.ci_low > 0.9 && report.a_score.ci_low < report.a_score.score);
}

#[test]
fn tournament_cross_table_has_hunters_shape_and_is_reproducible() {
    let agents = parse_spec_list("random,greedy,minimax:2").unwrap();
    let config = TournamentConfig {
        agents,
        games: 20,
        self_play: false,
        sprt: None,
        setup: Setup {
            seed: 9,
            opening_plies: 2,
            ..Setup::default()
        },
    };
    let one = pool(1).install(|| play_tournament(&config)).unwrap();
    let two = pool(2).install(|| play_tournament(&config)).unwrap();
    assert_eq!(
        serde_json::to_string(&one).unwrap(),
        serde_json::to_string(&two).unwrap()
    );
    assert_eq!(one.total_games, 3 * 20);
    for i in 0..3 {
        assert!(one.first[i][i].is_none());
        for j in 0..3 {
            if i != j {
                // Each ordered pairing: half the games with the row agent first.
                assert_eq!(one.first[i][j].unwrap().games(), 10);
            }
        }
    }
    // Scores of a zero-sum round robin average one half.
    let mean: f64 = one.scores.iter().map(|s| s.score).sum::<f64>() / 3.0;
    assert!((mean - 0.5).abs() < 1e-9);
    assert!(
        one.scores[2].score > one.scores[0].score,
        "minimax:2 should outscore random"
    );
    let table = one.to_table();
    assert!(
        table.contains("first \\ second") && table.contains("3:minimax:2"),
        "{table}"
    );
}

#[test]
fn bad_match_settings_are_rejected_with_the_field() {
    let a = AgentSpec::parse("random").unwrap();
    let err = play_match(&a, &a, 0, &Setup::default(), true, false).unwrap_err();
    assert!(err.to_string().starts_with("games:"), "{err}");
    let err = play_match(
        &a,
        &a,
        2,
        &Setup {
            pits: 0,
            ..Setup::default()
        },
        true,
        false,
    )
    .unwrap_err();
    assert!(err.to_string().contains("pits"), "{err}");
    let err = play_tournament(&TournamentConfig {
        sprt: None,
        agents: vec![a],
        games: 2,
        self_play: false,
        setup: Setup::default(),
    })
    .unwrap_err();
    assert!(err.to_string().starts_with("agents:"), "{err}");
}

#[test]
fn tournament_pairings_can_be_played_as_sprts() {
    let config = TournamentConfig {
        agents: parse_spec_list("random,greedy,minimax:2").unwrap(),
        games: 400,
        self_play: false,
        sprt: Some(Sprt::parse("0,50").unwrap()),
        setup: Setup {
            seed: 5,
            opening_plies: 2,
            ..Setup::default()
        },
    };
    let one = pool(1).install(|| play_tournament(&config)).unwrap();
    let two = pool(2).install(|| play_tournament(&config)).unwrap();
    assert_eq!(one, two);
    let sprt = one.sprt.as_ref().expect("an SPRT summary");
    assert_eq!(sprt.max_pairs, 200);
    assert_eq!(sprt.pairings.len(), 3);
    let mut counted = 0;
    for p in &sprt.pairings {
        // Every agent here is far stronger than the one before it: each test decides for the
        // stronger side (H0 from the weaker agent's seat, as `a` is the earlier agent).
        assert_eq!(p.verdict, Verdict::AcceptH0, "{p:?}");
        assert!(p.pairs < sprt.max_pairs && p.llr <= sprt.lower_bound);
        assert_eq!(p.counts.pairs(), p.pairs);
        counted += 2 * p.pairs;
    }
    assert_eq!(one.total_games, counted);
    let games_in_table: u64 = one
        .first
        .iter()
        .flatten()
        .flatten()
        .map(|t| t.games())
        .sum();
    assert_eq!(games_in_table, counted);
    let text = one.to_table();
    assert!(text.contains("SPRT of each pairing"), "{text}");
    assert!(text.contains("H0 accepted after"), "{text}");
    // Self-play has nothing to test.
    let err = play_tournament(&TournamentConfig {
        self_play: true,
        ..config
    })
    .unwrap_err();
    assert!(err.to_string().starts_with("sprt: "), "{err}");
}
