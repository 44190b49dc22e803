use super::{Agent, Decision, GameRng, MoveValue, Ties};
use crate::eval::StoreDiff;
use crate::game::{Position, Rules};
use crate::search::{AlphaBeta, Budget, Solver};

/// Exact play from the solver when at most `max_seeds` seeds are left in the pits; with more,
/// alpha-beta on store difference to `fallback_depth` turns (an exact solve of a full board can
/// take hours).
pub struct Perfect {
    pub rules: Rules,
    pub max_seeds: u32,
    pub fallback_depth: u32,
    pub ties: Ties,
    solver: Solver,
    budget: Budget,
}

impl Perfect {
    pub fn new(rules: Rules, max_seeds: u32, fallback_depth: u32, ties: Ties) -> Perfect {
        Perfect {
            rules,
            max_seeds,
            fallback_depth,
            ties,
            solver: Solver::with_default_table(rules),
            budget: Budget::unlimited(),
        }
    }
}

impl Agent for Perfect {
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision {
        if pos.seeds_in_pits() > self.max_seeds {
            let eval = StoreDiff;
            let mut search = AlphaBeta::new(&eval, self.rules);
            search.set_budget(&self.budget);
            let result = search.search_depth(pos, self.fallback_depth);
            return Decision {
                mv: self.ties.pick(&result.best_moves, rng),
                nodes: result.nodes,
                playouts: 0,
                value: Some(MoveValue::SearchScore(result.value)),
            };
        }
        let before = self.solver_nodes();
        let (best, mut moves) = self.solver.best_moves(pos);
        if moves.is_empty() {
            // A solve stopped by the budget: any legal move, which the budget's owner discards.
            moves = pos.legal_moves().into_iter().take(1).collect();
        }
        Decision {
            mv: self.ties.pick(&moves, rng),
            nodes: self.solver_nodes() - before,
            playouts: 0,
            value: Some(MoveValue::ExactMargin(best)),
        }
    }

    fn set_budget(&mut self, budget: &Budget) {
        self.budget = budget.clone();
        self.solver.set_budget(budget);
    }
}

impl Perfect {
    fn solver_nodes(&self) -> u64 {
        self.solver.total_nodes()
    }
}
