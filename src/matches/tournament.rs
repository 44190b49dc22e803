//! Matches between two agents and round-robin tournaments, played in parallel on rayon and
//! reproducible from their seed whatever the number of threads.
//!
//! Games come in pairs: both games of a pair start from the same position (the board's start,
//! or a random opening of `opening_plies` sowings) with the colours swapped, so first-move
//! advantage cancels out of the scores.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::game::derive_seed;
use super::pairing::{schedule, PairedGame, Pairing};
use super::setup::{MatchError, MatchSeeds, Setup, MAX_GAMES};
use super::sprt::{Pentanomial, Sprt, Verdict, BATCH_PAIRS};
use super::stats::{ScoreEstimate, Tally};
use crate::agents::{AgentSpec, Budget};

/// One game in a match, seen from agent A.
pub(crate) type MatchGame = PairedGame;

/// The result of [`play_match`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchReport {
    pub a: String,
    pub b: String,
    pub setup: Setup,
    pub games: u64,
    /// A's results, overall and by colour.
    pub a_total: Tally,
    pub a_first: Tally,
    pub a_second: Tally,
    /// A's score with a 95% confidence interval and the implied Elo difference.
    pub a_score: ScoreEstimate,
    /// Mean final stores (A, B).
    pub mean_stores: (f64, f64),
    /// Mean nodes searched per game (A, B).
    pub mean_nodes: (f64, f64),
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub game_list: Vec<MatchGame>,
}

fn check_games(games: u32) -> Result<(), MatchError> {
    if games == 0 || games > MAX_GAMES {
        return Err(MatchError::Invalid {
            field: "games",
            reason: format!("must be 1 to {MAX_GAMES}, got {games}"),
        });
    }
    Ok(())
}

/// Plays one game of a pairing: `a` against `b`, `a` first when `a_first`, within `budget`.
/// A game during which the budget ran out is not a game the agents played as asked, so it is
/// an error, not a result.
fn play_one(
    a: &AgentSpec,
    b: &AgentSpec,
    pairing: &Pairing<MatchSeeds>,
    pair: u64,
    a_first: bool,
    budget: &Budget,
) -> Result<MatchGame, MatchError> {
    budget.check_now()?;
    let mut agent_a = a.build_within(pairing.rules, budget)?;
    let mut agent_b = b.build_within(pairing.rules, budget)?;
    let game = pairing.play(&mut *agent_a, &mut *agent_b, pair, a_first);
    budget.check_now()?;
    Ok(game)
}

/// Plays `games` games of `a` against `b`. With `swap_colours` (the default everywhere) the
/// games come in colour-swapped pairs, A first in the first game of each pair; without it A
/// always moves first.
pub fn play_match(
    a: &AgentSpec,
    b: &AgentSpec,
    games: u32,
    setup: &Setup,
    swap_colours: bool,
    keep_games: bool,
) -> Result<MatchReport, MatchError> {
    play_match_within(
        a,
        b,
        games,
        setup,
        swap_colours,
        keep_games,
        &Budget::unlimited(),
    )
}

/// [`play_match`] within `budget`: [`MatchError::Stopped`] once it is spent or cancelled.
pub(crate) fn play_match_within(
    a: &AgentSpec,
    b: &AgentSpec,
    games: u32,
    setup: &Setup,
    swap_colours: bool,
    keep_games: bool,
    budget: &Budget,
) -> Result<MatchReport, MatchError> {
    check_games(games)?;
    a.validate()?;
    b.validate()?;
    let pairing = setup.pairing(setup.start()?, 0);
    let schedule_of_games: Vec<(u64, bool)> = if swap_colours {
        schedule((games as u64).div_ceil(2))
            .take(games as usize)
            .collect()
    } else {
        (0..games as u64).map(|pair| (pair, true)).collect()
    };
    let results: Vec<MatchGame> = schedule_of_games
        .into_par_iter()
        .map(|(pair, a_first)| play_one(a, b, &pairing, pair, a_first, budget))
        .collect::<Result<_, _>>()?;

    let mut report = MatchReport {
        a: a.to_string(),
        b: b.to_string(),
        setup: setup.clone(),
        games: games as u64,
        a_total: Tally::default(),
        a_first: Tally::default(),
        a_second: Tally::default(),
        a_score: ScoreEstimate::from_groups(&[]),
        mean_stores: (0.0, 0.0),
        mean_nodes: (0.0, 0.0),
        game_list: Vec::new(),
    };
    let mut groups: Vec<Vec<f64>> = Vec::new();
    let (mut stores_a, mut stores_b, mut nodes_a, mut nodes_b) = (0.0, 0.0, 0.0, 0.0);
    for g in &results {
        report.a_total.add(g.a_points);
        if g.a_first {
            report.a_first.add(g.a_points);
        } else {
            report.a_second.add(g.a_points);
        }
        if groups.len() as u64 <= g.pair {
            groups.push(Vec::new());
        }
        groups[g.pair as usize].push(g.a_points);
        let r = &g.record;
        let (sa, sb, na, nb) = if g.a_first {
            (r.south_store, r.north_store, r.south_nodes, r.north_nodes)
        } else {
            (r.north_store, r.south_store, r.north_nodes, r.south_nodes)
        };
        stores_a += sa as f64;
        stores_b += sb as f64;
        nodes_a += na as f64;
        nodes_b += nb as f64;
    }
    let n = results.len().max(1) as f64;
    report.a_score = ScoreEstimate::from_groups(&groups);
    report.mean_stores = (stores_a / n, stores_b / n);
    report.mean_nodes = (nodes_a / n, nodes_b / n);
    if keep_games {
        report.game_list = results;
    }
    Ok(report)
}

