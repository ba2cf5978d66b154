//! Batteries as files: a profile written in TOML, built-in workloads and
//! the user's commands alike, with the precision and budget it runs
//! under.
//!
//! ```toml
//! name = "web-tier"                 # default: the file's name
//! summary = "nginx and the build"
//! precision = 0.03                  # the CI target (--ci-target)
//! budget = 60                       # seconds a case at most (--budget)
//!
//! [[case]]
//! workload = "cpu.primes"
//! params = { threads = [1, "all"], max_prime = 20000 }
//!
//! [[case]]
//! command = "make -j{jobs}"         # the `command` workload's cmd
//! params = { jobs = [1, "all"] }
//! prepare = "make clean"
//! ```
//!
//! A case has `workload` or `command`; a command case may also give the
//! `command` workload's other parameters as keys of its own (`prepare`,
//! `setup`, `cleanup`, `shell`, `time_limit`, `parser`, `metric`,
//! `ignore_failure`), `metric` as one text or a list. A list in `params`
//! is a sweep. Every key is checked: an unknown one, a wrong type or a
//! bad value is an error with the file's line and column and what was
//! expected. The file's text and its SHA-256 go with the run (as the notes
//! `battery=` and `battery_text=`), so `show` says which battery ran and
//! `compare` and `history` can tell two runs of the same one.
//!
//! Nothing in a battery runs while it is read: its commands run when the
//! run does, and `sledge plan FILE` shows every one before.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use sha2::Digest as _;
use toml::Spanned;

use super::battery_file::BatteryFile;
use super::battery_values::{Metrics, Precision, Rounds, Scalar, Seconds, Value};
use super::profile::{Entry, Profile};
use crate::engine::Methodology;
use crate::engine::methodology::MAX_ROUNDS;
use crate::engine::params::{ParamError, resolve_cases, split_assignment};
use crate::workloads;

/// The largest battery file read.
const MAX_BYTES: u64 = 1024 * 1024;

/// Why a battery file could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {why}")]
pub struct BatteryError {
    /// The file.
    pub path: String,
    /// What was wrong, with the line and column where there is one.
    pub why: String,
}

/// The file's form, as serde reads it; every unknown key is refused.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileForm {
    name: Option<String>,
    summary: Option<String>,
    precision: Option<Precision>,
    budget: Option<Seconds>,
    rounds: Option<Rounds>,
    max_rounds: Option<Spanned<Rounds>>,
    #[serde(default)]
    case: Vec<CaseForm>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseForm {
    workload: Option<String>,
    command: Option<String>,
    #[serde(default)]
    params: BTreeMap<String, Spanned<Value>>,
    prepare: Option<String>,
    setup: Option<String>,
    cleanup: Option<String>,
    shell: Option<bool>,
    time_limit: Option<Seconds>,
    parser: Option<String>,
    metric: Option<Metrics>,
    ignore_failure: Option<bool>,
}

impl Value {
    /// Whether a value is empty text (or the list is empty), which `-p`
    /// refuses too.
    fn has_empty(&self) -> bool {
        match self {
            Value::One(one) => one.text().trim().is_empty(),
            Value::Many(many) => many.is_empty() || many.iter().any(|v| v.text().trim().is_empty()),
        }
    }

