//! How a run's records are shown on the console, for every tuner alike: a progress bar whose
//! message sums up the last record on a terminal, one line a record otherwise (so logs stay
//! readable), and the benchmark panel's line on measured records.

use indicatif::ProgressBar;

use super::console::progress_bar;
use crate::rl::LearnerProgress;
use crate::tune::panel::PanelResult;
use crate::tune::GenerationRecord;
use crate::tune::{DriveError, Observer, TunerConfig};
use crate::tuners::learning::progress_of;

/// The console's [`Observer`]; it also keeps what a run's closing summary needs.
pub(crate) struct RunConsole {
    bar: Option<ProgressBar>,
    /// Records shown.
    pub records: u64,
    /// Where the run stood at each record (its tuner's `position`).
    pub positions: Vec<u64>,
    /// The first measured record's generation and panel leader: the baseline a run's gain is
    /// measured against.
    pub first_leader: Option<(u32, PanelResult)>,
}

impl RunConsole {
    /// A console for a run of `length` ([`crate::tune::Tuner::length`]) in `unit` (`gen`,
    /// `games`, `rounds`).
    pub(crate) fn new(length: u64, unit: &str) -> RunConsole {
        RunConsole {
            bar: progress_bar(
                length,
                &format!("{{spinner}} {unit} {{pos}}/{{len}} [{{wide_bar}}] {{msg}} ETA {{eta}}"),
            ),
            records: 0,
            positions: Vec::new(),
            first_leader: None,
        }
    }

    /// The bar, for showing progress within a step (a learner's batches).
    pub(crate) fn bar(&self) -> Option<ProgressBar> {
        self.bar.clone()
    }

    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }

    fn println(&self, line: String) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => println!("{line}"),
        }
    }
}

impl Observer for RunConsole {
    fn record(
        &mut self,
        config: &TunerConfig,
        record: &GenerationRecord,
    ) -> Result<(), DriveError> {
        self.records += 1;
        let position = config.spec().position(record);
        self.positions.push(position);
        if self.first_leader.is_none() {
            if let Some(leader) = record.benchmark.as_ref().and_then(|b| b.leaders.first()) {
                self.first_leader = Some((record.generation, leader.clone()));
            }
        }
        if crate::ga::tuner::population_of(config).is_none() {
            if let Some(bar) = &self.bar {
                bar.set_position(position);
            }
            self.println(checkpoint_line(record));
            return Ok(());
        }
        let secs = record.timing.wall_ms as f64 / 1e3;
        let games_per_sec = record.games_played as f64 / secs.max(1e-9);
        match &self.bar {
            Some(bar) => {
                bar.set_message(format!(
                    "best {:.3} mean {:.3} {:.0} games/s",
                    record.fitness.best, record.fitness.mean, games_per_sec
                ));
                bar.set_position(position);
            }
            None => println!("{}", generation_line(record, games_per_sec)),
        }
        if let Some(line) = panel_line(record) {
            self.println(line);
        }
        Ok(())
    }
}

/// The panel line of a measured generation: its leader's score and Elo against the panel,
/// and the champion's.
fn panel_line(record: &GenerationRecord) -> Option<String> {
    let benchmark = record.benchmark.as_ref()?;
    let leader = benchmark.leaders.first()?;
    let champion = record.champion.as_ref()?;
    let s = &leader.overall;
    let agreement = leader.agreement.as_ref().map_or(String::new(), |a| {
        format!(
            "; perfect moves {:.1}%, {:.3} seeds lost a move",
            100.0 * a.share,
            a.mean_loss
        )
    });
    Some(format!(
        "         panel: leader {} Elo {:+.0} [{:+.0}, {:+.0}]{}; champion from gen {} {}{agreement}",
        s.display_percent(),
        s.elo,
        s.elo_low,
        s.elo_high,
        if benchmark.new_champion {
            " (new champion)"
        } else {
            ""
        },
        champion.generation,
        champion.panel.overall.display_percent()
    ))
}

/// One line per generation for logs (the progress bar shows a shorter message).
fn generation_line(record: &GenerationRecord, games_per_sec: f64) -> String {
    let raced: Vec<u32> = record
        .individuals
        .iter()
        .filter_map(|i| i.raced_games)
        .collect();
    let racing = match (raced.iter().min(), raced.iter().max()) {
        (Some(least), Some(most)) => format!("  raced {least}-{most} games each"),
        _ => String::new(),
    };
    format!(
        "gen {:>4}  best {:.4}  mean {:.4}  min {:.4}  std {:.4}  diversity {:.4}  hall of fame {:.4} (gen {})  {:.0} games/s{racing}",
        record.generation,
        record.fitness.best,
        record.fitness.mean,
        record.fitness.min,
        record.fitness.std,
        record.diversity,
        record.hall_of_fame.fitness,
        record.hall_of_fame.generation,
        games_per_sec
    )
}

/// One line a learner's checkpoint: where learning is, and the panel's measure.
fn checkpoint_line(record: &GenerationRecord) -> String {
    let at = match progress_of(record) {
        Some(LearnerProgress::Td(p)) => format!("games {:>8}", p.games),
        Some(LearnerProgress::Texel(p)) if p.rounds == 0 => "round   0  (starting weights)".into(),
        Some(LearnerProgress::Texel(p)) => format!(
            "round {:>3}  loss {:.4} -> {:.4}",
            p.rounds, p.loss_before, p.loss_after
        ),
        None => format!("checkpoint {}", record.generation),
    };
    let new_champion = record.benchmark.as_ref().is_some_and(|b| b.new_champion);
    let s = record
        .benchmark
        .as_ref()
        .and_then(|b| b.leaders.first())
        .map(|r| r.overall);
    match s {
        Some(s) => format!(
            "{at}  panel {} Elo {:+.0} [{:+.0}, {:+.0}]{}",
            s.display_percent(),
            s.elo,
            s.elo_low,
            s.elo_high,
            if new_champion { " (champion)" } else { "" }
        ),
        None => at,
    }
}
