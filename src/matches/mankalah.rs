//! The ManKalah protocol (docs/tutorials/mankalah.md): the line protocol of the Manchester
//! ManKalah engine, as a pure state machine that takes the engine's lines and gives the
//! agent's replies, so it is tested without processes. The `mankalah` command wires it to
//! standard input and output.
//!
//! Engine to agent: `START;South|North`, `CHANGE;<move|SWAP>;<state>;<YOU|OPP|END>`, `END`.
//! Agent to engine: `MOVE;<n>` or `SWAP`. A state lists North's pits 1..m, North's store,
//! South's pits 1..m and South's store, by *seat*. A [`Position`] names players instead
//! (South is always the first mover; see [`SWAP`]), so after a swap the seat view is the
//! position with its halves exchanged.
//!
//! The machine keeps its own board and checks it against every state the engine sends: a
//! difference means the two disagree about the rules or the game, and playing on would only
//! hide it.

use crate::agents::{Agent, GameRng};
use crate::game::{Position, Rules, Side, SWAP};

/// What the agent does after a line from the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send this line to the engine.
    Reply(String),
    /// Nothing to send; wait for the next line.
    Wait,
    /// The engine said `END`: the session is over.
    End,
}

/// Why the session cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("malformed message {line:?}: {reason}")]
    Malformed { line: String, reason: String },
    #[error("message {line:?} out of turn: {reason}")]
    OutOfTurn { line: String, reason: String },
    #[error("the engine's move {mv} is illegal in {position}: {reason}")]
    IllegalMove {
        mv: String,
        position: String,
        reason: String,
    },
    #[error("the engine's state after {line:?} differs from ours: engine {engine}, ours {ours}")]
    Mismatch {
        line: String,
        engine: String,
        ours: String,
    },
}

/// One game of the ManKalah protocol from one agent's side.
pub struct ManKalah {
    agent: Box<dyn Agent>,
    rng: GameRng,
    rules: Rules,
    pos: Position,
    /// Our player, once `START` said which: South is the first mover.
    me: Option<Side>,
    /// Whether the players have swapped seats (the first mover then sits North).
    swapped: bool,
    /// Our last `MOVE`, which the engine's next `CHANGE` must echo.
    sent: Option<usize>,
    /// Moves played, ours and the engine's, for the log.
    plies: u32,
}

impl ManKalah {
    /// A session for the game starting at `start` (with its pie state, e.g.
    /// `Position::start(7, 7)?.with_pie(true)` for the engine's default game).
    pub fn new(agent: Box<dyn Agent>, rng: GameRng, rules: Rules, start: Position) -> ManKalah {
        ManKalah {
            agent,
            rng,
            rules,
            pos: start,
            me: None,
            swapped: false,
            sent: None,
            plies: 0,
        }
    }

    /// The game as we see it, sides naming players.
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// Whether the players have swapped seats.
    pub fn swapped(&self) -> bool {
        self.swapped
    }

    /// Our side, as a player (South moved first), once `START` has said it.
    pub fn me(&self) -> Option<Side> {
        self.me
    }

