//! The Workload trait: the one seam every workload family plugs into.
//!
//! A workload knows how to exercise the system and nothing about
//! repetitions, statistics or storage. It is split in two: [`Workload`]
//! describes a family member (its id, version and parameters) and builds a
//! [`Case`] from validated parameters; the case prepares, runs trials and
//! cleans up. The engine owns warm-up, repetition, statistics and cleanup
//! guarantees.

use std::collections::BTreeMap;
use std::path::PathBuf;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::context::TrialContext;
use super::index_entry::IndexEntry;
use super::params::{ParamRole, ParamSet, ParamSpec};
use super::run_section::RunSection;
use crate::results::Unit;
use crate::stats::Direction;
pub use crate::store::later_params::LaterParam;

/// One workload (`cpu.primes`, `memory.block`, ...).
pub trait Workload: Sync {
    /// Stable dotted name, used on the command line and in the store.
    fn id(&self) -> &'static str;
    /// Bumped whenever the workload's numbers stop being comparable with
    /// those of older versions.
    fn version(&self) -> u32;
    /// One line saying what it measures (and what it is compatible with).
    fn summary(&self) -> &'static str;
    /// Its parameters, in the order they are shown and swept.
    fn params(&self) -> Vec<ParamSpec>;
    /// The parameters of its cases given these assignments (name to the
    /// values typed): [`Workload::params`] for every workload but one
    /// whose values name parameters of their own (`command`'s `make
    /// -j{jobs}` adds `jobs`). What a case is resolved against, on the
    /// command line and in a round's process alike.
    fn params_given(&self, _assignments: &BTreeMap<String, Vec<String>>) -> Vec<ParamSpec> {
        self.params()
    }
    /// Whether a parameter of this name may be given to it at all: one of
    /// its parameters, or for a workload whose values name parameters of
    /// their own, any name (resolving the case then refuses one its
    /// values do not use).
    fn takes_param(&self, name: &str) -> bool {
        self.params().iter().any(|p| p.name == name)
    }
    /// Builds a case from validated parameters. Checks that involve several
    /// parameters or the host (free memory, file-descriptor limits) belong
    /// here, before anything runs: a run builds every one of its cases
    /// before the first runs, to refuse one that could not, and builds each
    /// again when its turn comes. So `build` only checks and describes; it
    /// must not start, create or allocate anything that `cleanup` would
    /// have to undo (that is `prepare`'s work).
    fn build(&self, params: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>>;
    /// About how long one trial of a case with these parameters runs on
    /// the host `env` describes, in seconds, for the plan made before a
    /// run (`sledge plan`) where this host has no history of the case;
    /// `None` when the workload cannot say. The default reads the
    /// parameter of role [`ParamRole::TrialTime`] (`time`), the length of
    /// a trial for the workloads that have one;
    /// a workload doing a fixed amount of work says what that amount
    /// takes at a rate it names (sized from `env` where its work is).
    fn trial_seconds(&self, params: &ParamSet, _env: &CaseEnv) -> Option<f64> {
        params
            .seconds_of(&self.params(), ParamRole::TrialTime)
            .filter(|s| *s > 0.0)
    }
    /// About how long the untimed work of a case with these parameters
    /// takes on the host `env` describes ([`UntimedWork`]: once before its
    /// first round, and with every trial), for the plan made where this
    /// host has no history of the case; with history, the rounds' stored
    /// wall times hold it already. None by default: a workload whose
    /// preparation or per-trial set-up costs more than the round's start
    /// (unpacking a source, configuring a build) says so, or the plan
    /// leaves that time out.
    fn untimed_work(&self, _params: &ParamSet, _env: &CaseEnv) -> UntimedWork {
        UntimedWork::default()
    }
    /// How many CPUs a case with these parameters keeps busy at once, for
    /// `sledge ab --duet`, which runs two cases at the same time on
    /// disjoint halves of the CPUs; `None` when it uses more than its
    /// parameters say (a server and its load generator, load hogs, a
    /// process per task). The default: the largest of its parameters of
    /// role [`ParamRole::CpuCount`] (`threads`, `copies`, `jobs`,
    /// `clients`; `all` is the CPU count), 1 without one.
    fn cpus_used(&self, params: &ParamSet) -> Option<usize> {
        let used = params
            .counts_of(&self.params(), ParamRole::CpuCount)
            .into_iter()
            .max()
            .unwrap_or(1);
        Some(used)
    }

    // What the store, the reports and the CLI ask a workload, so that none
    // of them matches its id (each has a default that asks for nothing).

    /// Parameters the workload gained after runs were stored without them,
    /// with the default those older runs in effect ran (see
    /// [`LaterParam`]); none by default.
    fn later_params(&self) -> &'static [LaterParam] {
        &[]
    }
    /// The data a case with these parameters can share with the other
    /// rounds and cases of the run naming the same (a database's loaded
    /// tables, where its transactions keep their shape), as a key; `None`,
    /// the default, when each round prepares its own. See
    /// [`super::shared_data`].
    fn shared_key(&self, _params: &ParamSet) -> Option<String> {
        None
    }
    /// Prepares the data [`Workload::shared_key`] names, in the process
    /// that runs the plan, before the first round needing it; each round's
    /// context then says where it is ([`TrialContext::shared`]). Called
    /// only for a case with a key. A cancellation while preparing returns
    /// [`super::Cancelled`].
    fn prepare_shared(
        &self,
        _params: &ParamSet,
        _env: &CaseEnv,
        _ctx: &TrialContext,
    ) -> anyhow::Result<Box<dyn super::shared_data::SharedPreparation>> {
        anyhow::bail!("{}: has no data to share between rounds", self.id())
    }
    /// A database server a case with these parameters loads, read once
    /// when the run starts: its name as shown (no password) and its
    /// version and key settings, stored with the host. `None` for most
    /// workloads.
    fn server_settings(&self, _params: &ParamSet) -> Option<(String, BTreeMap<String, String>)> {
        None
    }
    /// The directories a case with these parameters makes its scratch
    /// directories in, which the next run sweeps for what a killed sledge
    /// left there. The default reads the parameter of role
    /// [`ParamRole::ScratchDir`] (`dir`), the directory the workloads that
    /// write files have.
    fn scratch_parents(&self, params: &ParamSet) -> Vec<PathBuf> {
        params
            .texts_of(&self.params(), ParamRole::ScratchDir)
            .into_iter()
            .map(PathBuf::from)
            .collect()
    }
    /// What a case with these parameters stands for in the score index
    /// its family keeps (UnixBench's System Benchmarks Index); `None`, the
    /// default, for a case of no index. A stored case's parameters are
    /// read back into a set first ([`super::params::stored_set`]), so that
    /// the workload reads its own typed struct (`from_set`) here as it
    /// does in `build`, not values by name.
    fn index_entry(&self, _params: &ParamSet) -> Option<IndexEntry> {
        None
    }
    /// The section of a run's report that the workload's family adds when
    /// the run has its cases (UnixBench's index after the results); the
    /// report shows each section once however many of its workloads ran.
    /// `None` by default.
    fn run_section(&self) -> Option<&'static dyn RunSection> {
        None
    }

    // The reports' view of the workload.

    /// The table a sweep over two of its parameters prints as by default
    /// (`--pivot` chooses another): the parameter down the rows and the
    /// one across the columns, as the classic tool's own table has them
    /// (openssl speed: algorithm down, block size across). `None`: no
    /// natural table; its sweeps print as lists.
    fn pivot(&self) -> Option<(&'static str, &'static str)> {
        None
    }
    /// Whether the HTML report draws the latency percentile spectrum of
    /// its cases from their stored histograms (a line from p0 to the
    /// deepest percentile the sample count supports): for workloads whose
    /// histogram is the latency of the requests a client waits for, as
    /// wrk's and HdrHistogram's plots show it. `false` by default.
    fn latency_spectrum(&self) -> bool {
        false
    }
}

