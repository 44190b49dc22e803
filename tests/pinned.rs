//! Pinned results: fingerprints of what matches, tournaments, GA fitness, the records and
//! export documents of GA, TD, TD-Leaf and Texel runs, A3C evaluation and bench games produce
//! today. The architecture pass moved all of them onto one pairing engine;
//! committed configs, exports and the figures in docs/ stay true only while each caller's games
//! stay exactly the same, move for move. A change here means every published figure must be
//! re-measured, so update these numbers only on purpose, and say so in the commit.

use kalah_tuner::agents::a3c::load_model;
use kalah_tuner::agents::AgentSpec;
use kalah_tuner::ga::GaConfig;
use kalah_tuner::game::Rules;
use kalah_tuner::matches::{play_match, play_tournament, Setup, TournamentConfig};
use serde_json::json;

/// FNV-1a: a digest that is the same on every platform and Rust release.
fn fingerprint(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

fn spec(text: &str) -> AgentSpec {
    AgentSpec::parse(text).expect("a valid spec")
}

#[test]
fn match_games_are_pinned() {
    let setup = Setup {
        seed: 5,
        opening_plies: 3,
        ..Setup::default()
    };
    let report = play_match(
        &spec("minimax:2"),
        &spec("heuristic:hunter10:published:2"),
        8,
        &setup,
        true,
        true,
    )
    .expect("the match plays");
    let games = serde_json::to_string(&report.game_list).expect("serialises");
    assert_eq!(fingerprint(&games), 7716634412457838182, "{games}");
}

#[test]
fn tournament_games_are_pinned() {
    let config = TournamentConfig {
        sprt: None,
        agents: vec![
            spec("random"),
            spec("greedy"),
            spec("minimax:2"),
            spec("mcts:50"),
        ],
        games: 4,
        self_play: true,
        setup: Setup {
            seed: 9,
            opening_plies: 2,
            ..Setup::default()
        },
    };
    let report = play_tournament(&config).expect("the tournament plays");
    let text = serde_json::to_string(&report).expect("serialises");
    assert_eq!(fingerprint(&text), 8381249260215694855, "{text}");
}

fn fitness_fingerprint(overrides: serde_json::Value) -> (u64, String) {
    let config = GaConfig::default()
        .with_overrides(&overrides)
        .expect("a valid config");
    let mut driver =
        kalah_tuner::tune::Driver::open(kalah_tuner::tune::TunerConfig::new(config), None)
            .expect("starts");
    let control = kalah_tuner::tune::StepControl::new(kalah_tuner::search::Budget::unlimited());
    let mut records: Vec<kalah_tuner::tune::GenerationRecord> = Vec::new();
    driver.run(&control, &mut [&mut records]).expect("runs");
    let fitness: Vec<Vec<f64>> = records
        .iter()
        .map(|r| r.individuals.iter().map(|i| i.fitness).collect())
        .collect();
    let text = serde_json::to_string(&fitness).expect("serialises");
    (fingerprint(&text), text)
}

#[test]
fn ga_fitness_is_pinned() {
    let round_robin = fitness_fingerprint(json!({
        "population": 6, "generations": 2, "depth": 2, "seed": 11,
        "fitness": {"games_per_pair": 2, "opening_plies": 2}
    }));
    assert_eq!(round_robin.0, 12363800424866166725, "{}", round_robin.1);
    let mixed = fitness_fingerprint(json!({
        "population": 4, "generations": 2, "depth": 2, "seed": 12,
        "fitness": {"mode": "mixed", "games_per_pair": 4, "opening_plies": 3,
                    "opponents": ["minimax:2", "greedy", "mcts:30"]}
    }));
    assert_eq!(mixed.0, 10124594260561657365, "{}", mixed.1);
    let common = fitness_fingerprint(json!({
        "population": 4, "generations": 2, "depth": 2, "seed": 13,
        "fitness": {"mode": "opponents", "games_per_pair": 2, "opening_plies": 4,
                    "common_openings": true, "opponents": ["heuristic:hunter10:published:2", "pekar"]}
    }));
    assert_eq!(common.0, 11150913198507208338, "{}", common.1);
}

#[test]
fn a3c_evaluation_is_pinned() {
    let net = load_model(None).expect("the embedded model");
    let evaluation =
        kalah_tuner::rl::a3c::evaluate(&net, Rules::Standard, 10, 21).expect("evaluates");
    let text = serde_json::to_string(&evaluation).expect("serialises");
    assert_eq!(fingerprint(&text), 6917144810508075305, "{text}");
}

/// The records of a run with their wall times zeroed, and its export document (whose
/// `generator` names this build's version, so it is set aside).
fn run_fingerprints(config: kalah_tuner::tune::TunerConfig) -> (u64, u64, String) {
    use kalah_tuner::tune::ExportDocument;
    // Through the driver, the one loop every run (command line, server, worker) is stepped by.
    let mut driver = kalah_tuner::tune::Driver::open(config.clone(), None).expect("starts");
    let control = kalah_tuner::tune::StepControl::new(kalah_tuner::search::Budget::unlimited());
    let mut records: Vec<kalah_tuner::tune::GenerationRecord> = Vec::new();
    driver.run(&control, &mut [&mut records]).expect("runs");
    let plain: Vec<_> = records.iter().map(|r| r.without_timing()).collect();
    let text = serde_json::to_string(&plain).expect("serialises");
    let mut doc: ExportDocument = config.export(&records).expect("exports");
    doc.generator = String::new();
    let export = doc.to_json_pretty();
    (fingerprint(&text), fingerprint(&export), text)
}

fn tuner(tuner: &str, layer: serde_json::Value) -> kalah_tuner::tune::TunerConfig {
    kalah_tuner::tune::load_tuner(
        Some(tuner),
        None,
        &[&layer],
        &kalah_tuner::agents::FileAccess::Any,
    )
    .expect("a valid config")
}

#[test]
fn ga_records_and_export_are_pinned() {
    let (records, export, text) = run_fingerprints(tuner(
        "ga",
        json!({
            "population": 4, "generations": 3, "depth": 2, "seed": 21,
            "fitness": {"mode": "mixed", "games_per_pair": 4, "opening_plies": 2,
                        "opponents": ["minimax:2", "greedy"],
                        "racing": {"rounds": 2, "leaders": 1}},
            "benchmark": {"panel": ["minimax:2", "pekar"], "pairs": 2, "leaders": 2,
                          "agreement": 6}
        }),
    ));
    assert_eq!(
        (records, export),
        (7975945709543154109, 6924011796412830946),
        "{text}"
    );
}

#[test]
fn learning_records_and_exports_are_pinned() {
    let panel = json!({"panel": ["minimax:2"], "pairs": 2});
    let td = run_fingerprints(tuner(
        "td",
        json!({"games": 8, "depth": 1, "seed": 3, "batch": 2, "checkpoint_games": 4,
               "play_depth": 2, "benchmark": panel}),
    ));
    let leaf = run_fingerprints(tuner(
        "td-leaf",
        json!({"games": 6, "depth": 2, "seed": 4, "play_depth": 2, "benchmark": panel}),
    ));
    let texel = run_fingerprints(tuner(
        "texel",
        json!({"games": 6, "positions_per_game": 4, "rounds": 2, "depth": 1, "exact_seeds": 8,
               "seed": 5, "source": "minimax:2", "play_depth": 2, "benchmark": panel}),
    ));
    assert_eq!(
        [(td.0, td.1), (leaf.0, leaf.1), (texel.0, texel.1)],
        [
            (15848761589288951699, 9895946292237370481),
            (12340851479483457024, 13521444298022660545),
            (16007377897570090907, 7422831269287076890)
        ],
        "td {}\nleaf {}\ntexel {}",
        td.2,
        leaf.2,
        texel.2
    );
}
