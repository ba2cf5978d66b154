//! The result data model shared by the engine (which fills it), the store
//! (which keeps it) and the reports (which show it).
//!
//! These structs are also the documented `--json` shape: every field has a
//! doc comment, and a snapshot test pins the shape. Add fields with
//! `#[serde(default)]` so that older stored runs still load.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::monitor::TrialHealth;
use crate::probe::HostInfo;
use crate::stats::{Direction, Levels, Summary};
use crate::visible::EscapeText;

pub mod param_values;
pub mod unit;
pub use unit::Unit;

/// The state a run ended in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Still running (or the process died without marking it).
    Running,
    /// Every case finished.
    Complete,
    /// Stopped early (Ctrl-C); the finished cases are kept.
    Partial,
    /// At least one case failed; the others are kept.
    Failed,
    /// It was `running`, but the sledge running it is gone (killed, or the
    /// machine rebooted) without saying how it ended; the cases it stored
    /// are kept.
    Abandoned,
}

impl RunStatus {
    /// The word used in the store and in tables.
    pub fn as_str(&self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
            RunStatus::Abandoned => "abandoned",
        }
    }

    /// Parses the word used in the store.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "running" => Some(RunStatus::Running),
            "complete" => Some(RunStatus::Complete),
            "partial" => Some(RunStatus::Partial),
            "failed" => Some(RunStatus::Failed),
            "abandoned" => Some(RunStatus::Abandoned),
            _ => None,
        }
    }
}

/// One invocation of `sledge run` on one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Store id of the run (0 before it is stored). Local to one store: an
    /// imported run gets a new id.
    pub id: i64,
    /// The run's identity across stores: a random (version 4) UUID given
    /// when the run starts, kept by `sledge export` and `sledge import`.
    #[serde(default)]
    pub uuid: String,
    /// When the run started, RFC 3339 in UTC.
    pub started: String,
    /// When the run ended, RFC 3339 in UTC; absent while running.
    #[serde(default)]
    pub finished: Option<String>,
    /// sledge's version.
    pub sledge_version: String,
    /// The profile name, or `custom` for a list of workloads.
    pub profile: String,
    /// The command line that started the run.
    pub command_line: String,
    /// How the run ended.
    pub status: RunStatus,
    /// The CPUs the run was restricted to (`--cpus`), in order.
    pub cpus: Vec<usize>,
    /// Free notes given with `--note` (`price=2400EUR`, `rack 3`), in the
    /// order given; a `price=` note lets `compare` show performance per
    /// unit of price.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Warnings about the whole run (for example a busy host at the start).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The host inventory taken at the start.
    pub host: HostInfo,
    /// The cases, in the order they ran.
    pub cases: Vec<CaseRecord>,
}

impl RunRecord {
    /// The host a `sledge fleet run` ran this run on, as its `--hosts`
    /// named it (see [`fleet_host`]).
    pub fn fleet_host(&self) -> Option<&str> {
        fleet_host(&self.notes)
    }

    /// The host's identity for run-to-run noise histories: host name, CPU
    /// model, CPUs used and kernel. Runs with the same key are taken as
    /// repeated measurements of one machine in one setting; the store keeps
    /// the key with every run.
    pub fn host_key(&self) -> String {
        host_key(&self.host, self.cpus.len())
    }
}

/// The note every run made by `sledge fleet run` carries:
/// `fleet_host=HOST[:PORT]`, the host as `--hosts` named it. Clones of one
/// image share a host name; this tells their runs apart.
pub const FLEET_HOST_NOTE: &str = "fleet_host";

/// The fleet host that `notes` name (the value of their
/// [`FLEET_HOST_NOTE`]), if any.
pub fn fleet_host(notes: &[String]) -> Option<&str> {
    notes.iter().find_map(|note| {
        note.strip_prefix(FLEET_HOST_NOTE)?
            .strip_prefix('=')
            .filter(|host| !host.is_empty())
    })
}

