//! The `kalah-tuner` command line. Output formats here are a contract: other tools call these
//! commands and read their last line.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};

use crate::agents::{rng_from_seed, spec::parse_spec_list, AgentSpec};
use crate::game::{parse_board, parse_kpn, perft, Position, Rules};
use crate::matches::{play_match, play_tournament, MatchReport, Setup, TournamentConfig};
use crate::search::Solver;

#[derive(Parser, Debug)]
#[command(
    name = "kalah-tuner",
    version,
    about = "Play, solve and benchmark Kalah (Mancala) agents and tune their evaluation weights"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Count move paths of exactly DEPTH sowings (last line: the count)
    Perft(PerftArgs),
    /// Exact value of a position for the side to move (last line: the value)
    Solve(SolveArgs),
    /// Ask an agent for a move (last line: the move number, 1..m)
    Move(MoveArgs),
    /// Play a match of two agents in colour-swapped pairs
    Play(PlayArgs),
    /// Round robin of several agents with a cross-table of win rates
    Tournament(TournamentArgs),
    /// Evolve evaluation weights with the genetic algorithm and write the export document
    Evolve(crate::evolve::EvolveArgs),
    /// Measure move generation, search and game speed on one thread
    Bench(crate::bench::BenchArgs),
    /// Serve the HTTP API and dashboard (runs are stored in SQLite or PostgreSQL)
    Serve(crate::server::ServeArgs),
    /// Train the a3c agent's network by asynchronous advantage actor-critic
    #[command(name = "train-a3c")]
    TrainA3c(crate::train::TrainArgs),
}

#[derive(Args, Debug, Clone)]
pub struct RulesArg {
    /// Capture rule: standard, or empty-capture (capture even when the opposite pit is empty)
    #[arg(long, default_value = "standard", value_parser = parse_rules)]
    pub rules: Rules,
}

fn parse_rules(s: &str) -> Result<Rules, String> {
    s.parse::<Rules>().map_err(|e| e.to_string())
}

#[derive(Args, Debug)]
pub struct PerftArgs {
    /// Position in KPN (default: the start of Kalah(6,4))
    #[arg(long)]
    pub position: Option<String>,
    #[arg(long)]
    pub depth: u32,
    #[command(flatten)]
    pub rules: RulesArg,
    /// Also print the count after each first move
    #[arg(long)]
    pub divide: bool,
}

#[derive(Args, Debug)]
pub struct SolveArgs {
    /// Position in KPN
    #[arg(long, conflicts_with = "board")]
    pub position: Option<String>,
    /// Start position of Kalah(m,n), written m,n
    #[arg(long)]
    pub board: Option<String>,
    #[command(flatten)]
    pub rules: RulesArg,
    /// Also print the exact value of every legal move
    #[arg(long)]
    pub moves: bool,
}

