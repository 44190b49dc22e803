//! The population tuners beside the GA: CMA-ES, SPSA and differential evolution
//! (`tuners::cmaes`, `tuners::spsa`, `tuners::de`). Their configs as the loader and stored runs
//! read them, determinism, resuming from any record, and that each climbs from bad weights
//! against fixed opponents. Small configs: seconds in release.

use kalah_tuner::agents::FileAccess;
use kalah_tuner::search::Budget;
use kalah_tuner::tune::{ConfigError, GenerationRecord};
use kalah_tuner::tune::{Driver, ExportDocument, StepControl, TunerConfig};
use serde_json::{json, Value};

const TUNERS: [&str; 2] = ["cmaes", "spsa"];

/// Ten hunter10 weights against greedy and depth-2 minimax, with shared openings. Both tuners
/// start in the middle of the bounds: all weights 0, a player that loses every game.
fn easy_target(generations: u32) -> Value {
    json!({
        "seed": 31,
        "population": 9,
        "generations": generations,
        "features": "hunter10",
        "depth": 2,
        "bounds": {"min": -1.0, "max": 1.0},
        "fitness": {"mode": "opponents", "games_per_pair": 20, "opening_plies": 2,
                    "common_openings": true, "opponents": ["greedy", "minimax:2"]},
        "benchmark": {"panel": []}
    })
}

fn load(tuner: &str, layer: &Value) -> Result<TunerConfig, ConfigError> {
    kalah_tuner::tune::load_tuner(Some(tuner), None, &[layer], &FileAccess::Any)
}

/// The records a run of `config` makes after `records`, stepped by the driver every run uses.
fn run(config: &TunerConfig, records: &[GenerationRecord]) -> Vec<GenerationRecord> {
    let mut driver =
        Driver::open_within(config.clone(), records.to_vec(), &Budget::unlimited()).expect("opens");
    let mut made = Vec::new();
    driver
        .run(&StepControl::new(Budget::unlimited()), &mut [&mut made])
        .expect("runs");
    made
}

fn canonical(records: &[GenerationRecord]) -> String {
    let stripped: Vec<GenerationRecord> = records.iter().map(|r| r.without_timing()).collect();
    serde_json::to_string(&stripped).expect("records serialise")
}

#[test]
fn configs_name_their_tuner_and_read_back() {
    for tuner in TUNERS {
        let config = load(tuner, &easy_target(4)).expect("loads");
        assert_eq!(config.tuner(), tuner);
        let text = serde_json::to_string(&config).expect("serialises");
        let value: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(value["tuner"], tuner, "{text}");
        assert!(
            value[tuner].is_object(),
            "its settings under its name: {text}"
        );
        let back: TunerConfig = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, config);
        assert_eq!(
            kalah_tuner::ga::tuner::population_of(&back).map(|ga| ga.population),
            Some(9)
        );
        // A GA config is still a GA config.
        let ga = load("ga", &easy_target(4)).expect("loads");
        let back: TunerConfig =
            serde_json::from_str(&serde_json::to_string(&ga).expect("serialises")).expect("reads");
        assert_eq!(back.tuner(), "ga");
    }
}

#[test]
fn settings_are_checked_with_their_field_named() {
    let bad = |tuner: &str, patch: Value| {
        let mut layer = easy_target(4);
        for (k, v) in patch.as_object().expect("object") {
            layer[k] = v.clone();
        }
        load(tuner, &layer).expect_err("refused")
    };
    let e = bad("cmaes", json!({"cmaes": {"step": 0.0}}));
    assert_eq!(e.field(), "cmaes.step", "{e}");
    let e = bad("cmaes", json!({"cmaes": {"stepp": 0.2}}));
    assert!(e.to_string().contains("stepp"), "{e}");
    let e = bad("cmaes", json!({"population": 2}));
    assert_eq!(e.field(), "population", "{e}");
    let e = bad("spsa", json!({"spsa": {"gain": -1.0}}));
    assert_eq!(e.field(), "spsa.gain", "{e}");
    let e = bad("spsa", json!({"spsa": {"perturbation": 2.0}}));
    assert_eq!(e.field(), "spsa.perturbation", "{e}");
    let e = bad("spsa", json!({"tuner": "cmaes"}));
    assert_eq!(e.field(), "tuner", "{e}");
    let e = load("annealing", &json!({})).expect_err("unknown");
    assert!(
        e.to_string().contains("cmaes") && e.to_string().contains("spsa"),
        "the tuners are listed: {e}"
    );
    // The GA's own field checks still apply.
    let e = bad("spsa", json!({"depth": 0}));
    assert_eq!(e.field(), "depth", "{e}");
}

