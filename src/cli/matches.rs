//! `play` and `tournament`: colour-swapped matches and round robins, as text or JSON.

use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::args::{thread_pool, usage, PieArg, RulesArg};
use super::console::progress_bar;
use crate::agents::spec::parse_spec_list;
use crate::agents::AgentSpec;
use crate::game::parse_board;
use crate::matches::presets::{tournament_preset, TOURNAMENT_PRESETS};
use crate::matches::sprt::{play_sprt, Sprt};
use crate::matches::{play_match, play_tournament, MatchReport, Setup, TournamentConfig};

#[derive(Args, Debug, Clone)]
pub(crate) struct MatchArgs {
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
    #[command(flatten)]
    pub pie: PieArg,
    /// Worker threads (default: all cores); results do not depend on it
    #[arg(long)]
    pub threads: Option<usize>,
    /// Equal time: every agent that can follow a clock (minimax, heuristic, mcts) gets this
    /// many milliseconds a move, alpha-beta deepening up to depth 20; the others play as
    /// given. Results then depend on the machine's speed and load and do not reproduce
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub time_ms: Option<u64>,
    /// Equal cost that reproduces: alpha-beta agents (minimax, heuristic) deepen up to depth
    /// 20 until a move has visited N positions, mcts runs N playouts a move (a playout costs
    /// far more than a position); the others play as given
    #[arg(long, value_name = "N", conflicts_with = "time_ms", value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: Option<u64>,
    /// Print the report as JSON, or with a path (`--json out.json`) write it there and
    /// print the text report
    #[arg(long, num_args = 0..=1, default_missing_value = "-", value_name = "PATH")]
    pub json: Option<String>,
}

impl MatchArgs {
    /// The specs as this match plays them: with `--time-ms`, on the clock, and a line on
    /// standard error for each agent that has no clock and so plays as given.
    fn timed(&self, specs: Vec<AgentSpec>) -> Vec<AgentSpec> {
        specs
            .into_iter()
            .map(|spec| match (self.time_ms, self.nodes) {
                (Some(ms), _) => {
                    let (timed, on_clock) = spec.with_time_per_move(ms);
                    if !on_clock {
                        eprintln!("--time-ms: {spec} has no clock and plays as given");
                    }
                    timed
                }
                (None, Some(n)) => {
                    let (capped, counts) = spec.with_nodes_per_move(n);
                    if !counts {
                        eprintln!("--nodes: {spec} counts no nodes and plays as given");
                    }
                    capped
                }
                (None, None) => spec,
            })
            .collect()
    }

    fn setup(&self) -> Result<Setup> {
        let (pits, seeds) = parse_board(&self.board)?;
        Ok(Setup {
            pits,
            seeds,
            rules: self.rules.rules,
            pie: self.pie.pie,
            opening_plies: self.opening_plies.unwrap_or(0),
            seed: self.seed,
        })
    }
}

#[derive(Args, Debug)]
pub(crate) struct PlayArgs {
    /// Agent A, South in the first game of every pair
    #[arg(long)]
    pub south: String,
    /// Agent B, North in the first game of every pair
    #[arg(long)]
    pub north: String,
    /// Keep A as South in every game instead of swapping colours in pairs
    #[arg(long, conflicts_with = "sprt")]
    pub fixed_colours: bool,
    /// Play colour-swapped pairs until a sequential probability ratio test decides whether A
    /// is ELO1 rather than ELO0 Elo stronger than B (alpha and beta default to 0.05); prints
    /// the LLR, its bounds and the Elo estimate
    #[arg(long, value_name = "ELO0,ELO1[,ALPHA,BETA]", conflicts_with = "games")]
    pub sprt: Option<String>,
    /// With --sprt: stop inconclusive after this many pairs
    #[arg(long, default_value_t = 20_000, requires = "sprt")]
    pub max_pairs: u64,
    #[command(flatten)]
    pub common: MatchArgs,
}

#[derive(Args, Debug)]
pub(crate) struct TournamentArgs {
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
    /// Play each pairing as an SPRT (the earlier agent as A): colour-swapped pairs until the
    /// test decides, at most --games games a pairing; prints each pairing's verdict, LLR and
    /// Elo estimate under the table. A preset's self-play pairings are left out
    #[arg(
        long,
        value_name = "ELO0,ELO1[,ALPHA,BETA]",
        conflicts_with = "self_play"
    )]
    pub sprt: Option<String>,
    #[command(flatten)]
    pub common: MatchArgs,
}

