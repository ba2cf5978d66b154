//! Typed workload parameters: their specifications, parsing, validation and
//! sweep expansion.
//!
//! Every parameter is validated before anything runs, so a typo costs the
//! user a clear message and not ten minutes of a half-finished run. Values
//! are kept in a canonical text form (`1024`, `write`, `true`) so that two
//! runs with the same case compare equal in the store.

use std::collections::BTreeMap;

use thiserror::Error;

pub use crate::results::param_values::{ParamSet, ParamValue, format_size};

/// What kind of value a parameter takes, with its allowed range.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamKind {
    /// A whole number in `min..=max`.
    Int { min: u64, max: u64 },
    /// A real number in `min..=max`.
    Float { min: f64, max: f64 },
    /// A size in bytes; accepts suffixes K, M, G, T (binary: 1K = 1024) and
    /// optional `iB`/`B`.
    Size {
        min: u64,
        max: u64,
        power_of_two: bool,
    },
    /// A duration in seconds; accepts a plain number of seconds or a number
    /// with `ms`, `s` or `m`.
    Seconds { min: f64, max: f64 },
    /// One of a fixed list of words.
    Choice(&'static [&'static str]),
    /// `true`/`false` (also on/off, yes/no, 1/0).
    Bool,
    /// A thread (or copy) count: a number from 1 to `max`, or `all`, which
    /// means one per CPU the run may use.
    Threads { max: u64 },
    /// Free text (a path, a URL).
    Text,
}

/// What a parameter is to the engine besides its value: the engine asks
/// a case for its trial length, its CPU count or its scratch directory by
/// role, so that a workload may name its parameters as its classic tool
/// does and the engine never matches a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamRole {
    /// The length of one trial (`time`): what `sledge plan` estimates a
    /// trial at when the workload says nothing better.
    TrialTime,
    /// A count of CPUs kept busy at once (`threads`, `copies`, `jobs`,
    /// `clients`): what `sledge ab --duet` halves the CPUs by.
    CpuCount,
    /// The directory a case makes its scratch directories in (`dir`),
    /// which the next run sweeps for what a killed sledge left there.
    ScratchDir,
    /// None of these: the engine never reads it.
    Other,
}

/// The specification of one parameter of a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    /// The name used on the command line (`--param name=value`).
    pub name: &'static str,
    /// What the engine reads it as, if anything.
    pub role: ParamRole,
    /// One line of help.
    pub help: &'static str,
    /// Kind and allowed range.
    pub kind: ParamKind,
    /// The default, in the same text form a user would type.
    pub default: &'static str,
}

impl ParamSpec {
    /// A human description of the allowed values, used in `sledge workloads`
    /// and in error messages.
    pub fn allowed(&self) -> String {
        match &self.kind {
            ParamKind::Int { min, max } => format!("an integer from {min} to {max}"),
            ParamKind::Float { min, max } => format!("a number from {min} to {max}"),
            ParamKind::Size {
                min,
                max,
                power_of_two,
            } => {
                let p2 = if *power_of_two {
                    "a power of two, "
                } else {
                    ""
                };
                format!(
                    "a size ({p2}{} to {}; suffixes K, M, G, T)",
                    format_size(*min),
                    format_size(*max)
                )
            }
            ParamKind::Seconds { min, max } => {
                format!("a duration from {min} s to {max} s (e.g. 10, 500ms, 2m)")
            }
            ParamKind::Choice(words) => format!("one of: {}", words.join(", ")),
            ParamKind::Bool => "true or false".to_string(),
            ParamKind::Threads { max } => {
                format!("a count from 1 to {max}, or `all` (one per CPU)")
            }
            ParamKind::Text => "any text".to_string(),
        }
    }
}

