//! How far an agent may be pushed, by who asks. One table, three profiles:
//!
//! - [`Profile::Library`]: the command line and the library. Generous; a person at a terminal
//!   can stop what they started.
//! - [`Profile::Api`]: requests to a shared server, which holds the request open while it
//!   searches and answers many clients.
//! - [`Profile::Ga`]: fitness opponents. Games must reproduce from the seed, so time budgets
//!   (which make a game depend on the machine's speed) are refused, and depths are capped
//!   because every opponent plays every individual every generation.
//!
//! [`super::AgentSpec::check`] applies a profile; the server's agent catalogue reads its
//! ranges from the same table. Which files a spec may name is not a limit of the agent but of
//! who sent the spec (a GA config may come from a terminal or from a client of the server),
//! so it is given beside the profile, as a [`super::files::FileAccess`].

use std::time::Duration;

use serde::Serialize;

use crate::search::Budget;

/// Who is asking for an agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    Library,
    Api,
    Ga,
}

/// The largest values an agent spec may ask for under one profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Limits {
    pub profile: Profile,
    /// Deepest alpha-beta search, in turns.
    pub max_depth: u32,
    /// Longest time budget per move in milliseconds; `None` when time budgets are refused.
    pub max_time_ms: Option<u64>,
    /// Most MCTS playouts per move.
    pub max_mcts_iterations: u32,
    /// Most seeds in the pits for the exact solver of a `perfect` agent: the solve's time
    /// grows about fourfold with every two seeds.
    pub max_perfect_seeds: u32,
    /// Most processor time one tournament may be estimated to take, in core-minutes
    /// (`super::cost::games_core_minutes`).
    pub max_games_core_minutes: u32,
    /// Most processor time one match played while its request waits may be estimated to
    /// take, in core-minutes.
    pub max_match_core_minutes: u32,
    /// Most positions one move's search (alpha-beta, Pekar's minimax, the exact solver) may
    /// visit before it is stopped and its request refused; `u64::MAX` for no cap.
    pub max_move_nodes: u64,
    /// Longest wall time of one move asked for while the request waits, in milliseconds.
    pub move_deadline_ms: Option<u64>,
    /// Longest wall time of one match played while the request waits, in milliseconds.
    pub match_deadline_ms: Option<u64>,
    /// Longest wall time of one tournament, in milliseconds.
    pub tournament_deadline_ms: Option<u64>,
}

/// Most positions a `perfect` agent's exact solve above its `max_seeds` may visit per move
/// (about three minutes), under any profile; the API's node cap applies below it.
pub(crate) const MAX_SOLVE_NODES: u64 = 1_000_000_000;

/// Largest UCT exploration constant.
pub(crate) const MAX_MCTS_C: f64 = 100.0;

impl Profile {
    /// The profile's limits: the one table every check and the API's catalogue read.
    pub(crate) const fn limits(self) -> Limits {
        match self {
            Profile::Library => Limits {
                profile: self,
                max_depth: 20,
                max_time_ms: Some(60_000),
                max_mcts_iterations: 1_000_000,
                max_perfect_seeds: 32,
                max_games_core_minutes: u32::MAX,
                max_match_core_minutes: u32::MAX,
                max_move_nodes: u64::MAX,
                move_deadline_ms: None,
                match_deadline_ms: None,
                tournament_deadline_ms: None,
            },
            Profile::Api => Limits {
                profile: self,
                max_depth: 10,
                max_time_ms: Some(10_000),
                // About a second a move.
                max_mcts_iterations: 200_000,
                // A cold exact solve with 22 seeds takes about a second; 32 can take minutes.
                max_perfect_seeds: 22,
                // An hour of both cores: a server's tournaments are for looking, runs are for
                // hours of games.
                max_games_core_minutes: 120,
                // About five minutes of the two interactive threads, half the match deadline:
                // the estimate is rough.
                max_match_core_minutes: 10,
                // About 0.7 s of alpha-beta (30 M positions a second on one core), and at most
                // about 8 s of the exact solver (2.5 M a second on 12-pit boards, where its
                // table grows). minimax:10 from the start of Kalah(12,8) needs 16 M.
                max_move_nodes: 20_000_000,
                // The longest time budget a move may ask for, twice over.
                move_deadline_ms: Some(20_000),
                match_deadline_ms: Some(600_000),
                // Twice the tournament cap's hour of both cores: the game pool is shared with
                // the runs.
                tournament_deadline_ms: Some(4 * 3_600_000),
            },
            // The library's, but for the depth and time budgets.
            Profile::Ga => Limits {
                profile: self,
                max_depth: 10,
                max_time_ms: None,
                ..Profile::Library.limits()
            },
        }
    }

    /// Words for messages: "" for the library, " through the API", " in a GA".
    pub(crate) fn context(self) -> &'static str {
        match self {
            Profile::Library => "",
            Profile::Api => " through the API",
            Profile::Ga => " in a GA",
        }
    }
}

impl Limits {
    /// The [`Budget`] of one move asked for under these limits, starting now.
    pub(crate) fn move_budget(&self) -> Budget {
        self.budget(self.move_deadline_ms)
    }

    /// The [`Budget`] of one match played while its request waits, starting now.
    pub(crate) fn match_budget(&self) -> Budget {
        self.budget(self.match_deadline_ms)
    }

    /// The [`Budget`] of one tournament, starting now.
    pub(crate) fn tournament_budget(&self) -> Budget {
        self.budget(self.tournament_deadline_ms)
    }

    fn budget(&self, deadline_ms: Option<u64>) -> Budget {
        // The playout cap rides on the budget because an mcts agent with a time budget
        // would otherwise play to its clock, past the iterations a spec may ask for.
        Budget::new(deadline_ms.map(Duration::from_millis), self.max_move_nodes)
            .with_max_playouts(u64::from(self.max_mcts_iterations))
    }
}
