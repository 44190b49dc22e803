//! The tuners besides the GA's own, each a peer over the tuning engine ([`crate::tune`]):
//! the population tuners that play generations as the GA does but breed them their own way
//! (`population`: `cmaes`, `spsa`, `de`), and the learners ([`learning`]: TD(lambda),
//! TD-Leaf(lambda), Texel-style fitting). Each registers itself with the engine in its own
//! file; [`schema`] describes every registered tuner's config as the dashboard's form.

pub(crate) mod cmaes;
pub(crate) mod de;
pub mod learning;
pub(crate) mod population;
pub mod schema;
pub(crate) mod spsa;

pub use cmaes::{CmaesConfig, CmaesSettings};
pub use learning::LearningConfig;
pub use learning::{LearnerConfig, LearningRun};
pub use population::{BreederSettings, PopulationConfig};
pub use spsa::{SpsaConfig, SpsaSettings};