    /// As `-p` would take it: values at commas, one that holds a comma or
    /// a quote in double quotes.
    fn assignment_text(&self) -> String {
        let values: Vec<String> = match self {
            Value::One(one) => vec![one.text()],
            Value::Many(many) => many.iter().map(Scalar::text).collect(),
        };
        values
            .iter()
            .map(|v| quoted(v))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// A value as one value of `-p`: in double quotes (a quote doubled) when
/// it holds a comma, a quote or surrounding space.
fn quoted(value: &str) -> String {
    if value.contains([',', '"']) || value.trim() != value {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_string()
    }
}

impl Seconds {
    fn duration(&self, key: &str) -> Result<Duration, String> {
        let seconds = match self {
            Seconds::Number(n) => Some(*n),
            Seconds::Text(t) => crate::engine::params::parse_seconds(t),
        };
        match seconds {
            Some(s) if s > 0.0 && s <= 604_800.0 => Ok(Duration::from_secs_f64(s)),
            _ => Err(format!(
                "`{key}` must be a time above 0 and at most a week: seconds, or a text such as \"5m\" or \"500ms\""
            )),
        }
    }
}

/// Whether a target names a file rather than a profile or a workload.
pub fn is_path(target: &str) -> bool {
    target.contains('/') || target.ends_with(".toml")
}

/// The directory of the user's battery files:
/// `$XDG_CONFIG_HOME/sledge/profiles`, else `~/.config/sledge/profiles`.
pub fn user_dir() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(config.join("sledge").join("profiles"))
}

/// The user's battery file named `name` (`NAME.toml` in [`user_dir`]),
/// when there is one.
pub fn user_file(name: &str) -> Option<PathBuf> {
    if name.is_empty() || name.contains(['/', '\0']) || name.starts_with('.') {
        return None;
    }
    let path = user_dir()?.join(format!("{name}.toml"));
    path.is_file().then_some(path)
}

/// Every battery file in [`user_dir`], read, in name order.
pub fn user_batteries() -> Vec<Result<Profile, BatteryError>> {
    let Some(dir) = user_dir() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    paths.iter().map(|p| read(p)).collect()
}

/// Reads the battery file at `path` into a profile.
pub fn read(path: &Path) -> Result<Profile, BatteryError> {
    let error = |why: String| BatteryError {
        path: path.display().to_string(),
        why,
    };
    let meta = std::fs::metadata(path).map_err(|e| error(format!("cannot be read: {e}")))?;
    if !meta.is_file() {
        return Err(error("is not a file".to_string()));
    }
    if meta.len() > MAX_BYTES {
        return Err(error(format!(
            "is {} bytes; a battery file is at most {MAX_BYTES}",
            meta.len()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| error(format!("cannot be read: {e}")))?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("battery")
        .to_string();
    parse(&text, &stem).map_err(error).map(|mut profile| {
        profile.file = Some(BatteryFile {
            path: path.to_path_buf(),
            sha256: hex(&sha2::Sha256::digest(text.as_bytes())),
            text,
        });
        profile
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The profile a battery's `text` describes; `stem` names it when the
/// text does not. (Public for the fuzz target; [`read`] reads a file.)
pub fn parse(text: &str, stem: &str) -> Result<Profile, String> {
    let form: FileForm = toml::from_str(text).map_err(|e| shortened(&e.to_string()))?;
    let name = form.name.unwrap_or_else(|| stem.to_string());
    if name.trim().is_empty() || name.contains(char::is_whitespace) {
        return Err(format!("`name` must be one word, not `{name}`"));
    }
    if form.case.is_empty() {
        return Err(
            "it has no case: add one, for example\n[[case]]\nworkload = \"cpu.primes\"".to_string(),
        );
    }
    let mut methodology = Methodology::default();
    if let Some(Precision(precision)) = form.precision {
        methodology.ci_target = precision;
    }
    if let Some(budget) = &form.budget {
        methodology.case_budget = budget.duration("budget")?;
    }
    if let Some(Rounds(rounds)) = form.rounds {
        methodology.min_rounds = rounds;
        methodology.max_rounds = methodology.max_rounds.max(rounds);
    }
    if let Some(max) = form.max_rounds {
        let Rounds(rounds) = *max.get_ref();
        if rounds < methodology.min_rounds {
            return Err(format!(
                "{}: `max_rounds` must be from `rounds` ({}) to {MAX_ROUNDS}, not {rounds}",
                place(text, max.span()),
                methodology.min_rounds
            ));
        }
        methodology.max_rounds = rounds;
    }
    let entries = form
        .case
        .into_iter()
        .enumerate()
        .map(|(i, case)| {
            entry(case, text)
                .map_err(|why| format!("case {} ([[case]] number {}): {why}", i + 1, i + 1))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Profile {
        summary: form
            .summary
            .unwrap_or_else(|| format!("the battery file's {} cases", entries.len())),
        name,
        entries,
        methodology,
        file: None,
    })
}

/// The most of one line of an error shown: the TOML reader quotes the
/// line it stopped on, which may be a whole file of one line.
const ERROR_LINE_CHARS: usize = 160;

/// A reader's error with each of its lines cut to [`ERROR_LINE_CHARS`].
fn shortened(error: &str) -> String {
    error
        .trim_end()
        .lines()
        .map(|line| {
            if line.chars().count() > ERROR_LINE_CHARS {
                let cut: String = line.chars().take(ERROR_LINE_CHARS).collect();
                format!("{cut}…")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where in `text` a byte `span` starts, as the TOML reader says it:
/// `line 3, column 22`.
fn place(text: &str, span: std::ops::Range<usize>) -> String {
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    format!("line {line}, column {column}")
}

/// One `[[case]]` of the battery `text` as a profile's entry.
fn entry(case: CaseForm, text: &str) -> Result<Entry, String> {
    let mut params = Vec::with_capacity(case.params.len());
    for (name, value) in &case.params {
        let value = value.get_ref();
        let named = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !named {
            return Err(format!(
                "`{name}` in `params` is not a parameter's name (lowercase letters, digits and _)"
            ));
        }
        if value.has_empty() {
            return Err(format!("params.{name}: a value is empty"));
        }
        params.push(format!("{name}={}", value.assignment_text()));
    }
    let command_keys = [
        ("prepare", case.prepare.clone()),
        ("setup", case.setup.clone()),
        ("cleanup", case.cleanup.clone()),
        ("parser", case.parser.clone()),
        ("shell", case.shell.map(|b| b.to_string())),
        ("ignore_failure", case.ignore_failure.map(|b| b.to_string())),
        (
            "time_limit",
            case.time_limit
                .as_ref()
                .map(|t| {
                    t.duration("time_limit")
                        .map(|d| d.as_secs_f64().to_string())
                })
                .transpose()?,
        ),
        (
            "metric",
            case.metric.map(|m| match m {
                Metrics::One(one) => one,
                Metrics::Many(many) => many.join(" ;; "),
            }),
        ),
    ];
    let workload = match (&case.workload, &case.command) {
        (Some(_), Some(_)) => {
            return Err("give `workload` or `command`, not both".to_string());
        }
        (None, None) => {
            return Err(
                "give `workload = \"cpu.primes\"` (a workload's id) or `command = \"...\"`"
                    .to_string(),
            );
        }
        (None, Some(command)) => {
            if command.trim().is_empty() {
                return Err("`command` is empty: give the command line to run".to_string());
            }
            params.push(format!("cmd={}", quoted(command)));
            // An empty step (`prepare = ""`) is no step.
            for (key, value) in &command_keys {
                if let Some(value) = value.as_ref().filter(|v| !v.trim().is_empty()) {
                    params.push(format!("{key}={}", quoted(value)));
                }
            }
            &workloads::command::workload::CommandWorkload as &'static dyn crate::engine::Workload
        }
        (Some(id), None) => {
            if let Some((key, _)) = command_keys.iter().find(|(_, v)| v.is_some()) {
                return Err(format!(
                    "`{key}` belongs to a `command` case; for workload {id}, put its parameters under `params`"
                ));
            }
            workloads::find(id)
                .ok_or_else(|| format!("`{id}` is not a workload; `sledge workloads` lists them"))?
        }
    };
    check_params(workload, &params).map_err(|error| {
        match error.param_name().and_then(|name| case.params.get(name)) {
            Some(value) => format!("{}: {error}", place(text, value.span())),
            None => error.to_string(),
        }
    })?;
    Ok(Entry { workload, params })
}

/// Whether `workload` takes every one of the `name=values` assignments
/// with every value: resolved into cases as the plan will resolve them,
/// so that a bad one is refused here, where the file and the case can be
/// named. `all` is resolved as one CPU: what it stands for is the
/// running host's, and the plan checks it there.
fn check_params(
    workload: &'static dyn crate::engine::Workload,
    assignments: &[String],
) -> Result<(), ParamError> {
    let mut merged = BTreeMap::new();
    for text in assignments {
        let (name, values) = split_assignment(text)?;
        merged.insert(name, values);
    }
    let specs = workload.params_given(&merged);
    resolve_cases(workload.id(), &specs, &merged, 1).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_battery_of_workloads_and_commands_is_a_profile() {
        let text = r#"
name = "web-tier"
precision = 0.05
budget = "1m"

[[case]]
workload = "cpu.primes"
params = { threads = [1, "all"], max_prime = 2000 }

[[case]]
command = "make -j{jobs}, fast"
params = { jobs = [1, "all"] }
prepare = "make clean"
metric = ["a:s:lower:regex:x ([0-9]+)", "b:req/s:higher:json:/b"]
"#;
        let profile = parse(text, "file").unwrap();
        assert_eq!(profile.name, "web-tier");
        assert_eq!(profile.methodology.ci_target, 0.05);
        assert_eq!(profile.methodology.case_budget, Duration::from_secs(60));
        assert_eq!(profile.entries[0].workload.id(), "cpu.primes");
        assert_eq!(
            profile.entries[0].params,
            ["max_prime=2000", "threads=1,all"]
        );
        assert_eq!(profile.entries[1].workload.id(), "command");
        assert_eq!(
            profile.entries[1].params,
            [
                "jobs=1,all",
                "cmd=\"make -j{jobs}, fast\"",
                "prepare=make clean",
                "metric=a:s:lower:regex:x ([0-9]+) ;; b:req/s:higher:json:/b"
            ]
        );
    }

    #[test]
    fn mistakes_are_named_with_their_line_and_column() {
        let err = parse("[[case]]\nworkload = \"cpu.primes\"\ncolour = 1\n", "f").unwrap_err();
        assert!(err.contains("line 3, column 1"), "{err}");
        assert!(err.contains("unknown field `colour`"), "{err}");
        let err = parse("precision = \"high\"\n[[case]]\nworkload = \"cpu\"\n", "f").unwrap_err();
        assert!(err.contains("line 1"), "{err}");
        let err = parse("[[case]]\nworkload = \"nope\"\n", "f").unwrap_err();
        assert!(
            err.contains("case 1") && err.contains("`nope` is not a workload"),
            "{err}"
        );
        let err = parse(
            "[[case]]\nworkload = \"cpu.primes\"\nprepare = \"x\"\n",
            "f",
        )
        .unwrap_err();
        assert!(
            err.contains("`prepare` belongs to a `command` case"),
            "{err}"
        );
        let deep = format!("a = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let err = parse(&deep, "f").unwrap_err();
        assert!(
            err.lines()
                .all(|l| l.chars().count() <= ERROR_LINE_CHARS + 1),
            "{}",
            err.len()
        );
        let err = parse("name = \"x\"\n", "f").unwrap_err();
        assert!(err.contains("no case"), "{err}");
        let err = parse("precision = 3\n[[case]]\ncommand = \"true\"\n", "f").unwrap_err();
        assert!(err.contains("below 1"), "{err}");
        let err = parse("[[case]]\ncommand = \"x\"\nparams = { \"a=b\" = 1 }\n", "f").unwrap_err();
        assert!(
            err.contains("`a=b` in `params` is not a parameter's name"),
            "{err}"
        );
        let err = parse(
            "[[case]]\ncommand = \"x\"\nparams = { n = [1, \"\"] }\n",
            "f",
        )
        .unwrap_err();
        assert!(err.contains("params.n: a value is empty"), "{err}");
    }

    #[test]
    fn a_bad_parameter_is_named_with_its_case_line_and_column() {
        let err = parse(
            "[[case]]\nworkload = \"cpu.primes\"\nparams = { threads = 0 }\n",
            "f",
        )
        .unwrap_err();
        assert!(
            err.starts_with(
                "case 1 ([[case]] number 1): line 3, column 22: parameter `threads` of `cpu.primes`: `0` is not allowed"
            ),
            "{err}"
        );
        let text = "[[case]]\nworkload = \"cpu.primes\"\n\n[[case]]\nworkload = \"cpu.primes\"\nparams = { max_prime = 20000, streams = 500 }\n";
        let err = parse(text, "f").unwrap_err();
        assert!(
            err.starts_with(
                "case 2 ([[case]] number 2): line 6, column 41: workload `cpu.primes` has no parameter `streams`"
            ),
            "{err}"
        );
        // A sweep is checked value by value; `all` is any host's.
        let err = parse(
            "[[case]]\nworkload = \"cpu.primes\"\nparams = { threads = [\"all\", 1, 5000] }\n",
            "f",
        )
        .unwrap_err();
        assert!(err.contains("`5000` is not allowed"), "{err}");
        // A command's placeholder takes what the placeholder takes.
        let err = parse(
            "[[case]]\ncommand = \"make -j{jobs}\"\nparams = { jobs = \"many\" }\n",
            "f",
        )
        .unwrap_err();
        assert!(err.contains("line 3, column 19: parameter `jobs`"), "{err}");
        assert!(
            parse(
                "[[case]]\ncommand = \"make -j{jobs}\"\nparams = { jobs = [1, \"all\"] }\n",
                "f"
            )
            .is_ok()
        );
    }

    #[test]
    fn rounds_take_the_command_line_range() {
        let rounds = |text: &str| parse(&format!("{text}\n[[case]]\ncommand = \"true\"\n"), "f");
        let most = rounds(&format!("rounds = {MAX_ROUNDS}\nmax_rounds = {MAX_ROUNDS}")).unwrap();
        assert_eq!(most.methodology.min_rounds, MAX_ROUNDS);
        assert_eq!(most.methodology.max_rounds, MAX_ROUNDS);
        for key in ["rounds", "max_rounds"] {
            let err = rounds(&format!("{key} = {}", MAX_ROUNDS + 1)).unwrap_err();
            assert!(
                err.contains(&format!("from 1 to {MAX_ROUNDS}, not {}", MAX_ROUNDS + 1)),
                "{err}"
            );
        }
        let err = rounds("rounds = 5\nmax_rounds = 3").unwrap_err();
        assert_eq!(
            err,
            format!(
                "line 2, column 14: `max_rounds` must be from `rounds` (5) to {MAX_ROUNDS}, not 3"
            )
        );
    }

    #[test]
    fn a_file_carries_its_text_and_hash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(&path, "[[case]]\ncommand = \"true\"\n").unwrap();
        let profile = read(&path).unwrap();
        assert_eq!(profile.name, "mine");
        let file = profile.file.unwrap();
        assert_eq!(file.sha256.len(), 64);
        let notes = file.notes("mine");
        assert_eq!(notes[0], format!("battery=mine sha256:{}", file.sha256));
        assert_eq!(notes[1], "battery_text=[[case]]\ncommand = \"true\"\n");
        let err = read(&dir.path().join("none.toml")).unwrap_err();
        assert!(err.to_string().contains("cannot be read"), "{err}");
    }
}