/// A round-robin tournament.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentConfig {
    pub agents: Vec<AgentSpec>,
    /// Games per pairing, both colours (rounded up to an even number so colours balance).
    pub games: u32,
    /// Also play each agent against itself.
    #[serde(default)]
    pub self_play: bool,
    /// Play each pairing as an SPRT: colour-swapped pairs until the test decides, with
    /// `games` as the cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<Sprt>,
    #[serde(flatten)]
    pub setup: Setup,
}

/// Where each pairing's SPRT ended, in a tournament played with one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentSprt {
    pub test: Sprt,
    pub lower_bound: f64,
    pub upper_bound: f64,
    /// The most pairs a pairing plays before it stops inconclusive.
    pub max_pairs: u64,
    pub pairings: Vec<PairingSprt>,
}

/// One pairing's test, from the first agent's side (`a` against `b`, indices into the
/// tournament's agents).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairingSprt {
    pub a: usize,
    pub b: usize,
    pub pairs: u64,
    pub counts: Pentanomial,
    pub llr: f64,
    pub verdict: Verdict,
    pub estimate: ScoreEstimate,
}

/// Results of a tournament.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentReport {
    pub agents: Vec<String>,
    pub games_per_pairing: u32,
    pub setup: Setup,
    /// `first[i][j]`: agent i moving first against agent j moving second (Hunter's Table 1:
    /// row = first player). `None` on the diagonal unless self-play was asked for.
    pub first: Vec<Vec<Option<Tally>>>,
    /// Each agent's score over its games against the others, with a 95% interval and Elo.
    pub scores: Vec<ScoreEstimate>,
    pub total_games: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<TournamentSprt>,
}

/// Checks a tournament's size, games and agents before any game is played.
fn check_tournament(config: &TournamentConfig) -> Result<(), MatchError> {
    let n = config.agents.len();
    if n < 2 && !(n == 1 && config.self_play) {
        return Err(MatchError::Invalid {
            field: "agents",
            reason: format!("a tournament needs at least 2 agents, got {n}"),
        });
    }
    if n > 64 {
        return Err(MatchError::Invalid {
            field: "agents",
            reason: format!("at most 64 agents, got {n}"),
        });
    }
    check_games(config.games)?;
    if config.games % 2 == 1 {
        // Rounding up would play games nobody asked for; rounding down, fewer.
        return Err(MatchError::Invalid {
            field: "games",
            reason: format!(
                "must be even: each pairing plays colour-swapped pairs, got {}",
                config.games
            ),
        });
    }
    if let Some(sprt) = &config.sprt {
        sprt.validate().map_err(|e| MatchError::Invalid {
            field: "sprt",
            reason: e.0,
        })?;
        if config.self_play {
            return Err(MatchError::Invalid {
                field: "sprt",
                reason: "an SPRT tests one agent against another: not with self-play".into(),
            });
        }
    }
    for spec in &config.agents {
        spec.validate()?;
    }
    Ok(())
}

/// Plays every pairing of a tournament.
pub fn play_tournament(config: &TournamentConfig) -> Result<TournamentReport, MatchError> {
    play_tournament_until(config, &Budget::unlimited())
}

