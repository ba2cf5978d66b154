//! A metric's unit: the text a user reads (`events/s`, `MB/s`, `ns`) and
//! what it means, read once when the unit is made rather than recovered by
//! parsing the text wherever a meaning is needed.
//!
//! Three kinds have a meaning sledge uses: work per second (a rate, higher
//! is better), a time (s, ms, µs, ns: lower is better) and an energy (J,
//! mJ, µJ, nJ). Every other unit (`%`, `lps`, `KiB`) is text only.
//! Stored and exported runs hold the text: the kind is read back from it.
//!
//! No unit's values are negative, whatever its kind: the rates, times and
//! energies, and every other unit a workload reports (counts of requests
//! or events, sizes, shares in `%`, scores in `lps`), measure an amount.
//! And everything built on a metric is a ratio (a comparison, a change in
//! a host's history, a host against its fleet's median), which has no
//! meaning across 0. So `sledge import` refuses a negative value in any
//! unit, and names what the unit measures ([`Unit::measures`]).

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::stats::Direction;
use crate::visible::{self, EscapeText};

/// The power of ten of a time or an energy unit, from seconds (joules)
/// down to nanoseconds (nanojoules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// s, J.
    One,
    /// ms, mJ.
    Milli,
    /// µs, µJ.
    Micro,
    /// ns, nJ.
    Nano,
}

impl Scale {
    /// The SI prefix as written (`µ` for micro).
    fn prefix(self) -> &'static str {
        match self {
            Scale::One => "",
            Scale::Milli => "m",
            Scale::Micro => "µ",
            Scale::Nano => "n",
        }
    }
}

/// What a unit measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    /// Work per second (`events/s`): the text before `/s` is the work.
    Rate,
    /// A time, at its scale.
    Time(Scale),
    /// An energy, at its scale.
    Energy(Scale),
    /// Anything else: shown as written.
    Other,
}

/// A metric's unit: its text as shown, and its kind.
#[derive(Clone, PartialEq, Eq)]
pub struct Unit {
    text: Cow<'static, str>,
    kind: UnitKind,
}

impl Unit {
    /// The unit a workload names in its code (`Unit::of("events/s")`).
    pub const fn of(text: &'static str) -> Unit {
        Unit {
            kind: kind_of(text),
            text: Cow::Borrowed(text),
        }
    }

    /// The unit written `text` (read from a store, a document, a host).
    pub fn parse(text: impl Into<String>) -> Unit {
        let text = text.into();
        Unit {
            kind: kind_of(&text),
            text: Cow::Owned(text),
        }
    }

    /// The text as shown (`events/s`).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// What it measures.
    pub fn kind(&self) -> UnitKind {
        self.kind
    }

    /// Which way is better for a number in this unit when the unit alone
    /// says: higher for a rate, lower for a time or an energy.
    pub fn natural_direction(&self) -> Option<Direction> {
        match self.kind {
            UnitKind::Rate => Some(Direction::Higher),
            UnitKind::Time(_) | UnitKind::Energy(_) => Some(Direction::Lower),
            UnitKind::Other => None,
        }
    }

    /// What the unit measures, in words for a message: `a rate`, `a
    /// time`, `an energy`, or `an amount` (a count, a size, a share, a
    /// score).
    pub fn measures(&self) -> &'static str {
        match self.kind {
            UnitKind::Rate => "a rate",
            UnitKind::Time(_) => "a time",
            UnitKind::Energy(_) => "an energy",
            UnitKind::Other => "an amount",
        }
    }

    /// For a rate, the work it counts (`events` of `events/s`).
    pub fn work(&self) -> Option<&str> {
        match self.kind {
            UnitKind::Rate => self.text.strip_suffix("/s"),
            _ => None,
        }
    }

    /// The unit of the work a joule buys, for a rate (`events/s` gives
    /// `events/J`).
    pub fn per_joule(&self) -> Option<Unit> {
        self.work().map(|work| Unit::parse(format!("{work}/J")))
    }

    /// The energy unit of the same scale, for a time (`ns` gives `nJ`).
    pub fn energy(&self) -> Option<Unit> {
        match self.kind {
            UnitKind::Time(scale) => Some(Unit::parse(format!("{}J", scale.prefix()))),
            _ => None,
        }
    }
}