#[derive(Args, Debug)]
pub struct MoveArgs {
    /// Agent spec, e.g. minimax:6 or heuristic:hunter10:published:4 or JSON
    #[arg(long)]
    pub agent: String,
    #[arg(long)]
    pub position: String,
    #[command(flatten)]
    pub rules: RulesArg,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

#[derive(Args, Debug, Clone)]
pub struct MatchArgs {
    /// Games in all (per pairing for a tournament) [default: 100, or the preset's]
    #[arg(long)]
    pub games: Option<u32>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Random sowings before the agents take over; both games of a pair share them
    /// [default: 0, or the preset's]
    #[arg(long)]
    pub opening_plies: Option<u32>,
    /// Board size m,n: pits per side, seeds per pit
    #[arg(long, default_value = "6,4")]
    pub board: String,
    #[command(flatten)]
    pub rules: RulesArg,
    /// Worker threads (default: all cores); results do not depend on it
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print the report as JSON, or with a path (`--json out.json`) write it there and
    /// print the text report
    #[arg(long, num_args = 0..=1, default_missing_value = "-", value_name = "PATH")]
    pub json: Option<String>,
}

impl MatchArgs {
    fn setup(&self) -> Result<Setup> {
        let (pits, seeds) = parse_board(&self.board)?;
        Ok(Setup {
            pits,
            seeds,
            rules: self.rules.rules,
            opening_plies: self.opening_plies.unwrap_or(0),
            seed: self.seed,
        })
    }
}

#[derive(Args, Debug)]
pub struct PlayArgs {
    /// Agent A, South in the first game of every pair
    #[arg(long)]
    pub south: String,
    /// Agent B, North in the first game of every pair
    #[arg(long)]
    pub north: String,
    /// Keep A as South in every game instead of swapping colours in pairs
    #[arg(long)]
    pub fixed_colours: bool,
    #[command(flatten)]
    pub common: MatchArgs,
}

#[derive(Args, Debug)]
pub struct TournamentArgs {
    /// Comma-separated agent specs, or a JSON array of specs
    #[arg(long, required_unless_present = "preset")]
    pub agents: Option<String>,
    /// A named tournament: hunter-table1 (Hunter's Table 1: random, greedy, minimax:4,
    /// heuristic:hunter10:published:4, mcts:4000, a3c; self-play; 1000 games a pairing from
    /// two-ply random openings)
    #[arg(long, conflicts_with = "agents")]
    pub preset: Option<String>,
    /// Also play every agent against itself
    #[arg(long)]
    pub self_play: bool,
    #[command(flatten)]
    pub common: MatchArgs,
}

/// A user mistake: reported on one line with exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

/// Parses the arguments, runs the command and turns every error into an exit status: 2 for bad
/// input (one line on standard error), 1 for anything else.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            eprintln!("{first} (see kalah-tuner --help)");
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let line = format!("{e:#}").replace('\n', " ");
            eprintln!("error: {line}");
            if is_user_error(&e) {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

fn is_user_error(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.is::<UsageError>()
            || c.is::<crate::game::GameError>()
            || c.is::<crate::agents::SpecError>()
            || c.is::<crate::matches::MatchError>()
            || c.is::<crate::ga::ConfigError>()
    })
}

pub(crate) fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

fn position_arg(text: &str) -> Result<Position> {
    Ok(parse_kpn(text)?)
}

