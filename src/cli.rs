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
    /// Games in all (per pairing for a tournament)
    #[arg(long, default_value_t = 100)]
    pub games: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Random sowings before the agents take over; both games of a pair share them
    #[arg(long, default_value_t = 0)]
    pub opening_plies: u32,
    /// Board size m,n: pits per side, seeds per pit
    #[arg(long, default_value = "6,4")]
    pub board: String,
    #[command(flatten)]
    pub rules: RulesArg,
    /// Worker threads (default: all cores); results do not depend on it
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
}

impl MatchArgs {
    fn setup(&self) -> Result<Setup> {
        let (pits, seeds) = parse_board(&self.board)?;
        Ok(Setup {
            pits,
            seeds,
            rules: self.rules.rules,
            opening_plies: self.opening_plies,
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
    #[arg(long)]
    pub agents: String,
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
                    args.common.games,
                    &setup,
                    !args.fixed_colours,
                    false,
                )
            })??;
            if args.common.json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", match_text(&report, start.elapsed().as_secs_f64()));
            }
        }
        Command::Tournament(args) => {
            let agents = parse_spec_list(&args.agents)?;
            let config = TournamentConfig {
                agents,
                games: args.common.games,
                self_play: args.self_play,
                setup: args.common.setup()?,
            };
            let start = Instant::now();
            let report = with_threads(args.common.threads, || play_tournament(&config))??;
            if args.common.json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", report.to_table());
                println!(
                    "{} games in {:.1} s",
                    report.total_games,
                    start.elapsed().as_secs_f64()
                );
            }
        }
        Command::Evolve(args) => crate::evolve::run(&args)?,
        Command::Bench(args) => crate::bench::run(&args)?,
        Command::Serve(args) => crate::server::run(&args)?,
    }
    Ok(())
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