pub(crate) fn run_play(args: &PlayArgs) -> Result<()> {
    let [a, b]: [AgentSpec; 2] = args
        .common
        .timed(vec![
            AgentSpec::parse(&args.south)?,
            AgentSpec::parse(&args.north)?,
        ])
        .try_into()
        .map_err(|_| anyhow::anyhow!("two agents"))?;
    let setup = args.common.setup()?;
    if let Some(text) = &args.sprt {
        let sprt = Sprt::parse(text).map_err(|e| usage(format!("--sprt: {e}")))?;
        return run_sprt(args, &a, &b, &setup, sprt);
    }
    let start = Instant::now();
    let report = thread_pool(args.common.threads)?.install(|| {
        play_match(
            &a,
            &b,
            args.common.games.unwrap_or(100),
            &setup,
            !args.fixed_colours,
            false,
        )
    })?;
    let mut text = match_text(&report, start.elapsed().as_secs_f64());
    if let Some(ms) = args.common.time_ms {
        text.push_str(&equal_time_note(ms));
    }
    write_report(args.common.json.as_deref(), &report, &text)?;
    Ok(())
}

/// `play --sprt`: pairs until the test decides, with the LLR on a progress line.
fn run_sprt(
    args: &PlayArgs,
    a: &AgentSpec,
    b: &AgentSpec,
    setup: &Setup,
    sprt: Sprt,
) -> Result<()> {
    let bar = progress_bar(
        args.max_pairs,
        "{elapsed_precise} [{bar:30}] {pos}/{len} pairs {msg}",
    );
    let start = Instant::now();
    let report = thread_pool(args.common.threads)?.install(|| {
        play_sprt(a, b, setup, sprt, args.max_pairs, |r| {
            if let Some(bar) = &bar {
                bar.set_position(r.pairs);
                bar.set_message(format!(
                    "LLR {:.2} ({:.2}, {:.2}), Elo {:+.1}",
                    r.llr, r.lower_bound, r.upper_bound, r.estimate.elo
                ));
            }
        })
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let seconds = start.elapsed().as_secs_f64();
    let mut text = format!("{}{:.1} s\n", report.to_text(), seconds);
    if let Some(ms) = args.common.time_ms {
        text.push_str(&equal_time_note(ms));
    }
    write_report(args.common.json.as_deref(), &report, &text)?;
    Ok(())
}

pub(crate) fn run_tournament(args: &TournamentArgs) -> Result<()> {
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
    let sprt = match &args.sprt {
        Some(text) => Some(Sprt::parse(text).map_err(|e| usage(format!("--sprt: {e}")))?),
        None => None,
    };
    let config = match (&preset, &args.agents) {
        (Some(p), _) => {
            setup.opening_plies = args.common.opening_plies.unwrap_or(p.opening_plies);
            TournamentConfig {
                agents: args.common.timed(p.agents.clone()),
                games: args.common.games.unwrap_or(p.games),
                self_play: (p.self_play || args.self_play) && sprt.is_none(),
                sprt,
                setup,
            }
        }
        (None, Some(agents)) => TournamentConfig {
            agents: args.common.timed(parse_spec_list(agents)?),
            games: args.common.games.unwrap_or(100),
            self_play: args.self_play,
            sprt,
            setup,
        },
        (None, None) => bail!(usage("give --agents or --preset")),
    };
    let start = Instant::now();
    let report = thread_pool(args.common.threads)?.install(|| play_tournament(&config))?;
    let seconds = start.elapsed().as_secs_f64();
    let mut text = match &preset {
        Some(p) => report.to_table_with_ci(&p.labels, Some(&p.reference)),
        None => report.to_table(),
    };
    text.push_str(&format!(
        "{} games in {:.1} s\n",
        report.total_games, seconds
    ));
    if let Some(ms) = args.common.time_ms {
        text.push_str(&equal_time_note(ms));
    }
    write_report(args.common.json.as_deref(), &report, &text)?;
    Ok(())
}

/// What an equal-time report says under its figures.
fn equal_time_note(ms: u64) -> String {
    format!(
        "equal time: {ms} ms a move for every agent with a clock (@{ms}ms); measured on this machine under its load, so the games do not reproduce\n"
    )
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