pub(crate) fn with_threads<T: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> T + Send,
) -> Result<T> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        if n == 0 || n > 256 {
            return Err(usage(format!("--threads must be 1 to 256, got {n}")));
        }
        builder = builder.num_threads(n);
    }
    let pool = builder.build().context("starting worker threads")?;
    Ok(pool.install(f))
}

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Perft(args) => {
            let pos = match &args.position {
                Some(text) => position_arg(text)?,
                None => Position::start(6, 4)?,
            };
            if args.depth > 30 {
                bail!(usage(format!(
                    "--depth must be at most 30, got {}",
                    args.depth
                )));
            }
            let start = Instant::now();
            if args.divide {
                for (mv, n) in crate::game::perft::perft_divide(&pos, args.depth, args.rules.rules)
                {
                    println!("{mv}: {n}");
                }
            }
            let count = perft(&pos, args.depth, args.rules.rules);
            eprintln!(
                "perft({}) of {pos} in {:.3} s",
                args.depth,
                start.elapsed().as_secs_f64()
            );
            println!("{count}");
        }
        Command::Solve(args) => {
            let pos = match (&args.position, &args.board) {
                (Some(text), None) => position_arg(text)?,
                (None, Some(board)) => {
                    let (m, n) = parse_board(board)?;
                    Position::start(m, n)?
                }
                _ => bail!(usage("give --position <KPN> or --board <m,n>")),
            };
            let start = Instant::now();
            let mut solver = Solver::with_default_table(args.rules.rules);
            let (value, stats) = solver.solve(&pos);
            if args.moves && !pos.is_game_over() {
                for (mv, v) in solver.solve_moves(&pos) {
                    println!("move {mv}: {v}");
                }
            }
            eprintln!(
                "solved {pos} ({}) in {:.3} s, {} nodes",
                args.rules.rules,
                start.elapsed().as_secs_f64(),
                stats.nodes
            );
            println!("{value}");
        }
        Command::Move(args) => {
            let spec = AgentSpec::parse(&args.agent)?;
            let pos = position_arg(&args.position)?;
            if pos.is_game_over() {
                bail!(usage(format!(
                    "the game is over in {pos}: there is no move to make"
                )));
            }
            let mut agent = spec.build(args.rules.rules)?;
            let mut rng = rng_from_seed(args.seed);
            let start = Instant::now();
            let decision = agent.choose(&pos, &mut rng);
            eprintln!(
                "{spec}: move {} after {} nodes in {:.3} ms",
                decision.mv,
                decision.nodes,
                start.elapsed().as_secs_f64() * 1e3
            );
            println!("{}", decision.mv);
        }
        Command::Play(args) => {
            let a = AgentSpec::parse(&args.south)?;
            let b = AgentSpec::parse(&args.north)?;
            let setup = args.common.setup()?;
            let start = Instant::now();
            let report = with_threads(args.common.threads, || {
                play_match(
                    &a,
                    &b,
                    args.common.games.unwrap_or(100),
                    &setup,
                    !args.fixed_colours,
                    false,
                )
            })??;
            let text = match_text(&report, start.elapsed().as_secs_f64());
            write_report(args.common.json.as_deref(), &report, &text)?;
        }
        Command::Tournament(args) => {
            let preset = match &args.preset {
                Some(name) => Some(tournament_preset(name).ok_or_else(|| {
                    usage(format!(
                        "unknown tournament preset {name:?}; known: {}",
                        TOURNAMENT_PRESETS.join(", ")
                    ))
                })?),
                None => None,
            };
            let mut setup = args.common.setup()?;
            let config = match (&preset, &args.agents) {
                (Some(p), _) => {
                    setup.opening_plies = args.common.opening_plies.unwrap_or(p.opening_plies);
                    TournamentConfig {
                        agents: p.agents.clone(),
                        games: args.common.games.unwrap_or(p.games),
                        self_play: p.self_play || args.self_play,
                        setup,
                    }
                }
                (None, Some(agents)) => TournamentConfig {
                    agents: parse_spec_list(agents)?,
                    games: args.common.games.unwrap_or(100),
                    self_play: args.self_play,
                    setup,
                },
                (None, None) => bail!(usage("give --agents or --preset")),
            };
            let start = Instant::now();
            let report = with_threads(args.common.threads, || play_tournament(&config))??;
            let seconds = start.elapsed().as_secs_f64();
            let mut text = match &preset {
                Some(p) => report.to_table_with_ci(&p.labels, Some(&p.reference)),
                None => report.to_table(),
            };
            text.push_str(&format!(
                "{} games in {:.1} s\n",
                report.total_games, seconds
            ));
            write_report(args.common.json.as_deref(), &report, &text)?;
        }
        Command::Evolve(args) => crate::evolve::run(&args)?,
        Command::Bench(args) => crate::bench::run(&args)?,
        Command::Serve(args) => crate::server::run(&args)?,
        Command::TrainA3c(args) => crate::train::run(&args)?,
    }
    Ok(())
}

/// Prints `text`, or with `--json` the JSON report instead (`--json PATH`: both, the JSON
/// into the file).
fn write_report(json: Option<&str>, report: &impl serde::Serialize, text: &str) -> Result<()> {
    match json {
        None => print!("{text}"),
        Some("-") => println!("{}", serde_json::to_string_pretty(report)?),
        Some(path) => {
            std::fs::write(path, serde_json::to_string_pretty(report)? + "\n")
                .with_context(|| format!("writing {path}"))?;
            print!("{text}");
            println!("report written to {path}");
        }
    }
    Ok(())
}