/// [`play_tournament`] within `budget`, stopping with [`MatchError::Stopped`] once it is
/// spent or cancelled.
pub(crate) fn play_tournament_until(
    config: &TournamentConfig,
    budget: &Budget,
) -> Result<TournamentReport, MatchError> {
    play_tournament_counted(config, budget, &AtomicU64::new(0))
}

/// The games a tournament plays at most: all of them without an SPRT, the cap of every
/// pairing's test with one (a test that decides early plays fewer).
pub(crate) fn tournament_games(config: &TournamentConfig) -> u64 {
    let n = config.agents.len() as u64;
    let pairings = if config.self_play {
        n * (n + 1) / 2
    } else {
        n * n.saturating_sub(1) / 2
    };
    pairings * config.games.div_ceil(2) as u64 * 2
}

/// [`play_tournament_until`], adding one to `played` as each game ends, so that another
/// thread can show how far the tournament has got (out of [`tournament_games`]).
pub(crate) fn play_tournament_counted(
    config: &TournamentConfig,
    budget: &Budget,
    played: &AtomicU64,
) -> Result<TournamentReport, MatchError> {
    check_tournament(config)?;
    let n = config.agents.len();
    let setup = &config.setup;
    let start = setup.start()?;
    let pairs_per_pairing = config.games.div_ceil(2) as u64;

    let mut pairings = Vec::new();
    for i in 0..n {
        for j in i..n {
            if i != j || config.self_play {
                pairings.push((i, j));
            }
        }
    }
    let play = |&(p, k, i_first): &(usize, u64, bool)| {
        let (i, j) = pairings[p];
        let pairing = setup.pairing(start, derive_seed(i as u64, &[j as u64]));
        let game = play_one(
            &config.agents[i],
            &config.agents[j],
            &pairing,
            k,
            i_first,
            budget,
        );
        played.fetch_add(1, Ordering::Relaxed);
        game
    };
    let (played, sprt) = match &config.sprt {
        None => {
            // One job per game: (pairing, pair, i moves first).
            let jobs: Vec<(usize, u64, bool)> = (0..pairings.len())
                .flat_map(|p| schedule(pairs_per_pairing).map(move |(k, i_first)| (p, k, i_first)))
                .collect();
            let results: Vec<MatchGame> = jobs.par_iter().map(play).collect::<Result<_, _>>()?;
            let played: Vec<(usize, MatchGame)> =
                jobs.iter().map(|&(p, _, _)| p).zip(results).collect();
            (played, None)
        }
        Some(test) => {
            let (played, tests) = sprt_pairings(*test, &pairings, pairs_per_pairing, play)?;
            let (lower_bound, upper_bound) = test.bounds();
            let summary = TournamentSprt {
                test: *test,
                lower_bound,
                upper_bound,
                max_pairs: pairs_per_pairing,
                pairings: tests,
            };
            (played, Some(summary))
        }
    };

    let mut first = vec![vec![None::<Tally>; n]; n];
    let mut groups: Vec<Vec<Vec<f64>>> = vec![Vec::new(); n];
    for (p, game) in &played {
        let (i, j) = pairings[*p];
        let (row, col, row_points) = if game.a_first {
            (i, j, game.a_points)
        } else {
            (j, i, 1.0 - game.a_points)
        };
        first[row][col]
            .get_or_insert_with(Tally::default)
            .add(row_points);
        // Scores count games against other agents only, grouped by colour-swapped pair.
        if i == j {
            continue;
        }
        if game.a_first {
            groups[i].push(vec![game.a_points]);
            groups[j].push(vec![1.0 - game.a_points]);
        } else {
            groups[i]
                .last_mut()
                .expect("pair started")
                .push(game.a_points);
            groups[j]
                .last_mut()
                .expect("pair started")
                .push(1.0 - game.a_points);
        }
    }
    Ok(TournamentReport {
        agents: config.agents.iter().map(|a| a.to_string()).collect(),
        games_per_pairing: (pairs_per_pairing * 2) as u32,
        setup: setup.clone(),
        first,
        scores: groups
            .iter()
            .map(|g| ScoreEstimate::from_groups(g))
            .collect(),
        total_games: played.len() as u64,
        sprt,
    })
}

/// Games counted by a tournament, each with the index of its pairing.
type PlayedGames = Vec<(usize, MatchGame)>;

