//! `agreement`: how often agents make a perfect move, on positions sampled from real games and
//! solved exactly (`matches::agreement`).

use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;

use super::args::{thread_pool, usage, RulesArg};
use crate::agents::AgentSpec;
use crate::game::parse_board;
use crate::matches::agreement::{measure, solved_positions_with, AgreementReport, AgreementSetup};

#[derive(Args, Debug)]
pub(crate) struct AgreementArgs {
    /// An agent to measure; repeat for more (all are measured on the same positions)
    #[arg(long, required = true)]
    pub agent: Vec<String>,
    /// Positions to sample, one from each game of minimax:4 against itself
    #[arg(long, default_value_t = 1000)]
    pub positions: usize,
    /// Seeds the openings, the sampling games and the agents' tie-breaking
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Most seeds left in the pits of a sampled position (each is solved exactly)
    #[arg(long, default_value_t = 20)]
    pub max_seeds: u32,
    /// Random sowings before the sampling games start
    #[arg(long, default_value_t = 4)]
    pub opening_plies: u32,
    /// Board size m,n: pits per side, seeds per pit
    #[arg(long, default_value = "6,4")]
    pub board: String,
    #[command(flatten)]
    pub rules: RulesArg,
    /// Worker threads (default: all cores); results do not depend on it
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print the reports as JSON instead of a table
    #[arg(long)]
    pub json: bool,
    /// Solve the positions through the endgame database built for the board (`egdb build`),
    /// which allows --max-seeds up to 40
    #[arg(long)]
    pub egdb: bool,
}

pub(crate) fn run(args: &AgreementArgs) -> Result<()> {
    let (pits, seeds) = parse_board(&args.board).map_err(|e| usage(format!("--board: {e}")))?;
    let specs: Vec<AgentSpec> = args
        .agent
        .iter()
        .map(|text| AgentSpec::parse(text).map_err(|e| usage(format!("--agent: {e}"))))
        .collect::<Result<_>>()?;
    let setup = AgreementSetup {
        pits,
        seeds,
        rules: args.rules.rules,
        positions: args.positions,
        max_seeds: args.max_seeds,
        opening_plies: args.opening_plies,
        seed: args.seed,
    };
    let pool = thread_pool(args.threads)?;
    let started = Instant::now();
    let egdb = if args.egdb {
        match crate::search::egdb::shared(pits, setup.rules)? {
            Some(db) => Some(db),
            None => {
                return Err(usage(format!(
                    "--egdb: no endgame database for Kalah({pits}) {} in {}; build one with \
                     `kalah-tuner egdb build --pits {pits} --seeds 20 --rules {}`",
                    setup.rules,
                    crate::search::egdb::default_dir().display(),
                    setup.rules
                )))
            }
        }
    } else {
        None
    };
    let set = pool
        .install(|| solved_positions_with(&setup, egdb))
        .map_err(|e| usage(format!("--{}", e.to_string().replace('_', "-"))))?;
    eprintln!(
        "sampled and solved {} positions of Kalah({pits},{seeds}) with at most {} seeds in the pits in {:.1} s",
        set.len(),
        setup.max_seeds,
        started.elapsed().as_secs_f64()
    );
    let mut reports: Vec<AgreementReport> = Vec::new();
    for (spec, text) in specs.iter().zip(&args.agent) {
        let started = Instant::now();
        let mut report = pool
            .install(|| measure(spec, &set, setup.rules, setup.seed))
            .with_context(|| format!("measuring {text}"))?;
        // The spec as given: an export's resolved spec lists every weight.
        report.agent = text.clone();
        eprintln!("{text}: {:.1} s", started.elapsed().as_secs_f64());
        reports.push(report);
    }
    if args.json {
        let doc = serde_json::json!({"setup": setup, "reports": reports});
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    if let Some(first) = reports.first() {
        println!(
            "{} positions; the best move is the only perfect one in {:.1}% of them",
            first.positions,
            100.0 * first.single_perfect_move
        );
    }
    println!("| agent | perfect moves | seeds lost a move |");
    println!("|---|---|---|");
    for r in &reports {
        println!(
            "| {} | {:.1}% [{:.1}, {:.1}] | {:.3} [{:.3}, {:.3}] |",
            r.agent,
            100.0 * r.agreement,
            100.0 * r.agreement_ci.0,
            100.0 * r.agreement_ci.1,
            r.mean_loss,
            r.mean_loss_ci.0,
            r.mean_loss_ci.1
        );
    }
    Ok(())
}
