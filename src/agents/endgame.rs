//! The endgame database an agent with `"egdb": true` reads: the largest one built for the
//! board and rules in the cache folder (`kalah-tuner egdb build`), opened the first time the
//! agent sees a board of that size.

use std::sync::Arc;

use crate::game::Rules;
use crate::search::egdb::{self, Egdb};

/// An agent's database, looked up once per board size.
#[derive(Debug, Default)]
pub struct EndgameTable {
    wanted: bool,
    /// The board size looked up last, and what was found for it.
    loaded: Option<(usize, Option<Arc<Egdb>>)>,
}

impl EndgameTable {
    pub fn new(wanted: bool) -> EndgameTable {
        EndgameTable {
            wanted,
            loaded: None,
        }
    }

    /// The database for boards of `pits` pits under `rules`, when the agent wants one and one
    /// is built. A missing or unreadable database is reported once (the agent then plays
    /// without it, as it would with `"egdb": false`).
    pub fn get(&mut self, pits: usize, rules: Rules) -> Option<Arc<Egdb>> {
        if !self.wanted {
            return None;
        }
        match &self.loaded {
            Some((loaded_pits, db)) if *loaded_pits == pits => db.clone(),
            _ => {
                let db = match egdb::shared(pits, rules) {
                    Ok(Some(db)) => Some(db),
                    Ok(None) => {
                        tracing::warn!(
                            "no endgame database for Kalah({pits}) {rules} in {}: playing without \
                             one (build it with `kalah-tuner egdb build --pits {pits} --seeds 16 \
                             --rules {rules}`)",
                            egdb::default_dir().display()
                        );
                        None
                    }
                    Err(e) => {
                        tracing::warn!("endgame database unusable, playing without one: {e}");
                        None
                    }
                };
                self.loaded = Some((pits, db.clone()));
                db
            }
        }
    }
}