/// Plays every pairing as an SPRT: rounds of up to [`BATCH_PAIRS`] pairs for each pairing
/// still undecided, all in one parallel job list, then each pairing's pairs fed to its test
/// in order. A pairing's games after the pair that decided it are not counted, so what is
/// counted does not depend on the number of threads. Returns the counted games, pairing by
/// pairing within each round, and each pairing's test.
fn sprt_pairings(
    test: Sprt,
    pairings: &[(usize, usize)],
    max_pairs: u64,
    play: impl Fn(&(usize, u64, bool)) -> Result<MatchGame, MatchError> + Sync,
) -> Result<(PlayedGames, Vec<PairingSprt>), MatchError> {
    let mut tests: Vec<PairingSprt> = pairings
        .iter()
        .map(|&(a, b)| PairingSprt {
            a,
            b,
            pairs: 0,
            counts: Pentanomial::default(),
            llr: 0.0,
            verdict: Verdict::Inconclusive,
            estimate: Pentanomial::default().estimate(),
        })
        .collect();
    let mut played = Vec::new();
    loop {
        let jobs: Vec<(usize, u64, bool)> = tests
            .iter()
            .enumerate()
            .filter(|(_, t)| t.verdict == Verdict::Inconclusive && t.pairs < max_pairs)
            .flat_map(|(p, t)| {
                let batch = BATCH_PAIRS.min(max_pairs - t.pairs);
                let first = t.pairs;
                schedule(batch).map(move |(k, i_first)| (p, first + k, i_first))
            })
            .collect();
        if jobs.is_empty() {
            break;
        }
        let results: Vec<MatchGame> = jobs.par_iter().map(&play).collect::<Result<_, _>>()?;
        // Jobs come pairing by pairing, each pairing's pairs in order, both games of a pair
        // side by side.
        let mut start = 0;
        while start < jobs.len() {
            let p = jobs[start].0;
            let end = start + jobs[start..].iter().take_while(|j| j.0 == p).count();
            let games = &results[start..end];
            let t = &mut tests[p];
            let pair_points = games.chunks(2).map(|g| g[0].a_points + g[1].a_points);
            let (taken, llr, verdict) = test.feed(&mut t.counts, pair_points);
            t.pairs += taken;
            t.llr = llr;
            t.verdict = verdict;
            t.estimate = t.counts.estimate();
            played.extend(games[..2 * taken as usize].iter().map(|g| (p, g.clone())));
            start = end;
        }
    }
    Ok((played, tests))
}

/// One row of a text table: a left-aligned name, then right-aligned cells.
fn push_row(
    out: &mut String,
    name: &str,
    name_width: usize,
    cells: impl Iterator<Item = String>,
    cell_width: usize,
) {
    out.push_str(&format!("{name:name_width$}"));
    for text in cells {
        out.push_str(&format!(" {text:>cell_width$}"));
    }
    out.push('\n');
}

/// Published win rates (percent, row agent moving first) to print beside a tournament's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ReferenceTable {
    pub source: String,
    pub rows: Vec<Vec<Option<f64>>>,
}

impl TournamentReport {
    /// The cross-table in the shape of Hunter's Table 1 (row = first player, win rates with
    /// 95% Wilson intervals), under `labels`, and `reference`'s figures below it when given.
    pub(crate) fn to_table_with_ci(
        &self,
        labels: &[String],
        reference: Option<&ReferenceTable>,
    ) -> String {
        let n = self.agents.len();
        let label = |i: usize| {
            labels
                .get(i)
                .cloned()
                .unwrap_or_else(|| self.agents[i].clone())
        };
        let name_width = (0..n).map(|i| label(i).len()).max().unwrap_or(8).max(14);
        let cell_width = (0..n)
            .map(|i| label(i).len())
            .max()
            .unwrap_or(8)
            .clamp(18, 32);
        let header = |out: &mut String| {
            out.push_str(&format!("{:name_width$}", "first \\ second"));
            for i in 0..n {
                out.push_str(&format!(" {:>cell_width$}", label(i)));
            }
            out.push('\n');
        };
        let mut out = format!(
            "Win rate of the row agent moving first against the column agent moving second, 95% interval\n{}\n\n",
            self.conditions()
        );
        header(&mut out);
        for (i, row) in self.first.iter().enumerate() {
            let cells = row.iter().map(|cell| match cell {
                Some(t) => {
                    let (lo, hi) = t.win_rate_ci();
                    format!(
                        "{:.1}% [{:.1}, {:.1}]",
                        100.0 * t.win_rate(),
                        100.0 * lo,
                        100.0 * hi
                    )
                }
                None => "-".into(),
            });
            push_row(&mut out, &label(i), name_width, cells, cell_width);
        }
        if let Some(reference) = reference {
            out.push_str(&format!("\n{}\n", reference.source));
            header(&mut out);
            for (i, row) in reference.rows.iter().enumerate().take(n) {
                let cells = row.iter().take(n).map(|cell| match cell {
                    Some(v) => format!("{v:.1}%"),
                    None => "N/A".into(),
                });
                push_row(&mut out, &label(i), name_width, cells, cell_width);
            }
        }
        out.push_str(
            "\nScore over all games against the others (95% CI) and Elo relative to an even field\n",
        );
        let names: Vec<String> = (0..n).map(label).collect();
        self.push_scores(&mut out, &names, name_width);
        self.push_sprt(&mut out, &names);
        out
    }

