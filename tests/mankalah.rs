//! The ManKalah protocol (shared/DESIGN.md section 9): scripted engine transcripts against
//! the library's state machine, and the `mankalah` command on a pipe.
//!
//! The engine side is simulated here by seat, as the Manchester engine keeps it (a swap
//! exchanges the players' seats and leaves the board alone), independently of the engine's
//! Position, which names players instead.

use std::io::Write;
use std::process::{Command, Stdio};

use kalah_tuner::agents::{rng_from_seed, AgentSpec};
use kalah_tuner::game::{Position, Rules, Side};
use kalah_tuner::matches::mankalah::{ManKalah, ProtocolError, Step};

/// The engine's board by seat in sowing order: South's pits 0..m, South's store m, North's
/// pits m+1..2m, North's store 2m+1. Seat 0 is South.
struct Sim {
    m: usize,
    b: Vec<u32>,
    turn: usize,
    first: bool,
    offer: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mv {
    Pit(usize),
    Swap,
}

impl Sim {
    fn new(m: usize, n: u32) -> Sim {
        let mut b = vec![n; 2 * m + 2];
        b[m] = 0;
        b[2 * m + 1] = 0;
        Sim {
            m,
            b,
            turn: 0,
            first: true,
            offer: false,
        }
    }

    fn pits(&self, seat: usize) -> &[u32] {
        let first = seat * (self.m + 1);
        &self.b[first..first + self.m]
    }

    fn over(&self) -> bool {
        self.pits(0).iter().all(|&s| s == 0) || self.pits(1).iter().all(|&s| s == 0)
    }

    fn moves(&self) -> Vec<Mv> {
        let mut v: Vec<Mv> = (1..=self.m)
            .filter(|&k| self.pits(self.turn)[k - 1] > 0)
            .map(Mv::Pit)
            .collect();
        if self.offer {
            v.push(Mv::Swap);
        }
        v
    }

    /// Plays a move; a swap leaves the board and North's turn as they are.
    fn play(&mut self, mv: Mv) {
        let m = self.m;
        let was_offer = std::mem::replace(&mut self.offer, false);
        let k = match mv {
            Mv::Swap => {
                assert!(was_offer);
                return;
            }
            Mv::Pit(k) => k,
        };
        let first = self.turn * (m + 1);
        let own_store = first + m;
        let their_store = (1 - self.turn) * (m + 1) + m;
        let mut pos = first + k - 1;
        let mut seeds = std::mem::take(&mut self.b[pos]);
        while seeds > 0 {
            pos = (pos + 1) % (2 * m + 2);
            if pos != their_store {
                self.b[pos] += 1;
                seeds -= 1;
            }
        }
        let mut again = pos == own_store;
        if !again && pos >= first && pos < first + m && self.b[pos] == 1 {
            let opposite = 2 * m - pos;
            if self.b[opposite] > 0 {
                self.b[own_store] += self.b[opposite] + 1;
                self.b[opposite] = 0;
                self.b[pos] = 0;
            }
        }
        if std::mem::replace(&mut self.first, false) {
            again = false;
            self.offer = true;
        }
        if self.over() {
            for seat in 0..2 {
                let first = seat * (m + 1);
                let left: u32 = self.b[first..first + m].iter().sum();
                self.b[first + m] += left;
                for c in &mut self.b[first..first + m] {
                    *c = 0;
                }
            }
            self.offer = false;
        }
        if !again {
            self.turn = 1 - self.turn;
        }
    }

    /// North's pits and store, then South's, as the protocol writes a state.
    fn state(&self) -> String {
        let m = self.m;
        let order = self.b[m + 1..].iter().chain(&self.b[..=m]);
        order.map(|c| c.to_string()).collect::<Vec<_>>().join(",")
    }
}

fn session(spec: &str, seed: u64) -> ManKalah {
    let agent = AgentSpec::parse(spec)
        .unwrap()
        .build(Rules::Standard)
        .unwrap();
    let start = Position::start(7, 7).unwrap().with_pie(true);
    ManKalah::new(agent, rng_from_seed(seed), Rules::Standard, start)
}

fn parse_reply(step: &Step) -> Mv {
    match step {
        Step::Reply(r) if r == "SWAP" => Mv::Swap,
        Step::Reply(r) => Mv::Pit(
            r.strip_prefix("MOVE;")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("reply {r:?}")),
        ),
        other => panic!("expected a move, got {other:?}"),
    }
}

/// What happened in one scripted game.
struct Played {
    transcript: Vec<String>,
    we_swapped: bool,
    they_swapped: bool,
    /// Final stores of (us, them).
    stores: (u32, u32),
}

