//! The values a battery file's keys hold, read from TOML. Each is read
//! first as whatever TOML value it is ([`Raw`]) and then checked, so that
//! a wrong type is said in the battery's words (what the key takes, and
//! what was found) rather than serde's (`untagged enum`, `expected u32`).
//! The error is raised while the TOML reader is on the value, so it
//! carries the value's line and column.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::engine::methodology::MAX_ROUNDS;

/// How the TOML reader hands over a date: a table of this one key.
const DATETIME_KEY: &str = "$__toml_private_datetime";

/// Any TOML value, as far as a battery's checks need it.
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    Bool(bool),
    Int(i64),
    /// An integer past TOML's 64 bits, which the reader still hands over.
    TooLarge(String),
    Float(f64),
    Text(String),
    List(Vec<Raw>),
    Table,
    Date,
}

impl Raw {
    /// What it is, for "found ...".
    fn kind(&self) -> String {
        match self {
            Raw::Bool(_) => "a boolean".to_string(),
            Raw::Int(_) => "an integer".to_string(),
            Raw::TooLarge(n) => format!("the integer {n}, past the largest TOML allows"),
            Raw::Float(_) => "a decimal number".to_string(),
            Raw::Text(_) => "a text".to_string(),
            Raw::List(_) => "a list".to_string(),
            Raw::Table => "a table".to_string(),
            Raw::Date => "a date".to_string(),
        }
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a TOML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
        Ok(i64::try_from(v).map_or_else(|_| Raw::TooLarge(v.to_string()), Raw::Int))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Raw, E> {
        Ok(i64::try_from(v).map_or_else(|_| Raw::TooLarge(v.to_string()), Raw::Int))
    }
    fn visit_u128<E>(self, v: u128) -> Result<Raw, E> {
        Ok(i64::try_from(v).map_or_else(|_| Raw::TooLarge(v.to_string()), Raw::Int))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Text(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Text(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Raw::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut date = false;
        while let Some(key) = map.next_key::<String>()? {
            date |= key == DATETIME_KEY;
            map.next_value::<IgnoredAny>()?;
        }
        Ok(if date { Raw::Date } else { Raw::Table })
    }
}

/// Reads a [`Raw`] and turns it into `T` with `check`, its error becoming
/// the TOML reader's (which adds the line and column).
fn checked<'de, D, T>(deserializer: D, check: fn(Raw) -> Result<T, String>) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    check(Raw::deserialize(deserializer)?).map_err(de::Error::custom)
}

/// `Deserialize` for each type through its `from_raw` check.
macro_rules! deserialize_checked {
    ($($kind:ty),*) => {$(
        impl<'de> Deserialize<'de> for $kind {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                checked(deserializer, <$kind>::from_raw)
            }
        }
    )*};
}

deserialize_checked!(Value, Seconds, Metrics, Rounds, Precision);

/// One value of a parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

impl Scalar {
    /// As `-p` would be given it.
    pub fn text(&self) -> String {
        match self {
            Scalar::Bool(b) => b.to_string(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Text(t) => t.clone(),
        }
    }

    fn from_raw(raw: Raw) -> Result<Scalar, Raw> {
        match raw {
            Raw::Bool(b) => Ok(Scalar::Bool(b)),
            Raw::Int(i) => Ok(Scalar::Int(i)),
            Raw::Float(f) => Ok(Scalar::Float(f)),
            Raw::Text(t) => Ok(Scalar::Text(t)),
            other => Err(other),
        }
    }
}

/// A parameter's value, or a list of them (a sweep).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    One(Scalar),
    Many(Vec<Scalar>),
}

impl Value {
    fn from_raw(raw: Raw) -> Result<Value, String> {
        const WHAT: &str =
            "a parameter's value is a text, a number, a boolean or a list of them (a sweep)";
        // Said on its own: with WHAT it would pass the line the error shows.
        let too_large = |n: &str| {
            format!(
                "the integer {n} is too large: TOML's integers are at most {} (give a larger value as a text, in quotes)",
                i64::MAX
            )
        };
        match raw {
            Raw::List(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| match Scalar::from_raw(item) {
                    Ok(one) => Ok(one),
                    Err(Raw::TooLarge(n)) => Err(too_large(&n)),
                    Err(other) => Err(format!(
                        "{WHAT}; entry {} of the list is {}",
                        i + 1,
                        other.kind()
                    )),
                })
                .collect::<Result<_, _>>()
                .map(Value::Many),
            raw => match Scalar::from_raw(raw) {
                Ok(one) => Ok(Value::One(one)),
                Err(Raw::TooLarge(n)) => Err(too_large(&n)),
                Err(other) => Err(format!("{WHAT}, found {}", other.kind())),
            },
        }
    }
}

/// Seconds as a number or a text (`"5m"`, `"500ms"`).
#[derive(Debug, Clone, PartialEq)]
pub enum Seconds {
    Number(f64),
    Text(String),
}

impl Seconds {
    fn from_raw(raw: Raw) -> Result<Seconds, String> {
        match raw {
            Raw::Int(i) => Ok(Seconds::Number(i as f64)),
            Raw::Float(f) => Ok(Seconds::Number(f)),
            Raw::Text(t) => Ok(Seconds::Text(t)),
            other => Err(format!(
                "a time is a number of seconds or a text such as \"5m\" or \"500ms\", found {}",
                other.kind()
            )),
        }
    }
}

/// A command case's `metric`: one text or a list of them.
#[derive(Debug, Clone, PartialEq)]
pub enum Metrics {
    One(String),
    Many(Vec<String>),
}

impl Metrics {
    fn from_raw(raw: Raw) -> Result<Metrics, String> {
        const WHAT: &str = "metric: each entry is a text NAME:UNIT:DIRECTION:...";
        match raw {
            Raw::Text(t) => Ok(Metrics::One(t)),
            Raw::List(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Raw::Text(t) => Ok(t),
                    other => Err(format!(
                        "{WHAT}; entry {} of the list is {}",
                        i + 1,
                        other.kind()
                    )),
                })
                .collect::<Result<_, _>>()
                .map(Metrics::Many),
            other => Err(format!(
                "metric is a text NAME:UNIT:DIRECTION:... or a list of them, found {}",
                other.kind()
            )),
        }
    }
}

