//! Wall-clock cost of the complete heuristic games the genetic algorithm plays, so that
//! search changes can be judged against the GA's time budgets. The checksum over every ply
//! must not change when the search gets faster: exact searches choose the same moves.
//!
//! `cargo run --release --example search_speed [abrams_games] [hunter_games]`

use std::hash::{Hash, Hasher};
use std::time::Instant;

use kalah_tuner::agents::{rng_from_seed, AgentSpec};
use kalah_tuner::game::{Position, Rules};
use kalah_tuner::matches::{game_rng, play_game, random_opening, Seats};

/// CPU time of this process in seconds: on a shared machine wall time also counts the time
/// other processes held the cores. Falls back to wall time where /proc is missing.
fn cpu_seconds(wall: Instant) -> f64 {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or_else(|| wall.elapsed().as_secs_f64(), |ns| ns / 1e9)
}

fn run(south: &str, north: &str, games: u64) {
    let rules = Rules::Standard;
    let start = Position::start(6, 4).unwrap();
    let south_spec = AgentSpec::parse(south).unwrap();
    let north_spec = AgentSpec::parse(north).unwrap();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let (mut plies, mut nodes) = (0usize, 0u64);
    let t = Instant::now();
    let cpu = cpu_seconds(t);
    for g in 0..games {
        let mut rng = rng_from_seed(g);
        let (pos, _) = random_opening(start, 2, rules, &mut rng);
        let mut s = south_spec.build(rules).unwrap();
        let mut n = north_spec.build(rules).unwrap();
        let (mut r1, mut r2) = (game_rng(g, &[1]), game_rng(g, &[2]));
        let record = play_game(Seats::new(&mut *s, &mut *n, &mut r1, &mut r2), pos, rules);
        plies += record.plies.len();
        nodes += record.south_nodes + record.north_nodes;
        for p in &record.plies {
            (p.mv, p.side).hash(&mut hasher);
        }
        (record.south_store, record.north_store).hash(&mut hasher);
    }
    let wall = t.elapsed().as_secs_f64();
    let secs = cpu_seconds(t) - cpu;
    println!(
        "{south} vs {north}: {games} games, {:.2} ms/game CPU ({:.2} wall), {:.0} plies/game, {:.0} nodes/move, {:.2} M nodes/s, checksum {:016x}",
        secs * 1e3 / games as f64,
        wall * 1e3 / games as f64,
        plies as f64 / games as f64,
        nodes as f64 / plies as f64,
        nodes as f64 / secs / 1e6,
        hasher.finish()
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let abrams: u64 = args.next().map_or(20, |a| a.parse().unwrap());
    let hunter: u64 = args.next().map_or(200, |a| a.parse().unwrap());
    run(
        "heuristic:abrams3:published:7",
        "heuristic:abrams3:published2:7",
        abrams,
    );
    run(
        "heuristic:hunter10:published:4",
        "heuristic:hunter10:published:4",
        hunter,
    );
}
