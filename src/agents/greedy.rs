use super::{Agent, Decision, GameRng, MoveValue, Ties};
use crate::game::{Position, Rules};

/// Hunter's "max agent" (5.2): the move that, with the best chain of extra turns it earns,
/// puts the most seeds in its store now.
#[derive(Clone, Debug)]
pub(crate) struct Greedy {
    pub rules: Rules,
    pub ties: Ties,
}

impl Greedy {
    /// Most seeds the side to move can add to its store this turn, extra turns chained.
    fn best_gain(&self, pos: &Position, nodes: &mut u64) -> u32 {
        pos.legal_moves()
            .into_iter()
            .map(|mv| self.gain(pos, mv, nodes))
            .max()
            .unwrap_or(0)
    }

    fn gain(&self, pos: &Position, mv: usize, nodes: &mut u64) -> u32 {
        *nodes += 1;
        let side = pos.side_to_move();
        let mut child = *pos;
        let outcome = child.play_unchecked(mv, self.rules);
        let now = child.store(side) - pos.store(side);
        if outcome.extra_turn && !outcome.game_over {
            now + self.best_gain(&child, nodes)
        } else {
            now
        }
    }
}

impl Agent for Greedy {
    fn choose(&mut self, pos: &Position, rng: &mut GameRng) -> Decision {
        if let Some(swap) = super::store_rule_swap(pos) {
            return super::decide_swap(pos, swap, |pos| self.choose(pos, rng));
        }
        let mut nodes = 0;
        let gains: Vec<(usize, u32)> = pos
            .legal_moves()
            .into_iter()
            .map(|mv| (mv, self.gain(pos, mv, &mut nodes)))
            .collect();
        let best = gains.iter().map(|&(_, g)| g).max().unwrap_or(0);
        let moves: Vec<usize> = gains
            .iter()
            .filter(|&&(_, g)| g == best)
            .map(|&(mv, _)| mv)
            .collect();
        Decision {
            mv: self.ties.pick(&moves, rng),
            nodes,
            playouts: 0,
            value: Some(MoveValue::SeedsThisTurn(best)),
        }
    }
}
