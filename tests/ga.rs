//! The GA end to end: determinism across thread counts, stepped resume, config validation and
//! presets, export documents. Configs are small (a handful of individuals, shallow searches)
//! so the whole file runs in seconds in release.

use kalah_tuner::agents::AgentSpec;
use kalah_tuner::agents::FileAccess;
use kalah_tuner::ga::loader::{self, load_document, Format};
use kalah_tuner::ga::{Evolution, GaConfig, SelectionKind};
use kalah_tuner::matches::{play_match, Setup};
use kalah_tuner::search::Budget;
use kalah_tuner::tune::panel::beats;
use kalah_tuner::tune::{ConfigError, GenerationRecord, StopReason};
use kalah_tuner::tune::{Driver, ExportDocument, Step, StepControl, TunerConfig};
use serde_json::json;

/// The abrams preset, shrunk.
fn small_abrams() -> GaConfig {
    GaConfig::preset("abrams")
        .unwrap()
        .with_overrides(&json!({"population": 8, "generations": 3, "depth": 3, "seed": 42}))
        .unwrap()
}

/// The hunter preset (5 + 5 games against everyone including itself), shrunk.
fn small_hunter() -> GaConfig {
    GaConfig::preset("hunter")
        .unwrap()
        .with_overrides(&json!({"population": 6, "generations": 3, "depth": 2, "seed": 7}))
        .unwrap()
}

/// At most `steps` records of a GA run of `config` after `last` (from the start without one),
/// stepped by the driver that steps every run.
fn drive(config: &GaConfig, last: Option<GenerationRecord>, steps: usize) -> Vec<GenerationRecord> {
    let mut driver = Driver::open(TunerConfig::new(config.clone()), last).unwrap();
    let control = StepControl::new(Budget::unlimited());
    let mut records = Vec::new();
    while records.len() < steps {
        match driver.step(&control, &mut []).unwrap() {
            Step::Record(record) => records.push(record.clone()),
            _ => break,
        }
    }
    records
}

fn run_all(config: &GaConfig) -> Vec<GenerationRecord> {
    drive(config, None, usize::MAX)
}

/// Records as JSON with wall times zeroed: what identical runs must agree on byte for byte.
fn canonical(records: &[GenerationRecord]) -> String {
    let stripped: Vec<GenerationRecord> = records.iter().map(|r| r.without_timing()).collect();
    serde_json::to_string(&stripped).unwrap()
}

fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

#[test]
fn runs_are_identical_on_one_and_two_threads() {
    for config in [small_abrams(), small_hunter()] {
        let one = on_threads(1, || run_all(&config));
        let two = on_threads(2, || run_all(&config));
        assert_eq!(one.len(), config.generations as usize);
        assert_eq!(canonical(&one), canonical(&two));
        // A different seed is a different run.
        let other = GaConfig {
            seed: config.seed + 1,
            ..config.clone()
        };
        assert_ne!(
            canonical(&one),
            canonical(&on_threads(2, || run_all(&other)))
        );
    }
}

#[test]
fn records_describe_their_generation() {
    let config = small_hunter();
    let records = run_all(&config);
    for (g, r) in records.iter().enumerate() {
        assert_eq!(r.generation as usize, g);
        assert_eq!(r.individuals.len(), config.population);
        // 15 pairings of 10 games; self-play is credited, not played.
        assert_eq!(r.games_played, 150);
        assert!(r
            .individuals
            .iter()
            .all(|i| (0.0..=1.0).contains(&i.fitness)));
        assert!(r.individuals.iter().all(|i| i.weights.len() == 10));
        assert_eq!(r.fitness.best, r.best().fitness);
        assert!(r.fitness.min <= r.fitness.mean && r.fitness.mean <= r.fitness.best);
        // Round robin is zero-sum, and self-play adds exactly one half per credited game.
        assert!((r.fitness.mean - 0.5).abs() < 1e-9);
        assert!(r.diversity > 0.0);
        assert!(r.hall_of_fame.fitness >= r.fitness.best);
        assert_eq!(r.stop.is_some(), g + 1 == records.len());
    }
    // Elitism: generation g's best is in generation g + 1 unchanged.
    for w in records.windows(2) {
        let best = &w[0].best().weights;
        assert!(w[1].individuals.iter().any(|i| &i.weights == best));
    }
    assert_eq!(records.last().unwrap().stop, Some(StopReason::Generations));
}

