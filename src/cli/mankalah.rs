//! `mankalah`: a ManKalah agent on standard input and output (docs/tutorials/mankalah.md),
//! for the Manchester engine, e.g.
//! `java -jar ManKalah.jar "java -jar MKRefAgent.jar" "kalah-tuner mankalah --agent minimax:8"`.
//! The protocol itself is [`crate::matches::mankalah`]; this wires it to the pipes. Standard
//! output carries protocol lines only; everything else goes to standard error.

use std::io::{BufRead, Write};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;

use super::args::{usage, RulesArg};
use crate::agents::{rng_from_seed, AgentSpec};
use crate::game::{parse_board, Position};
use crate::matches::mankalah::{ManKalah, Step};

#[derive(Args, Debug)]
pub(crate) struct ManKalahArgs {
    /// Agent spec, e.g. minimax:8, mcts:20000 or export:best.json
    #[arg(long)]
    pub agent: String,
    /// Time per move in milliseconds for the agents that search by time (minimax,
    /// heuristic, mcts); others ignore it
    #[arg(long)]
    pub ms_per_move: Option<u64>,
    /// Board, written m,n (the engine's default is 7,7)
    #[arg(long, default_value = "7,7")]
    pub board: String,
    #[command(flatten)]
    pub rules: RulesArg,
    /// Play without the pie rule (the engine's default game has it)
    #[arg(long)]
    pub no_pie: bool,
    /// Seed of the agent's tie-breaking
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// The spec with its time budget set to `ms`, where it has one.
fn with_time(mut spec: AgentSpec, ms: u64) -> AgentSpec {
    match &mut spec {
        AgentSpec::Minimax { time_ms, .. }
        | AgentSpec::Heuristic { time_ms, .. }
        | AgentSpec::Mcts { time_ms, .. } => *time_ms = Some(ms),
        _ => {}
    }
    spec
}

pub(crate) fn run(args: &ManKalahArgs) -> Result<()> {
    let mut spec = AgentSpec::parse(&args.agent)?;
    if let Some(ms) = args.ms_per_move {
        if ms == 0 || ms > 600_000 {
            bail!(usage(format!(
                "--ms-per-move must be 1 to 600000, got {ms}"
            )));
        }
        spec = with_time(spec, ms);
        spec.validate()?;
    }
    let (m, n) = parse_board(&args.board)?;
    let start = Position::start(m, n)?.with_pie(!args.no_pie);
    let agent = spec.build(args.rules.rules)?;
    eprintln!(
        "mankalah: {spec} on Kalah({m},{n}), {} rules{}",
        args.rules.rules,
        if args.no_pie { "" } else { ", pie rule" }
    );
    let mut session = ManKalah::new(agent, rng_from_seed(args.seed), args.rules.rules, start);
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line.context("reading the engine's messages")?;
        eprintln!("engine: {line}");
        let step = session
            .handle(&line)
            .map_err(|e| anyhow!("mankalah: {e}"))?;
        match step {
            Step::Reply(reply) => {
                eprintln!("agent: {reply}");
                writeln!(stdout, "{reply}").context("writing to the engine")?;
                stdout.flush().context("writing to the engine")?;
            }
            Step::Wait => {}
            Step::End => {
                let (south, north) = session.position().final_stores();
                eprintln!("mankalah: game over, first mover {south}, second mover {north}");
                return Ok(());
            }
        }
    }
    bail!("mankalah: the engine closed the connection before END")
}
