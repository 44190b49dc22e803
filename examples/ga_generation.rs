//! Times GA generations of a preset, to check a run's budget before starting it:
//!
//! ```text
//! cargo run --release --example ga_generation -- abrams 1
//! cargo run --release --example ga_generation -- hunter 2 '{"population": 20}'
//! ```
//!
//! Arguments: preset name, number of generations to time (default 1), and an optional JSON
//! object of overrides.

use std::time::Instant;

use kalah_tuner::ga::{Evolution, GaConfig};
use kalah_tuner::search::Budget;
use kalah_tuner::tune::{Driver, Step, StepControl, TunerConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let preset = args.first().map(String::as_str).unwrap_or("abrams");
    let generations: u32 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(1);
    let mut config = GaConfig::preset(preset)?;
    if let Some(patch) = args.get(2) {
        config = config.with_overrides(&serde_json::from_str(patch)?)?;
    }
    let planned = config.generations;
    println!(
        "{preset}: {} games a generation, {planned} generations planned, {} rayon threads",
        Evolution::new(config.clone())?.games_per_generation(),
        rayon::current_num_threads()
    );
    let mut driver = Driver::open(TunerConfig::new(config), None)?;
    let control = StepControl::new(Budget::unlimited());
    let started = Instant::now();
    for _ in 0..generations {
        let Step::Record(r) = driver.step(&control, &mut [])? else {
            break;
        };
        println!(
            "generation {}: {} games in {:.1} s ({:.0} games/s); fitness best {:.3} mean {:.3}; diversity {:.3}",
            r.generation,
            r.games_played,
            r.timing.wall_ms as f64 / 1000.0,
            r.games_played as f64 * 1000.0 / r.timing.wall_ms.max(1) as f64,
            r.fitness.best,
            r.fitness.mean,
            r.diversity
        );
    }
    let per_generation = started.elapsed().as_secs_f64() / generations.max(1) as f64;
    println!(
        "{per_generation:.1} s a generation: about {:.1} min for the {planned} generations",
        per_generation * planned as f64 / 60.0
    );
    Ok(())
}
