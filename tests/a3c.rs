//! A3C: a short training run learns, models round-trip through safetensors, and the agent
//! plays the same moves for the same seed.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use kalah_tuner::agents::a3c::{load_model, Net};
use kalah_tuner::agents::{rng_from_seed, AgentSpec};
use kalah_tuner::game::{Position, Rules};
use kalah_tuner::rl::a3c::{parse_opponents, train, A3cConfig};

#[test]
fn a_short_training_run_lowers_its_loss_and_beats_random_more_often() {
    // candle would split each tiny matrix product across threads; this is the only test of
    // this binary, so nothing else reads the environment concurrently.
    std::env::set_var("RAYON_NUM_THREADS", "1");
    let config = A3cConfig {
        workers: 1, // one worker and a game budget: the run repeats exactly
        episodes: Some(1500),
        time: None,
        seed: 5,
        hidden: 64,
        learning_rate: 1e-3,
        n_steps: 10,
        opponents: parse_opponents("random=3,greedy=1").unwrap(),
        eval_games: 400,
        eval_every: Duration::from_secs(3600),
        ..A3cConfig::default()
    };
    let report = train(&config, &AtomicBool::new(false), |_| {}, |_, _| Ok(())).unwrap();
    assert_eq!(report.episodes, 1500);
    let before = &report.evaluations[0];
    let after = report.evaluations.last().unwrap();
    assert!(
        after.random_score > before.random_score + 0.1,
        "before {before}, after {after}"
    );
    let k = report.losses.len() / 4;
    assert!(k >= 2, "{} loss windows", report.losses.len());
    let mean = |points: &[kalah_tuner::rl::a3c::LossPoint]| {
        points.iter().map(|p| p.loss).sum::<f64>() / points.len() as f64
    };
    let (first, last) = (
        mean(&report.losses[..k]),
        mean(&report.losses[report.losses.len() - k..]),
    );
    assert!(last < first, "loss went from {first} to {last}");

    // The trained network saves, loads and plays.
    let bytes = report.best.to_safetensors().unwrap();
    let net = Net::from_safetensors(&bytes).unwrap();
    assert_eq!(net.layers, report.best.layers);
    let path = std::env::temp_dir().join(format!("kalah-a3c-{}.safetensors", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let spec = AgentSpec::parse(&format!("a3c:{}", path.display())).unwrap();
    let pos = Position::start(6, 4).unwrap();
    let mv = spec
        .build(Rules::Standard)
        .unwrap()
        .choose(&pos, &mut rng_from_seed(1))
        .mv;
    assert!(pos.is_legal(mv));
    std::fs::remove_file(&path).ok();
}

#[test]
fn the_embedded_model_loads_and_bad_models_are_refused_with_the_field() {
    let net = load_model(None).unwrap();
    assert_eq!((net.pits, net.seeds), (6, 4));
    let again = Net::from_safetensors(&net.to_safetensors().unwrap()).unwrap();
    assert_eq!(again.layers, net.layers);

    for text in [
        "a3c:/no/such/model.safetensors",
        "a3c:",
        r#"{"kind":"a3c","model":"Cargo.toml"}"#,
    ] {
        let err = AgentSpec::parse(text).expect_err(text);
        assert_eq!(err.field, "model", "{text}: {err}");
    }
    assert!(AgentSpec::parse("a3c:x:y").is_err());
    assert_eq!(AgentSpec::parse("a3c").unwrap().to_string(), "a3c");
    let json = AgentSpec::parse(r#"{"kind":"a3c","sample":true}"#).unwrap();
    assert_eq!(
        AgentSpec::parse(&serde_json::to_string(&json).unwrap()).unwrap(),
        json
    );
}

#[test]
fn the_agent_plays_the_same_moves_for_the_same_seed() {
    use kalah_tuner::matches::{game_rng, play_game, Seats};
    for text in ["a3c", r#"{"kind":"a3c","sample":true}"#] {
        let spec = AgentSpec::parse(text).unwrap();
        let random = AgentSpec::parse("random").unwrap();
        let game = || {
            let mut a = spec.build(Rules::Standard).unwrap();
            let mut b = random.build(Rules::Standard).unwrap();
            let (mut ra, mut rb) = (game_rng(9, &[1]), game_rng(9, &[2]));
            let seats = Seats::new(&mut *a, &mut *b, &mut ra, &mut rb);
            play_game(seats, Position::start(6, 4).unwrap(), Rules::Standard)
        };
        assert_eq!(game(), game(), "{text}");
    }
}