#[test]
fn runs_are_reproducible_and_resume_from_any_record() {
    for tuner in TUNERS {
        let config = load(tuner, &easy_target(5)).expect("loads");
        let whole = run(&config, &[]);
        assert_eq!(whole.len(), 5);
        assert_eq!(canonical(&whole), canonical(&run(&config, &[])), "{tuner}");
        for k in 0..whole.len() {
            let rest = run(&config, &whole[..=k]);
            assert_eq!(
                canonical(&rest),
                canonical(&whole[k + 1..]),
                "{tuner} resumed after generation {k}"
            );
        }
        if config.resumes_from_all() {
            // CMA-ES is rebuilt from every record: the last alone is refused, not misread.
            assert!(
                !whole.iter().any(|r| r.breeder.is_some()),
                "nothing extra stored"
            );
            let e = config.open(Some(&whole[2])).err().expect("refused");
            assert!(e.to_string().contains("every record"), "{e}");
        } else {
            // SPSA's theta is in each record: the last is enough, and one without it refused.
            assert!(whole.iter().all(|r| r.breeder.is_some()), "theta kept");
            let rest = run(&config, &whole[2..=2]);
            assert_eq!(canonical(&rest), canonical(&whole[3..]), "{tuner}");
            let mut foreign = whole[2].clone();
            foreign.breeder = None;
            assert!(config.open(Some(&foreign)).is_err(), "{tuner}");
        }
    }
}

#[test]
fn each_climbs_from_a_losing_start() {
    for tuner in TUNERS {
        let config = load(tuner, &easy_target(12)).expect("loads");
        let records = run(&config, &[]);
        // The last individual is the strategy's own estimate (CMA-ES's mean, SPSA's theta).
        let estimate = |r: &GenerationRecord| r.individuals.last().expect("individuals").fitness;
        let first = estimate(&records[0]);
        let last: f64 = records[records.len() - 3..]
            .iter()
            .map(estimate)
            .sum::<f64>()
            / 3.0;
        assert!(
            last >= first + 0.25,
            "{tuner}: its estimate scored {first:.3} at first and {last:.3} over the last three generations"
        );
    }
}

#[test]
fn a_run_exports_a_player_with_its_config() {
    for tuner in TUNERS {
        let config = load(tuner, &easy_target(3)).expect("loads");
        let records = run(&config, &[]);
        let doc = config.export(&records).expect("exports");
        let text = doc.to_json_pretty();
        let back = ExportDocument::from_json(&text).expect("reads back");
        assert_eq!(back.config, config, "{tuner}");
        assert_eq!(back.weights.len(), 10);
        let spec = back.agent_spec().to_string();
        assert!(
            spec.starts_with("heuristic:"),
            "{tuner}'s export plays: {spec}"
        );
    }
}

/// Differential evolution's config: `easy_target` with an even population (five targets and
/// their trials).
fn de_target(generations: u32) -> Value {
    let mut layer = easy_target(generations);
    layer["population"] = json!(10);
    layer
}

#[test]
fn differential_evolution_is_offered_wherever_a_tuner_is() {
    assert!(kalah_tuner::tune::tuner_names().contains(&"de"));
    assert_eq!(
        kalah_tuner::tune::presets_of("de"),
        kalah_tuner::tune::presets_of("ga")
    );
    let form = kalah_tuner::tuners::schema::config_schema();
    assert!(
        form["tuners"]["de"]["label"]
            .as_str()
            .is_some_and(|l| l.contains("differential")),
        "the form offers it: {}",
        form["tuners"]["de"]
    );
    let config = load("de", &de_target(3)).expect("loads");
    let text = serde_json::to_string(&config).expect("serialises");
    let value: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(value["tuner"], "de");
    assert_eq!(value["de"]["weight"], 0.5, "{text}");
    let back: TunerConfig = serde_json::from_str(&text).expect("reads back");
    assert_eq!(back, config);
}