/// A number of rounds (`rounds`, `max_rounds`): the same range as
/// `--rounds` and `--max-rounds`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rounds(pub u32);

impl Rounds {
    fn from_raw(raw: Raw) -> Result<Rounds, String> {
        let what = format!("a number of rounds is a whole number from 1 to {MAX_ROUNDS}");
        match raw {
            Raw::Int(n) => u32::try_from(n)
                .ok()
                .filter(|n| (1..=MAX_ROUNDS).contains(n))
                .map(Rounds)
                .ok_or_else(|| format!("{what}, not {n}")),
            Raw::TooLarge(n) => Err(format!("{what}, not {n}")),
            other => Err(format!("{what}, found {}", other.kind())),
        }
    }
}

/// The CI target (`precision`): a share of the mean above 0 and below 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision(pub f64);

impl Precision {
    fn from_raw(raw: Raw) -> Result<Precision, String> {
        let what = "`precision` is the CI's half-width as a share of the mean, above 0 and below 1 (0.03 is ±3%)";
        let share = match raw {
            Raw::Int(n) => n as f64,
            Raw::Float(f) => f,
            Raw::TooLarge(n) => return Err(format!("{what}, not {n}")),
            other => return Err(format!("{what}, found {}", other.kind())),
        };
        if share > 0.0 && share < 1.0 {
            Ok(Precision(share))
        } else {
            Err(format!("{what}, not {share}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of `v = ...` read as `T`, or the reader's error.
    fn read<T: for<'de> Deserialize<'de>>(value: &str) -> Result<T, String> {
        #[derive(Deserialize)]
        struct Key<T> {
            v: T,
        }
        toml::from_str::<Key<T>>(&format!("v = {value}\n"))
            .map(|k| k.v)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn every_toml_value_is_read_as_what_it_is() {
        assert_eq!(read::<Raw>("true"), Ok(Raw::Bool(true)));
        assert_eq!(read::<Raw>("-3"), Ok(Raw::Int(-3)));
        assert_eq!(read::<Raw>("0.5"), Ok(Raw::Float(0.5)));
        assert_eq!(read::<Raw>("\"x\""), Ok(Raw::Text("x".into())));
        assert_eq!(read::<Raw>("{ a = 1 }"), Ok(Raw::Table));
        assert_eq!(read::<Raw>("1979-05-27"), Ok(Raw::Date));
        assert_eq!(
            read::<Raw>("99999999999999999999"),
            Ok(Raw::TooLarge("99999999999999999999".into()))
        );
        assert_eq!(
            read::<Raw>("[1, [2]]"),
            Ok(Raw::List(vec![Raw::Int(1), Raw::List(vec![Raw::Int(2)])]))
        );
    }

    #[test]
    fn a_wrong_type_says_what_is_allowed_and_what_was_found() {
        let err = read::<Value>("{ a = 1 }").unwrap_err();
        assert!(
            err.contains(
                "a parameter's value is a text, a number, a boolean or a list of them (a sweep), found a table"
            ),
            "{err}"
        );
        assert!(err.contains("line 1, column 5"), "{err}");
        let err = read::<Value>("[1, [2]]").unwrap_err();
        assert!(err.contains("entry 2 of the list is a list"), "{err}");
        let err = read::<Value>("99999999999999999999").unwrap_err();
        assert!(
            err.contains(
                "the integer 99999999999999999999 is too large: TOML's integers are at most 9223372036854775807"
            ),
            "{err}"
        );
        let err = read::<Metrics>("[\"a:s:lower:regex:x\", 5]").unwrap_err();
        assert!(
            err.contains(
                "metric: each entry is a text NAME:UNIT:DIRECTION:...; entry 2 of the list is an integer"
            ),
            "{err}"
        );
        let err = read::<Seconds>("true").unwrap_err();
        assert!(err.contains("found a boolean"), "{err}");
        let err = read::<Precision>("\"high\"").unwrap_err();
        assert!(err.contains("below 1 (0.03 is ±3%), found a text"), "{err}");
        for (raw, text) in [
            ("1000000000000", "not 1000000000000"),
            ("0", "not 0"),
            ("101", "not 101"),
            ("\"5\"", "found a text"),
        ] {
            let err = read::<Rounds>(raw).unwrap_err();
            assert!(
                err.contains(&format!(
                    "a number of rounds is a whole number from 1 to {MAX_ROUNDS}, {text}"
                )),
                "{raw}: {err}"
            );
        }
        assert_eq!(
            read::<Rounds>(&MAX_ROUNDS.to_string()),
            Ok(Rounds(MAX_ROUNDS))
        );
    }
}