#[test]
fn resuming_from_a_saved_record_equals_the_uninterrupted_run() {
    let config = small_abrams()
        .with_overrides(&json!({"generations": 4, "selection": {"kind": "sus"}}))
        .unwrap();
    let whole = run_all(&config);
    for cut in 0..3 {
        let mut records = drive(&config, None, cut as usize + 1);
        // The server keeps JSON; resume from what it would read back.
        let saved = serde_json::to_string(records.last().unwrap()).unwrap();
        let last: GenerationRecord = serde_json::from_str(&saved).unwrap();
        let resumed = Evolution::resume(config.clone(), &last).unwrap();
        assert_eq!(resumed.generation(), cut + 1);
        records.extend(drive(&config, Some(last), usize::MAX));
        assert_eq!(
            canonical(&records),
            canonical(&whole),
            "cut after generation {cut}"
        );
    }
    // Resuming a finished run is finished; given more generations it goes on as a longer run.
    let last = whole.last().unwrap();
    let done = Evolution::resume(config.clone(), last).unwrap();
    assert!(done.is_finished());
    assert!(drive(&config, Some(last.clone()), usize::MAX).is_empty());
    let longer = GaConfig {
        generations: 5,
        ..config.clone()
    };
    let fifth = drive(&longer, Some(last.clone()), 1);
    assert_eq!(canonical(&fifth), canonical(&run_all(&longer)[4..]));
}

#[test]
fn resume_rejects_records_of_another_config() {
    let config = small_abrams();
    let record = drive(&config, None, 1).remove(0);
    let bigger = GaConfig {
        population: 9,
        ..config.clone()
    };
    assert!(matches!(
        Evolution::resume(bigger, &record),
        Err(ConfigError::Resume(_))
    ));
    let other_features = config
        .with_overrides(&json!({"features": "hunter10"}))
        .unwrap();
    assert!(matches!(
        Evolution::resume(other_features, &record),
        Err(ConfigError::Resume(_))
    ));
    let mut tampered = record.clone();
    tampered.individuals[0].weights[0] = 7.0;
    let err = Evolution::resume(config, &tampered).unwrap_err();
    assert!(err.to_string().contains("outside the bounds"), "{err}");
}

#[test]
fn stagnation_and_target_fitness_stop_early() {
    let config = small_hunter()
        .with_overrides(&json!({"generations": 50, "stagnation": 1}))
        .unwrap();
    let records = run_all(&config);
    let last = records.last().unwrap();
    assert_eq!(last.stop, Some(StopReason::Stagnation));
    assert_eq!(last.generation - last.hall_of_fame.generation, 1);
    assert!(records.len() < 50);

    let config = small_hunter()
        .with_overrides(&json!({"target_fitness": 0.0}))
        .unwrap();
    let records = run_all(&config);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].stop, Some(StopReason::TargetFitness));
}

#[test]
fn opponents_and_mixed_modes() {
    let base = small_abrams()
        .with_overrides(&json!({"population": 4, "generations": 2, "depth": 2}))
        .unwrap();
    let opp = base
        .with_overrides(&json!({"fitness": {"mode": "opponents", "opponents": ["random", {"kind": "minimax", "depth": 2}]}}))
        .unwrap();
    let records = on_threads(2, || run_all(&opp));
    assert_eq!(records[0].games_played, 4 * 2 * 2);
    assert_eq!(
        canonical(&records),
        canonical(&on_threads(1, || run_all(&opp)))
    );
    let mixed = opp
        .with_overrides(&json!({"fitness": {"mode": "mixed", "mixed_weight": 0.25}}))
        .unwrap();
    let records = run_all(&mixed);
    assert_eq!(records[0].games_played, 6 * 2 + 4 * 2 * 2);

    // Racing: the same games a generation, each individual's share in its record, the same
    // records on any thread count and after a resume.
    let raced = opp
        .with_overrides(&json!({"generations": 3, "fitness": {"games_per_pair": 8, "racing": {"rounds": 2, "leaders": 1}}}))
        .unwrap();
    let records = on_threads(2, || run_all(&raced));
    for record in &records {
        assert_eq!(record.games_played, 4 * 2 * 8);
        let shares: Vec<u32> = record
            .individuals
            .iter()
            .map(|i| i.raced_games.expect("raced games recorded"))
            .collect();
        assert_eq!(shares.iter().sum::<u32>(), 4 * 2 * 8, "{shares:?}");
    }
    assert_eq!(
        canonical(&records),
        canonical(&on_threads(1, || run_all(&raced)))
    );
    let saved = serde_json::to_string(&records[0]).unwrap();
    let mut again = vec![records[0].clone()];
    again.extend(drive(
        &raced,
        Some(serde_json::from_str(&saved).unwrap()),
        usize::MAX,
    ));
    assert_eq!(canonical(&again), canonical(&records));
}

