//! KPN, the Kalah position notation:
//! `<South pits>/<South store>/<North pits>/<North store>/<S|N>`, pits comma-separated in
//! sowing order. The start of Kalah(6,4) is `4,4,4,4,4,4/0/4,4,4,4,4,4/0/S`. An optional sixth
//! field `P` marks the pie rule's swap on offer (docs/reference/rules.md), e.g.
//! `0,8,8,8,8,8,8/1/7,7,7,7,7,7,7/0/N/P`. The pie rule's first ply (South's move that earns
//! no extra turn) is not written: a game setup's `pie` flag gives it.

use std::borrow::Cow;

use super::{GameError, Position, Rules, Side};

/// Most characters of a user's text that a message quotes back.
pub const ECHO_CHARS: usize = 80;

/// `text` as a message quotes it: at most [`ECHO_CHARS`] characters, cut with an ellipsis, so
/// that the error about a huge input is not itself huge. Every message that repeats what a
/// user typed (a position, an agent spec, a file name) quotes it through here.
pub fn excerpt(text: &str) -> Cow<'_, str> {
    excerpt_to(text, ECHO_CHARS)
}

/// `n` with its thousands grouped by commas (`999,000`), as messages write big counts.
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// [`excerpt`] to `max` characters (the ellipsis included).
pub fn excerpt_to(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some(_) => {
            let keep = max.saturating_sub(1);
            let end = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
            Cow::Owned(format!("{}\u{2026}", &text[..end]))
        }
    }
}

/// Parses KPN. Every malformed input gives an error naming what is wrong; nothing panics.
pub fn parse_kpn(text: &str) -> Result<Position, GameError> {
    let bad = |reason: String| GameError::BadKpn {
        text: excerpt(text).into_owned(),
        reason,
    };
    let fields: Vec<&str> = text.trim().split('/').collect();
    if fields.len() != 5 && fields.len() != 6 {
        return Err(bad(format!(
            "expected 5 fields separated by '/' (south pits/south store/north pits/north store/side), and optionally a sixth, P, found {}",
            fields.len()
        )));
    }
    let swap = match fields.get(5) {
        None => false,
        Some(&"P") => true,
        Some(other) => {
            return Err(bad(format!(
                "the sixth field may only be P (the pie rule's swap is on offer), found {:?}",
                excerpt(other)
            )))
        }
    };
    let south = parse_pits(fields[0], "South pits").map_err(|Malformed(reason)| bad(reason))?;
    let south_store =
        parse_count(fields[1], "South store").map_err(|Malformed(reason)| bad(reason))?;
    let north = parse_pits(fields[2], "North pits").map_err(|Malformed(reason)| bad(reason))?;
    let north_store =
        parse_count(fields[3], "North store").map_err(|Malformed(reason)| bad(reason))?;
    let side = match fields[4] {
        "S" | "s" => Side::South,
        "N" | "n" => Side::North,
        other => {
            return Err(bad(format!(
                "side to move must be S or N, found {:?}",
                excerpt(other)
            )))
        }
    };
    if south.len() != north.len() {
        return Err(bad(format!(
            "South has {} pits but North has {}",
            south.len(),
            north.len()
        )));
    }
    let pos =
        Position::new(&south, south_store, &north, north_store, side).map_err(|e| match e {
            GameError::BadBoard(reason) => bad(reason),
            other => other,
        })?;
    if !swap {
        return Ok(pos);
    }
    pos.with_swap_offer().ok_or_else(|| {
        bad("P (swap on offer) needs North to move on the board South's first move leaves at the start of some Kalah(m,n)".into())
    })
}

/// What is wrong with one field of a KPN text; [`parse_kpn`] says which text.
struct Malformed(String);

fn parse_pits(field: &str, what: &str) -> Result<Vec<u32>, Malformed> {
    if field.is_empty() {
        return Err(Malformed(format!(
            "{what} are empty: give at least one pit"
        )));
    }
    let pits = field
        .split(',')
        .enumerate()
        .map(|(i, s)| parse_count(s, &format!("{what}, pit {}", i + 1)))
        .collect::<Result<Vec<u32>, Malformed>>()?;
    if pits.len() > super::MAX_PITS {
        return Err(Malformed(format!(
            "{what}: {} pits, at most {} are supported",
            pits.len(),
            super::MAX_PITS
        )));
    }
    Ok(pits)
}

fn parse_count(s: &str, what: &str) -> Result<u32, Malformed> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Malformed(format!(
            "{what} must be a non-negative whole number, found {:?}",
            excerpt(s)
        )));
    }
    s.parse::<u32>()
        .ok()
        .filter(|&n| n <= super::MAX_SEEDS)
        .ok_or_else(|| {
            Malformed(format!(
                "{what}: {} seeds is more than the {} supported",
                excerpt(s),
                super::MAX_SEEDS
            ))
        })
}

/// The rules by name: `standard`, `empty-capture` (or `empty_capture`).
impl std::str::FromStr for Rules {
    type Err = GameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "standard" => Ok(Rules::Standard),
            "empty-capture" | "empty_capture" => Ok(Rules::EmptyCapture),
            other => Err(GameError::UnknownRules(excerpt(other).into_owned())),
        }
    }
}

/// A position shows as its KPN.
impl std::fmt::Debug for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Position({})", to_kpn(self))
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&to_kpn(self))
    }
}

/// Formats a position as KPN.
pub fn to_kpn(pos: &Position) -> String {
    let join = |side: Side| {
        pos.side_pits(side)
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    format!(
        "{}/{}/{}/{}/{}{}",
        join(Side::South),
        pos.store(Side::South),
        join(Side::North),
        pos.store(Side::North),
        pos.side_to_move().letter(),
        if pos.swap_available() { "/P" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands() {
        for (n, text) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (999_000, "999,000"),
            (1_234_567, "1,234,567"),
        ] {
            assert_eq!(grouped(n), text);
        }
    }

    #[test]
    fn long_input_is_quoted_back_cut_short() {
        assert_eq!(excerpt("4,4/0/S"), "4,4/0/S");
        let exact = "x".repeat(ECHO_CHARS);
        assert_eq!(excerpt(&exact), exact.as_str());
        let long = "é".repeat(ECHO_CHARS + 1);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), ECHO_CHARS);
        assert!(cut.ends_with('\u{2026}'));
        let huge = "4,".repeat(450_000);
        let message = parse_kpn(&huge).expect_err("bad KPN").to_string();
        assert!(message.len() < 400, "{} bytes", message.len());
    }
}
