//! `kalah-tuner bench --cost`: the processor time of a game side per board size and agent
//! kind, beside what the cost model ([`crate::agents::cost`]) estimates for it. The model is
//! fitted to this table (docs/results/performance.md#cost-estimates).
//!
//! Every cell is self-play of one spec from two-ply random openings on one thread, timed in
//! processor time (steadier than wall time on a shared machine): a side's cost is half a
//! game's. A game that runs past `--cost-cap` seconds of wall time is stopped through the
//! agents' budget and its row is marked as a lower bound. With `--cost-decided` a game stops
//! as soon as one store holds more than half of the seeds, as a GA's fitness games do: what
//! share of a whole game's time those take ([`crate::agents::cost::DECIDED_GAME_SHARE`]).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::console::process_cpu_seconds;
use crate::agents::cost::{game_side_ms, DECIDED_GAME_SHARE};
use crate::agents::spec::{FeatureChoice, WeightChoice};
use crate::agents::{AgentSpec, Ties};
use crate::eval::Feature;
use crate::game::{Position, Rules};
use crate::matches::game::{is_decided, play_until};
use crate::matches::{PairSeeds, Pairing, Seats};
use crate::search::{Budget, Depth};

/// Options of the cost table (all under `bench --cost`).
#[derive(Args, Debug, Clone)]
pub(crate) struct CostArgs {
    /// Time games per board size and agent kind and print the cost table instead of the
    /// speed figures
    #[arg(long)]
    pub cost: bool,
    /// Boards of the cost table, PITSxSEEDS joined by commas
    #[arg(
        long,
        default_value = "4x3,6x4,6x6,7x7,8x8,12x8",
        value_delimiter = ','
    )]
    pub cost_boards: Vec<String>,
    /// Agents of the cost table (repeatable); default: minimax at depths 2 to 8, heuristics
    /// of 1, 5, 10, 13 and 24 features, mcts, perfect, greedy and random
    #[arg(long = "cost-agent")]
    pub cost_agents: Vec<String>,
    /// Processor seconds a cell plays games for (at least one game)
    #[arg(long, default_value_t = 2.0)]
    pub cost_seconds: f64,
    /// Most games a cell plays
    #[arg(long, default_value_t = 20)]
    pub cost_games: u64,
    /// Wall seconds after which a game is stopped (its row then is a lower bound)
    #[arg(long, default_value_t = 300.0)]
    pub cost_cap: f64,
    /// Stop every game once one store holds more than half of the seeds, as a GA's fitness
    /// games do (the model's figure is then a decided game's)
    #[arg(long)]
    pub cost_decided: bool,
    /// Also write the measurements as CSV to this file (appending), for --cost-from
    #[arg(long)]
    pub cost_csv: Option<PathBuf>,
    /// Print the table of a CSV written by --cost-csv against the current model, playing
    /// nothing: how a refitted model is checked against earlier measurements
    #[arg(long)]
    pub cost_from: Option<PathBuf>,
    /// Print the recorded runs of this TOML file (docs/run-costs.toml) with the processor time
    /// each took against the cost model's estimate for its config
    #[arg(long)]
    pub cost_runs: Option<PathBuf>,
    /// With --cost-runs: play each run to its end on one thread first and write its processor
    /// time and today's date back into the file
    #[arg(long, requires = "cost_runs")]
    pub cost_measure: bool,
    /// With --cost-runs: only the runs whose name contains this text
    #[arg(long, requires = "cost_runs")]
    pub cost_select: Option<String>,
}

/// One measured cell.
struct Cell {
    pits: usize,
    seeds: u32,
    spec: String,
    games: u64,
    plies: f64,
    side_ms: f64,
    capped: bool,
    decided: bool,
}

impl Cell {
    fn csv(&self) -> String {
        format!(
            "{},{},{},{},{:.1},{:.4},{},{}\n",
            self.pits,
            self.seeds,
            self.spec,
            self.games,
            self.plies,
            self.side_ms,
            self.capped,
            self.decided
        )
    }

