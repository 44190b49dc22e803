//! The game of Kalah(m, n): board, rules, notation and perft. Knows nothing of search.
//!
//! - [`Position`]: pits, stores and side to move, with a checked [`Position::play`] and the
//!   unchecked fast path [`Position::play_unchecked`].
//! - [`Rules`]: `standard` or `empty-capture`.
//! - `notation`: KPN, the one-line position notation (docs/reference/rules.md).
//! - [`perft`](mod@perft): move-path counts, for testing move generation against shared vectors.
//! - `UserError`: how an error in the user's input names its field, HTTP status and exit code;
//!   [`SettingBound`]: a numeric setting's range, declared once for its check and its form.

mod bounds;
pub(crate) mod notation;
pub mod perft;
mod position;
mod user_error;

pub use bounds::SettingBound;
pub(crate) use bounds::{check_written, first_unbounded, Refused};
pub(crate) use notation::grouped;
pub use notation::{excerpt, excerpt_to, ECHO_CHARS};
pub use notation::{parse_kpn, to_kpn};
pub use perft::perft;
pub use position::{MoveIter, MoveOutcome, MoveSet, MAX_CELLS, MAX_SEEDS};
pub use position::{Pie, Position, Rules, Side, MAX_PITS, SWAP};
pub use user_error::{as_user_error, UserError, UserErrorKind, USER_ERROR_EXIT_CODE};

/// Everything that can be wrong with a board, a position or a move given by a user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error("invalid KPN {text:?}: {reason}")]
    BadKpn { text: String, reason: String },
    #[error("impossible board: {0}")]
    BadBoard(String),
    #[error("unknown rules {0:?}: expected standard or empty-capture")]
    UnknownRules(String),
    #[error("illegal move {mv}: {reason}")]
    IllegalMove { mv: usize, reason: String },
}

/// Parses a board size written `m,n` (pits per side, seeds per pit).
pub(crate) fn parse_board(text: &str) -> Result<(usize, u32), GameError> {
    let bad = |reason: &str| GameError::BadBoard(format!("{:?}: {reason}", excerpt(text)));
    let (m, n) = text
        .split_once(',')
        .ok_or_else(|| bad("expected m,n (pits per side, seeds per pit), e.g. 6,4"))?;
    let m: usize = m
        .trim()
        .parse()
        .map_err(|_| bad("pits per side must be a whole number"))?;
    let n: u32 = n
        .trim()
        .parse()
        .map_err(|_| bad("seeds per pit must be a whole number"))?;
    Position::start(m, n)?;
    Ok((m, n))
}