/// Our side of a scripted game: the library's state machine, or the command on a pipe.
trait Us {
    fn send(&mut self, line: &str) -> Result<Step, String>;
}

impl Us for ManKalah {
    fn send(&mut self, line: &str) -> Result<Step, String> {
        self.handle(line).map_err(|e| e.to_string())
    }
}

/// Plays one whole game: the engine simulated by seat, our side by the state machine, the
/// engine's other player by `opponent`.
fn play(we_start: bool, spec: &str, seed: u64, opponent: impl FnMut(&Sim, &[Mv]) -> Mv) -> Played {
    let mut us = session(spec, seed);
    let played = play_with(&mut us, we_start, opponent);
    // Our own board agrees, by player.
    let (south, north) = us.position().final_stores();
    let me = us.me().unwrap();
    let ours = if me == Side::South {
        (south, north)
    } else {
        (north, south)
    };
    assert_eq!(ours, played.stores);
    assert_eq!(us.swapped(), played.we_swapped || played.they_swapped);
    played
}

/// [`play`] with any [`Us`].
fn play_with(
    us: &mut impl Us,
    we_start: bool,
    mut opponent: impl FnMut(&Sim, &[Mv]) -> Mv,
) -> Played {
    let mut sim = Sim::new(7, 7);
    let mut seat = if we_start { 0 } else { 1 };
    let mut transcript = Vec::new();
    let send = |us: &mut dyn Us, line: String, transcript: &mut Vec<String>| {
        transcript.push(format!("> {line}"));
        let step = us.send(&line).unwrap_or_else(|e| {
            panic!("{e}\n{}", transcript.join("\n"));
        });
        if let Step::Reply(r) = &step {
            transcript.push(format!("< {r}"));
        }
        step
    };
    let start = format!("START;{}", if we_start { "South" } else { "North" });
    let mut step = send(us, start, &mut transcript);
    let (mut we_swapped, mut they_swapped) = (false, false);
    loop {
        let ours = sim.turn == seat;
        let mv = if ours {
            parse_reply(&step)
        } else {
            assert_eq!(step, Step::Wait, "{}", transcript.join("\n"));
            opponent(&sim, &sim.moves())
        };
        assert!(
            sim.moves().contains(&mv),
            "{mv:?} illegal\n{}",
            transcript.join("\n")
        );
        sim.play(mv);
        if mv == Mv::Swap {
            seat = 1 - seat;
            if ours {
                // The swapping agent gets no reply; the other player moves next.
                we_swapped = true;
                step = Step::Wait;
                continue;
            }
            they_swapped = true;
        }
        let over = sim.over();
        let turn = if over {
            "END"
        } else if sim.turn == seat {
            "YOU"
        } else {
            "OPP"
        };
        let name = match mv {
            Mv::Swap => "SWAP".to_string(),
            Mv::Pit(k) => k.to_string(),
        };
        step = send(
            us,
            format!("CHANGE;{name};{};{turn}", sim.state()),
            &mut transcript,
        );
        if over {
            assert_eq!(step, Step::Wait);
            assert_eq!(send(us, "END".into(), &mut transcript), Step::End);
            break;
        }
    }
    let mine = sim.b[seat * 8 + 7];
    let theirs = sim.b[(1 - seat) * 8 + 7];
    Played {
        transcript,
        we_swapped,
        they_swapped,
        stores: (mine, theirs),
    }
}

fn pit_moves(moves: &[Mv]) -> Vec<Mv> {
    moves.iter().copied().filter(|&m| m != Mv::Swap).collect()
}

#[test]
fn we_move_first_and_the_opponent_does_not_swap() {
    let played = play(true, "minimax:3", 1, |_, moves| {
        *pit_moves(moves).last().unwrap()
    });
    assert!(!played.we_swapped && !played.they_swapped);
    assert!(played.transcript[1].starts_with("< MOVE;"));
    assert_eq!(played.stores.0 + played.stores.1, 98);
}

#[test]
fn we_move_first_and_the_opponent_swaps() {
    let played = play(true, "minimax:3", 2, |sim, moves| {
        if sim.offer {
            Mv::Swap
        } else {
            pit_moves(moves)[0]
        }
    });
    assert!(played.they_swapped);
    assert!(played
        .transcript
        .iter()
        .any(|l| l.starts_with("> CHANGE;SWAP;") && l.ends_with(";YOU")));
}