#[test]
fn differential_evolution_checks_its_settings() {
    let bad = |patch: Value| {
        let mut layer = de_target(3);
        for (k, v) in patch.as_object().expect("object") {
            layer[k] = v.clone();
        }
        load("de", &layer).expect_err("refused")
    };
    assert_eq!(bad(json!({"population": 9})).field(), "population");
    assert_eq!(bad(json!({"population": 6})).field(), "population");
    assert_eq!(bad(json!({"de": {"weight": 0.0}})).field(), "de.weight");
    assert_eq!(
        bad(json!({"de": {"crossover": 1.5}})).field(),
        "de.crossover"
    );
    let e = bad(json!({"de": {"cr": 0.5}}));
    assert!(e.to_string().contains("cr"), "{e}");
}

#[test]
fn differential_evolution_is_reproducible_resumes_and_climbs() {
    let config = load("de", &de_target(12)).expect("loads");
    let whole = run(&config, &[]);
    assert_eq!(whole.len(), 12);
    assert_eq!(canonical(&whole), canonical(&run(&config, &[])));
    for k in [0, 4, 10] {
        let rest = run(&config, &whole[k..=k]);
        assert_eq!(
            canonical(&rest),
            canonical(&whole[k + 1..]),
            "resumed after generation {k} from its record alone"
        );
    }
    // The targets (the first half) only ever keep or improve on their own trial's games, and
    // against fixed opponents their mean climbs from the random start.
    let targets_mean =
        |r: &GenerationRecord| r.individuals[..5].iter().map(|i| i.fitness).sum::<f64>() / 5.0;
    let first = targets_mean(&whole[0]);
    let last = whole[whole.len() - 3..]
        .iter()
        .map(targets_mean)
        .sum::<f64>()
        / 3.0;
    assert!(
        last >= first + 0.15,
        "the targets scored {first:.3} at first and {last:.3} over the last three generations"
    );
}

/// The recorded runs of docs/run-costs.toml (presets of every tuner, 12-pit boards, learners,
/// a large panel; `kalah-tuner bench --cost-runs docs/run-costs.toml --cost-measure` remakes
/// them): the server's estimates of each, from its config as the command line loads it, are
/// within 2x of the processor time the run took and of the bytes its records took. An estimate too low lets a run past the
/// core-hour cap; one too high refuses runs that would fit.
#[test]
fn every_recorded_run_is_estimated_within_2x() {
    // Read when the test runs, so that new measurements need no rebuild.
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string(format!("{root}/docs/run-costs.toml"))
        .expect("docs/run-costs.toml is readable");
    let file: toml::Table = toml::from_str(&text).expect("docs/run-costs.toml is TOML");
    let runs = file["run"].as_array().expect("[[run]] tables");
    let mut checked = Vec::new();
    for run in runs {
        let name = run["name"].as_str().expect("a run has a name");
        let tuner = run["tuner"].as_str().expect("a run names its tuner");
        let preset = run.get("preset").and_then(|p| p.as_str());
        let file_layer: Option<Value> = run.get("config_file").map(|path| {
            let path = format!("{root}/{}", path.as_str().expect("a path"));
            let text = std::fs::read_to_string(&path).expect("the config file is readable");
            // Read as `evolve --config` reads it.
            kalah_tuner::ga::loader::parse_document(&text, kalah_tuner::ga::loader::Format::Auto)
                .expect("a config file")
        });
        let patch = match run.get("config") {
            Some(config) => serde_json::to_value(config).expect("a JSON config"),
            None => json!({}),
        };
        let layers: Vec<&Value> = file_layer.iter().chain([&patch]).collect();
        let config = kalah_tuner::tune::load_tuner(Some(tuner), preset, &layers, &FileAccess::Any)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let measured = run["measured_cpu_s"]
            .as_float()
            .unwrap_or_else(|| panic!("{name}: no measured_cpu_s"));
        let ratio = config.estimated_core_hours() * 3600.0 / measured;
        assert!(
            (0.5..=2.0).contains(&ratio),
            "{name}: estimated at {ratio:.2} of the measured {measured} s"
        );
        // The storage estimate is an upper bound of the records (run creation refuses by
        // it), and not a wild one.
        let bytes = run["measured_record_bytes"]
            .as_integer()
            .unwrap_or_else(|| panic!("{name}: no measured_record_bytes"));
        let ratio = config.estimated_storage_bytes() as f64 / bytes as f64;
        assert!(
            (1.0..=2.0).contains(&ratio),
            "{name}: records estimated at {ratio:.2} of the measured {bytes} bytes"
        );
        checked.push(tuner);
    }
    for tuner in kalah_tuner::tune::tuner_names() {
        assert!(
            checked.contains(&tuner),
            "docs/run-costs.toml has no run of {tuner}"
        );
    }
}
