//! Learning runs (TD-Leaf and Texel stepped checkpoint by checkpoint): configs of all tuners
//! read back as what they are, a run resumed from any checkpoint is the uninterrupted run,
//! the number of checkpoints is known in advance, and the loader refuses what it should.

use kalah_tuner::agents::FileAccess;
use kalah_tuner::ga::GaConfig;
use kalah_tuner::search::Budget;
use kalah_tuner::tune::load_tuner;
use kalah_tuner::tune::GenerationRecord;
use kalah_tuner::tune::TunerConfig;
use kalah_tuner::tune::{Driver, StepControl};
use kalah_tuner::tuners::learning::load_learning;
use kalah_tuner::tuners::LearningConfig;
use serde_json::{json, Value};

fn learning(tuner: &str, overrides: Value) -> LearningConfig {
    load_learning(tuner, None, &[&overrides], &FileAccess::Any)
        .unwrap_or_else(|e| panic!("{tuner} {overrides}: {e}"))
}

fn small_td() -> LearningConfig {
    learning(
        "td-leaf",
        json!({"games": 96, "batch": 8, "checkpoint_games": 20, "depth": 2, "seed": 3,
               "play_depth": 2, "benchmark": {"pairs": 4, "panel": ["minimax:2", "greedy"]}}),
    )
}

fn small_texel() -> LearningConfig {
    learning(
        "texel",
        json!({"games": 24, "rounds": 3, "depth": 1, "exact_seeds": 8, "seed": 3,
               "source": "minimax:2", "play_depth": 2,
               "benchmark": {"pairs": 4, "panel": ["minimax:2"]}}),
    )
}

/// The records of a learning run of `config` after `last` (from the start without one),
/// stepped by the driver that steps every run.
fn records_after(
    config: &LearningConfig,
    last: Option<&GenerationRecord>,
) -> Vec<GenerationRecord> {
    let mut driver = Driver::open(TunerConfig::new(config.clone()), last.cloned()).expect("valid");
    let mut records = Vec::new();
    driver
        .run(&StepControl::new(Budget::unlimited()), &mut [&mut records])
        .expect("runs");
    records
}

fn all_records(config: &LearningConfig) -> Vec<GenerationRecord> {
    records_after(config, None)
}

#[test]
fn a_run_resumed_from_any_checkpoint_is_the_uninterrupted_run() {
    for config in [small_td(), small_texel()] {
        let records = all_records(&config);
        assert_eq!(
            records.len() as u32,
            config.checkpoints(),
            "{}",
            config.tuner()
        );
        assert!(records.last().unwrap().stop.is_some());
        assert!(records[..records.len() - 1]
            .iter()
            .all(|r| r.stop.is_none()));
        for (i, r) in records.iter().enumerate() {
            assert_eq!(r.generation, i as u32);
            assert_eq!(r.individuals.len(), 1);
            let panel = r.benchmark.as_ref().expect("every checkpoint is measured");
            assert_eq!(r.individuals[0].fitness, panel.leaders[0].overall.score);
            assert!(r.learner.is_some() && r.champion.is_some());
        }
        for k in 0..records.len() {
            let rest = records_after(&config, Some(&records[k]));
            assert_eq!(rest.len(), records.len() - k - 1);
            for (a, b) in rest.iter().zip(&records[k + 1..]) {
                assert_eq!(
                    a.without_timing(),
                    b.without_timing(),
                    "{} resumed after {k}",
                    config.tuner()
                );
            }
        }
    }
}

#[test]
fn the_checkpoint_count_is_known_before_the_run() {
    for (games, batch, every) in [(100, 16, 20), (100, 16, 10), (64, 16, 64), (50, 7, 1)] {
        let config = learning(
            "td",
            json!({"games": games, "batch": batch, "checkpoint_games": every, "depth": 1,
                   "play_depth": 1, "benchmark": {"pairs": 1, "panel": ["random"]}}),
        );
        assert_eq!(
            all_records(&config).len() as u32,
            config.checkpoints(),
            "games {games}, batch {batch}, every {every}"
        );
    }
}