#[test]
fn every_operator_kind_runs() {
    for selection in ["roulette", "tournament", "rank", "sus"] {
        for crossover in ["average-hybrid", "average", "hybrid", "uniform", "blend"] {
            let config = small_abrams()
                .with_overrides(&json!({
                    "population": 5, "generations": 2, "depth": 1, "elite": 2,
                    "selection": {"kind": selection, "k": 2},
                    "crossover": {"kind": crossover, "alpha": 0.3},
                    "bounds": {"min": -1.0, "max": 2.0},
                    "init": {"kind": "around", "weights": "published2", "sigma": 0.5},
                }))
                .unwrap();
            config.validate().unwrap();
            let records = run_all(&config);
            for r in &records {
                assert_eq!(r.individuals.len(), 5);
                for i in &r.individuals {
                    assert!(i.weights.iter().all(|w| (-1.0..=2.0).contains(w)));
                }
            }
        }
    }
}

fn err_of(doc: serde_json::Value) -> ConfigError {
    loader::load(None, &[&doc], &FileAccess::Any).expect_err(&doc.to_string())
}

#[test]
fn validation_errors_name_the_field() {
    let cases = [
        (json!({"population": 0}), "population: must be a whole number 2 to 1000, got 0"),
        (
            json!({"selection": {"kind": "foo"}}),
            "selection.kind: unknown \"foo\", expected roulette, tournament, rank, sus",
        ),
        (
            json!({"crossover": {"kind": "onepoint"}}),
            "crossover.kind: unknown \"onepoint\", expected average-hybrid, average, hybrid, uniform, blend",
        ),
        (
            json!({"fitness": {"mode": "swiss"}}),
            "fitness.mode: unknown \"swiss\", expected round-robin, opponents, mixed",
        ),
        (json!({"generations": 0}), "generations: must be a whole number 1 to 10000, got 0"),
        (json!({"depth": 11}), "depth: must be a whole number 1 to 10, got 11"),
        (json!({"mutation": {"rate": 1.5}}), "mutation.rate: must be 0 to 1, got 1.5"),
        (json!({"mutation": {"sigma": -0.1}}), "mutation.sigma: must be 0 to 1, got -0.1"),
        (json!({"selection": {"kind": "tournament", "k": 0}}), "selection.k: must be a whole number 1 to 20, got 0"),
        (json!({"elite": 20}), "elite: must be a whole number 0 to 19, got 20"),
        (json!({"fitness": {"games_per_pair": 3}}), "fitness.games_per_pair: must be an even number"),
        (json!({"fitness": {"mode": "opponents"}}), "fitness.opponents: fitness mode opponents needs"),
        (json!({"fitness": {"opponents": ["minimax:12"]}}), "fitness.opponents[0].depth: minimax:12: must be 1 to 10 in a GA, got 12"),
        (json!({"fitness": {"opponents": [{"kind": "minimax", "time_ms": 50}]}}), "fitness.opponents[0].time_ms: "),
        (json!({"fitness": {"opponents": ["chess"]}}), "fitness.opponents[0].kind: chess: unknown agent \"chess\""),
        (json!({"fitness": {"mixed_weight": 2.0}}), "fitness.mixed_weight: must be 0 to 1, got 2"),
        (json!({"fitness": {"opening_plies": 99}}), "fitness.opening_plies: must be a whole number 0 to 30, got 99"),
        (json!({"fitness": {"racing": {}}}), "fitness.racing: racing shares out the games against fixed opponents, so it needs fitness mode opponents or mixed"),
        (json!({"fitness": {"mode": "opponents", "opponents": ["greedy"], "games_per_pair": 6, "racing": {"rounds": 4}}}), "fitness.racing.rounds: must be a whole number 2 to 3, got 4"),
        (json!({"fitness": {"mode": "opponents", "opponents": ["greedy"], "games_per_pair": 8, "racing": {"leaders": 0}}}), "fitness.racing.leaders: must be a whole number 1 to 20, got 0"),
        (json!({"fitness": {"mode": "opponents", "opponents": ["greedy"], "games_per_pair": 8, "racing": {"z": -1}}}), "fitness.racing.z: must be 0 to 10, got -1"),
        (json!({"fitness": {"mode": "opponents", "opponents": ["greedy"], "racing": {"round": 3}}}), "fitness.racing.round: unknown field `round`"),
        (json!({"features": "hunter11"}), "features: unknown feature \"hunter11\""),
        (json!({"features": ["store_diff", "bogus"]}), "features: unknown feature \"bogus\""),
        (json!({"features": ["store_diff", "store_diff"]}), "features: store_diff is listed twice"),
        (json!({"bounds": {"min": 1.0, "max": 0.0}}), "bounds: min must be below max"),
        (json!({"bounds": {"max": 1e9}}), "bounds.max: must be -1000 to 1000"),
        (json!({"init": {"kind": "around"}}), "init.weights: init kind \"around\" needs weights"),
        (json!({"init": {"kind": "around", "weights": "nope"}}), "init.weights: hunter10 has no preset \"nope\""),
        (json!({"init": {"kind": "around", "weights": [0.5]}}), "init.weights: 10 features need 10 weights, got 1"),
        (json!({"board": {"pits": 0}}), "board: impossible board"),
        (json!({"stagnation": 0}), "stagnation: must be a whole number 1 to 10000, got 0"),
        (json!({"target_fitness": 1.5}), "target_fitness: must be 0 to 1, got 1.5"),
        (json!({"preset": "kasparov"}), "preset: unknown \"kasparov\", expected abrams, hunter"),
        (json!({"populaton": 10}), "unknown field `populaton`"),
        (json!({"selection": {"kind": "rank", "size": 3}}), "selection.size: unknown field `size`, expected `kind` or `k`"),
        (json!({"population": "ten"}), "population: invalid type"),
        (json!({"rules": "chess"}), "rules: unknown variant `chess`"),
        (
            json!({"population": 1000, "generations": 10000}),
            "generations: this run would play 999,000 games a generation",
        ),
    ];
    for (doc, expected) in cases {
        let message = err_of(doc.clone()).to_string();
        assert!(
            message.starts_with(expected) || message.contains(expected),
            "{doc}: got {message:?}, expected {expected:?}"
        );
    }
    let e = err_of(json!({"mutation": {"rate": -1}}));
    assert_eq!(e.field(), "mutation.rate");
    let e = err_of(json!({"selection": {"kind": "foo"}}));
    assert_eq!(e.field(), "selection.kind");
}