#[test]
fn we_move_second_and_swap() {
    // greedy swaps when South's first move put more seeds in its store, as every first
    // move of Kalah(7,7) does.
    let played = play(false, "greedy", 3, |_, moves| pit_moves(moves)[0]);
    assert!(played.we_swapped);
    assert_eq!(played.transcript[0], "> START;North");
    assert!(played.transcript[1].starts_with("> CHANGE;1;"));
    assert_eq!(played.transcript[2], "< SWAP");
    // The next message is the first mover's move from North's seat.
    assert!(played.transcript[3].starts_with("> CHANGE;"));
}

#[test]
fn we_move_second_and_keep_our_seat() {
    let played = play(false, "minimax:2", 4, |_, moves| {
        *pit_moves(moves).last().unwrap()
    });
    assert_eq!(played.stores.0 + played.stores.1, 98);
}

#[test]
fn random_games_on_both_seats_stay_in_step() {
    // Random agents on both sides reach every branch: swaps by either side or none, extra
    // turns, captures, and games ending on either side's move.
    let mut rng = rng_from_seed(7);
    let (mut swaps, mut ends_ours, mut ends_theirs) = (0, 0, 0);
    for game in 0..60 {
        let played = play(game % 2 == 0, "random", game, |_, moves| {
            use rand::RngExt;
            moves[rng.random_range(0..moves.len())]
        });
        swaps += (played.we_swapped || played.they_swapped) as u32;
        // The transcript ends "> CHANGE;..;END", "> END"; our last move comes just before
        // the CHANGE that echoes it.
        let t = &played.transcript;
        if t[t.len() - 3].starts_with("< MOVE") {
            ends_ours += 1;
        } else {
            ends_theirs += 1;
        }
    }
    assert!(swaps > 5 && swaps < 55, "{swaps} swaps");
    assert!(
        ends_ours > 0 && ends_theirs > 0,
        "{ends_ours} {ends_theirs}"
    );
}

const AFTER_MOVE_1: &str = "7,7,7,7,7,7,7,0,0,8,8,8,8,8,8,1";

#[test]
fn a_state_that_differs_from_ours_stops_the_session() {
    let mut us = session("greedy", 0);
    assert_eq!(us.handle("START;North").unwrap(), Step::Wait);
    let e = us
        .handle("CHANGE;1;7,7,7,7,7,7,7,0,0,8,8,8,8,8,9,0;YOU")
        .unwrap_err();
    assert!(matches!(e, ProtocolError::Mismatch { .. }), "{e}");
    assert!(e.to_string().contains("differs from ours"), "{e}");
}

#[test]
fn illegal_and_malformed_messages_stop_the_session() {
    let mut us = session("greedy", 0);
    us.handle("START;North").unwrap();
    us.handle(&format!("CHANGE;1;{AFTER_MOVE_1};YOU")).unwrap();
    // We swapped; now the first mover, from North's seat, may not sow an empty pit... after
    // a capture-free first move none is empty, so try a pit that does not exist.
    let e = us.handle("CHANGE;8;1,2;YOU").unwrap_err();
    assert!(matches!(e, ProtocolError::Malformed { .. }), "{e}");

    let mut us = session("minimax:2", 0);
    us.handle("START;North").unwrap();
    // Pit 1 of South is empty after South's move 1: South cannot have played it again, and
    // it is not South's turn anyway.
    us.handle(&format!("CHANGE;1;{AFTER_MOVE_1};OPP"))
        .expect_err("OPP when it is our turn");

    let mut us = session("minimax:2", 0);
    for bad in ["HELLO", "START;East", "CHANGE;1;2;YOU", "END;now"] {
        assert!(us.handle(bad).is_err(), "{bad}");
    }
    let mut us = session("minimax:2", 0);
    us.handle("START;North").unwrap();
    // The engine may not report a move by us when it is its turn, nor a swap by South.
    let e = us
        .handle(&format!("CHANGE;SWAP;{AFTER_MOVE_1};YOU"))
        .unwrap_err();
    assert!(matches!(e, ProtocolError::IllegalMove { .. }), "{e}");
}

#[test]
fn the_engine_may_end_the_game_mid_protocol() {
    let mut us = session("minimax:2", 0);
    assert!(matches!(us.handle("START;South").unwrap(), Step::Reply(_)));
    // The engine stops the game (its other player failed, say) before it is over.
    assert_eq!(us.handle("END").unwrap(), Step::End);
}