#[test]
fn configs_of_every_tuner_read_back_as_what_they_are() {
    for config in [small_td(), small_texel()] {
        let text = serde_json::to_string(&TunerConfig::new(config.clone())).expect("serialises");
        let back: TunerConfig = serde_json::from_str(&text).expect("reads");
        assert_eq!(back.get::<LearningConfig>(), Some(&config));
        assert_eq!(back.tuner(), config.tuner());
    }
    let ga = GaConfig::preset("abrams").unwrap();
    let back: TunerConfig = serde_json::from_value(serde_json::to_value(&ga).unwrap()).unwrap();
    assert_eq!(back.get::<GaConfig>(), Some(&ga));
    // An export of an earlier version kept the learner's config alone: it still reads, with
    // the run's defaults.
    let mut learner = serde_json::to_value(&small_td().learner).unwrap();
    let back: TunerConfig = serde_json::from_value(learner.clone()).expect("learner alone");
    assert_eq!(back.get::<LearningConfig>().unwrap().play_depth, 4);
    learner["colour"] = json!("blue");
    assert!(serde_json::from_value::<TunerConfig>(learner).is_err());
}

#[test]
fn the_export_is_the_champion_at_the_play_depth() {
    let config = small_td();
    let records = all_records(&config);
    let doc = TunerConfig::new(config.clone())
        .export(&records)
        .expect("exports");
    let champion = records.last().unwrap().champion.as_ref().unwrap();
    assert_eq!(doc.weights, champion.weights);
    assert_eq!(doc.generation, champion.generation);
    assert_eq!(doc.depth, config.play_depth);
    assert_eq!(doc.config.get::<LearningConfig>(), Some(&config));
}

#[test]
fn learners_play_under_the_pie_rule_when_asked_and_their_export_says_so() {
    for (tuner, plain) in [("td-leaf", small_td()), ("texel", small_texel())] {
        let mut value = serde_json::to_value(&plain).unwrap();
        value["pie"] = json!(true);
        let pie = learning(tuner, value);
        assert!(pie.learner.pie() && !plain.learner.pie());
        let records = all_records(&pie);
        // The games differ from the same run without the rule: the opening and the swap
        // reached self-play (or Texel's source games) and the panel.
        assert_ne!(
            records.last().unwrap().individuals[0].weights,
            all_records(&plain).last().unwrap().individuals[0].weights,
            "{tuner}"
        );
        let doc = TunerConfig::new(pie.clone())
            .export(&records)
            .expect("exports");
        assert!(doc.pie, "{tuner}: the export does not record the pie rule");
        // The rule survives a resume from the middle.
        let rest = records_after(&pie, Some(&records[1]));
        assert_eq!(
            rest.last().unwrap().individuals,
            records.last().unwrap().individuals
        );
    }
}

