use std::time::Duration;

use super::{Agent, Decision, EndgameTable, GameRng, MoveValue, Ties};
use crate::eval::Evaluator;
use crate::game::{Position, Rules};
use crate::search::{AlphaBeta, Budget, Depth, KeptTable};

/// Alpha-beta minimax with any evaluator: `minimax` (store difference) and `heuristic`
/// (weighted features) are both this agent.
pub(crate) struct SearchAgent<E: Evaluator> {
    pub eval: E,
    pub rules: Rules,
    pub depth: Depth,
    /// When set, iterative deepening within this budget per move, up to `depth`.
    pub time: Option<Duration>,
    /// When set, iterative deepening up to `depth` until a move's search has visited this
    /// many positions (reproducible, unlike `time`).
    pub nodes: Option<u64>,
    pub ties: Ties,
    /// The transposition table kept across this agent's moves (fixed-depth searches only;
    /// it changes the work, never the moves).
    pub table: KeptTable,
    /// The caller's bounds ([`super::Agent::set_budget`]).
    pub budget: Budget,
    /// Exact values at the leaves and inner nodes the endgame database covers (`"egdb"`).
    pub egdb: EndgameTable,
}

impl<E: Evaluator> Agent for SearchAgent<E> {
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision {
        let egdb = self.egdb.get(pos.pits(), self.rules);
        let mut search = AlphaBeta::new(&self.eval, self.rules);
        search.set_budget(&self.budget);
        if let Some(db) = &egdb {
            search.set_egdb(db);
        }
        let depth = self.depth.for_root(pos.legal_moves().len());
        let result = match (self.time, self.nodes) {
            (Some(budget), _) => search.search_time(pos, budget, depth),
            (None, Some(nodes)) => search.search_nodes(pos, nodes, depth),
            (None, None) => search.search_depth_keeping(pos, depth, &mut self.table),
        };
        Decision {
            mv: self.ties.pick(&result.best_moves, rng),
            nodes: result.nodes,
            playouts: 0,
            value: Some(MoveValue::SearchScore(result.value)),
        }
    }

    fn set_budget(&mut self, budget: &Budget) {
        self.budget = budget.clone();
    }
}