/// The note each of the two runs `sledge ab` stores carries:
/// `ab=PAIR/SIDE`, PAIR an identifier both runs share and SIDE `A` or `B`.
/// `compare` judges two runs with the same PAIR and different sides on
/// their per-round paired ratios, since they ran in the same rounds.
pub const AB_NOTE: &str = "ab";

/// The note that says what a side's setting was (`ab_setting=knob
/// vm.swappiness=10`), for people reading the run.
pub const AB_SETTING_NOTE: &str = "ab_setting";

/// The setting of a `sledge ab` side that `notes` name (the value of
/// their [`AB_SETTING_NOTE`]), if any.
pub fn ab_setting(notes: &[String]) -> Option<&str> {
    notes
        .iter()
        .find_map(|note| note.strip_prefix(AB_SETTING_NOTE)?.strip_prefix('='))
}

/// The `sledge ab` pair and side `notes` name (see [`AB_NOTE`]).
pub fn ab_side(notes: &[String]) -> Option<(&str, &str)> {
    notes.iter().find_map(|note| {
        let value = note.strip_prefix(AB_NOTE)?.strip_prefix('=')?;
        let (pair, side) = value.rsplit_once('/')?;
        (!pair.is_empty() && matches!(side, "A" | "B")).then_some((pair, side))
    })
}

/// Whether `a` and `b` are the two sides of one `sledge ab` pair.
pub fn ab_pair(a: &RunRecord, b: &RunRecord) -> bool {
    match (ab_side(&a.notes), ab_side(&b.notes)) {
        (Some((pair_a, side_a)), Some((pair_b, side_b))) => pair_a == pair_b && side_a != side_b,
        _ => false,
    }
}

/// The note naming the battery file a run ran: `battery=NAME
/// sha256:HEX` (see `suite::battery`).
pub const BATTERY_NOTE: &str = "battery";

/// The note holding the battery file's whole text, for the JSON and for
/// whoever wants to run it again; the human formats leave it out.
pub const BATTERY_TEXT_NOTE: &str = "battery_text";

/// The battery `notes` name, as `NAME sha256:HEX`.
pub fn battery(notes: &[String]) -> Option<&str> {
    notes.iter().find_map(|note| {
        note.strip_prefix(BATTERY_NOTE)?
            .strip_prefix('=')
            .filter(|b| !b.is_empty())
    })
}

/// The notes a person reads: all but the battery's text (a whole file,
/// kept in the JSON).
pub fn shown_notes(notes: &[String]) -> Vec<&str> {
    notes
        .iter()
        .filter(|n| {
            n.strip_prefix(BATTERY_TEXT_NOTE)
                .is_none_or(|rest| !rest.starts_with('='))
        })
        .map(String::as_str)
        .collect()
}

/// See [`RunRecord::host_key`].
pub fn host_key(host: &HostInfo, cpus_used: usize) -> String {
    format!(
        "{}|{}|{}|{}",
        host.hostname, host.cpu.model, cpus_used, host.os.kernel
    )
}

/// A run's text escaped for the human formats ([`crate::visible`]): it
/// may come from a document or a store anyone could have written.
impl EscapeText for RunRecord {
    fn escape_text(&mut self) {
        let RunRecord {
            id: _,
            uuid,
            started,
            finished,
            sledge_version,
            profile,
            command_line,
            status: _,
            cpus: _,
            notes,
            warnings,
            host,
            cases,
        } = self;
        uuid.escape_text();
        started.escape_text();
        finished.escape_text();
        sledge_version.escape_text();
        profile.escape_text();
        command_line.escape_text();
        notes.escape_text();
        warnings.escape_text();
        host.escape_text();
        cases.escape_text();
    }
}

impl EscapeText for CaseRecord {
    fn escape_text(&mut self) {
        let CaseRecord {
            workload,
            workload_version: _,
            params,
            given_as_all,
            warnings,
            error,
            // Numbers and flags only (the test of the whole JSON shape
            // would find a text among them).
            rounds: _,
            trials: _,
            metrics,
            latency_histogram: _,
            // Set only for a case this process ran from its own plan,
            // never for one read from a store, a document or a host.
            values: _,
        } = self;
        workload.escape_text();
        params.escape_text();
        given_as_all.escape_text();
        warnings.escape_text();
        error.escape_text();
        metrics.escape_text();
    }
}