/// A parameter that could not be accepted.
#[derive(Debug, Error, PartialEq)]
pub enum ParamError {
    #[error("workload `{workload}` has no parameter `{name}`; its parameters are: {known}")]
    Unknown {
        workload: String,
        name: String,
        known: String,
    },
    #[error("parameter `{name}` of `{workload}`: `{value}` is not allowed; expected {allowed}")]
    Invalid {
        workload: String,
        name: String,
        value: String,
        allowed: String,
    },
    #[error("`{0}` is not of the form name=value (for example threads=2)")]
    Malformed(String),
    #[error(
        "--param {name}: value {position} is empty (a trailing or doubled comma?); separate values with commas, and put a value that holds a comma in double quotes (dir=\"/mnt/a,b\")"
    )]
    EmptyValue { name: String, position: usize },
    #[error(
        "--param {name}: no value after `=`; give one, or leave `{name}` out to take its default"
    )]
    NoValue { name: String },
    #[error(
        "--param {name}: value {position} {problem}; a value in double quotes runs to the next lone `\"` (write `\"\"` for a quote inside it), as in dir=\"/mnt/a,b\",/mnt/c"
    )]
    BadQuote {
        name: String,
        position: usize,
        problem: &'static str,
    },
}

impl ParamError {
    /// The parameter the error is about, where it names one.
    pub fn param_name(&self) -> Option<&str> {
        match self {
            ParamError::Unknown { name, .. }
            | ParamError::Invalid { name, .. }
            | ParamError::EmptyValue { name, .. }
            | ParamError::NoValue { name }
            | ParamError::BadQuote { name, .. } => Some(name),
            ParamError::Malformed(_) => None,
        }
    }
}

/// Parses `text` as a value of `spec`, checking its range. `cpus` is the
/// number of CPUs the run may use, which `all` stands for.
pub fn parse_value(
    workload: &str,
    spec: &ParamSpec,
    text: &str,
    cpus: usize,
) -> Result<ParamValue, ParamError> {
    let invalid = || ParamError::Invalid {
        workload: workload.to_string(),
        name: spec.name.to_string(),
        value: crate::secrets::redact(text),
        allowed: spec.allowed(),
    };
    let t = text.trim();
    match &spec.kind {
        ParamKind::Int { min, max } => {
            let v: u64 = t.replace('_', "").parse().map_err(|_| invalid())?;
            in_range(v, *min, *max)
                .then_some(ParamValue::Int(v))
                .ok_or_else(invalid)
        }
        ParamKind::Float { min, max } => {
            let v: f64 = t.parse().map_err(|_| invalid())?;
            (v.is_finite() && v >= *min && v <= *max)
                .then_some(ParamValue::Float(v))
                .ok_or_else(invalid)
        }
        ParamKind::Size {
            min,
            max,
            power_of_two,
        } => {
            let v = parse_size(t).ok_or_else(invalid)?;
            let ok = in_range(v, *min, *max) && (!power_of_two || v.is_power_of_two());
            ok.then_some(ParamValue::Size(v)).ok_or_else(invalid)
        }
        ParamKind::Seconds { min, max } => {
            let v = parse_seconds(t).ok_or_else(invalid)?;
            (v >= *min && v <= *max)
                .then_some(ParamValue::Seconds(v))
                .ok_or_else(invalid)
        }
        ParamKind::Choice(words) => words
            .iter()
            .find(|w| w.eq_ignore_ascii_case(t))
            .map(|w| ParamValue::Choice(w.to_string()))
            .ok_or_else(invalid),
        ParamKind::Bool => match t.to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" | "1" => Ok(ParamValue::Bool(true)),
            "false" | "off" | "no" | "0" => Ok(ParamValue::Bool(false)),
            _ => Err(invalid()),
        },
        ParamKind::Threads { max } => {
            let (v, value): (u64, fn(u64) -> ParamValue) = if t.eq_ignore_ascii_case("all") {
                (cpus.max(1) as u64, ParamValue::PerCpu)
            } else {
                (t.parse().map_err(|_| invalid())?, ParamValue::Int)
            };
            in_range(v, 1, *max).then(|| value(v)).ok_or_else(invalid)
        }
        // Text is taken as given: the splitter already trimmed an unquoted
        // value, and a quoted one keeps its spaces.
        ParamKind::Text => Ok(ParamValue::Text(text.to_string())),
    }
}

fn in_range(v: u64, min: u64, max: u64) -> bool {
    v >= min && v <= max
}