/// A named tournament.
pub struct TournamentPreset {
    pub agents: Vec<AgentSpec>,
    /// Column and row names for the table.
    pub labels: Vec<String>,
    pub games: u32,
    pub opening_plies: u32,
    pub self_play: bool,
    /// Published win rates (percent, row moving first) to print beside ours; `None` where the
    /// source has no figure.
    pub reference: crate::matches::ReferenceTable,
}

pub const TOURNAMENT_PRESETS: &[&str] = &["hunter-table1"];

/// Hunter's Table 1 (reference/000, section 6): win rate of the row agent moving first.
const HUNTER_TABLE1: [[Option<f64>; 6]; 6] = [
    [
        Some(51.3),
        Some(4.1),
        Some(2.7),
        Some(0.5),
        Some(0.0),
        Some(4.0),
    ],
    [
        Some(96.0),
        Some(55.3),
        Some(15.2),
        Some(12.5),
        Some(4.5),
        Some(26.4),
    ],
    [
        Some(98.2),
        Some(85.8),
        Some(61.5),
        Some(35.2),
        None,
        Some(48.0),
    ],
    [
        Some(99.5),
        Some(90.2),
        Some(68.5),
        Some(61.0),
        None,
        Some(53.5),
    ],
    [
        Some(100.0),
        Some(87.4),
        Some(59.3),
        Some(44.7),
        Some(61.3),
        None,
    ],
    [
        Some(97.6),
        Some(89.3),
        Some(71.4),
        Some(67.1),
        None,
        Some(79.0),
    ],
];

pub fn tournament_preset(name: &str) -> Option<TournamentPreset> {
    match name {
        "hunter-table1" => {
            let specs = [
                "random",
                "greedy",
                "minimax:4",
                "heuristic:hunter10:published:4",
                "mcts:4000",
                "a3c",
            ];
            Some(TournamentPreset {
                agents: specs
                    .iter()
                    .map(|s| AgentSpec::parse(s).expect("preset specs parse"))
                    .collect(),
                labels: specs.iter().map(|s| s.to_string()).collect(),
                games: 1000,
                opening_plies: 2,
                self_play: true,
                reference: crate::matches::ReferenceTable {
                    source: "Hunter, Table 1 (1000 games a pairing)".into(),
                    rows: HUNTER_TABLE1.iter().map(|r| r.to_vec()).collect(),
                },
            })
        }
        _ => None,
    }
}

fn match_text(r: &MatchReport, seconds: f64) -> String {
    let pct = |t: &crate::matches::Tally| {
        if t.games() == 0 {
            "-".to_string()
        } else {
            format!("{:.1}%", 100.0 * t.win_rate())
        }
    };
    format!(
        "A = {} vs B = {} ({} games, {} {}x{}, opening plies {}, seed {})\n\
         A wins {}  draws {}  losses {}\n\
         A win rate moving first {} ({} games), moving second {} ({} games)\n\
         A score {}  Elo {:+.0} [{:+.0}, {:+.0}]\n\
         mean final stores A {:.1} B {:.1}; mean nodes per game A {:.0} B {:.0}\n\
         {:.2} s, {:.1} games/s\n",
        r.a,
        r.b,
        r.games,
        r.setup.rules,
        r.setup.pits,
        r.setup.seeds,
        r.setup.opening_plies,
        r.setup.seed,
        r.a_total.wins,
        r.a_total.draws,
        r.a_total.losses,
        pct(&r.a_first),
        r.a_first.games(),
        pct(&r.a_second),
        r.a_second.games(),
        r.a_score.display_percent(),
        r.a_score.elo,
        r.a_score.elo_low,
        r.a_score.elo_high,
        r.mean_stores.0,
        r.mean_stores.1,
        r.mean_nodes.0,
        r.mean_nodes.1,
        seconds,
        r.games as f64 / seconds.max(1e-9)
    )
}
