//! Named tournaments: the agents, board and games of a published experiment, with its
//! figures to print beside ours.

use crate::agents::AgentSpec;
use crate::matches::ReferenceTable;

/// A named tournament.
pub(crate) struct TournamentPreset {
    pub agents: Vec<AgentSpec>,
    /// Column and row names for the table.
    pub labels: Vec<String>,
    pub games: u32,
    pub opening_plies: u32,
    pub self_play: bool,
    /// Published win rates (percent, row moving first) to print beside ours; `None` where the
    /// source has no figure.
    pub reference: ReferenceTable,
}

pub(crate) const TOURNAMENT_PRESETS: &[&str] = &["hunter-table1"];

/// Table 1 of Hunter (2021), "The Exploration and Analysis of Mancala from an AI Perspective"
/// (section 6): win rate of the row agent moving first.
const HUNTER_TABLE1: [[Option<f64>; 6]; 6] = [
    [
        Some(51.3),
        Some(4.1),
        Some(2.7),
        Some(0.5),
        Some(0.0),
        Some(4.0),
    ],
    [
        Some(96.0),
        Some(55.3),
        Some(15.2),
        Some(12.5),
        Some(4.5),
        Some(26.4),
    ],
    [
        Some(98.2),
        Some(85.8),
        Some(61.5),
        Some(35.2),
        None,
        Some(48.0),
    ],
    [
        Some(99.5),
        Some(90.2),
        Some(68.5),
        Some(61.0),
        None,
        Some(53.5),
    ],
    [
        Some(100.0),
        Some(87.4),
        Some(59.3),
        Some(44.7),
        Some(61.3),
        None,
    ],
    [
        Some(97.6),
        Some(89.3),
        Some(71.4),
        Some(67.1),
        None,
        Some(79.0),
    ],
];

pub(crate) fn tournament_preset(name: &str) -> Option<TournamentPreset> {
    match name {
        "hunter-table1" => {
            let specs = [
                "random",
                "greedy",
                "minimax:4",
                "heuristic:hunter10:published:4",
                "mcts:4000",
                "a3c",
            ];
            Some(TournamentPreset {
                agents: specs
                    .iter()
                    .map(|s| AgentSpec::parse(s).expect("preset specs parse"))
                    .collect(),
                labels: specs.iter().map(|s| s.to_string()).collect(),
                games: 1000,
                opening_plies: 2,
                self_play: true,
                reference: ReferenceTable {
                    source: "Hunter, Table 1 (1000 games a pairing)".into(),
                    rows: HUNTER_TABLE1.iter().map(|r| r.to_vec()).collect(),
                },
            })
        }
        _ => None,
    }
}