/// Parses `1024`, `1K`, `1KiB`, `16M`, `5G`, `2TB` (binary multiples).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .unwrap_or(t.len());
    let number: u64 = t[..digits_end].replace('_', "").parse().ok()?;
    let suffix = t[digits_end..].trim().to_ascii_lowercase();
    let multiplier: u64 = match suffix.trim_end_matches("ib").trim_end_matches('b') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    };
    number.checked_mul(multiplier)
}

/// Parses `10`, `2.5`, `500ms`, `10s`, `2m` into seconds.
pub fn parse_seconds(text: &str) -> Option<f64> {
    let t = text.trim().to_ascii_lowercase();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        (t.as_str(), 1.0)
    };
    let v: f64 = number.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v * scale)
}

/// A set's values read by role: the engine asks a case for its trial
/// length, its CPU count or its scratch directory through the role its
/// workload's specs give a parameter, never by the parameter's name.
/// Here rather than beside [`ParamSet`] because the specs are the
/// engine's.
impl ParamSet {
    /// The first duration among the parameters of `role` in `specs` (the
    /// specs the set was resolved against), in seconds; `None` when there
    /// is none.
    pub fn seconds_of(&self, specs: &[ParamSpec], role: ParamRole) -> Option<f64> {
        names_of(specs, role).find_map(|name| match self.get(name)? {
            ParamValue::Seconds(v) => Some(*v),
            _ => None,
        })
    }

    /// The values of the parameters of `role` in `specs` that are whole
    /// numbers, in declaration order (a count given as `all` is the CPU
    /// count it stands for).
    pub fn counts_of(&self, specs: &[ParamSpec], role: ParamRole) -> Vec<usize> {
        names_of(specs, role)
            .filter_map(|name| match self.get(name)? {
                ParamValue::Int(v) | ParamValue::PerCpu(v) => usize::try_from(*v).ok(),
                _ => None,
            })
            .collect()
    }

    /// The unmasked text of the parameters of `role` in `specs`, in
    /// declaration order (a directory is a path, never a secret to mask).
    pub fn texts_of(&self, specs: &[ParamSpec], role: ParamRole) -> Vec<String> {
        names_of(specs, role)
            .filter_map(|name| Some(self.get(name)?.raw_text()))
            .collect()
    }

    /// Whether the set is one of `workload`'s cases: every parameter of
    /// `specs` there with a value it accepts, and no other but those
    /// `takes` accepts (a command's placeholders). What a round's process
    /// checks of the set it was handed before reading it: a set from
    /// another build (`ab --a-sledge`) may not fit, and is then not read
    /// as values the workload would misread.
    pub fn check_fits(
        &self,
        workload: &str,
        specs: &[ParamSpec],
        takes: impl Fn(&str) -> bool,
    ) -> Result<(), String> {
        for spec in specs {
            match self.get(spec.name) {
                None => {
                    return Err(format!(
                        "`{workload}` needs `{}`: the set lacks it",
                        spec.name
                    ));
                }
                // The value as shown: a text value masked.
                Some(value) if !value_fits(value, &spec.kind) => {
                    return Err(format!(
                        "`{workload}`'s `{}` takes {}, not `{value}`",
                        spec.name,
                        spec.allowed()
                    ));
                }
                Some(_) => {}
            }
        }
        match self
            .iter()
            .find(|(name, _)| !specs.iter().any(|s| s.name == *name) && !takes(name))
        {
            Some((name, _)) => Err(format!("`{workload}` has no parameter `{name}`")),
            None => Ok(()),
        }
    }
}

/// The names `specs` gives `role`, in declaration order.
fn names_of(specs: &[ParamSpec], role: ParamRole) -> impl Iterator<Item = &str> {
    specs.iter().filter(move |s| s.role == role).map(|s| s.name)
}

/// Whether `value` is one [`parse_value`] could have made for `kind`:
/// its variant, and its range or word, checked again because the set may
/// come from another build whose parameter has other bounds.
fn value_fits(value: &ParamValue, kind: &ParamKind) -> bool {
    match (value, kind) {
        (ParamValue::Int(v), ParamKind::Int { min, max }) => in_range(*v, *min, *max),
        (ParamValue::Int(v) | ParamValue::PerCpu(v), ParamKind::Threads { max }) => {
            in_range(*v, 1, *max)
        }
        (ParamValue::Float(v), ParamKind::Float { min, max })
        | (ParamValue::Seconds(v), ParamKind::Seconds { min, max }) => {
            v.is_finite() && v >= min && v <= max
        }
        (
            ParamValue::Size(v),
            ParamKind::Size {
                min,
                max,
                power_of_two,
            },
        ) => in_range(*v, *min, *max) && (!power_of_two || v.is_power_of_two()),
        (ParamValue::Choice(word), ParamKind::Choice(words)) => words.contains(&word.as_str()),
        (ParamValue::Bool(_), ParamKind::Bool) | (ParamValue::Text(_), ParamKind::Text) => true,
        _ => false,
    }
}