impl EscapeText for MetricRecord {
    fn escape_text(&mut self) {
        let MetricRecord {
            name,
            unit,
            direction: _,
            summary: _,
            levels: _,
            samples: _,
            outliers: _,
        } = self;
        name.escape_text();
        unit.escape_text();
    }
}

/// A new random run UUID, in its canonical lower-case hyphenated form.
pub fn new_run_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A workload with every parameter fixed, and what its trials measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRecord {
    /// The workload id (`cpu.primes`).
    pub workload: String,
    /// The workload's version; results are only compared like for like.
    pub workload_version: u32,
    /// Every parameter of the case, in canonical text form.
    pub params: BTreeMap<String, String>,
    /// The parameters given as `all` (one per CPU the run may use), whose
    /// value in `params` is the run's CPU count: `threads=all` on 2 CPUs
    /// is stored as `threads=2` with `["threads"]` here. `compare` matches
    /// such a parameter with `all` on another run whatever its CPU count,
    /// and an explicit count only with the same count (given explicitly,
    /// or as `all` on a run with as many CPUs). Absent for
    /// a case stored before sledge kept this: a per-CPU count equal to the
    /// run's CPUs is then taken as `all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given_as_all: Option<Vec<String>>,
    /// Warnings about the case (disturbed trials, a too-small data set...).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The error that ended the case, if it failed.
    #[serde(default)]
    pub error: Option<String>,
    /// The case's rounds: each a fresh process (or fresh files) at its own
    /// moment of the run, holding one or more trials.
    #[serde(default)]
    pub rounds: Vec<RoundRecord>,
    /// The counted trials (the warm-up is not included), round by round.
    pub trials: Vec<TrialRecord>,
    /// One summary per metric, the headline metric first (the one the
    /// summary table shows; `Case::trial` in `engine/workload.rs`).
    pub metrics: Vec<MetricRecord>,
    /// The merged latency histogram of all counted trials (nanoseconds),
    /// serialized in HdrHistogram's V2 + deflate format; not part of the
    /// JSON output.
    #[serde(skip)]
    pub latency_histogram: Option<Vec<u8>>,
    /// The typed values the case ran with, beside their text form in
    /// `params`: kept for a case this process ran, so that what reads
    /// the case again here (its workload's place in an index) reads the
    /// values it was built from rather than parsing the text back. Not
    /// part of the JSON output nor of the store, which keep the text (it
    /// masks passwords, and a stored case is read back against its
    /// workload's parameters as they are then:
    /// the engine's `stored_set`).
    #[serde(skip)]
    pub values: Option<param_values::ParamSet>,
}

impl CaseRecord {
    /// `cpu.primes max_prime=10000 threads=2`: the case as a user would type it.
    pub fn label(&self) -> String {
        case_label(&self.workload, &self.params)
    }

    /// Each kind of disturbance seen in the trials the statistics use
    /// (`busy`, `steal`, `swap`, `throttled`) with the number of trials it
    /// disturbed, sorted by kind. Disturbed trials that were replaced are
    /// not counted here: see [`replaced_trials`](Self::replaced_trials).
    pub fn disturbances(&self) -> Vec<(&'static str, usize)> {
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        for trial in self.trials.iter().filter(|t| !t.replaced) {
            let mut kinds: Vec<&'static str> =
                trial.health.flags.iter().map(|f| f.label()).collect();
            kinds.sort_unstable();
            kinds.dedup();
            for kind in kinds {
                *counts.entry(kind).or_default() += 1;
            }
        }
        counts.into_iter().collect()
    }

    /// How many disturbed trials were replaced by clean ones.
    pub fn replaced_trials(&self) -> usize {
        self.trials.iter().filter(|t| t.replaced).count()
    }

    /// How many trials the statistics rest on.
    pub fn used_trials(&self) -> usize {
        self.trials.len() - self.replaced_trials()
    }