#[test]
fn presets_and_overrides() {
    let abrams = GaConfig::preset("abrams").unwrap();
    abrams.validate().unwrap();
    assert_eq!(
        (abrams.population, abrams.depth, abrams.generations),
        (40, 7, 75)
    );
    assert_eq!(abrams.games_per_generation(), 780 * 2);
    let hunter = GaConfig::preset("hunter").unwrap();
    hunter.validate().unwrap();
    assert_eq!(
        (hunter.population, hunter.depth, hunter.generations),
        (50, 4, 250)
    );
    assert_eq!(hunter.games_per_generation(), 1225 * 10);
    assert!(hunter.fitness.self_play);
    assert!(GaConfig::default().validate().is_ok());
    for config in [&abrams, &hunter] {
        let evolution = Evolution::new(config.clone()).unwrap();
        assert_eq!(
            evolution.games_per_generation(),
            config.games_per_generation()
        );
        assert_eq!(evolution.population().len(), config.population);
    }
    // A server moves runs between threads.
    fn is_send<T: Send>(_: &T) {}
    is_send(&Evolution::new(small_hunter()).unwrap());

    // A partial document over a preset keeps the preset's other fields, nested ones too.
    let c = load_document(r#"{"preset": "hunter", "population": 12, "selection": {"kind": "tournament"}, "fitness": {"opponents": ["pekar"]}}"#, Format::Json)
    .unwrap();
    assert_eq!(c.population, 12);
    assert_eq!(c.selection.kind, SelectionKind::Tournament);
    assert_eq!(c.selection.k, 3);
    assert_eq!(c.fitness.games_per_pair, 10);
    assert_eq!(
        c.fitness.opponents,
        vec![AgentSpec::parse("pekar").unwrap()]
    );
    assert_eq!(c.generations, 250);

    let t = load_document(
        r#"
        preset = "abrams"
        population = 12
        seed = 9
        features = ["store_diff", "side_diff"]
        bounds = { min = -1, max = 1 }
        [init]
        kind = "around"
        weights = [0.5, 0.25]
        sigma = 0.05
        [fitness]
        mode = "mixed"
        opponents = ["minimax:3", { kind = "greedy" }]
        "#,
        Format::Toml,
    )
    .unwrap();
    assert_eq!((t.population, t.depth, t.seed), (12, 7, 9));
    assert_eq!(t.bounds.min, -1.0);
    assert_eq!(t.fitness.opponents.len(), 2);
    assert_eq!(t.validate().unwrap().init_center, Some(vec![0.5, 0.25]));

    // The full config round-trips through JSON and TOML.
    let json = t.to_json_pretty();
    assert_eq!(load_document(&json, Format::Json).unwrap(), t);
    let toml_text = toml::to_string(&t).unwrap();
    assert_eq!(load_document(&toml_text, Format::Toml).unwrap(), t);
    assert_eq!(load_document(&toml_text, Format::Auto).unwrap(), t);

    let bad = load_document("population = [", Format::Toml).unwrap_err();
    assert!(bad.to_string().starts_with("not valid TOML"), "{bad}");
    let bad = load_document("{\"population\": ", Format::Json).unwrap_err();
    assert!(bad.to_string().starts_with("not valid JSON"), "{bad}");
}

#[test]
fn export_round_trips_and_its_agent_plays() {
    // Without a benchmark panel (with one, the panel's champion is exported: see
    // the_champion_comes_from_the_panel_and_is_what_the_export_plays).
    let config = small_abrams()
        .with_overrides(&json!({"benchmark": {"panel": []}}))
        .unwrap();
    let records = run_all(&config);
    let doc = TunerConfig::new(config.clone()).export(&records).unwrap();
    // Round-robin fitness is relative: the export is the last generation's best.
    let last = records.last().unwrap();
    let best = TunerConfig::new(config.clone()).champion(last);
    assert_eq!(best.weights, last.best().weights);
    assert_eq!(best.generation, last.generation);
    assert_eq!(doc.format_version, 1);
    assert_eq!(doc.weights, best.weights);
    assert_eq!(doc.fitness, best.fitness);
    assert_eq!(doc.generation, best.generation);
    assert_eq!(doc.history.len(), 3);
    assert_eq!(doc.config.get::<GaConfig>(), Some(&config));
    assert_eq!(doc.seed, 42);

    let text = doc.to_json_pretty();
    let back = ExportDocument::from_json(&text).unwrap();
    assert_eq!(back, doc);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        value["features"],
        json!(["store_diff", "side_diff", "overflow_diff"])
    );
    assert_eq!(value["agent"]["kind"], "heuristic");
    assert_eq!(value["agent"]["depth"], 3);

    // The agent spec is a plain heuristic spec anyone can parse, build and play.
    let spec = AgentSpec::from_json(&value["agent"]).unwrap();
    assert_eq!(spec, doc.agent_spec());
    spec.build(doc.rules).unwrap();
    let setup = Setup {
        seed: 3,
        opening_plies: 2,
        ..Setup::default()
    };
    let report = play_match(&spec, &AgentSpec::Random, 10, &setup, true, false).unwrap();
    assert_eq!(report.games, 10);
    assert!(report.a_total.wins >= 8, "{:?}", report.a_total);

    let mut newer = value.clone();
    newer["format_version"] = json!(2);
    let err = ExportDocument::from_json(&newer.to_string()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("format_version: unsupported version 2"),
        "{err}"
    );
    let mut mismatched = value.clone();
    mismatched["weights"] = json!([0.1, 0.2, 0.3]);
    let err = ExportDocument::from_json(&mismatched.to_string()).unwrap_err();
    assert!(err.to_string().starts_with("agent:"), "{err}");
    let mut broken = value;
    broken["fitness"] = json!("high");
    let err = ExportDocument::from_json(&broken.to_string()).unwrap_err();
    assert!(
        err.to_string().starts_with("fitness: invalid type"),
        "{err}"
    );
    assert!(TunerConfig::new(config.clone()).export(&[]).is_err());
}