    /// Handles one line from the engine.
    pub fn handle(&mut self, line: &str) -> Result<Step, ProtocolError> {
        let line = line.trim_end_matches(['\r', '\n']);
        let fields: Vec<&str> = line.split(';').collect();
        let malformed = |reason: &str| ProtocolError::Malformed {
            line: crate::game::excerpt(line).into_owned(),
            reason: reason.into(),
        };
        let out_of_turn = |reason: String| ProtocolError::OutOfTurn {
            line: crate::game::excerpt(line).into_owned(),
            reason,
        };
        match fields[0] {
            "START" => {
                if self.me.is_some() {
                    return Err(out_of_turn("the game has already started".into()));
                }
                let me = match fields.get(1..) {
                    Some(["South"]) => Side::South,
                    Some(["North"]) => Side::North,
                    _ => return Err(malformed("expected START;South or START;North")),
                };
                self.me = Some(me);
                if me == self.pos.side_to_move() {
                    Ok(Step::Reply(self.decide()))
                } else {
                    Ok(Step::Wait)
                }
            }
            "CHANGE" => {
                let me = self
                    .me
                    .ok_or_else(|| out_of_turn("CHANGE before START".into()))?;
                let [_, mv, state, turn] = fields[..] else {
                    return Err(malformed(
                        "expected CHANGE;<move|SWAP>;<state>;<YOU|OPP|END>",
                    ));
                };
                let mv = match mv {
                    "SWAP" => SWAP,
                    n => n
                        .parse::<usize>()
                        .ok()
                        .filter(|&n| (1..=self.pos.pits()).contains(&n))
                        .ok_or_else(|| {
                            malformed(&format!(
                                "the move must be SWAP or a pit 1 to {}",
                                self.pos.pits()
                            ))
                        })?,
                };
                let engine_state =
                    parse_state(state, self.pos.pits()).map_err(|BadState(r)| malformed(&r))?;
                if let Some(sent) = self.sent.take() {
                    if sent != mv {
                        return Err(out_of_turn(format!(
                            "we played {sent} but the engine reports {}",
                            move_name(mv)
                        )));
                    }
                } else if self.pos.side_to_move() == me && !self.pos.is_game_over() {
                    return Err(out_of_turn(
                        "a move by the engine's side while it is our turn".into(),
                    ));
                }
                let before = self.pos;
                self.pos
                    .play(mv, self.rules)
                    .map_err(|e| ProtocolError::IllegalMove {
                        mv: move_name(mv),
                        position: before.to_string(),
                        reason: match e {
                            crate::game::GameError::IllegalMove { reason, .. } => reason,
                            other => other.to_string(),
                        },
                    })?;
                if mv == SWAP {
                    self.swapped = true;
                }
                self.plies += 1;
                self.check_state(line, &engine_state)?;
                let over = self.pos.is_game_over();
                let ours = self.pos.side_to_move() == me;
                match turn {
                    "END" if over => Ok(Step::Wait),
                    "YOU" if !over && ours => Ok(Step::Reply(self.decide())),
                    "OPP" if !over && !ours => Ok(Step::Wait),
                    "YOU" | "OPP" | "END" => Err(out_of_turn(format!(
                        "the engine says {turn} but by our board {}",
                        if over {
                            "the game is over".to_string()
                        } else if ours {
                            "it is our turn".to_string()
                        } else {
                            "it is the engine's other player's turn".to_string()
                        }
                    ))),
                    _ => Err(malformed("the last field must be YOU, OPP or END")),
                }
            }
            "END" if fields.len() == 1 => Ok(Step::End),
            _ => Err(malformed(
                "expected START;<side>, CHANGE;<move>;<state>;<turn> or END",
            )),
        }
    }

    /// Our move in the current position, as the line to send.
    fn decide(&mut self) -> String {
        let decision = self.agent.choose(&self.pos, &mut self.rng);
        if decision.mv == SWAP {
            // The engine does not answer a swap, so it is played here.
            self.pos
                .play(SWAP, self.rules)
                .expect("agents choose legal moves");
            self.swapped = true;
            self.plies += 1;
            "SWAP".into()
        } else {
            self.sent = Some(decision.mv);
            format!("MOVE;{}", decision.mv)
        }
    }

    /// The board by seat, as the engine writes it: North's pits and store, South's pits and
    /// store.
    pub(crate) fn seat_state(&self) -> Vec<u32> {
        let (north, south) = if self.swapped {
            (Side::South, Side::North)
        } else {
            (Side::North, Side::South)
        };
        let mut state = Vec::with_capacity(2 * self.pos.pits() + 2);
        for side in [north, south] {
            state.extend(self.pos.side_pits(side).iter().map(|&s| s as u32));
            state.push(self.pos.store(side));
        }
        state
    }

    fn check_state(&self, line: &str, engine: &[u32]) -> Result<(), ProtocolError> {
        let ours = self.seat_state();
        let same = if self.pos.is_game_over() {
            // Engines differ on whether the last seeds are swept into the stores before the
            // final state is sent; the totals by side are what count.
            let m = self.pos.pits();
            let totals = |s: &[u32]| (s[..=m].iter().sum::<u32>(), s[m + 1..].iter().sum::<u32>());
            totals(&ours) == totals(engine)
        } else {
            ours == engine
        };
        if same {
            Ok(())
        } else {
            let join = |s: &[u32]| {
                s.iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            Err(ProtocolError::Mismatch {
                line: crate::game::excerpt(line).into_owned(),
                engine: join(engine),
                ours: join(&ours),
            })
        }
    }
}

fn move_name(mv: usize) -> String {
    if mv == SWAP {
        "SWAP".into()
    } else {
        mv.to_string()
    }
}

/// Why a state field does not read.
struct BadState(String);

/// A state field: `2m + 2` comma-separated counts.
fn parse_state(text: &str, m: usize) -> Result<Vec<u32>, BadState> {
    let counts = text
        .split(',')
        .map(|s| s.parse::<u32>())
        .collect::<Result<Vec<u32>, _>>()
        .map_err(|_| {
            BadState(format!(
                "the state must be comma-separated seed counts, found {text:?}"
            ))
        })?;
    if counts.len() != 2 * m + 2 {
        return Err(BadState(format!(
            "the state must list {} counts (North's {m} pits and store, South's {m} pits and store), found {}",
            2 * m + 2,
            counts.len()
        )));
    }
    Ok(counts)
}
