//! A case's parameter values, typed: what the plan holds, what travels to
//! a round's own process (serialized as these values, never as text to
//! parse again) and what the record of a case this process ran keeps
//! beside the values' text form.
//!
//! They sit here, below the engine, because the record keeps them; the
//! engine declares the parameters they are values of (`ParamSpec`),
//! parses and validates text into them and reads them by role
//! (the engine's `params` module).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// A parsed, validated parameter value. Its `Debug` masks a text value
/// as its `Display` does, so that a set or a record printed with `{:?}`
/// (a failed assertion, a log) shows no password.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamValue {
    Int(u64),
    /// A thread (or copy) count given as `all`: one per CPU the run may
    /// use, that many. It reads and is stored as the number; the set
    /// remembers that it was `all` (see [`ParamSet::given_as_all`]).
    PerCpu(u64),
    Float(f64),
    Size(u64),
    Seconds(f64),
    Choice(String),
    Bool(bool),
    Text(String),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(v) | ParamValue::PerCpu(v) => write!(f, "{v}"),
            ParamValue::Size(v) => write!(f, "{}", format_size(*v)),
            ParamValue::Float(v) | ParamValue::Seconds(v) => write!(f, "{v}"),
            ParamValue::Choice(v) => write!(f, "{v}"),
            // Text may be a database URL: never show or store a password.
            ParamValue::Text(v) => write!(f, "{}", crate::secrets::redact(v)),
            ParamValue::Bool(v) => write!(f, "{v}"),
        }
    }
}

impl fmt::Debug for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(v) => f.debug_tuple("Int").field(v).finish(),
            ParamValue::PerCpu(v) => f.debug_tuple("PerCpu").field(v).finish(),
            ParamValue::Float(v) => f.debug_tuple("Float").field(v).finish(),
            ParamValue::Size(v) => f.debug_tuple("Size").field(v).finish(),
            ParamValue::Seconds(v) => f.debug_tuple("Seconds").field(v).finish(),
            ParamValue::Choice(v) => f.debug_tuple("Choice").field(v).finish(),
            ParamValue::Bool(v) => f.debug_tuple("Bool").field(v).finish(),
            ParamValue::Text(v) => f
                .debug_tuple("Text")
                .field(&crate::secrets::redact(v))
                .finish(),
        }
    }
}

impl ParamValue {
    /// Whether two values make the same case: a count given as `all` is
    /// the same as that count given explicitly.
    pub fn same_case(&self, other: &ParamValue) -> bool {
        match (self, other) {
            (
                ParamValue::Int(a) | ParamValue::PerCpu(a),
                ParamValue::Int(b) | ParamValue::PerCpu(b),
            ) => a == b,
            _ => self == other,
        }
    }

    /// The value's text form with nothing masked (see
    /// [`ParamSet::to_raw_strings`]).
    pub fn raw_text(&self) -> String {
        match self {
            ParamValue::Text(t) => t.clone(),
            other => other.to_string(),
        }
    }
}

/// Formats a byte count the way users type it: `1K`, `16M`, `1536`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "T"),
        (1 << 30, "G"),
        (1 << 20, "M"),
        (1 << 10, "K"),
    ];
    for (scale, unit) in UNITS {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{}{unit}", bytes / scale);
        }
    }
    bytes.to_string()
}

/// The parameters of one case: every parameter of the workload, validated.
///
/// It serializes as its values (`{"threads":{"per_cpu":2}}`), text
/// unmasked: that form is only for handing a case to a round's own
/// process over a pipe. What is shown or stored is
/// [`ParamSet::to_strings`], passwords masked.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ParamSet {
    values: BTreeMap<String, ParamValue>,
}

impl ParamSet {
    /// Builds a set from already-validated values (used by tests and by
    /// the engine's `resolve_cases`).
    pub fn from_values(values: BTreeMap<String, ParamValue>) -> Self {
        ParamSet { values }
    }

    /// One value, by the name the workload declared it with (what
    /// a workload's `Params::from_set` reads). Panics on
    /// a name the workload did not declare: a bug, not an input error.
    pub fn value(&self, name: &str) -> &ParamValue {
        self.values.get(name).unwrap_or_else(|| {
            panic!("parameter `{name}` missing: the workload did not declare it")
        })
    }

    /// One value by name, `None` when the set has no such parameter.
    pub fn get(&self, name: &str) -> Option<&ParamValue> {
        self.values.get(name)
    }

    /// Every parameter's name and value, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ParamValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The names of the parameters given as `all` (one per CPU the run
    /// may use), in name order: their stored value is the CPU count, and
    /// this says it was not a count the user chose.
    pub fn given_as_all(&self) -> Vec<String> {
        self.values
            .iter()
            .filter(|(_, v)| matches!(v, ParamValue::PerCpu(_)))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// The canonical text form of every value, for storage and display
    /// (passwords in text values masked).
    pub fn to_strings(&self) -> BTreeMap<String, String> {
        self.values
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect()
    }

    /// The text form of every value with nothing masked, which
    /// the engine's `resolve_cases` parses back into the same
    /// values (a count given as `all` comes back as that count): what a
    /// round's process of another build reads, over a pipe, never for
    /// showing or storing.
    pub fn to_raw_strings(&self) -> BTreeMap<String, String> {
        self.values
            .iter()
            .map(|(k, v)| (k.clone(), v.raw_text()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_kind() -> ParamSet {
        let values = [
            ("block_size", ParamValue::Size(1 << 20)),
            ("copies", ParamValue::Int(3)),
            ("threads", ParamValue::PerCpu(2)),
            ("ratio", ParamValue::Float(0.1 + 0.2)),
            ("time", ParamValue::Seconds(2.5)),
            ("oper", ParamValue::Choice("write".into())),
            ("direct", ParamValue::Bool(true)),
            ("db", ParamValue::Text("postgres://u:pw@h/x".into())),
        ];
        ParamSet::from_values(values.map(|(k, v)| (k.to_string(), v)).into())
    }

    #[test]
    fn a_set_travels_as_its_values_and_comes_back_the_same() {
        let set = every_kind();
        let json = serde_json::to_string(&set).unwrap();
        // The values themselves, not their text: `all` stays `all`, a
        // float keeps every bit, the password is there for the round.
        assert!(json.contains(r#""threads":{"per_cpu":2}"#), "{json}");
        assert!(
            json.contains(r#""ratio":{"float":0.30000000000000004}"#),
            "{json}"
        );
        assert!(json.contains("pw@h"), "{json}");
        let back: ParamSet = serde_json::from_str(&json).unwrap();
        assert_eq!(back, set);
        assert_eq!(back.given_as_all(), ["threads"]);
    }

    #[test]
    fn the_text_form_masks_passwords_and_writes_sizes_as_typed() {
        let set = every_kind();
        let shown = set.to_strings();
        assert_eq!(shown["block_size"], "1M");
        assert_eq!(shown["threads"], "2");
        assert!(!shown["db"].contains("pw"), "{}", shown["db"]);
        assert_eq!(set.to_raw_strings()["db"], "postgres://u:pw@h/x");
    }

    #[test]
    fn sizes_read_as_users_type_them() {
        assert_eq!(format_size(1024), "1K");
        assert_eq!(format_size(3 << 30), "3G");
        assert_eq!(format_size(1536), "1536");
        assert_eq!(format_size(0), "0");
    }
}