/// Untimed work a case does besides its timed trials, seconds (see
/// [`Workload::untimed_work`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UntimedWork {
    /// Once, in the case's first round: what later rounds and runs find
    /// done (a source unpacked into a cache that keeps it).
    pub once_seconds: f64,
    /// With every trial, warm-ups included: the untimed set-up before its
    /// timed part (configuring a fresh build directory).
    pub per_trial_seconds: f64,
}

/// A case waiting to run: the workload and its validated parameters.
pub struct PlannedCase {
    /// The workload.
    pub workload: &'static dyn Workload,
    /// Its parameters.
    pub params: ParamSet,
}

impl PlannedCase {
    /// The case as a user would type it.
    pub fn label(&self) -> String {
        crate::results::case_label(self.workload.id(), &self.params.to_strings())
    }

    /// The case with only the parameters away from their defaults: what a
    /// plan's row or a warning shows (`cpu.primes threads=2`).
    pub fn short_label(&self) -> String {
        let values = self.params.to_strings();
        let specs = self.workload.params();
        let mut label = self.workload.id().to_string();
        for spec in &specs {
            if let Some(value) = values.get(spec.name)
                && value != spec.default
            {
                label.push_str(&format!(" {}={value}", spec.name));
            }
        }
        // Parameters its values named (`command`'s placeholders) have no
        // default to leave out.
        for (name, value) in &values {
            if !specs.iter().any(|s| s.name == name) {
                label.push_str(&format!(" {name}={value}"));
            }
        }
        label
    }
}

