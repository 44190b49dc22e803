//! The genetic algorithm as a [`Tuner`]: one generation a step ([`crate::ga::Evolution`]),
//! whose fitness games it hands out as job lists (the games fixed in advance, then one list
//! per racing round).

use super::tuner::{Ask, StepControl, Tuner};
use crate::ga::{Evolution, GenerationRecord, JobList, StopReason};

impl Tuner for Evolution {
    fn ask(&mut self, control: &StepControl) -> Ask {
        self.set_cancel(control.cancel().clone());
        if let Some(list) = self.next_games() {
            return Ask::Games(list);
        }
        match self.finish_generation() {
            Some(record) => Ask::Record(Box::new(record)),
            None => Ask::Finished,
        }
    }

    fn tell(&mut self, points: Vec<f64>) {
        Evolution::tell(self, points)
    }

    fn play_here(&mut self, list: &JobList) -> Vec<f64> {
        Evolution::play_here(self, list)
    }

    fn stop_reason(&self) -> Option<StopReason> {
        Evolution::stop_reason(self)
    }

    fn length(&self) -> u64 {
        self.config().generations as u64
    }

    fn step(&mut self, control: &StepControl) -> Option<GenerationRecord> {
        self.set_cancel(control.cancel().clone());
        Evolution::step(self)
    }
}
