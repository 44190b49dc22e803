//! [`LearnerProgress`]: where a learner stood when a checkpoint record was written, which is
//! what resuming a learning run needs besides the weights.

use serde::{Deserialize, Serialize};

use super::td::TdProgress;
use super::texel::TexelProgress;

/// Where a learner was when a record was made: what resuming needs besides the weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LearnerProgress {
    Td(TdProgress),
    Texel(TexelProgress),
}

impl LearnerProgress {
    /// Self-play games learnt from (TD) or rounds fitted (Texel).
    pub(crate) fn position(&self) -> u64 {
        match self {
            LearnerProgress::Td(p) => p.games,
            LearnerProgress::Texel(p) => p.rounds as u64,
        }
    }
}