fn binary(args: &[&str], input: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kalah-tuner"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn the_command_speaks_the_protocol_on_a_pipe() {
    // We sit North, swap, and answer the first mover's move from North's seat.
    let script = format!(
        "START;North\nCHANGE;1;{AFTER_MOVE_1};YOU\nCHANGE;7;7,7,7,7,7,7,0,1,1,9,9,9,9,9,8,1;YOU\nEND\n"
    );
    let out = binary(&["mankalah", "--agent", "greedy"], &script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(lines[0], "SWAP");
    assert!(lines[1].starts_with("MOVE;"), "{stdout}");
    assert!(stderr.contains("engine: START;North"), "{stderr}");

    // A state that differs stops it with a message on standard error and a failure status.
    let script = "START;North\nCHANGE;1;7,7,7,7,7,7,7,0,0,8,8,8,8,8,8,2;YOU\n";
    let out = binary(
        &["mankalah", "--agent", "minimax:2", "--ms-per-move", "50"],
        script,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(stderr.contains("differs from ours"), "{stderr}");
}

/// The command on a pipe, spoken to one message at a time: a reply is read whenever the
/// protocol asks for one (`START;South`, a `CHANGE` ending in `YOU`), and after `END` the
/// command must exit cleanly with nothing more on standard output.
struct Piped {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    log: std::path::PathBuf,
}

impl Piped {
    fn spawn(args: &[&str], name: &str) -> Piped {
        let log =
            std::env::temp_dir().join(format!("kalah-mankalah-{name}-{}.log", std::process::id()));
        let mut child = Command::new(env!("CARGO_BIN_EXE_kalah-tuner"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // A file, not a pipe: the command logs every message, and a full pipe nobody
            // reads would stop it mid-game.
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Piped {
            stdin: child.stdin.take(),
            stdout: std::io::BufReader::new(child.stdout.take().unwrap()),
            child,
            log,
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Us for Piped {
    fn send(&mut self, line: &str) -> Result<Step, String> {
        use std::io::{BufRead, Read};
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        writeln!(stdin, "{line}")
            .and_then(|_| stdin.flush())
            .map_err(|e| format!("writing {line:?}: {e}\n{}", self.stderr()))?;
        if line == "END" {
            self.stdin = None;
            let status = self.child.wait().map_err(|e| e.to_string())?;
            let mut rest = String::new();
            self.stdout
                .read_to_string(&mut rest)
                .map_err(|e| e.to_string())?;
            if !status.success() || !rest.is_empty() {
                return Err(format!(
                    "{status}, output after END {rest:?}\n{}",
                    self.stderr()
                ));
            }
            return Ok(Step::End);
        }
        if line == "START;South" || line.ends_with(";YOU") {
            let mut reply = String::new();
            self.stdout
                .read_line(&mut reply)
                .map_err(|e| e.to_string())?;
            if reply.is_empty() {
                return Err(format!("no reply to {line:?}\n{}", self.stderr()));
            }
            return Ok(Step::Reply(reply.trim_end().to_string()));
        }
        Ok(Step::Wait)
    }
}

impl Drop for Piped {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// `kalah-tuner mankalah` moves first, the engine's other player swaps and then plays at
/// random: every reply is a legal move of the seat the command holds after the swap (North),
/// sent only when it is its turn, the command's own board agrees with every state (it stops
/// otherwise), and it wins, as it only can by playing for its new seat.
#[test]
fn the_command_plays_on_for_its_new_seat_after_the_opponent_swaps() {
    use rand::RngExt;
    for (spec, seed) in [
        ("export:configs/mankalah-tuned.json", 1u64),
        ("minimax:4", 2),
    ] {
        let mut us = Piped::spawn(
            &["mankalah", "--agent", spec, "--seed", &seed.to_string()],
            &seed.to_string(),
        );
        let mut rng = rng_from_seed(seed);
        let played = play_with(&mut us, true, |sim, moves| {
            if sim.offer {
                Mv::Swap
            } else {
                moves[rng.random_range(0..moves.len())]
            }
        });
        let log = played.transcript.join("\n");
        assert!(played.they_swapped && !played.we_swapped, "{log}");
        let swap = played
            .transcript
            .iter()
            .position(|l| l.starts_with("> CHANGE;SWAP;"))
            .expect("the swap is announced");
        assert!(played.transcript[swap].ends_with(";YOU"), "{log}");
        assert!(played.transcript[swap + 1].starts_with("< MOVE;"), "{log}");
        assert!(
            played.stores.0 > played.stores.1,
            "{spec} lost from North: {:?}\n{log}",
            played.stores
        );
        assert_eq!(played.stores.0 + played.stores.1, 98);
    }
}