/// Splits `name=v1,v2,...` into the name and its values.
///
/// Values are separated by commas and trimmed. A value that holds a comma
/// (a directory path, say) is put in double quotes, as in CSV and in
/// Docker's `--mount`: `dir="/mnt/a,b",/mnt/c` is two values, and `""`
/// inside quotes is one `"`. Quotes were chosen over backslash escapes
/// because database parameters (libpq's `password='a\'b'`) already use
/// backslashes, and a quote only means something at the start of a
/// value. An empty value (`db=postgres://h/x,`, a trailing comma) is an
/// error: every value of a sweep must be one the user meant.
pub fn split_assignment(text: &str) -> Result<(String, Vec<String>), ParamError> {
    let (name, values) = text
        .split_once('=')
        .ok_or_else(|| ParamError::Malformed(crate::secrets::redact(text)))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(ParamError::Malformed(crate::secrets::redact(text)));
    }
    if values.trim().is_empty() {
        return Err(ParamError::NoValue {
            name: name.to_string(),
        });
    }
    let values = split_values(name, values)?;
    Ok((name.to_string(), values))
}

/// Splits the values of `name=...` at commas outside double quotes; see
/// [`split_assignment`].
fn split_values(name: &str, text: &str) -> Result<Vec<String>, ParamError> {
    let mut values = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let position = values.len() + 1;
        let bad_quote = |problem| ParamError::BadQuote {
            name: name.to_string(),
            position,
            problem,
        };
        let mut value = String::new();
        let more = if chars.next_if_eq(&'"').is_some() {
            loop {
                match chars.next() {
                    None => return Err(bad_quote("opens a double quote that is never closed")),
                    Some('"') if chars.next_if_eq(&'"').is_some() => value.push('"'),
                    Some('"') => break,
                    Some(c) => value.push(c),
                }
            }
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            match chars.next() {
                None => false,
                Some(',') => true,
                Some(_) => return Err(bad_quote("has text after its closing quote")),
            }
        } else {
            let mut comma = false;
            for c in chars.by_ref() {
                if c == ',' {
                    comma = true;
                    break;
                }
                value.push(c);
            }
            value = value.trim_end().to_string();
            comma
        };
        if value.is_empty() {
            return Err(ParamError::EmptyValue {
                name: name.to_string(),
                position,
            });
        }
        values.push(value);
        if !more {
            return Ok(values);
        }
    }
}

/// Expands a workload's parameters into cases: defaults, overridden by
/// `assignments` (`name -> [values]`); a parameter with several values is a
/// sweep, and several sweeps form their cartesian product, in the order the
/// workload declares its parameters. Duplicate cases (for example
/// `threads=1,all` on a one-CPU host) are dropped.
pub fn resolve_cases(
    workload: &str,
    specs: &[ParamSpec],
    assignments: &BTreeMap<String, Vec<String>>,
    cpus: usize,
) -> Result<Vec<ParamSet>, ParamError> {
    for name in assignments.keys() {
        if !specs.iter().any(|s| s.name == name) {
            return Err(ParamError::Unknown {
                workload: workload.to_string(),
                name: name.clone(),
                known: specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
            });
        }
    }
    let mut cases: Vec<BTreeMap<String, ParamValue>> = vec![BTreeMap::new()];
    for spec in specs {
        let texts: Vec<String> = match assignments.get(spec.name) {
            Some(values) => values.clone(),
            None => vec![spec.default.to_string()],
        };
        let mut values: Vec<ParamValue> = Vec::with_capacity(texts.len());
        for text in &texts {
            let value = parse_value(workload, spec, text, cpus)?;
            // `threads=2,all` on two CPUs is one case, the first given.
            if !values.iter().any(|v| v.same_case(&value)) {
                values.push(value);
            }
        }
        cases = cases
            .into_iter()
            .flat_map(|case| {
                values.iter().map(move |v| {
                    let mut next = case.clone();
                    next.insert(spec.name.to_string(), v.clone());
                    next
                })
            })
            .collect();
    }
    Ok(cases.into_iter().map(ParamSet::from_values).collect())
}