    fn from_csv(line: &str) -> Result<Cell> {
        let parts: Vec<&str> = line.trim().split(',').collect();
        // Rows written before `--cost-decided` have no eighth field: whole games.
        let (fields, decided) = match parts.len() {
            7 => (&parts[..], "false"),
            8 => (&parts[..7], parts[7]),
            _ => bail!("expected 7 or 8 comma-separated fields, got {line:?}"),
        };
        let &[pits, seeds, spec, games, plies, side_ms, capped] = fields else {
            bail!("expected 7 or 8 comma-separated fields, got {line:?}");
        };
        Ok(Cell {
            pits: pits.parse()?,
            seeds: seeds.parse()?,
            spec: spec.to_string(),
            games: games.parse()?,
            plies: plies.parse()?,
            side_ms: side_ms.parse()?,
            capped: capped.parse()?,
            decided: decided.parse()?,
        })
    }

    fn row(&self) -> Result<String> {
        let spec = parse_spec(&self.spec)?;
        let share = if self.decided {
            DECIDED_GAME_SHARE
        } else {
            1.0
        };
        let model = share * game_side_ms(&spec, self.pits, self.seeds);
        let bound = if self.capped { ">" } else { "" };
        let decided = if self.decided { ", decided" } else { "" };
        Ok(format!(
            "| {}x{} | `{}`{decided} | {} | {:.0} | {bound}{} | {} | {:.2} |",
            self.pits,
            self.seeds,
            self.spec,
            self.games,
            self.plies,
            figure(self.side_ms),
            figure(model),
            model / self.side_ms
        ))
    }
}

/// Milliseconds with three significant digits or so.
fn figure(ms: f64) -> String {
    match ms {
        m if m >= 100.0 => format!("{m:.0}"),
        m if m >= 1.0 => format!("{m:.2}"),
        m => format!("{m:.4}"),
    }
}

/// The heuristic of the first `n` features of a fixed list with `store_diff` first (so that
/// every game is still played for seeds), weights 1 and then 0.1: what a leaf of `n`
/// features costs.
fn features_spec(n: usize, depth: u32) -> AgentSpec {
    let features: Vec<Feature> = std::iter::once(Feature::StoreDiff)
        .chain(
            Feature::ALL
                .into_iter()
                .filter(|&f| f != Feature::StoreDiff),
        )
        .take(n)
        .collect();
    let weights = (0..n).map(|i| if i == 0 { 1.0 } else { 0.1 }).collect();
    AgentSpec::Heuristic {
        features: FeatureChoice::List(features),
        weights: WeightChoice::Values(weights),
        depth: Depth::Fixed(depth),
        time_ms: None,
        nodes: None,
        ties: Ties::Random,
        egdb: false,
    }
}

fn parse_spec(text: &str) -> Result<AgentSpec> {
    AgentSpec::parse(text).with_context(|| format!("agent {text:?}"))
}

fn default_agents() -> Vec<String> {
    let mut agents: Vec<String> = [2, 4, 6, 8].map(|d| format!("minimax:{d}")).into();
    for n in [1, 5, 13, 24] {
        agents.push(spec_text(&features_spec(n, 4)));
    }
    agents.extend(
        [
            "heuristic:hunter10:published:2",
            "heuristic:hunter10:published:3",
            "heuristic:hunter10:published:4",
            "heuristic:hunter10:published:6",
            "mcts:1000",
            "perfect",
            "greedy",
            "random",
        ]
        .map(String::from),
    );
    agents
}