#[test]
fn bad_learning_configs_name_their_field() {
    let field = |tuner: &str, preset: Option<&str>, layer: Value, files: &FileAccess| {
        load_tuner(Some(tuner), preset, &[&layer], files)
            .expect_err(&format!("{tuner} {layer}"))
            .field()
            .to_string()
    };
    let any = &FileAccess::Any;
    assert_eq!(field("sarsa", None, json!({}), any), "tuner");
    assert_eq!(field("texel", Some("ahmed"), json!({}), any), "preset");
    assert_eq!(field("td", Some("nosuch"), json!({}), any), "preset");
    assert_eq!(field("td", None, json!({"alpha": -1}), any), "alpha");
    assert_eq!(field("td", None, json!({"method": "texel"}), any), "method");
    assert_eq!(field("td", None, json!({"games": "many"}), any), "games");
    assert_eq!(field("td", None, json!({"colour": 1}), any), "colour");
    assert_eq!(
        field("texel", None, json!({"checkpoint_games": 5}), any),
        "checkpoint_games"
    );
    assert_eq!(
        field("td", None, json!({"checkpoint_games": 0}), any),
        "checkpoint_games"
    );
    assert_eq!(
        field("td", None, json!({"play_depth": 99}), any),
        "play_depth"
    );
    assert_eq!(
        field("td", None, json!({"benchmark": {"panel": []}}), any),
        "benchmark.panel"
    );
    assert_eq!(
        field("td", None, json!({"benchmark": {"leaders": 2}}), any),
        "benchmark.leaders"
    );
    assert_eq!(
        field("td", None, json!({"benchmark": {"pairs": 0}}), any),
        "benchmark.pairs"
    );
    assert_eq!(
        field("td", None, json!({"games": 10000000, "depth": 8}), any),
        "games"
    );
    // Exact labels of big endgames are counted in the estimate: a solve costs about 0.06 ms at
    // 14 seeds and doubles every two (measured up to 18, see
    // `LearningConfig::estimated_core_hours`), so the largest `exact_seeds` (24) on the most
    // games adds about an hour, and what takes a Texel run past the cap is its rounds.
    let hours = |exact_seeds: u32| {
        let layer = json!({"games": 1000000, "exact_seeds": exact_seeds, "rounds": 1});
        load_tuner(Some("texel"), None, &[&layer], any)
            .expect("within the cap")
            .get::<LearningConfig>()
            .expect("a learning config")
            .estimated_core_hours()
    };
    assert!(
        hours(24) > hours(0) + 0.5,
        "exact labels from 24 seeds: {} core-hours, none: {}",
        hours(24),
        hours(0)
    );
    assert_eq!(
        field(
            "texel",
            None,
            json!({"games": 1000000, "exact_seeds": 24, "rounds": 1000, "depth": 6}),
            any
        ),
        "rounds"
    );
    load_tuner(
        Some("texel"),
        None,
        &[&json!({"games": 50000, "exact_seeds": 14, "rounds": 100, "depth": 4})],
        any,
    )
    .expect("the comparison's texel run stays allowed");
    // The server's policy: files named by agents are refused before they are opened.
    let none = &FileAccess::None;
    assert!(field(
        "td",
        None,
        json!({"benchmark": {"panel": ["export:/etc/passwd"]}}),
        none
    )
    .starts_with("benchmark.panel[0]"));
    assert!(field("texel", None, json!({"source": "a3c:/dev/zero"}), none).starts_with("source"));
}

/// The storage estimate run creation checks bounds the real checkpoint rows (the record and
/// the best weights beside it, as the GA's), and not wildly; a TD run that would measure
/// after every one of millions of games is refused at creation with the figure.
#[test]
fn checkpoint_storage_is_estimated_and_bounded() {
    for config in [small_td(), small_texel()] {
        let estimate = config.estimated_record_bytes();
        for record in all_records(&config) {
            let real = serde_json::to_vec(&record).unwrap().len() as u64
                + serde_json::to_vec(&record.hall_of_fame.weights)
                    .unwrap()
                    .len() as u64;
            assert!(
                real <= estimate,
                "{}: {real} bytes, estimated {estimate}",
                config.tuner()
            );
            assert!(
                estimate < 4 * real,
                "{}: {real} bytes, estimated {estimate}",
                config.tuner()
            );
        }
        assert_eq!(
            config.estimated_storage_bytes(),
            u64::from(config.checkpoints()) * estimate
        );
    }
    let flood = load_learning(
        "td",
        None,
        &[&json!({"games": 10_000_000, "checkpoint_games": 1, "batch": 1, "depth": 1, "play_depth": 1,
                  "benchmark": {"pairs": 1, "panel": ["random"]}})],
        &FileAccess::Any,
    )
    .unwrap_err()
    .to_string();
    assert!(
        flood.contains("checkpoint_games")
            && flood.contains("GB")
            && flood.contains("checkpoint records"),
        "{flood}"
    );
}