/// The parameters of a stored case read back into a set against the
/// workload's parameters as they are now, so that a workload reads a
/// stored case through its typed struct as it reads a new one. A
/// parameter the case lacks takes its default: a case stored before the
/// parameter existed ran what is now its default (see
/// [`crate::store::later_params`]). An error for a value the workload no
/// longer accepts or a parameter it no longer has: a case stored by
/// another version, which the caller leaves out of what needs the set.
/// `cpus` is what `all` stands for, though a stored case holds counts.
pub fn stored_set(
    workload: &str,
    specs: &[ParamSpec],
    stored: &BTreeMap<String, String>,
    cpus: usize,
) -> Result<ParamSet, ParamError> {
    let assignments = stored
        .iter()
        .map(|(name, value)| (name.clone(), vec![value.clone()]))
        .collect();
    // One value per parameter makes exactly one case.
    let mut cases = resolve_cases(workload, specs, &assignments, cpus)?;
    Ok(cases.remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::typed_params::FromParam;

    fn int(set: &ParamSet, name: &str) -> u64 {
        u64::from_param(name, set.value(name))
    }

    fn text(set: &ParamSet, name: &str) -> String {
        String::from_param(name, set.value(name))
    }

    fn specs() -> Vec<ParamSpec> {
        vec![
            ParamSpec {
                name: "threads",
                role: ParamRole::CpuCount,
                help: "",
                kind: ParamKind::Threads { max: 4096 },
                default: "1",
            },
            ParamSpec {
                name: "block_size",
                role: ParamRole::Other,
                help: "",
                kind: ParamKind::Size {
                    min: 8,
                    max: 1 << 30,
                    power_of_two: true,
                },
                default: "1K",
            },
            ParamSpec {
                name: "oper",
                role: ParamRole::Other,
                help: "",
                kind: ParamKind::Choice(&["read", "write"]),
                default: "write",
            },
        ]
    }

    fn assign(pairs: &[&str]) -> BTreeMap<String, Vec<String>> {
        pairs.iter().map(|p| split_assignment(p).unwrap()).collect()
    }

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("1K"), Some(1024));
        assert_eq!(parse_size("16KiB"), Some(16 * 1024));
        assert_eq!(parse_size("5G"), Some(5 << 30));
        assert_eq!(parse_size("2 MB"), Some(2 << 20));
        assert_eq!(parse_size("1X"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(format_size(16 * 1024), "16K");
        assert_eq!(format_size(1000), "1000");
    }

    #[test]
    fn seconds_parse_with_units() {
        assert_eq!(parse_seconds("10"), Some(10.0));
        assert_eq!(parse_seconds("500ms"), Some(0.5));
        assert_eq!(parse_seconds("2m"), Some(120.0));
        assert_eq!(parse_seconds("-1"), None);
        assert_eq!(parse_seconds("soon"), None);
    }

    #[test]
    fn defaults_make_one_case() {
        let cases = resolve_cases("w", &specs(), &BTreeMap::new(), 2).unwrap();
        assert_eq!(cases.len(), 1);
        assert_eq!(int(&cases[0], "threads"), 1);
        assert_eq!(int(&cases[0], "block_size"), 1024);
        assert_eq!(text(&cases[0], "oper"), "write");
    }

    #[test]
    fn sweeps_expand_to_the_cartesian_product_without_duplicates() {
        let cases = resolve_cases(
            "w",
            &specs(),
            &assign(&["threads=1,all,2", "oper=read,write"]),
            2,
        )
        .unwrap();
        // `all` is 2 here, so threads is {1, 2}: 2 x 2 cases.
        assert_eq!(cases.len(), 4);
        let threads: Vec<u64> = cases.iter().map(|c| int(c, "threads")).collect();
        assert_eq!(threads, vec![1, 1, 2, 2]);
    }

    #[test]
    fn a_count_given_as_all_is_remembered_and_reads_as_the_count() {
        let cases = resolve_cases("w", &specs(), &assign(&["threads=1,2,all"]), 4).unwrap();
        let seen: Vec<(u64, Vec<String>, String)> = cases
            .iter()
            .map(|c| {
                (
                    int(c, "threads"),
                    c.given_as_all(),
                    c.to_strings()["threads"].clone(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                (1, vec![], "1".to_string()),
                (2, vec![], "2".to_string()),
                (4, vec!["threads".to_string()], "4".to_string()),
            ]
        );
        // An explicit count equal to the CPUs is not `all`; given both
        // ways it is one case, the first given.
        let explicit = resolve_cases("w", &specs(), &assign(&["threads=2"]), 2).unwrap();
        assert!(explicit[0].given_as_all().is_empty());
        let both = resolve_cases("w", &specs(), &assign(&["threads=2,all"]), 2).unwrap();
        assert_eq!(both.len(), 1);
        assert!(both[0].given_as_all().is_empty());
        let both = resolve_cases("w", &specs(), &assign(&["threads=all,2"]), 2).unwrap();
        assert_eq!(both.len(), 1);
        assert_eq!(both[0].given_as_all(), ["threads"]);
        // The text form a command's placeholder gets is the count.
        let raw = cases[2].to_raw_strings();
        assert_eq!(raw["threads"], "4");
    }

    #[test]
    fn a_set_fits_the_workload_it_was_resolved_for_and_no_other() {
        let set = resolve_cases("w", &specs(), &assign(&["threads=all"]), 4)
            .unwrap()
            .remove(0);
        let nothing_else = |_: &str| false;
        assert_eq!(set.check_fits("w", &specs(), nothing_else), Ok(()));
        // A parameter the workload lacks, unless it takes any such name.
        let fewer: Vec<ParamSpec> = specs().into_iter().skip(1).collect();
        let err = set.check_fits("w", &fewer, nothing_else).unwrap_err();
        assert!(err.contains("no parameter `threads`"), "{err}");
        assert_eq!(set.check_fits("w", &fewer, |n| n == "threads"), Ok(()));
        // One the set lacks, and a value of another kind.
        let mut more = specs();
        more.push(ParamSpec {
            name: "verify",
            role: ParamRole::Other,
            help: "",
            kind: ParamKind::Bool,
            default: "false",
        });
        let err = set.check_fits("w", &more, nothing_else).unwrap_err();
        assert!(err.contains("needs `verify`"), "{err}");
        let mut retyped = specs();
        retyped[2].kind = ParamKind::Bool;
        let err = set.check_fits("w", &retyped, nothing_else).unwrap_err();
        assert!(err.contains("`oper` takes true or false"), "{err}");
        // A value of the right kind out of this build's bounds: another
        // build's, with a wider range or another word.
        let mut narrower = specs();
        narrower[0].kind = ParamKind::Threads { max: 2 };
        let err = set.check_fits("w", &narrower, nothing_else).unwrap_err();
        assert!(err.contains("`threads` takes a count from 1 to 2"), "{err}");
        let mut other_words = specs();
        other_words[2].kind = ParamKind::Choice(&["read"]);
        assert!(set.check_fits("w", &other_words, nothing_else).is_err());
    }

    #[test]
    fn a_text_value_that_does_not_fit_is_named_masked() {
        let specs = [ParamSpec {
            name: "db",
            role: ParamRole::Other,
            help: "",
            kind: ParamKind::Bool,
            default: "false",
        }];
        let set = ParamSet::from_values(
            [(
                "db".to_string(),
                ParamValue::Text("postgres://u:secret@h/x".into()),
            )]
            .into(),
        );
        let err = set.check_fits("w", &specs, |_| false).unwrap_err();
        assert!(!err.contains("secret"), "{err}");
        assert!(!format!("{set:?}").contains("secret"), "{set:?}");
    }

    #[test]
    fn bad_values_name_the_parameter_and_the_allowed_range() {
        let err = resolve_cases("w", &specs(), &assign(&["threads=0"]), 2).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("`threads`") && msg.contains("from 1 to 4096"),
            "{msg}"
        );

        let err = resolve_cases("w", &specs(), &assign(&["block_size=1000"]), 2).unwrap_err();
        assert!(err.to_string().contains("power of two"), "{err}");

        let err = resolve_cases("w", &specs(), &assign(&["oper=erase"]), 2).unwrap_err();
        assert!(err.to_string().contains("one of: read, write"), "{err}");
    }

    #[test]
    fn unknown_parameters_list_the_known_ones() {
        let err = resolve_cases("w", &specs(), &assign(&["thread=2"]), 2).unwrap_err();
        assert_eq!(
            err.to_string(),
            "workload `w` has no parameter `thread`; its parameters are: threads, block_size, oper"
        );
    }

    fn values(text: &str) -> Result<Vec<String>, ParamError> {
        split_assignment(text).map(|(_, values)| values)
    }

    #[test]
    fn an_empty_value_is_refused_where_it_stands() {
        // A trailing comma used to make an empty value that failed only
        // when its case started.
        assert_eq!(
            values("db=postgres://u@h/x,"),
            Err(ParamError::EmptyValue {
                name: "db".to_string(),
                position: 2
            })
        );
        assert_eq!(
            values("threads=1,,2"),
            Err(ParamError::EmptyValue {
                name: "threads".to_string(),
                position: 2
            })
        );
        assert_eq!(
            values("threads= ,1"),
            Err(ParamError::EmptyValue {
                name: "threads".to_string(),
                position: 1
            })
        );
        assert_eq!(
            values(r#"dir="""#),
            Err(ParamError::EmptyValue {
                name: "dir".to_string(),
                position: 1
            })
        );
        assert_eq!(
            values("db=x,").unwrap_err().to_string(),
            r#"--param db: value 2 is empty (a trailing or doubled comma?); separate values with commas, and put a value that holds a comma in double quotes (dir="/mnt/a,b")"#
        );
    }

    #[test]
    fn a_value_in_double_quotes_keeps_its_commas_and_spaces() {
        assert_eq!(
            values(r#"dir="/mnt/a,b", /mnt/c ,"/x y ""z"" ""#).unwrap(),
            vec!["/mnt/a,b", "/mnt/c", r#"/x y "z" "#]
        );
        // A quote inside an unquoted value is just a character, and the
        // libpq keyword form (quotes and backslashes of its own) passes
        // through whole.
        assert_eq!(values(r#"x=a"b"#).unwrap(), vec![r#"a"b"#]);
        assert_eq!(
            values(r"db=host=h password='p'w' dbname=d").unwrap(),
            vec![r"host=h password='p'w' dbname=d"]
        );
    }

    #[test]
    fn a_broken_quote_is_refused_with_the_rule() {
        assert_eq!(
            values(r#"dir=/a,"/b,c"#),
            Err(ParamError::BadQuote {
                name: "dir".to_string(),
                position: 2,
                problem: "opens a double quote that is never closed"
            })
        );
        let err = values(r#"dir="/a,b"c"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"--param dir: value 1 has text after its closing quote; a value in double quotes runs to the next lone `"` (write `""` for a quote inside it), as in dir="/mnt/a,b",/mnt/c"#
        );
    }

    #[test]
    fn quoted_text_reaches_the_case_unchanged() {
        let spec = ParamSpec {
            name: "dir",
            role: ParamRole::ScratchDir,
            help: "",
            kind: ParamKind::Text,
            default: ".",
        };
        let cases = resolve_cases(
            "w",
            std::slice::from_ref(&spec),
            &assign(&[r#"dir=" /mnt/a,b ",/c"#]),
            1,
        )
        .unwrap();
        let dirs: Vec<String> = cases.iter().map(|c| text(c, "dir")).collect();
        assert_eq!(dirs, vec![" /mnt/a,b ", "/c"]);
    }

    #[test]
    fn malformed_assignments_are_rejected() {
        assert!(split_assignment("threads").is_err());
        assert!(split_assignment("=2").is_err());
        assert_eq!(
            split_assignment("threads=").unwrap_err().to_string(),
            "--param threads: no value after `=`; give one, or leave `threads` out to take its default"
        );
        assert!(
            split_assignment("=2")
                .unwrap_err()
                .to_string()
                .contains("is not of the form name=value")
        );
        assert_eq!(
            split_assignment("threads=1, 2").unwrap(),
            (
                "threads".to_string(),
                vec!["1".to_string(), "2".to_string()]
            )
        );
    }

    #[test]
    fn a_stored_case_reads_back_with_defaults_for_what_it_lacks() {
        let stored: BTreeMap<String, String> = [("block_size", "4K"), ("oper", "read")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let set = stored_set("w", &specs(), &stored, 2).unwrap();
        assert_eq!(int(&set, "block_size"), 4096);
        assert_eq!(text(&set, "oper"), "read");
        // Stored before `threads` existed: it ran the default.
        assert_eq!(int(&set, "threads"), 1);
        let mut gone = stored.clone();
        gone.insert("oper".into(), "append".into());
        assert!(stored_set("w", &specs(), &gone, 2).is_err());
        gone.insert("removed".into(), "1".into());
        assert!(stored_set("w", &specs(), &gone, 2).is_err());
    }

    /// A workload's parameters with every role: `copies` and `clients`
    /// both count CPUs, as in `memory.stream` and `db.tpcb`.
    fn role_specs() -> Vec<ParamSpec> {
        let spec = |name, role, kind, default| ParamSpec {
            name,
            role,
            help: "",
            kind,
            default,
        };
        vec![
            spec(
                "copies",
                ParamRole::CpuCount,
                ParamKind::Threads { max: 64 },
                "all",
            ),
            spec(
                "clients",
                ParamRole::CpuCount,
                ParamKind::Int { min: 1, max: 64 },
                "2",
            ),
            spec(
                "length",
                ParamRole::TrialTime,
                ParamKind::Seconds {
                    min: 0.0,
                    max: 60.0,
                },
                "1.5",
            ),
            spec(
                "place",
                ParamRole::ScratchDir,
                ParamKind::Text,
                "/scratch/a,b",
            ),
            spec(
                "rounds",
                ParamRole::Other,
                ParamKind::Int { min: 1, max: 99 },
                "7",
            ),
        ]
    }

    #[test]
    fn a_set_answers_by_role_whatever_the_names() {
        let specs = role_specs();
        let set = resolve_cases("w", &specs, &BTreeMap::new(), 3)
            .unwrap()
            .remove(0);
        assert_eq!(set.seconds_of(&specs, ParamRole::TrialTime), Some(1.5));
        // `all` is the CPU count it stands for; an `Other` count is not one.
        assert_eq!(set.counts_of(&specs, ParamRole::CpuCount), [3, 2]);
        assert_eq!(
            set.texts_of(&specs, ParamRole::ScratchDir),
            ["/scratch/a,b"]
        );
        let sized = resolve_cases("w", &specs, &assign(&["clients=9"]), 3).unwrap();
        assert_eq!(sized[0].counts_of(&specs, ParamRole::CpuCount), [3, 9]);
    }

    #[test]
    fn a_role_no_parameter_has_answers_nothing() {
        let specs = specs();
        let set = resolve_cases("w", &specs, &BTreeMap::new(), 2)
            .unwrap()
            .remove(0);
        assert_eq!(set.seconds_of(&specs, ParamRole::TrialTime), None);
        assert!(set.texts_of(&specs, ParamRole::ScratchDir).is_empty());
        assert_eq!(set.counts_of(&specs, ParamRole::CpuCount), [1]);
        // A duration of the role only: a count is no trial length.
        let miskinded = vec![ParamSpec {
            role: ParamRole::TrialTime,
            ..specs[0].clone()
        }];
        assert_eq!(set.seconds_of(&miskinded, ParamRole::TrialTime), None);
    }

    #[test]
    fn a_directory_is_answered_unmasked() {
        let specs = role_specs();
        let given = assign(&["place=postgres://u:secret@h/db"]);
        let set = resolve_cases("w", &specs, &given, 1).unwrap().remove(0);
        assert_eq!(
            set.texts_of(&specs, ParamRole::ScratchDir),
            ["postgres://u:secret@h/db"]
        );
    }
}