/// The committed configs and their committed results (docs/results/reproductions.md): each export
/// records exactly its config and plays as an agent.
#[test]
fn committed_evolved_weights_come_from_the_committed_configs() {
    let root = env!("CARGO_MANIFEST_DIR");
    for (config_file, export_file, features) in [
        ("hunter10-vs-published.toml", "hunter10-evolved.json", 10),
        ("beat-published.toml", "beat-published.json", 13),
        ("mankalah-tuned.toml", "mankalah-tuned.json", 5),
        ("abrams-tuned.toml", "abrams-tuned.json", 3),
    ] {
        let text = std::fs::read_to_string(format!("{root}/configs/{config_file}"))
            .expect("the committed config");
        // Read as `evolve --config` reads it: the file names its tuner (the GA by default).
        let layer = loader::parse_document(&text, Format::Toml).expect("a TOML config");
        let config = kalah_tuner::tune::load_tuner(None, None, &[&layer], &FileAccess::Any)
            .expect("a valid config");
        let doc_text = std::fs::read_to_string(format!("{root}/configs/{export_file}"))
            .expect("the committed export");
        let doc = ExportDocument::from_json(&doc_text).expect("a valid export");
        assert_eq!(
            doc.config, config,
            "{export_file} records exactly {config_file}"
        );
        assert_eq!(doc.weights.len(), features);
        let spec = AgentSpec::parse(&format!("export:{root}/configs/{export_file}"))
            .expect("the export as an agent spec");
        // Each plays the game it was tuned for (the ManKalah player: Kalah(7,7), pie rule).
        let setup = Setup {
            seed: 3,
            opening_plies: 2,
            pits: doc.board.pits,
            seeds: doc.board.seeds,
            pie: doc.pie,
            ..Setup::default()
        };
        let report = play_match(&spec, &AgentSpec::Random, 20, &setup, true, false).unwrap();
        assert!(report.a_total.wins >= 18, "{:?}", report.a_total);
    }
}

