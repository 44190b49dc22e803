use super::{Agent, Decision, EndgameTable, GameRng, MoveValue, Ties};
use crate::eval::StoreDiff;
use crate::game::{Position, Rules};
use crate::search::{AlphaBeta, Budget, Solver};

/// Exact play: from the endgame database where it covers the position (`"egdb": true`), from
/// the solver when at most `max_seeds` seeds are left in the pits, and above that from a
/// solve of at most `solve_nodes` positions when one is allowed. Where none of these gives an
/// exact answer, alpha-beta on store difference to `fallback_depth` turns (the database, if
/// any, scoring the positions it covers exactly): an exact solve of a full board can take
/// hours.
pub(crate) struct Perfect {
    pub rules: Rules,
    pub max_seeds: u32,
    pub fallback_depth: u32,
    /// Positions an exact solve above `max_seeds` may visit per move; 0 for none.
    pub solve_nodes: u64,
    pub ties: Ties,
    solver: Solver,
    egdb: EndgameTable,
    budget: Budget,
}

impl Perfect {
    pub(crate) fn new(rules: Rules, max_seeds: u32, fallback_depth: u32, ties: Ties) -> Perfect {
        Perfect {
            rules,
            max_seeds,
            fallback_depth,
            solve_nodes: 0,
            ties,
            solver: Solver::with_default_table(rules),
            egdb: EndgameTable::new(false),
            budget: Budget::unlimited(),
        }
    }

    /// Reads the endgame database for the board when `wanted` and one is built, and tries an
    /// exact solve of at most `solve_nodes` positions above `max_seeds`.
    pub(crate) fn with_egdb(mut self, wanted: bool, solve_nodes: u64) -> Perfect {
        self.egdb = EndgameTable::new(wanted);
        self.solve_nodes = solve_nodes;
        self
    }

    fn exact(&self, best: i32, moves: Vec<usize>, nodes: u64, rng: &mut GameRng) -> Decision {
        Decision {
            mv: self.ties.pick(&moves, rng),
            nodes,
            playouts: 0,
            value: Some(MoveValue::ExactMargin(best)),
        }
    }
}

impl Agent for Perfect {
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision {
        let db = self.egdb.get(pos.pits(), self.rules);
        if let Some(db) = &db {
            if self
                .solver
                .egdb()
                .is_none_or(|mine| !std::sync::Arc::ptr_eq(mine, db))
            {
                self.solver.set_egdb(db.clone());
            }
        }
        let covered = db.as_ref().is_some_and(|db| db.covers(pos, self.rules));
        let before = self.solver.total_nodes();
        if covered || pos.seeds_in_pits() <= self.max_seeds {
            let (best, mut moves) = self.solver.best_moves(pos);
            if moves.is_empty() {
                // A solve stopped by the budget: any legal move, which the budget's owner
                // discards.
                moves = pos.legal_moves().into_iter().take(1).collect();
            }
            let nodes = self.solver.total_nodes() - before;
            return self.exact(best, moves, nodes, rng);
        }
        if self.solve_nodes > 0 {
            if let Some((best, moves)) = self.solver.best_moves_within(pos, self.solve_nodes) {
                let nodes = self.solver.total_nodes() - before;
                return self.exact(best, moves, nodes, rng);
            }
        }
        let tried = self.solver.total_nodes() - before;
        let eval = StoreDiff;
        let mut search = AlphaBeta::new(&eval, self.rules);
        search.set_budget(&self.budget);
        if let Some(db) = &db {
            search.set_egdb(db);
        }
        let result = search.search_depth(pos, self.fallback_depth);
        Decision {
            mv: self.ties.pick(&result.best_moves, rng),
            nodes: tried + result.nodes,
            playouts: 0,
            value: Some(MoveValue::SearchScore(result.value)),
        }
    }

    fn set_budget(&mut self, budget: &Budget) {
        self.budget = budget.clone();
        self.solver.set_budget(budget);
    }
}
