//! The genetic algorithm as a [`Tuner`]: one generation a step ([`crate::ga::Evolution`]).

use std::sync::Arc;

use super::tuner::{StepControl, Tuner};
use crate::ga::{Evolution, GameBatches, GenerationRecord, StopReason};

impl Tuner for Evolution {
    fn step(&mut self, control: &StepControl) -> Option<GenerationRecord> {
        self.set_cancel(control.cancel().clone());
        Evolution::step(self)
    }

    fn stop_reason(&self) -> Option<StopReason> {
        Evolution::stop_reason(self)
    }

    fn length(&self) -> u64 {
        self.config().generations as u64
    }

    fn play_games_on(&mut self, batches: Arc<dyn GameBatches>) -> bool {
        self.set_batches(batches);
        true
    }
}