/// The champion is chosen by the benchmark panel and changes only when a challenger wins the
/// paired test; the export (and so `run:ID` and the dashboard, which read the same function)
/// hands out exactly that player.
#[test]
fn the_champion_comes_from_the_panel_and_is_what_the_export_plays() {
    let config = small_abrams()
        .with_overrides(&json!({"generations": 4, "benchmark": {"pairs": 6}}))
        .unwrap();
    let records = run_all(&config);
    assert!(records.iter().all(|r| r.benchmark.is_some()));
    let mut current = records[0]
        .champion
        .clone()
        .expect("a champion from generation 0");
    assert_eq!(current.generation, 0);
    for r in &records[1..] {
        let c = r.champion.as_ref().expect("a champion");
        if c != &current {
            assert!(
                beats(&c.panel, &current.panel),
                "generation {}",
                r.generation
            );
            assert!(r.benchmark.as_ref().unwrap().new_champion);
            current = c.clone();
        }
    }
    let doc = TunerConfig::new(config.clone()).export(&records).unwrap();
    assert_eq!(doc.weights, current.weights);
    assert_eq!(doc.generation, current.generation);
    // One result per panel pair, and a score against each panel agent.
    let leader = &records[0].benchmark.as_ref().unwrap().leaders[0];
    assert_eq!(leader.pair_points.len(), 4 * 6);
    assert_eq!(leader.per_agent.len(), 4);
    // Off, there is no panel and no champion; the export falls back to fitness.
    let off = config
        .with_overrides(&json!({"benchmark": {"panel": []}}))
        .unwrap();
    let records = run_all(&off);
    assert!(records
        .iter()
        .all(|r| r.benchmark.is_none() && r.champion.is_none()));
}

/// `benchmark.agreement` adds each leader's perfect-move agreement to the panel's results,
/// measured on one solved set for the whole run, reproducibly on any number of threads.
#[test]
fn the_panel_measures_perfect_move_agreement_when_asked() {
    let config = small_abrams()
        .with_overrides(&json!({"generations": 2, "benchmark": {"pairs": 2, "agreement": 40}}))
        .unwrap();
    let one = on_threads(1, || run_all(&config));
    let two = on_threads(2, || run_all(&config));
    assert_eq!(canonical(&one), canonical(&two));
    for record in &one {
        let leader = &record.benchmark.as_ref().unwrap().leaders[0];
        let agreement = leader.agreement.as_ref().expect("agreement measured");
        assert_eq!(agreement.positions, 40);
        assert!((0.0..=1.0).contains(&agreement.share), "{agreement:?}");
        assert!(agreement.share_ci.0 <= agreement.share && agreement.share <= agreement.share_ci.1);
        assert!(agreement.mean_loss >= 0.0);
        let point = kalah_tuner::store::GenerationPoint::of(record);
        assert_eq!(point.panel.unwrap().agreement.as_ref(), Some(agreement));
    }
    let err = err_of(json!({"benchmark": {"agreement": 0}}));
    assert_eq!(err.field(), "benchmark.agreement");
    // Unset, the records are as before: no agreement field at all.
    let plain = run_all(&small_abrams());
    assert!(!canonical(&plain).contains("agreement"));
}