/// A spec as the short text a CSV row can hold: JSON has commas, so lists are `a+b` and
/// weights are joined by `/`.
fn spec_text(spec: &AgentSpec) -> String {
    match spec {
        AgentSpec::Heuristic {
            features: FeatureChoice::List(fs),
            weights: WeightChoice::Values(ws),
            depth: Depth::Fixed(d),
            ..
        } => format!(
            "heuristic:{}:{}:{d}",
            fs.iter().map(|f| f.name()).collect::<Vec<_>>().join("+"),
            ws.iter()
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
                .join("/")
        ),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn parse_board(text: &str) -> Result<(usize, u32)> {
    let (pits, seeds) = text
        .split_once('x')
        .with_context(|| format!("board {text:?}: expected PITSxSEEDS, e.g. 6x4"))?;
    Ok((
        pits.trim()
            .parse()
            .with_context(|| format!("board {text:?}"))?,
        seeds
            .trim()
            .parse()
            .with_context(|| format!("board {text:?}"))?,
    ))
}

const HEADER: &str = "| board | agent | games | plies a game | measured ms a side | model ms a side | model / measured |\n|---|---|---|---|---|---|---|";

pub(crate) fn run(args: &CostArgs) -> Result<()> {
    if let Some(path) = &args.cost_from {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        println!("{HEADER}");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            println!("{}", Cell::from_csv(line)?.row()?);
        }
        return Ok(());
    }
    if !(args.cost_seconds.is_finite() && args.cost_seconds > 0.0) {
        bail!("--cost-seconds must be a positive number");
    }
    if !(args.cost_cap.is_finite() && args.cost_cap > 0.0) {
        bail!("--cost-cap must be a positive number");
    }
    let agents = if args.cost_agents.is_empty() {
        default_agents()
    } else {
        args.cost_agents.clone()
    };
    let specs = agents
        .iter()
        .map(|a| parse_spec(a))
        .collect::<Result<Vec<_>>>()?;
    let boards = args
        .cost_boards
        .iter()
        .map(|b| parse_board(b))
        .collect::<Result<Vec<_>>>()?;
    // Any parallel work inside an agent stays on this one thread, so processor time is
    // the cost of one core.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    println!("kalah-tuner bench --cost: self-play on one thread, standard rules, processor time");
    println!("{HEADER}");
    for &(pits, seeds) in &boards {
        let start = Position::start(pits, seeds)?;
        for (text, spec) in agents.iter().zip(&specs) {
            let cell = pool.install(|| measure(args, (pits, seeds), start, text, spec))?;
            println!("{}", cell.row()?);
            if let Some(path) = &args.cost_csv {
                use std::io::Write as _;
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .and_then(|mut f| f.write_all(cell.csv().as_bytes()))
                    .with_context(|| format!("writing {}", path.display()))?;
            }
        }
    }
    Ok(())
}

fn measure(
    args: &CostArgs,
    (pits, seeds): (usize, u32),
    start: Position,
    text: &str,
    spec: &AgentSpec,
) -> Result<Cell> {
    let rules = Rules::Standard;
    let pairing = Pairing {
        start,
        rules,
        opening_plies: 2,
        seeds: super::bench_seeds::BenchSeeds,
    };
    let (mut games, mut plies, mut cpu, mut capped) = (0u64, 0usize, 0.0, false);
    while games < args.cost_games.max(1) && (games == 0 || cpu < args.cost_seconds) {
        let mut south = spec.build(rules)?;
        let mut north = spec.build(rules)?;
        let budget = Budget::new(Some(Duration::from_secs_f64(args.cost_cap)), u64::MAX);
        south.set_budget(&budget);
        north.set_budget(&budget);
        let before = process_cpu_seconds();
        plies += if args.cost_decided {
            let (from, _) = pairing.opening(games);
            let (mut rng_s, mut rng_n) = pairing.seeds.players(games, true);
            let seats = Seats::new(&mut *south, &mut *north, &mut rng_s, &mut rng_n);
            let total = from.total_seeds();
            let mut count = 0;
            play_until(
                seats,
                from,
                rules,
                |p| is_decided(p, total),
                |_, _, _| count += 1,
            );
            count
        } else {
            let game = pairing.play(&mut *south, &mut *north, games, true);
            game.record.plies.len()
        };
        cpu += process_cpu_seconds() - before;
        games += 1;
        if budget.is_stopped() {
            capped = true;
            break;
        }
    }
    Ok(Cell {
        pits,
        seeds,
        spec: text.to_string(),
        games,
        plies: plies as f64 / games as f64,
        side_ms: cpu * 1e3 / (2.0 * games as f64),
        capped,
        decided: args.cost_decided,
    })
}
