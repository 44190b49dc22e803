//! Criterion benchmarks of the engine's hot paths: move generation (perft), plain minimax,
//! the GA's heuristic search, one whole heuristic game and an MCTS move at Hunter's budget. Sample sizes are small so that
//! `cargo bench --bench engine` stays quick; add `-- --quick` for a smoke run.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use kalah_tuner::agents::{rng_from_seed, AgentSpec};
use kalah_tuner::eval::{feature_set, StoreDiff, WeightedEval};
use kalah_tuner::game::{perft, Position, Rules};
use kalah_tuner::matches::{game_rng, play_game, random_opening, Seats};
use kalah_tuner::search::AlphaBeta;

fn engine(c: &mut Criterion) {
    let rules = Rules::Standard;
    let start = Position::start(6, 4).unwrap();
    let mut group = c.benchmark_group("engine");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));

    group.bench_function("perft_8_kalah_6_4", |b| {
        b.iter(|| perft(black_box(&start), 8, rules))
    });

    group.bench_function("minimax_depth_6_start", |b| {
        b.iter(|| AlphaBeta::new(&StoreDiff, rules).search_depth(black_box(&start), 6))
    });

    let hunter = feature_set("hunter10").unwrap();
    let eval = WeightedEval::new(hunter.features, hunter.presets[0].1, rules).unwrap();
    group.bench_function("hunter10_depth_4_start", |b| {
        b.iter(|| AlphaBeta::new(&eval, rules).search_depth(black_box(&start), 4))
    });

    let mut mcts = AgentSpec::parse("mcts:4000").unwrap().build(rules).unwrap();
    group.bench_function("mcts_4000_start", |b| {
        b.iter(|| mcts.choose(black_box(&start), &mut rng_from_seed(1)))
    });

    let spec = AgentSpec::parse("heuristic:hunter10:published:4").unwrap();
    let (opening, _) = random_opening(start, 2, rules, &mut rng_from_seed(1));
    group.bench_function("hunter10_depth_4_game", |b| {
        b.iter(|| {
            let mut south = spec.build(rules).unwrap();
            let mut north = spec.build(rules).unwrap();
            let (mut r1, mut r2) = (game_rng(1, &[1]), game_rng(1, &[2]));
            let seats = Seats::new(&mut *south, &mut *north, &mut r1, &mut r2);
            play_game(seats, black_box(opening), rules)
        })
    });
    group.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