#[test]
fn the_panel_costs_at_most_a_fifth_of_a_preset_generation() {
    for name in ["abrams", "hunter"] {
        let config = GaConfig::preset(name).unwrap();
        let share = config.benchmark_games_per_generation() / config.games_per_generation() as f64;
        assert!(share <= 0.2, "{name}: {share}");
        assert!(config.benchmark.is_on());
    }
}

/// The run cost estimate counts what opponents and panel agents cost, by kind: a few games a
/// generation against `mcts:1000000` (some 40 s each) are refused, where the same games
/// against `minimax:4` are cheap.
#[test]
fn the_cost_estimate_counts_the_opponents() {
    let with = |opponent: &str, panel: Vec<&str>| {
        GaConfig::default()
            .with_overrides(&json!({
                "population": 40, "generations": 100, "depth": 4,
                "fitness": {"mode": "opponents", "games_per_pair": 10, "opponents": [opponent]},
                "benchmark": {"panel": panel, "pairs": 64, "every": 1}
            }))
            .unwrap()
    };
    let cheap = with("minimax:4", vec!["minimax:4"]);
    assert!(
        cheap.estimated_core_hours() < 1.0,
        "{}",
        cheap.estimated_core_hours()
    );
    cheap.validate().expect("a cheap run is accepted");
    let costly = with("mcts:1000000", vec!["minimax:4"]);
    assert!(costly.estimated_core_hours() > 100.0);
    let err = costly.validate().unwrap_err().to_string();
    assert!(
        err.contains("core-hours") && err.contains("opponents"),
        "{err}"
    );
    // Panel agents count too.
    let costly_panel = with("minimax:4", vec!["mcts:1000000"]);
    assert!(costly_panel.estimated_core_hours() > 48.0);
    assert!(costly_panel.validate().is_err());
}

/// The storage estimate that run creation checks is an upper bound of the real records, and
/// not a wild one.
#[test]
fn record_size_estimate_bounds_the_real_records() {
    for config in [
        small_hunter(),
        small_hunter()
            .with_overrides(&json!({"population": 40, "generations": 2}))
            .unwrap(),
    ] {
        let features = config.validate().unwrap().features.len();
        let estimate = config.estimated_record_bytes(features);
        for record in run_all(&config) {
            let real = serde_json::to_vec(&record).unwrap().len() as u64
                + serde_json::to_vec(&record.hall_of_fame.weights)
                    .unwrap()
                    .len() as u64;
            assert!(real <= estimate, "{real} bytes, estimated {estimate}");
            assert!(estimate < 3 * real, "{real} bytes, estimated {estimate}");
        }
        assert_eq!(
            config.estimated_storage_bytes(features),
            u64::from(config.generations) * estimate
        );
    }
}

/// A cancel reaches inside the games under way: a generation of two depth-10 games on
/// Kalah(12,8) (many minutes each) stops within 2 s of it, on both threads.
#[test]
fn a_cancel_stops_the_games_under_way() {
    use std::time::{Duration, Instant};
    let config = GaConfig::default()
        .with_overrides(
            &json!({"population": 2, "generations": 1, "depth": 10, "seed": 3,
                    "board": {"pits": 12, "seeds": 8}, "benchmark": {"panel": []}}),
        )
        .unwrap();
    let mut driver = Driver::open(TunerConfig::new(config), None).unwrap();
    let cancel = Budget::unlimited();
    let control = StepControl::new(cancel.clone());
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        cancel.cancel();
        Instant::now()
    });
    let step = on_threads(2, || {
        driver.step(&control, &mut []).map(|s| format!("{s:?}"))
    });
    assert_eq!(step.unwrap(), "Cancelled");
    let returned = Instant::now();
    let cancelled = stopper.join().unwrap();
    let took = returned.saturating_duration_since(cancelled);
    assert!(
        took < Duration::from_secs(2),
        "the generation returned {took:?} after the cancel"
    );
}