/// What a workload may know about the run when it builds a case.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseEnv {
    /// The CPUs the run may use (after `--cpus`), in order.
    pub cpus: Vec<usize>,
    /// Total bytes of data and unified caches that the probe found.
    pub total_cache_bytes: u64,
    /// Total memory of the host, bytes.
    pub memory_bytes: u64,
}

/// A workload with every parameter fixed.
pub trait Case: Send {
    /// Untimed set-up: create files, start servers, fill buffers.
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        Ok(())
    }
    /// One timed repetition. The first metric of the output is the case's
    /// **headline**: the one number a reader wants per case (its throughput
    /// where it has one: `events_per_sec`, `mib_per_sec`, `triad_mb_per_sec`,
    /// `requests_per_sec`; else its latency: `ns_per_load`). The summary
    /// table shows it alone, sweeps scale it, and the engine repeats trials
    /// until its confidence interval is tight.
    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput>;
    /// Always called once `prepare` was attempted, also after an error or a
    /// cancellation; must leave nothing behind.
    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        Ok(())
    }
    /// Warnings about the case that the user should see (for example a data
    /// set smaller than RAM, or what the trials showed), collected after the
    /// trials.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether each trial already begins with an untimed warm-up of its
    /// own (STREAM's discarded first pass), so that the engine's warm-up
    /// trials would only repeat it at full cost.
    fn warms_up_itself(&self) -> bool {
        false
    }
}

/// One named value a trial yields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Name in snake case with the unit's meaning (`events_per_sec`).
    pub name: String,
    /// Unit as shown to users (`events/s`, `MiB/s`, `ms`).
    pub unit: Unit,
    /// Which way is better.
    pub direction: Direction,
    /// The measured value.
    pub value: f64,
}

impl Metric {
    /// A metric where higher is better. `unit` is a [`Unit`] or its text
    /// (`"events/s"`).
    pub fn higher(name: impl Into<String>, unit: impl Into<Unit>, value: f64) -> Self {
        Self::directed(name.into(), unit.into(), Direction::Higher, value)
    }

    /// A metric where lower is better. `unit` is a [`Unit`] or its text
    /// (`"ms"`).
    pub fn lower(name: impl Into<String>, unit: impl Into<Unit>, value: f64) -> Self {
        Self::directed(name.into(), unit.into(), Direction::Lower, value)
    }

    /// The metric, checked against its unit where the unit says which way
    /// is better (a rate higher, a time or an energy lower): a workload
    /// that says otherwise has a bug that would turn every verdict on the
    /// metric around, which the tests (debug builds) catch on the first
    /// trial. A unit of no kind (`lps`, `%`) leaves the choice to the
    /// workload.
    fn directed(name: String, unit: Unit, direction: Direction, value: f64) -> Self {
        debug_assert!(
            unit.natural_direction().is_none_or(|d| d == direction),
            "metric `{name}` in {unit} is {direction:?}-is-better, against its unit"
        );
        Metric {
            name,
            unit,
            direction,
            value,
        }
    }
}

/// What one trial returns.
#[derive(Debug, Default)]
pub struct TrialOutput {
    /// The metrics, the headline first (see [`Case::trial`]).
    pub metrics: Vec<Metric>,
    /// Latency of individual operations in nanoseconds, where the workload
    /// has operations; histograms of all trials are merged per case.
    pub latency_ns: Option<Histogram<u64>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metric_takes_its_unit_as_text_or_as_a_unit() {
        let rate = Metric::higher("events_per_sec", "events/s", 1.0);
        assert_eq!(rate.unit, Unit::of("events/s"));
        let parsed = Metric::lower("latency", Unit::parse(String::from("ms")), 1.0);
        assert_eq!(parsed.unit.natural_direction(), Some(Direction::Lower));
        // A unit of no kind: the workload says.
        assert_eq!(Metric::lower("x", "lps", 1.0).direction, Direction::Lower);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "against its unit")]
    fn a_time_where_higher_is_better_is_a_bug() {
        let _ = Metric::higher("seconds", "s", 1.0);
    }
}