/// The kind the text names. `us` is read as µs, as some tools write it.
const fn kind_of(text: &str) -> UnitKind {
    match text.as_bytes() {
        b"s" => UnitKind::Time(Scale::One),
        b"ms" => UnitKind::Time(Scale::Milli),
        b"\xc2\xb5s" | b"us" => UnitKind::Time(Scale::Micro),
        b"ns" => UnitKind::Time(Scale::Nano),
        b"J" => UnitKind::Energy(Scale::One),
        b"mJ" => UnitKind::Energy(Scale::Milli),
        b"\xc2\xb5J" => UnitKind::Energy(Scale::Micro),
        b"nJ" => UnitKind::Energy(Scale::Nano),
        // Some work, then `/s`.
        [_, .., b'/', b's'] => UnitKind::Rate,
        _ => UnitKind::Other,
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.text)
    }
}

impl fmt::Debug for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq<str> for Unit {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Unit {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl From<&'static str> for Unit {
    fn from(text: &'static str) -> Unit {
        Unit::of(text)
    }
}

impl From<String> for Unit {
    fn from(text: String) -> Unit {
        Unit::parse(text)
    }
}

impl From<Unit> for String {
    fn from(unit: Unit) -> String {
        unit.text.into_owned()
    }
}

impl EscapeText for Unit {
    /// A unit from a store or another host is text like any other: shown
    /// escaped, its kind read again from what is shown.
    fn escape_text(&mut self) {
        if let Cow::Owned(escaped) = visible::escape(&self.text) {
            *self = Unit::parse(escaped);
        }
    }
}

impl Serialize for Unit {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Unit {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Unit, D::Error> {
        String::deserialize(deserializer).map(Unit::parse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unit_is_read_for_its_kind() {
        assert_eq!(Unit::of("events/s").kind(), UnitKind::Rate);
        assert_eq!(Unit::of("MB/s").work(), Some("MB"));
        assert_eq!(Unit::of("ns").kind(), UnitKind::Time(Scale::Nano));
        assert_eq!(Unit::of("µs").kind(), UnitKind::Time(Scale::Micro));
        assert_eq!(Unit::of("us").kind(), UnitKind::Time(Scale::Micro));
        assert_eq!(Unit::of("s").kind(), UnitKind::Time(Scale::One));
        assert_eq!(Unit::of("mJ").kind(), UnitKind::Energy(Scale::Milli));
        // A bare `/s` counts no work; `lps` and `%` are text only.
        for other in ["/s", "lps", "%", "", "events"] {
            assert_eq!(Unit::of(other).kind(), UnitKind::Other, "{other}");
        }
    }

    #[test]
    fn a_unit_says_which_way_is_better_where_its_kind_does() {
        assert_eq!(
            Unit::of("req/s").natural_direction(),
            Some(Direction::Higher)
        );
        assert_eq!(Unit::of("ms").natural_direction(), Some(Direction::Lower));
        assert_eq!(Unit::of("nJ").natural_direction(), Some(Direction::Lower));
        assert_eq!(Unit::of("lps").natural_direction(), None);
    }

    #[test]
    fn a_unit_names_what_it_measures() {
        assert_eq!(Unit::of("events/s").measures(), "a rate");
        assert_eq!(Unit::of("µs").measures(), "a time");
        assert_eq!(Unit::of("nJ").measures(), "an energy");
        assert_eq!(Unit::of("requests").measures(), "an amount");
    }

    #[test]
    fn rates_give_work_per_joule_and_times_an_energy_of_their_scale() {
        assert_eq!(Unit::of("events/s").per_joule().unwrap(), "events/J");
        assert_eq!(Unit::of("ms").per_joule(), None);
        assert_eq!(Unit::of("µs").energy().unwrap(), "µJ");
        assert_eq!(Unit::of("us").energy().unwrap(), "µJ");
        assert_eq!(Unit::of("s").energy().unwrap(), "J");
        assert_eq!(Unit::of("MB/s").energy(), None);
    }

    #[test]
    fn the_text_travels_unchanged_through_json() {
        let unit = Unit::parse("MiB/s");
        let json = serde_json::to_string(&unit).unwrap();
        assert_eq!(json, "\"MiB/s\"");
        let back: Unit = serde_json::from_str(&json).unwrap();
        assert_eq!(back, unit);
        assert_eq!(back.kind(), UnitKind::Rate);
        assert_eq!(format!("[{:>6}]", back), "[ MiB/s]");
    }
}
