//! The GA config as a form: every field the dashboard's "new run" page offers, with its
//! default, its range (read from the same constants [`GaConfig::validate`] checks against),
//! and when it applies. Served as `GET /api/config-schema`, so the dashboard copies no default
//! or limit by hand; the server's validation stays the authority on what a run accepts.

use crate::agents::FileAccess;
use serde_json::{json, Map, Value};

use crate::agents::spec::FeatureChoice;
use crate::agents::AgentSpec;
use crate::eval::FEATURE_SETS;
use crate::ga::config::{
    bound_of, GaConfig, RacingConfig, BENCHMARK_BOUNDS, GA_BOUNDS, MAX_OPPONENTS, PRESETS,
};
use crate::game::SettingBound;
use crate::game::{MAX_PITS, MAX_SEEDS};
use crate::rl::td::{PRESETS as TD_PRESETS, TD_BOUNDS};
use crate::rl::texel::TEXEL_BOUNDS;
use crate::tune::{MAX_CORE_HOURS, MAX_RUN_STORAGE_BYTES};

use super::learning::{LearnerConfig, LearningConfig, LEARNING_BOUNDS, LEARNING_TUNERS};

/// A config flattened to dotted keys (`fitness.mode`), as the form names its fields. Arrays
/// (opponents, weights) stay whole.
fn flatten(prefix: &str, value: &Value, out: &mut Map<String, Value>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let key = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&key, inner, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

fn flat(config: &GaConfig) -> Map<String, Value> {
    let mut out = Map::new();
    // A GaConfig is plain data; serialising it cannot fail.
    let value = serde_json::to_value(config).unwrap_or(Value::Null);
    flatten("", &value, &mut out);
    out
}

/// What a preset changes from the defaults, as dotted keys.
fn preset_overrides(defaults: &Map<String, Value>, preset: &GaConfig) -> Map<String, Value> {
    flat(preset)
        .into_iter()
        .filter(|(key, value)| defaults.get(key) != Some(value))
        .collect()
}

fn presets(defaults: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    out.insert(
        String::new(),
        json!({"label": "none (defaults)", "overrides": {}}),
    );
    for &name in PRESETS {
        // Every name in PRESETS is a preset.
        let Ok(config) = GaConfig::preset(name) else {
            continue;
        };
        let features = match &config.features {
            FeatureChoice::Set(set) => set.clone(),
            FeatureChoice::List(list) => format!("{} features", list.len()),
        };
        let label = format!(
            "{name}: population {}, depth {}, {} generations, {features}",
            config.population, config.depth, config.generations
        );
        out.insert(
            name.to_string(),
            json!({"label": label, "overrides": preset_overrides(defaults, &config)}),
        );
    }
    Value::Object(out)
}

/// Field kinds: int | real | select | bool | features | weights | opponents. `optional`
/// fields may be left empty. `show_if` names another field and the value(s) it must (or must
/// not) have for this one to apply.
fn groups() -> Value {
    json!([
        {"title": "Population and length", "fields": [
            {"key": "seed", "kind": "int", "min": 0, "range": "0 or more", "help": "The run is a pure function of its config and this seed."},
            ga("population", json!({})),
            ga("generations", json!({})),
            ga("elite", json!({})),
            ga("stagnation", json!({})),
            ga("target_fitness", json!({}))
        ]},
        {"title": "Players", "fields": [
            {"key": "features", "kind": "features", "range": "a named set, or names joined by +", "help": "The evaluation features whose weights are evolved."},
            ga("depth", json!({})),
            ga("bounds.min", json!({})),
            ga("bounds.max", json!({}))
        ]},
        {"title": "First generation", "fields": [
            {"key": "init.kind", "kind": "select", "options": ["uniform", "around"], "range": "uniform or around"},
            {"key": "init.weights", "kind": "weights", "range": "a preset name (published) or numbers", "help": "Centre for \"around\"; one number per feature, comma-separated.", "show_if": {"key": "init.kind", "is": ["around"]}},
            ga("init.sigma", json!({"show_if": {"key": "init.kind", "is": ["around"]}}))
        ]},
        {"title": "Breeding", "fields": [
            {"key": "selection.kind", "kind": "select", "options": ["roulette", "tournament", "rank", "sus"], "range": "roulette, tournament, rank, sus"},
            ga("selection.k", json!({"show_if": {"key": "selection.kind", "is": ["tournament"]}})),
            {"key": "crossover.kind", "kind": "select", "options": ["average-hybrid", "average", "hybrid", "uniform", "blend"], "range": "average-hybrid, average, hybrid, uniform, blend"},
            ga("crossover.alpha", json!({"show_if": {"key": "crossover.kind", "is": ["blend"]}})),
            ga("mutation.rate", json!({})),
            ga("mutation.sigma", json!({}))
        ]},
        {"title": "Fitness", "fields": [
            {"key": "fitness.mode", "kind": "select", "options": ["round-robin", "opponents", "mixed"], "range": "round-robin, opponents, mixed"},
            ga("fitness.games_per_pair", json!({})),
            {"key": "fitness.self_play", "kind": "bool", "range": "", "help": "Also count games against itself (Hunter)."},
            {"key": "fitness.opponents", "kind": "opponents", "max": MAX_OPPONENTS, "range": format!("up to {MAX_OPPONENTS} agent specs, one a line"), "help": "Such as minimax:4 or pekar.", "show_if": {"key": "fitness.mode", "is_not": ["round-robin"]}},
            ga("fitness.mixed_weight", json!({"show_if": {"key": "fitness.mode", "is": ["mixed"]}})),
            ga("fitness.racing.rounds", json!({"show_if": {"key": "fitness.mode", "is_not": ["round-robin"]}})),
            ga("fitness.racing.leaders", json!({"default": RacingConfig::default().leaders, "show_if": {"key": "fitness.racing.rounds", "is_not": [null]}})),
            ga("fitness.racing.z", json!({"default": RacingConfig::default().z, "show_if": {"key": "fitness.racing.rounds", "is_not": [null]}})),
            {"key": "fitness.common_openings", "kind": "bool", "default": false, "range": "", "help": "Give every individual of a generation the same openings and tie-breaks against the fixed opponents, so that fitness differences come from the weights.", "show_if": {"key": "fitness.mode", "is_not": ["round-robin"]}},
            ga("fitness.opening_plies", json!({}))
        ]},
        {"title": "Board and rules", "fields": [
            {"key": "board.pits", "kind": "int", "min": 1, "max": MAX_PITS, "range": format!("1 to {MAX_PITS}")},
            {"key": "board.seeds", "kind": "int", "min": 1, "range": format!("1 or more ({MAX_SEEDS} seeds at most)")},
            {"key": "rules", "kind": "select", "options": ["standard", "empty-capture"], "range": "standard or empty-capture"},
            {"key": "pie", "kind": "bool", "range": "", "help": PIE_HELP}
        ]},
        benchmark_group(true)
    ])
}

const PIE_HELP: &str = "The pie rule: South's first move earns no extra turn, then North may swap seats (the ManKalah engine's game).";

/// The benchmark panel's fields. A learning run measures every checkpoint with its one set
/// of weights, so `every` and `leaders` are the GA's only (`ga`).
fn benchmark_group(ga: bool) -> Value {
    let mut fields = vec![
        json!({"key": "benchmark.panel", "kind": "opponents", "max": MAX_OPPONENTS, "range": format!("up to {MAX_OPPONENTS} agent specs, one a line{}", if ga { "; empty turns the panel off" } else { "; at least one" }), "help": "Fixed agents the best weights play on openings fitness never sees: the run's honest measure."}),
        bounded(BENCHMARK_BOUNDS, "benchmark.pairs", json!({})),
    ];
    if ga {
        fields.push(bounded(BENCHMARK_BOUNDS, "benchmark.every", json!({})));
        fields.push(bounded(BENCHMARK_BOUNDS, "benchmark.leaders", json!({})));
    }
    fields.push(bounded(
        BENCHMARK_BOUNDS,
        "benchmark.opening_plies",
        json!({}),
    ));
    fields.push(bounded(BENCHMARK_BOUNDS, "benchmark.agreement", json!({})));
    json!({"title": "Benchmark panel", "fields": fields})
}

/// The form's field of the setting at `key`, made from its declared bound in `bounds`, with
/// `extra` (when it applies, a default) laid over it. A key with no bound gets a bare field,
/// which the schema's tests refuse.
fn bounded(bounds: &[SettingBound], key: &str, extra: Value) -> Value {
    let mut field = match bound_of(bounds, key) {
        Some(bound) => bound.form_field_at(key),
        None => json!({"key": key}),
    };
    if let (Some(field), Value::Object(extra)) = (field.as_object_mut(), extra) {
        field.extend(extra);
    }
    field
}

/// [`bounded`] among the GA's own settings.
fn ga(key: &str, extra: Value) -> Value {
    bounded(GA_BOUNDS, key, extra)
}

/// The fields of a learning run's form: the learner's own (TD's or Texel's), the run's
/// (`play_depth`, `checkpoint_games`), the board and the panel, each numeric one from the table
/// its check reads.
fn learning_groups(learner: &LearnerConfig) -> Value {
    let seed = json!({"key": "seed", "kind": "int", "min": 0, "range": "0 or more", "help": "The run is a pure function of its config and this seed."});
    let (title, bounds, mut fields, last) = match learner {
        LearnerConfig::Texel(_) => (
            "Fitting",
            TEXEL_BOUNDS,
            vec![
                seed,
                json!({"key": "source", "kind": "agent", "range": "one agent spec", "help": "The player whose self-play games give the positions, such as heuristic:hunter10:published:4."}),
            ],
            None,
        ),
        LearnerConfig::Td(_) => (
            "Learning",
            TD_BOUNDS,
            vec![seed],
            Some(bounded(LEARNING_BOUNDS, "checkpoint_games", json!({}))),
        ),
    };
    // The learner's numeric settings, from the table its check reads.
    fields.extend(bounds.iter().map(|bound| bound.form_field_at(bound.name)));
    fields.extend(last);
    let learner = json!({"title": title, "fields": fields});
    json!([
        learner,
        {"title": "Players", "fields": [
            {"key": "features", "kind": "feature_list", "range": "a named set, or names joined by +", "help": "The evaluation features whose weights are learnt."},
            {"key": "initial", "kind": "weights", "range": "one number per feature", "help": "The weights learning starts from; a named set's published weights when left as they come."},
            bounded(LEARNING_BOUNDS, "play_depth", json!({}))
        ]},
        {"title": "Board and rules", "fields": [
            {"key": "pits", "kind": "int", "min": 1, "max": MAX_PITS, "range": format!("1 to {MAX_PITS}")},
            {"key": "seeds", "kind": "int", "min": 1, "range": format!("1 or more ({MAX_SEEDS} seeds at most)")},
            {"key": "rules", "kind": "select", "options": ["standard", "empty-capture"], "range": "standard or empty-capture"},
            {"key": "pie", "kind": "bool", "range": "", "help": PIE_HELP}
        ]},
        benchmark_group(false)
    ])
}

/// Starting values of every field of `groups` that `defaults` lacks (unset optional fields
/// are left out of a serialised config): empty text for weights, null for the rest.
fn fill_missing(defaults: &mut Map<String, Value>, groups: &Value) {
    for field in fields_of(groups) {
        // Agents are shown as people write them ("minimax:4"), when that says the same.
        if let (Some(key), Some("opponents" | "agent")) =
            (field["key"].as_str(), field["kind"].as_str())
        {
            if let Some(value) = defaults.get_mut(key) {
                match value {
                    Value::Array(items) => items.iter_mut().for_each(short_spec),
                    other => short_spec(other),
                }
            }
        }
        if let Some(key) = field["key"].as_str() {
            // A key the default config leaves out (an option that is off) takes the field's
            // own default, the value it gets once the option is on.
            let empty = if let Some(default) = field.get("default") {
                default.clone()
            } else if field["kind"] == "weights" {
                json!("")
            } else {
                Value::Null
            };
            defaults.entry(key).or_insert(empty);
        }
    }
}

/// An agent spec object as its short text, when the text reads back as the same agent.
fn short_spec(value: &mut Value) {
    let Ok(spec) = serde_json::from_value::<AgentSpec>(value.clone()) else {
        return;
    };
    let text = spec.to_string();
    if AgentSpec::parse(&text).is_ok_and(|back| back == spec) {
        *value = Value::String(text);
    }
}

fn fields_of(groups: &Value) -> Vec<Value> {
    groups
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["fields"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// A tuner's short name, as the dashboard's lists and pages show it: its label up to the
/// colon ("CMA-ES" of "CMA-ES: covariance matrix adaptation").
fn short_name(label: &str) -> &str {
    label.split_once(':').map_or(label, |(name, _)| name)
}

/// A learning tuner's form: its defaults, TD's presets, its field groups.
fn learning_form(tuner: &str) -> Value {
    let Ok(learner) = LearnerConfig::for_tuner(tuner, None) else {
        return Value::Null;
    };
    let label = learner.label();
    let config = |preset| {
        LearnerConfig::for_tuner(tuner, preset)
            .map(|learner| LearningConfig::new(learner).to_value())
            .unwrap_or(Value::Null)
    };
    let mut defaults = Map::new();
    let mut base = config(None);
    // The source agent is one field of the form, written as a spec: flattened into its
    // object's parts, it left the field empty and the form invalid on opening.
    if let Some(source) = base.get_mut("source") {
        short_spec(source);
    }
    flatten("", &base, &mut defaults);
    let groups = learning_groups(&learner);
    fill_missing(&mut defaults, &groups);
    let mut presets = Map::new();
    presets.insert(
        String::new(),
        json!({"label": "none (defaults)", "overrides": {}}),
    );
    // The presets are TD's (the report's training); fitting has none.
    if let LearnerConfig::Td(_) = learner {
        for &name in TD_PRESETS {
            let mut flat = Map::new();
            flatten("", &config(Some(name)), &mut flat);
            let overrides: Map<String, Value> = flat
                .into_iter()
                .filter(|(key, value)| defaults.get(key) != Some(value))
                .collect();
            presets.insert(
                name.to_string(),
                json!({"label": format!("{name}: the report's training"), "overrides": overrides}),
            );
        }
    }
    json!({"label": label, "name": short_name(label), "unit": "checkpoints", "presets": presets, "defaults": defaults, "groups": groups})
}

/// The form of a population tuner other than the GA ([`super::population`]): the GA's fields
/// but its operators', the GA's presets, and a group of the tuner's own settings (dotted
/// keys under its name) with their defaults.
fn population_form(
    tuner: &str,
    ga_defaults: &Map<String, Value>,
    presets: &Value,
    ga_groups: &Value,
) -> Option<Value> {
    let config = crate::tune::TunerConfig::load(tuner, None, &[], &FileAccess::None).ok()?;
    crate::ga::tuner::population_of(&config)?;
    let label = config.spec().label();
    let settings = serde_json::to_value(&config).ok()?.get(tuner)?.clone();
    let operators = ["elite", "selection.", "crossover.", "mutation."];
    let is_operator = |key: &str| {
        operators
            .iter()
            .any(|o| key == o.trim_end_matches('.') || key.starts_with(o))
    };
    let mut groups: Vec<Value> = ga_groups
        .as_array()?
        .iter()
        .filter_map(|group| {
            let fields: Vec<Value> = group["fields"]
                .as_array()?
                .iter()
                .filter(|f| !f["key"].as_str().is_some_and(is_operator))
                .cloned()
                .collect();
            (!fields.is_empty()).then(|| json!({"title": group["title"], "fields": fields}))
        })
        .collect();
    let mut defaults: Map<String, Value> = ga_defaults
        .iter()
        .filter(|(key, _)| !is_operator(key))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // The tuner's own settings, from the ranges its settings type declares.
    let mut fields = Vec::new();
    for bound in config.spec().setting_bounds() {
        let key = format!("{tuner}.{}", bound.name);
        fields.push(bound.form_field(tuner));
        defaults.insert(
            key,
            settings.get(bound.name).cloned().unwrap_or(Value::Null),
        );
    }
    groups.push(json!({"title": format!("{label} settings"), "fields": fields, "help": "docs/explanation/tuners.md#cma-es-and-spsa"}));
    Some(
        json!({"label": label, "name": short_name(label), "unit": "generations", "presets": presets, "defaults": defaults, "groups": groups}),
    )
}

/// The whole schema: defaults, presets, field groups, feature sets and the cost limit.
pub fn config_schema() -> Value {
    let mut defaults = flat(&GaConfig::default());
    let groups = groups();
    fill_missing(&mut defaults, &groups);
    let presets = presets(&defaults);
    // Every tuner's form; the GA's is also at the top, where forms before the other tuners
    // found it.
    let ga = crate::tune::TunerSpec::label(&GaConfig::default());
    let mut tuners = json!({
        "ga": {"label": ga, "name": short_name(ga), "unit": "generations", "presets": presets, "defaults": defaults, "groups": groups},
    });
    if let Value::Object(forms) = &mut tuners {
        for tuner in LEARNING_TUNERS {
            forms.insert(tuner.into(), learning_form(tuner));
        }
    }
    // Every other population tuner's (CMA-ES, SPSA): the GA's form with its own settings.
    if let Value::Object(forms) = &mut tuners {
        for tuner in crate::tune::config::tuner_names() {
            if forms.contains_key(tuner) {
                continue;
            }
            if let Some(form) = population_form(tuner, &defaults, &presets, &groups) {
                forms.insert(tuner.into(), form);
            }
        }
    }
    let feature_set_members: Map<String, Value> = FEATURE_SETS
        .iter()
        .map(|s| {
            let published = s.presets.first().map(|p| p.1.to_vec()).unwrap_or_default();
            (
                s.name.to_string(),
                json!({"features": serde_json::to_value(s.features).unwrap_or(Value::Null), "published": published}),
            )
        })
        .collect();
    json!({
        "presets": presets,
        "defaults": defaults,
        "groups": groups,
        "tuners": tuners,
        "feature_set_members": feature_set_members,
        "feature_sets": FEATURE_SETS.iter().map(|s| s.name).collect::<Vec<_>>(),
        "max_core_hours": MAX_CORE_HOURS,
        "max_run_storage_bytes": MAX_RUN_STORAGE_BYTES,
    })
}

/// A JSON Schema of `value`'s shape, from a serialised default config: every key with the
/// JSON type of its default. What the schema knows of a config's fields is thus what the
/// config types serialise, not a list kept by hand.
fn shape_of(value: &Value) -> Value {
    match value {
        Value::Object(map) => json!({
            "type": "object",
            "properties": map.iter().map(|(k, v)| (k.clone(), shape_of(v))).collect::<Map<_, _>>(),
        }),
        Value::Array(_) => json!({"type": "array"}),
        // A default of 0 may stand for a real number: a number is what every default allows.
        Value::Number(_) => json!({"type": "number"}),
        Value::String(_) => json!({"type": "string"}),
        Value::Bool(_) => json!({"type": "boolean"}),
        Value::Null => json!({}),
    }
}

/// The schema of a dotted key (`fitness.mode`) inside an object schema, made on the way.
fn field_schema<'a>(schema: &'a mut Value, key: &str) -> &'a mut Value {
    key.split('.').fold(schema, |at, part| {
        if !at["properties"].is_object() {
            at["type"] = json!("object");
            at["properties"] = json!({});
        }
        &mut at["properties"][part]
    })
}

/// The JSON Schema of a run's partial `config` (`POST /api/runs`): the GA's config (the
/// shape of [`GaConfig::default`], with the form's ranges and options, which are the
/// validator's constants) or a learning run's config (the shape of each learner's defaults).
/// Every field may be left out: the config is laid over the tuner's preset or defaults.
pub(crate) fn run_config_schema() -> Value {
    let mut ga = shape_of(&serde_json::to_value(GaConfig::default()).unwrap_or(Value::Null));
    ga["title"] = json!("GaConfig");
    for field in fields_of(&groups()) {
        let Some(key) = field["key"].as_str() else {
            continue;
        };
        let mut schema = match field["kind"].as_str() {
            Some("int") => json!({"type": "integer"}),
            Some("real") => json!({"type": "number"}),
            Some("bool") => json!({"type": "boolean"}),
            Some("select") => json!({"type": "string", "enum": field["options"]}),
            Some("opponents") => json!({"type": "array", "maxItems": field["max"]}),
            Some("features") => json!({"anyOf": [
                {"type": "string", "description": "a named set, or names joined by +"},
                {"type": "array", "items": {"type": "string"}}
            ]}),
            Some("weights") => json!({"anyOf": [
                {"type": "string", "description": "a preset name of the feature set"},
                {"type": "array", "items": {"type": "number"}}
            ]}),
            _ => continue,
        };
        for bound in ["min", "max"] {
            if field[bound].is_number() && schema["type"] != "array" {
                let name = if bound == "min" { "minimum" } else { "maximum" };
                schema[name] = field[bound].clone();
            }
        }
        if field["optional"] == true {
            schema["type"] = json!([schema["type"].clone(), "null"]);
        }
        if let Some(help) = field["help"].as_str() {
            schema["description"] = json!(help);
        }
        *field_schema(&mut ga, key) = schema;
    }
    let learners: Vec<Value> = super::learning::LEARNING_TUNERS
        .iter()
        .filter_map(|tuner| {
            let learner = super::learning::LearnerConfig::for_tuner(tuner, None).ok()?;
            let mut schema = shape_of(&super::learning::LearningConfig::new(learner).to_value());
            schema["title"] = json!(format!("{tuner} config"));
            Some(schema)
        })
        .collect();
    // Every other tuner's: the shape of its defaults (CMA-ES and SPSA: the GA's fields, `tuner`
    // and their settings).
    let others: Vec<Value> = crate::tune::config::tuner_names()
        .into_iter()
        .filter(|t| *t != "ga" && !super::learning::LEARNING_TUNERS.contains(t))
        .filter_map(|tuner| {
            let config =
                crate::tune::TunerConfig::load(tuner, None, &[], &FileAccess::None).ok()?;
            let mut schema = shape_of(&serde_json::to_value(config).ok()?);
            schema["title"] = json!(format!("{tuner} config"));
            Some(schema)
        })
        .collect();
    let mut any_of = vec![ga];
    any_of.extend(learners);
    any_of.extend(others);
    json!({
        "description": "partial config laid over the tuner's preset or defaults: the GA's (GaConfig), a learning run's (the learner's fields with play_depth, checkpoint_games and benchmark), or a CMA-ES or SPSA run's (the GA's fields with the tuner's settings under its name)",
        "anyOf": any_of,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::FileAccess;

    #[test]
    fn every_field_of_the_form_has_a_default_and_presets_change_only_known_fields() {
        let schema = config_schema();
        let defaults = schema["defaults"].as_object().expect("defaults");
        for group in schema["groups"].as_array().expect("groups") {
            for field in group["fields"].as_array().expect("fields") {
                let key = field["key"].as_str().expect("a key");
                assert!(defaults.contains_key(key), "no default for {key}");
                if let Some(other) = field["show_if"]["key"].as_str() {
                    assert!(defaults.contains_key(other), "{key} depends on {other}");
                }
            }
        }
        let hunter = &schema["presets"]["hunter"]["overrides"];
        assert_eq!(hunter["population"], 50);
        assert_eq!(hunter["fitness.self_play"], true);
        assert!(hunter
            .as_object()
            .expect("overrides")
            .keys()
            .all(|k| defaults.contains_key(k)));
    }

    /// Every registered tuner has a form, with the short name the dashboard shows and the
    /// unit of its records: the dashboard keeps no list of its own.
    #[test]
    fn every_tuner_has_a_form_with_its_name_and_unit() {
        let schema = config_schema();
        let forms = schema["tuners"].as_object().expect("forms");
        let names = crate::tune::config::tuner_names();
        assert_eq!(forms.len(), names.len(), "{:?}", forms.keys());
        for tuner in names {
            let form = &forms[tuner];
            let name = form["name"].as_str().unwrap_or("");
            assert!(!name.is_empty() && !name.contains(':'), "{tuner}: {name:?}");
            let label = form["label"].as_str().unwrap_or("");
            assert!(
                label.starts_with(&format!("{name}: ")),
                "{tuner}: {label:?}"
            );
            let learner = LEARNING_TUNERS.contains(&tuner);
            let unit = if learner {
                "checkpoints"
            } else {
                "generations"
            };
            assert_eq!(form["unit"], unit, "{tuner}");
        }
        assert_eq!(forms["texel"]["name"], "Texel");
        assert_eq!(forms["td-leaf"]["name"], "TD-Leaf(λ)");
    }

    /// Every numeric setting of a learner has its range in the table its check and its form
    /// read, but for those the rest of the config checks (the seed, the board): a new setting
    /// without a range fails here.
    #[test]
    fn every_numeric_setting_of_a_learner_has_a_range() {
        let checked_elsewhere = ["seed", "pits", "seeds"];
        let learners = [
            (
                serde_json::to_value(crate::rl::td::TdConfig::default()),
                TD_BOUNDS,
            ),
            (
                serde_json::to_value(crate::rl::texel::TexelConfig::default()),
                TEXEL_BOUNDS,
            ),
        ];
        for (config, bounds) in learners {
            let config = config.expect("a learner's config serialises");
            let fields = config.as_object().expect("an object");
            for (key, value) in fields {
                if value.is_number() && !checked_elsewhere.contains(&key.as_str()) {
                    assert!(bounds.iter().any(|b| b.name == key), "{key} has no range");
                }
            }
            for bound in bounds {
                assert!(
                    fields.contains_key(bound.name),
                    "{} is no setting",
                    bound.name
                );
            }
        }
        // The run's own settings beside the learner's, every optional one set.
        let mut run = LearningConfig::new(LearnerConfig::Td(crate::rl::td::TdConfig::default()));
        run.checkpoint_games = Some(10);
        let learner = serde_json::to_value(&run.learner).expect("a learner serialises");
        let run = run.to_value();
        let run = run.as_object().expect("an object");
        for (key, value) in run {
            if value.is_number()
                && learner.get(key).is_none()
                && !checked_elsewhere.contains(&key.as_str())
            {
                assert!(
                    LEARNING_BOUNDS.iter().any(|b| b.name == key),
                    "{key} has no range"
                );
            }
        }
        for bound in LEARNING_BOUNDS {
            assert!(run.contains_key(bound.name), "{} is no setting", bound.name);
        }
    }

    /// The form (and the configuration reference generated from it) leaves no key of the GA's
    /// config out: a config with every option on has no key the form lacks.
    #[test]
    fn the_form_has_every_key_of_the_config() {
        let schema = config_schema();
        let keys: std::collections::BTreeSet<String> = fields_of(&schema["groups"])
            .iter()
            .filter_map(|field| field["key"].as_str().map(String::from))
            .collect();
        let mut config = GaConfig::preset("hunter").expect("a preset");
        config.stagnation = Some(10);
        config.target_fitness = Some(0.9);
        config.fitness.common_openings = true;
        config.fitness.racing = Some(RacingConfig::default());
        config.benchmark.agreement = Some(100);
        let missing: Vec<String> = flat(&config)
            .keys()
            .filter(|key| !keys.contains(*key))
            .cloned()
            .collect();
        assert!(
            missing.is_empty(),
            "keys of the config missing from the form: {missing:?}"
        );
    }

    /// Every numeric setting of a GA config with every option on has a declared range, which
    /// its form field shows and its check reads; every declared range is a setting, and the
    /// defaults are within them.
    #[test]
    fn every_numeric_setting_of_the_ga_has_a_range() {
        let checked_elsewhere = ["seed", "board.pits", "board.seeds"];
        let mut config = GaConfig::preset("hunter").expect("a preset");
        config.stagnation = Some(10);
        config.target_fitness = Some(0.9);
        config.fitness.racing = Some(RacingConfig::default());
        config.benchmark.agreement = Some(100);
        let flat = flat(&config);
        let bounds: Vec<&SettingBound> = GA_BOUNDS.iter().chain(BENCHMARK_BOUNDS).collect();
        for (key, value) in &flat {
            if value.is_number() && !checked_elsewhere.contains(&key.as_str()) {
                assert!(bounds.iter().any(|b| b.name == key), "{key} has no range");
            }
        }
        let schema = config_schema();
        let fields = fields_of(&schema["groups"]);
        for bound in &bounds {
            assert!(
                flat.contains_key(bound.name),
                "{} is no setting",
                bound.name
            );
            assert!(!bound.help.is_empty(), "{} has no help", bound.name);
            let field = fields
                .iter()
                .find(|f| f["key"] == bound.name)
                .unwrap_or_else(|| panic!("{} is not in the form", bound.name));
            let range = field["range"].as_str().unwrap_or_default();
            assert!(range.starts_with(&bound.range()), "{}: {range}", bound.name);
            assert_eq!(field["max"].as_f64(), Some(bound.max), "{}", bound.name);
        }
        for preset in PRESETS {
            let config = GaConfig::preset(preset).expect("a preset");
            config.validate().expect("the presets are in range");
        }
        GaConfig::default()
            .validate()
            .expect("the defaults are in range");
    }

    /// A maximum that depends on the config is checked at the config's figure, and the
    /// message says that figure.
    #[test]
    fn relative_limits_name_the_figure_of_the_config() {
        let load = |layer: Value| crate::ga::loader::load(None, &[&layer], &FileAccess::Any);
        let err = load(json!({"population": 10, "elite": 10})).expect_err("elite too large");
        assert_eq!(
            err.to_string(),
            "elite: must be a whole number 0 to 9, got 10"
        );
        let err = load(json!({"bounds": {"min": 0.0, "max": 2.0}, "mutation": {"sigma": 3.0}}))
            .expect_err("sigma too large");
        assert_eq!(err.to_string(), "mutation.sigma: must be 0 to 2, got 3");
        // Tournament size applies to tournament selection only.
        assert!(load(json!({"population": 2, "selection": {"kind": "roulette", "k": 5}})).is_ok());
        assert!(
            load(json!({"population": 2, "selection": {"kind": "tournament", "k": 5}})).is_err()
        );
    }

    #[test]
    fn ranges_are_the_validators() {
        use crate::ga::config::MAX_POPULATION;
        let load = |layer: Value| crate::ga::loader::load(None, &[&layer], &FileAccess::Any);
        let over = load(json!({ "population": MAX_POPULATION + 1 }));
        assert!(over.is_err());
        let at = load(json!({ "population": MAX_POPULATION, "generations": 1, "depth": 1 }));
        assert!(at.is_ok(), "{at:?}");
    }
}