    /// The parameters as `k=v k=v`, for compact tables.
    pub fn params_text(&self) -> String {
        self.params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `workload k=v k=v`: a case as a user would type it.
pub fn case_label(workload: &str, params: &BTreeMap<String, String>) -> String {
    let mut label = workload.to_string();
    // A parameter left empty (a command's unused `prepare`, a load with no
    // client hosts) says nothing about the case.
    for (k, v) in params.iter().filter(|(_, v)| !v.is_empty()) {
        label.push_str(&format!(" {k}={v}"));
    }
    label
}

/// One round of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    /// Which round, from 0.
    pub round: u32,
    /// Where the case came in that round's shuffled order, from 0.
    pub order: u32,
    /// Wall time of the whole round (fresh process, prepare, warm-up,
    /// trials, cleanup), seconds.
    pub seconds: f64,
}

/// One counted trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// Position among the case's trials, from 0.
    pub index: u32,
    /// The round the trial belongs to, from 0.
    #[serde(default)]
    pub round: u32,
    /// The monitor flagged this trial and another trial of the round
    /// replaced it: kept for the record, left out of every statistic.
    #[serde(default)]
    pub replaced: bool,
    /// Wall time of the trial, seconds.
    #[serde(deserialize_with = "nan_from_null::float")]
    pub seconds: f64,
    /// What the monitor saw during the trial; `health.flags` lists the
    /// disturbances (steal, swap, busy, throttled) that make this trial
    /// suspect; with clock, throttle, temperature and energy figures where
    /// the hardware shows them.
    pub health: TrialHealth,
}

/// The summary of one metric over the counted trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRecord {
    /// Metric name (`events_per_sec`).
    pub name: String,
    /// Unit (`events/s`): its text in JSON.
    pub unit: Unit,
    /// Whether higher or lower is better.
    pub direction: Direction,
    /// Over the trials the statistics use (replaced ones left out): the
    /// mean of the round means, the 95% CI (from the round means when there
    /// are two rounds or more), and the trials' median, standard
    /// deviation, min, max and n.
    #[serde(deserialize_with = "nan_from_null::summary")]
    pub summary: Summary,
    /// How the variance splits between rounds and trials, and what the CI
    /// rests on; absent in runs stored before rounds existed.
    #[serde(default)]
    pub levels: Option<Levels>,
    /// The raw value of each trial, in trial order (replaced trials
    /// included, so that `samples[i]` belongs to `trials[i]`).
    #[serde(deserialize_with = "nan_from_null::floats")]
    pub samples: Vec<f64>,
    /// Tukey outlier flags, one per sample (flagged, never dropped).
    pub outliers: Vec<bool>,
}

impl MetricRecord {
    /// The values the statistics use, grouped by round: `samples` without
    /// the replaced trials. `trials` is the case's trial list.
    pub fn rounds(&self, trials: &[TrialRecord]) -> Vec<Vec<f64>> {
        group_by_round(trials, &self.samples)
    }
}

/// The metric the engine adds next to a case's headline metric when a
/// trial's energy is known: how much work a joule buys, or how much energy
/// a unit of work costs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnergyCompanion {
    /// Its name: `events_per_sec` gives `events_per_joule`, `ns_per_load`
    /// gives `nj_per_load`, `total_time` gives `total_time_energy`.
    pub name: String,
    /// Its unit: `events/s` gives `events/J`, `ns` gives `nJ`.
    pub unit: Unit,
    /// True for work per joule (rate ÷ watts, higher is better), false for
    /// energy per unit of work (time × watts, lower is better).
    pub per_joule: bool,
}

