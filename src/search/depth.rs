//! How deep a search agent looks: a fixed number of turns, or Ahmed's adaptive depth, which
//! picks it from the number of legal moves at the root (docs/reference/agents.md, "Adaptive depth").
//!
//! The report's table, for HUS, as written there:
//!
//! | legal moves b | depth |
//! |---|---|
//! | b > 18 | 6 |
//! | 9 to 18 | 7 |
//! | 6 to 8 | 8 |
//! | 1 to 5 | 6 |
//!
//! It is carried over as it stands, by the count of legal moves: on Kalah(6,n) a root has at
//! most six, so only the last two rows apply there (depth 8 with all six pits playable, 6
//! with fewer); larger boards reach the others. Ahmed searched fewer moves deeper because
//! narrow roots grow wide again below them; with five or fewer he kept to 6 because such
//! "critical" moves had to finish within his two seconds.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The depth the adaptive table gives a root with `legal_moves` moves.
pub fn adaptive_depth(legal_moves: usize) -> u32 {
    match legal_moves {
        19.. => 6,
        9..=18 => 7,
        6..=8 => 8,
        _ => 6,
    }
}

/// The deepest the adaptive table ever searches, for cost estimates and limits.
pub(crate) const MAX_ADAPTIVE_DEPTH: u32 = 8;

/// A search agent's depth: JSON `4` or `"adaptive"`, short form `minimax:4` or
/// `minimax:adaptive`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Depth {
    /// This many turns (an extra turn does not count).
    Fixed(u32),
    /// [`adaptive_depth`] of the root's legal moves.
    Adaptive,
}

impl Depth {
    /// The depth to search a root with `legal_moves` moves.
    pub(crate) fn for_root(self, legal_moves: usize) -> u32 {
        match self {
            Depth::Fixed(depth) => depth,
            Depth::Adaptive => adaptive_depth(legal_moves),
        }
    }

    /// The deepest search this depth can ask for.
    pub(crate) fn deepest(self) -> u32 {
        match self {
            Depth::Fixed(depth) => depth,
            Depth::Adaptive => MAX_ADAPTIVE_DEPTH,
        }
    }

    /// Reads `4` or `adaptive`.
    pub(crate) fn parse(text: &str) -> Option<Depth> {
        if text == "adaptive" {
            return Some(Depth::Adaptive);
        }
        text.parse().ok().map(Depth::Fixed)
    }
}

impl From<u32> for Depth {
    fn from(depth: u32) -> Depth {
        Depth::Fixed(depth)
    }
}

impl fmt::Display for Depth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Depth::Fixed(depth) => write!(f, "{depth}"),
            Depth::Adaptive => f.write_str("adaptive"),
        }
    }
}

/// JSON `4` or `"adaptive"`, as [`Depth`]'s serde impls read and write it.
impl utoipa::PartialSchema for Depth {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(1))
                    .description(Some("turns (an extra turn does not count)")),
            )
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["adaptive"]))
                    .description(Some("the depth for the number of legal moves")),
            )
            .into()
    }
}

impl utoipa::ToSchema for Depth {}

impl Serialize for Depth {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Depth::Fixed(depth) => serializer.serialize_u32(*depth),
            Depth::Adaptive => serializer.serialize_str("adaptive"),
        }
    }
}

impl<'de> Deserialize<'de> for Depth {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Depth, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Depth;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a whole number of turns or \"adaptive\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Depth, E> {
                u32::try_from(v)
                    .map(Depth::Fixed)
                    .map_err(|_| E::custom(format!("depth {v} is too large")))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Depth, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(format!("depth must not be negative, got {v}")))
                    .and_then(|v| self.visit_u64(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Depth, E> {
                match v {
                    "adaptive" => Ok(Depth::Adaptive),
                    other => Err(E::custom(format!(
                        "expected a whole number of turns or \"adaptive\", got {other:?}"
                    ))),
                }
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reports_table() {
        let table: Vec<u32> = (1..=24).map(adaptive_depth).collect();
        assert_eq!(&table[..5], &[6; 5]);
        assert_eq!(&table[5..8], &[8; 3]);
        assert_eq!(&table[8..18], &[7; 10]);
        assert_eq!(&table[18..], &[6; 6]);
    }

    #[test]
    fn reads_and_writes_both_forms() {
        for (json, depth) in [("4", Depth::Fixed(4)), ("\"adaptive\"", Depth::Adaptive)] {
            assert_eq!(serde_json::from_str::<Depth>(json).unwrap(), depth);
            assert_eq!(serde_json::to_string(&depth).unwrap(), json);
        }
        assert!(serde_json::from_str::<Depth>("\"deep\"").is_err());
        assert!(serde_json::from_str::<Depth>("-1").is_err());
        assert_eq!(Depth::parse("adaptive"), Some(Depth::Adaptive));
        assert_eq!(Depth::parse("7"), Some(Depth::Fixed(7)));
        assert_eq!(Depth::parse("x"), None);
    }
}