    /// Each pairing's SPRT, when the tournament was played with one.
    fn push_sprt(&self, out: &mut String, names: &[String]) {
        let Some(sprt) = &self.sprt else {
            return;
        };
        let t = &sprt.test;
        out.push_str(&format!(
            "\nSPRT of each pairing, elo0 {} elo1 {} alpha {} beta {} (LLR bounds {:.3}, {:.3}), at most {} pairs\n",
            t.elo0, t.elo1, t.alpha, t.beta, sprt.lower_bound, sprt.upper_bound, sprt.max_pairs
        ));
        for p in &sprt.pairings {
            let e = &p.estimate;
            out.push_str(&format!(
                "{} against {}: {} after {} pairs, LLR {:.3}, score {:.1}% [{:.1}, {:.1}], Elo {:+.1} [{:+.1}, {:+.1}]\n",
                names[p.a],
                names[p.b],
                match p.verdict {
                    Verdict::AcceptH0 => "H0 accepted",
                    Verdict::AcceptH1 => "H1 accepted",
                    Verdict::Inconclusive => "inconclusive",
                },
                p.pairs,
                p.llr,
                100.0 * e.score,
                100.0 * e.ci_low,
                100.0 * e.ci_high,
                e.elo,
                e.elo_low,
                e.elo_high
            ));
        }
    }

    /// The conditions every game was played under, in brackets.
    fn conditions(&self) -> String {
        let setup = &self.setup;
        format!(
            "({} games a pairing{}, {} board {}x{}, opening plies {}, seed {})",
            self.games_per_pairing,
            if self.sprt.is_some() { " at most" } else { "" },
            setup.rules,
            setup.pits,
            setup.seeds,
            setup.opening_plies,
            setup.seed
        )
    }

    /// Each agent's score with its interval and Elo, one line each under `names`.
    fn push_scores(&self, out: &mut String, names: &[String], width: usize) {
        for (name, s) in names.iter().zip(&self.scores) {
            out.push_str(&format!(
                "{name:width$} {:>24}  Elo {:+.0} [{:+.0}, {:+.0}]  ({} games)\n",
                s.display_percent(),
                s.elo,
                s.elo_low,
                s.elo_high,
                s.games
            ));
        }
    }

    /// The cross-table as text: win rate of the row agent moving first against the column
    /// agent moving second, then each agent's score.
    pub fn to_table(&self) -> String {
        let names: Vec<String> = self
            .agents
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{}:{a}", i + 1))
            .collect();
        let width = names.iter().map(|s| s.len()).max().unwrap_or(8).max(12);
        let mut out = format!(
            "Win rate of the row agent moving first against the column agent moving second\n{}\n\n",
            self.conditions()
        );
        out.push_str(&format!("{:width$}", "first \\ second"));
        for i in 0..self.agents.len() {
            out.push_str(&format!(" {:>8}", i + 1));
        }
        out.push('\n');
        for (i, name) in names.iter().enumerate() {
            out.push_str(&format!("{name:width$}"));
            for cell in &self.first[i] {
                match cell {
                    Some(t) => out.push_str(&format!(" {:>7.1}%", 100.0 * t.win_rate())),
                    None => out.push_str(&format!(" {:>8}", "-")),
                }
            }
            out.push('\n');
        }
        out.push_str(
            "\nScore over all games (95% CI) and Elo relative to an even opponent field\n",
        );
        self.push_scores(&mut out, &names, width);
        self.push_sprt(&mut out, &names);
        out
    }
}