/// The energy companion of a headline metric: a per-second rate gets work
/// per joule (`rate × seconds / joules`), a lower-is-better time (s, ms,
/// µs, ns) gets the energy it cost at the trial's mean power; any other
/// metric gets none.
pub fn energy_companion(name: &str, unit: &Unit, direction: Direction) -> Option<EnergyCompanion> {
    if direction == Direction::Higher
        && let Some(per_joule) = unit.per_joule()
    {
        let stem = name.strip_suffix("_per_sec").unwrap_or(name);
        return Some(EnergyCompanion {
            name: format!("{stem}_per_joule"),
            unit: per_joule,
            per_joule: true,
        });
    }
    if direction != Direction::Lower {
        return None;
    }
    let energy_unit = unit.energy()?;
    let time_prefix = format!("{}_per_", unit.as_str().replace('µ', "u"));
    let name = match name.strip_prefix(&time_prefix) {
        Some(rest) => format!(
            "{}_per_{rest}",
            energy_unit.as_str().replace('µ', "u").to_lowercase()
        ),
        None => format!("{name}_energy"),
    };
    Some(EnergyCompanion {
        name,
        unit: energy_unit,
        per_joule: false,
    })
}

/// `samples` (one per trial) grouped by the trials' rounds, replaced trials
/// left out.
pub fn group_by_round(trials: &[TrialRecord], samples: &[f64]) -> Vec<Vec<f64>> {
    let mut rounds: Vec<Vec<f64>> = Vec::new();
    for (trial, value) in trials.iter().zip(samples) {
        if trial.replaced {
            continue;
        }
        let round = trial.round as usize;
        if rounds.len() <= round {
            rounds.resize(round + 1, Vec::new());
        }
        rounds[round].push(*value);
    }
    rounds
}

/// JSON has no NaN or infinity: serde_json writes them as `null`. These
/// read such a `null` back as NaN, so that a run with a non-finite value
/// survives export and import (a missing field is still an error).
mod nan_from_null {
    use serde::{Deserialize, Deserializer};

    use crate::stats::Summary;

