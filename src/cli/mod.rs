//! The `kalah-tuner` command line: every command, its flags, progress bars, Ctrl-C handling
//! and exit codes. Output formats here are a contract: other tools call these commands and
//! read their last line. Nothing in the library depends on this module.
//!
//! - `position`: `perft`, `solve`, `move`.
//! - `egdb`: `egdb build` and `egdb list`, the endgame databases.
//! - `matches`: `play`, `tournament`.
//! - `evolve`: a GA run without the server.
//! - `learn`: the learning tuners, TD(lambda), TD-Leaf(lambda) and Texel-style fitting.
//! - `bench`: single-threaded speed figures; with `cost_bench` the cost model's table of
//!   game sides and with `run_cost_bench` its estimates of whole runs.
//! - `serve`: the HTTP API and dashboard.
//! - `train_a3c`: training of the a3c network.
//! - `mankalah`: a ManKalah agent on standard input and output.
//! - `reference`: the command-line and configuration references of docs/reference/.
//! - `args`: `--rules`, `--pie`, `--threads` and usage errors, shared by the commands.
//! - `console`: progress bars, Ctrl-C and processor-time budgets, shared by the long
//!   commands; `progress`: how a run's records are shown.

pub(crate) mod agreement;
pub(crate) mod args;
pub(crate) mod bench;
pub(crate) mod bench_seeds;
pub(crate) mod console;
pub(crate) mod cost_bench;
pub(crate) mod egdb;
pub(crate) mod evolve;
pub(crate) mod learn;
pub(crate) mod mankalah;
pub(crate) mod matches;
pub(crate) mod position;
pub(crate) mod progress;
pub(crate) mod reference;
pub(crate) mod run_cost_bench;
pub(crate) mod serve;
pub(crate) mod train_a3c;
pub(crate) mod users;
pub(crate) mod worker;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "kalah-tuner",
    version,
    about = "Play, solve and benchmark Kalah (Mancala) agents and tune their evaluation weights"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Count move paths of exactly DEPTH sowings (last line: the count)
    Perft(position::PerftArgs),
    /// Exact value of a position for the side to move (last line: the value)
    Solve(position::SolveArgs),
    /// Ask an agent for a move (last line: the move number, 1..m)
    Move(position::MoveArgs),
    /// Play a match of two agents in colour-swapped pairs
    Play(matches::PlayArgs),
    /// How often agents make a perfect move, on positions from real games solved exactly
    Agreement(agreement::AgreementArgs),
    /// Round robin of several agents with a cross-table of win rates
    Tournament(matches::TournamentArgs),
    /// Evolve evaluation weights with the genetic algorithm and write the export document
    Evolve(evolve::EvolveArgs),
    /// Learn evaluation weights by TD(lambda) or TD-Leaf(lambda) from self-play, or by
    /// Texel-style fitting to game results, and write the export document
    Learn(Box<learn::LearnArgs>),
    /// Measure move generation, search and game speed on one thread
    Bench(bench::BenchArgs),
    /// Serve the HTTP API and dashboard (runs are stored in SQLite or PostgreSQL)
    Serve(serve::ServeArgs),
    /// Build and list endgame databases (exact values of every position with few seeds left)
    Egdb(egdb::EgdbArgs),
    /// Play game batches of PostgreSQL runs from the job queue on this machine's cores (no
    /// HTTP; start as many as there are machines)
    Worker(worker::WorkerArgs),
    /// Train the a3c agent's network by asynchronous advantage actor-critic
    #[command(name = "train-a3c")]
    TrainA3c(train_a3c::TrainArgs),
    /// Play one game as a ManKalah agent on standard input and output (the Manchester
    /// engine's protocol; Kalah(7,7), pie rule)
    Mankalah(mankalah::ManKalahArgs),
    /// The users of a shared server: add, list, remove, or give a new token (each user's runs
    /// are theirs to change)
    Users(users::UsersArgs),
    /// Print the command-line or configuration reference as Markdown (docs/reference/)
    #[command(hide = true)]
    Reference(reference::ReferenceArgs),
}

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
            // One line: clap's first, with the values it offers (an unknown `--tuner`, say).
            let text = e.to_string();
            let mut line = text
                .lines()
                .next()
                .unwrap_or("invalid arguments")
                .to_string();
            for offered in text
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("[possible values"))
            {
                line = format!("{line} {offered}");
            }
            eprintln!("{line} (see kalah-tuner --help)");
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let line = format!("{e:#}").replace('\n', " ");
            eprintln!("error: {line}");
            ExitCode::from(
                e.chain()
                    .find_map(crate::game::as_user_error)
                    .map_or(1, |u| u.exit_code()),
            )
        }
    }
}

/// A command whose output goes to a reader that stops early (`kalah-tuner … | head`) ends
/// quietly, as Unix tools do, instead of panicking in `println!`: Rust ignores SIGPIPE, so
/// its default action is put back. The servers keep ignoring it; a client that goes away is
/// theirs to handle.
fn stop_quietly_on_a_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: sets the disposition of one signal to its default; no handler runs our code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

pub(crate) fn run(cli: Cli) -> Result<()> {
    if !matches!(cli.command, Command::Serve(_) | Command::Worker(_)) {
        stop_quietly_on_a_closed_pipe();
    }
    match cli.command {
        Command::Perft(args) => position::run_perft(&args),
        Command::Solve(args) => position::run_solve(&args),
        Command::Move(args) => position::run_move(&args),
        Command::Play(args) => matches::run_play(&args),
        Command::Agreement(args) => agreement::run(&args),
        Command::Tournament(args) => matches::run_tournament(&args),
        Command::Evolve(args) => evolve::run(&args),
        Command::Learn(args) => learn::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Worker(args) => worker::run(&args),
        Command::Egdb(args) => egdb::run(&args),
        Command::TrainA3c(args) => train_a3c::run(&args),
        Command::Mankalah(args) => mankalah::run(&args),
        Command::Users(args) => users::run(&args),
        Command::Reference(args) => {
            reference::run(&args, &<Cli as clap::CommandFactory>::command())
        }
    }
}
