use super::{Agent, Decision, GameRng, MoveValue, Ties};
use crate::eval::StoreDiff;
use crate::game::{Position, Rules};
use crate::search::{AlphaBeta, Solver};

/// Exact play from the solver when at most `max_seeds` seeds are left in the pits; with more,
/// alpha-beta on store difference to `fallback_depth` turns (an exact solve of a full board can
/// take hours).
pub struct Perfect {
    pub rules: Rules,
    pub max_seeds: u32,
    pub fallback_depth: u32,
    pub ties: Ties,
    solver: Solver,
}

impl Perfect {
    pub fn new(rules: Rules, max_seeds: u32, fallback_depth: u32, ties: Ties) -> Perfect {
        Perfect {
            rules,
            max_seeds,
            fallback_depth,
            ties,
            solver: Solver::with_default_table(rules),
        }
    }
}

impl Agent for Perfect {
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision {
        if pos.seeds_in_pits() > self.max_seeds {
            let eval = StoreDiff;
            let result = AlphaBeta::new(&eval, self.rules).search_depth(pos, self.fallback_depth);
            return Decision {
                mv: self.ties.pick(&result.best_moves, rng),
                nodes: result.nodes,
                playouts: 0,
                value: Some(MoveValue::SearchScore(result.value)),
            };
        }
        let before = self.solver_nodes();
        let (best, moves) = self.solver.best_moves(pos);
        Decision {
            mv: self.ties.pick(&moves, rng),
            nodes: self.solver_nodes() - before,
            playouts: 0,
            value: Some(MoveValue::ExactMargin(best)),
        }
    }
}

impl Perfect {
    fn solver_nodes(&self) -> u64 {
        self.solver.total_nodes()
    }
}