    /// A number, or NaN for `null`.
    pub fn float<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }

    /// Numbers, NaN for each `null`.
    pub fn floats<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Ok(Vec::<Option<f64>>::deserialize(d)?
            .into_iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect())
    }

    /// [`Summary`]'s fields, each number NaN for `null`. (Every field is
    /// required: `deserialize_with` turns off serde's implicit `None` for a
    /// missing `Option`.)
    #[derive(Deserialize)]
    struct NullableSummary {
        n: usize,
        #[serde(deserialize_with = "float")]
        mean: f64,
        #[serde(deserialize_with = "float")]
        median: f64,
        #[serde(deserialize_with = "float")]
        stddev: f64,
        #[serde(deserialize_with = "float")]
        ci_low: f64,
        #[serde(deserialize_with = "float")]
        ci_high: f64,
        #[serde(deserialize_with = "float")]
        min: f64,
        #[serde(deserialize_with = "float")]
        max: f64,
    }

    /// A [`Summary`] whose numbers may be `null`.
    pub fn summary<'de, D: Deserializer<'de>>(d: D) -> Result<Summary, D::Error> {
        let s = NullableSummary::deserialize(d)?;
        Ok(Summary {
            n: s.n,
            mean: s.mean,
            median: s.median,
            stddev: s.stddev,
            ci_low: s.ci_low,
            ci_high: s.ci_high,
            min: s.min,
            max: s.max,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text a run can hold, found through its JSON shape: each
    /// string, each `null` and each empty list of the fixture is made a
    /// hostile text where the run still reads back with it (so enums and
    /// numbers stay what they are). A text field that [`EscapeText`] for
    /// `RunRecord` forgets is left raw and fails the test.
    #[test]
    fn escaping_a_run_leaves_no_hidden_character_in_any_field() {
        use serde_json::Value;

        const HOSTILE: &str = "\x1b]0;t\x07\x1b[2J\r\x08\0\x7f\u{9b}\u{202e}\u{2066}\n";

        fn reads_back(root: &Value) -> bool {
            serde_json::from_value::<RunRecord>(root.clone()).is_ok()
        }
        /// Makes the value at `path` hostile wherever the run still reads.
        fn poison(root: &mut Value, path: &mut Vec<String>) {
            let node = root.pointer(&pointer(path)).unwrap().clone();
            let try_as = |root: &mut Value, candidate: Value| {
                let old = std::mem::replace(root.pointer_mut(&pointer(path)).unwrap(), candidate);
                if !reads_back(root) {
                    *root.pointer_mut(&pointer(path)).unwrap() = old;
                }
            };
            match node {
                Value::String(s) => try_as(root, Value::String(format!("{s}{HOSTILE}"))),
                Value::Null => try_as(root, Value::String(HOSTILE.into())),
                Value::Array(items) if items.is_empty() => {
                    try_as(root, Value::Array(vec![Value::String(HOSTILE.into())]))
                }
                Value::Array(items) => {
                    for i in 0..items.len() {
                        path.push(i.to_string());
                        poison(root, path);
                        path.pop();
                    }
                }
                Value::Object(map) => {
                    for key in map.keys() {
                        path.push(key.clone());
                        poison(root, path);
                        path.pop();
                    }
                }
                Value::Bool(_) | Value::Number(_) => {}
            }
        }
        fn pointer(path: &[String]) -> String {
            path.iter()
                .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
                .collect()
        }
        fn hidden_in(value: &Value, found: &mut Vec<String>) {
            match value {
                Value::String(s) if s.chars().any(crate::visible::is_hidden) => {
                    found.push(s.clone())
                }
                Value::Array(items) => items.iter().for_each(|v| hidden_in(v, found)),
                Value::Object(map) => {
                    for (k, v) in map {
                        if k.chars().any(crate::visible::is_hidden) {
                            found.push(k.clone());
                        }
                        hidden_in(v, found);
                    }
                }
                _ => {}
            }
        }

        let mut run = crate::report::fixtures::demo_run(1, "db1", 1.0);
        run.host.filesystem = Some(crate::probe::FilesystemInfo::default());
        run.cases[0]
            .params
            .insert(format!("key{HOSTILE}"), "v".into());
        run.host
            .mitigations
            .insert(format!("key{HOSTILE}"), "v".into());
        let mut json = serde_json::to_value(&run).unwrap();
        poison(&mut json, &mut Vec::new());
        let hostile: RunRecord = serde_json::from_value(json).unwrap();
        let mut poisoned = Vec::new();
        hidden_in(&serde_json::to_value(&hostile).unwrap(), &mut poisoned);
        assert!(poisoned.len() > 40, "the fixture holds texts: {poisoned:?}");

        let shown = crate::visible::Escaped::new(hostile);
        let mut left = Vec::new();
        hidden_in(&serde_json::to_value(&*shown).unwrap(), &mut left);
        assert!(left.is_empty(), "left raw: {left:?}");
    }

    fn companion(
        name: &str,
        unit: &'static str,
        direction: Direction,
    ) -> Option<(String, String, bool)> {
        energy_companion(name, &Unit::of(unit), direction)
            .map(|c| (c.name, c.unit.into(), c.per_joule))
    }

    #[test]
    fn rates_get_work_per_joule_and_times_get_energy() {
        let per_joule = |n: &str, u: &str| Some((n.to_string(), u.to_string(), true));
        let energy = |n: &str, u: &str| Some((n.to_string(), u.to_string(), false));
        assert_eq!(
            companion("events_per_sec", "events/s", Direction::Higher),
            per_joule("events_per_joule", "events/J")
        );
        assert_eq!(
            companion("requests_per_sec", "req/s", Direction::Higher),
            per_joule("requests_per_joule", "req/J")
        );
        assert_eq!(
            companion("triad", "MB/s", Direction::Higher),
            per_joule("triad_per_joule", "MB/J")
        );
        assert_eq!(
            companion("ns_per_load", "ns", Direction::Lower),
            energy("nj_per_load", "nJ")
        );
        assert_eq!(
            companion("total_time", "s", Direction::Lower),
            energy("total_time_energy", "J")
        );
        assert_eq!(
            companion("latency_avg", "µs", Direction::Lower),
            energy("latency_avg_energy", "µJ")
        );
        assert_eq!(companion("events", "events", Direction::Higher), None);
        assert_eq!(companion("errors", "requests", Direction::Lower), None);
        assert_eq!(companion("odd", "/s", Direction::Higher), None);
    }
}
