//! Every round in a fresh process: the executor the command line uses.
//!
//! A round must start from nothing for its measurement to be independent
//! of the others: its own memory placement (page colouring, huge pages,
//! NUMA first touch), its own threads' placement, its own heap, its own
//! file descriptors. A fresh process gives all of that at the price of an
//! exec (a few milliseconds), so the parent runs each round as
//! `sledge __round` with the job on its stdin, and the child runs it with
//! the engine's in-process executor and reports on its stdout, one JSON
//! line per event.
//!
//! Lifetime: the child asks the kernel for SIGTERM when its parent dies
//! (`PR_SET_PDEATHSIG`, between fork and exec, so that no moment is
//! left uncovered), so a killed sledge leaves no round running; a
//! Ctrl-C reaches both (the terminal signals the whole process group), and
//! the parent also forwards its own cancellation as SIGTERM, which the
//! child treats like Ctrl-C: stop, clean up, report.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

use crate::engine::{
    CancelToken, CaseEnv, InProcess, Metric, ParamSet, PlannedCase, ProcMonitor, Progress, Round,
    RoundExecutor, RoundOutcome, RoundRequest, ScriptedMonitor, TrialContext, TrialMonitor,
    TrialResult, Workload,
};
use crate::monitor::TrialHealth;

/// The hidden subcommand a round runs as.
pub const ROUND_SUBCOMMAND: &str = "__round";

/// With the test workloads enabled, makes every round see a quiet host.
pub const QUIET_HOST_VAR: &str = "SLEDGE_TEST_QUIET_HOST";

/// How often the parent checks for a cancellation to forward.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// What the parent sends the child.
#[derive(Debug, Serialize, Deserialize)]
pub struct RoundJob {
    /// Workload id.
    pub workload: String,
    /// Every parameter in text form, unredacted (a pipe, never stored):
    /// what a round's process of another build (`ab --a-sledge`, an
    /// older 32-bit sledge) resolves against its own parameters.
    pub params: BTreeMap<String, String>,
    /// The same parameters as the plan holds them, typed values
    /// serialized as such: what a round's process of this build reads,
    /// parsing nothing. Absent from an older sledge's job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<ParamSet>,
    /// What the workload may know about the run.
    pub env: CaseEnv,
    /// The CPUs the run may use.
    pub cpus: Vec<usize>,
    /// What the round is to do.
    pub request: RoundRequest,
}

/// One line the child writes.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RoundEvent {
    /// A trial ended (see [`Progress::trial_finished`]).
    Trial {
        counted: u32,
        warmup: bool,
        value: f64,
        unit: String,
    },
    /// The round ended.
    Done(WireOutcome),
}

/// [`RoundOutcome`] on the wire.
#[derive(Debug, Serialize, Deserialize)]
struct WireOutcome {
    trials: Vec<WireTrial>,
    warnings: Vec<String>,
    error: Option<String>,
    cancelled: bool,
    seconds: f64,
}

/// [`TrialResult`] on the wire: the histogram in its V2 + deflate form,
/// hex-encoded.
#[derive(Debug, Serialize, Deserialize)]
struct WireTrial {
    metrics: Vec<Metric>,
    histogram: Option<String>,
    seconds: f64,
    health: TrialHealth,
    replaced: bool,
}

/// Runs each round as `SLEDGE __round`, with the running sledge binary
/// unless [`Launch`] names another.
pub struct Subprocess {
    launch: Launch,
}

/// How a round's process is started, beyond `SLEDGE __round`: what a
/// side of `sledge ab` changes about it. The default changes nothing.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// Another sledge build to run the round with (`--a-sledge`); the
    /// running one when `None`.
    pub program: Option<PathBuf>,
    /// A command the round runs under, as its first words
    /// (`numactl --membind=1`, `nice -n 10`): it must run the rest of its
    /// command line.
    pub wrap: Vec<String>,
    /// Environment variables set for the round's process.
    pub env: Vec<(String, String)>,
    /// A cgroup directory (v1 or v2) the round's process joins before it
    /// runs, by writing itself to its `cgroup.procs`.
    pub cgroup: Option<PathBuf>,
    /// Pin the round's process to the round's CPUs
    /// ([`TrialContext::cpus`]) before it runs.
    pub pin: bool,
}

impl Subprocess {
    /// An executor that re-runs the current executable (found again for
    /// every round: the file may be replaced while a long run goes on).
    pub fn current() -> anyhow::Result<Self> {
        own_executable()?;
        Ok(Subprocess {
            launch: Launch::default(),
        })
    }

    /// An executor that starts each round as `launch` says.
    pub fn with_launch(launch: Launch) -> anyhow::Result<Self> {
        if launch.program.is_none() {
            own_executable()?;
        }
        Ok(Subprocess { launch })
    }
}

fn own_executable() -> anyhow::Result<std::path::PathBuf> {
    crate::sys::own_exe::own_executable()
        .map_err(|e| anyhow::anyhow!("cannot find sledge's own executable: {e}"))
}

impl RoundExecutor for Subprocess {
    fn run_round(&self, round: &Round<'_>) -> RoundOutcome {
        let Round {
            planned,
            request,
            env,
            ctx,
            progress,
        } = *round;
        let started = std::time::Instant::now();
        let job = RoundJob {
            workload: planned.workload.id().to_string(),
            params: planned.params.to_raw_strings(),
            values: Some(planned.params.clone()),
            env: env.clone(),
            cpus: ctx.cpus.clone(),
            request: request.clone(),
        };
        let program = match &self.launch.program {
            Some(program) => Ok(program.clone()),
            None => own_executable(),
        };
        match program
            .and_then(|program| run_child(&program, &self.launch, &job, &ctx.cancel, progress))
        {
            // The round's time as this process saw it, starting the child
            // and reaping it included: what another round costs.
            Ok(outcome) => RoundOutcome {
                seconds: started.elapsed().as_secs_f64(),
                ..outcome
            },
            Err(err) => RoundOutcome {
                cancelled: ctx.cancel.is_cancelled(),
                error: Some(format!("{err:#}")),
                seconds: started.elapsed().as_secs_f64(),
                ..RoundOutcome::default()
            },
        }
    }
}

fn run_child(
    program: &Path,
    launch: &Launch,
    job: &RoundJob,
    cancel: &CancelToken,
    progress: &dyn Progress,
) -> anyhow::Result<RoundOutcome> {
    let mut command = match launch.wrap.split_first() {
        Some((wrapper, args)) => {
            let mut command = Command::new(wrapper);
            command.args(args).arg(program);
            command
        }
        None => Command::new(program),
    };
    command
        .arg(ROUND_SUBCOMMAND)
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    // Everything the child does between fork and exec is prepared here:
    // no allocation may happen there.
    let cgroup_procs = match &launch.cgroup {
        Some(dir) => Some(CString::new(
            dir.join("cgroup.procs").into_os_string().into_vec(),
        )?),
        None => None,
    };
    let cpu_set = launch.pin.then(|| crate::sys::affinity::cpu_set(&job.cpus));
    // The child asks for SIGTERM when this process dies, before it even
    // runs sledge: asked later, a parent killed in between would leave it
    // running for good. SIGTERM, not SIGKILL: the round cleans up after
    // itself. If the parent is already gone, the error ends the child
    // before exec (with status 1).
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls (prctl, getppid, open, write,
    // close, sched_setaffinity) run between fork and exec, on data
    // prepared before the fork.
    unsafe {
        command.pre_exec(move || {
            crate::sys::child_process::die_with_parent(parent, libc::SIGTERM)?;
            if let Some(procs) = &cgroup_procs {
                // "0" is the writing process itself, in v1 and v2.
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                let error = std::io::Error::last_os_error();
                libc::close(fd);
                if written != 1 {
                    return Err(error);
                }
            }
            if let Some(set) = &cpu_set
                && libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|e| {
        let what = match (launch.wrap.first(), &launch.cgroup) {
            (Some(wrapper), _) => format!("{wrapper} {}", program.display()),
            (None, Some(cgroup)) => format!("{} in cgroup {}", program.display(), cgroup.display()),
            (None, None) => program.display().to_string(),
        };
        anyhow::anyhow!("cannot start a round's process ({what}): {e}")
    })?;
    let pid = child.id() as libc::pid_t;

    // Forward a cancellation as SIGTERM until the child is done.
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (done, cancel) = (done.clone(), cancel.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                if cancel.is_cancelled() {
                    // SAFETY: kill with a pid we spawned and have not yet
                    // waited for, so it cannot have been reused.
                    unsafe { libc::kill(pid, libc::SIGTERM) };
                    return;
                }
                std::thread::sleep(CANCEL_POLL);
            }
        })
    };

    let result = (|| {
        {
            let mut stdin = child.stdin.take().expect("stdin is piped");
            // A process that ends without reading its job (a program that
            // is not sledge, given as --a-sledge) closes the pipe: that is
            // said below from its exit status, not as a broken pipe.
            let sent = serde_json::to_writer(&mut stdin, job)
                .map_err(std::io::Error::from)
                .and_then(|()| stdin.write_all(b"\n"));
            match sent {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
                _ => {}
            }
        }
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut outcome = None;
        for line in BufReader::new(stdout).lines() {
            let line = line?;
            match serde_json::from_str::<RoundEvent>(&line) {
                Ok(RoundEvent::Trial {
                    counted,
                    warmup,
                    value,
                    unit,
                }) => progress.trial_finished(counted, warmup, value, &unit),
                Ok(RoundEvent::Done(wire)) => outcome = Some(from_wire(wire)?),
                // Anything else a workload printed is passed on.
                Err(_) => crate::say!("{line}"),
            }
        }
        Ok::<_, anyhow::Error>(outcome)
    })();
    // Reap the child even if reading failed, so none is left behind.
    let status = child.wait();
    done.store(true, Ordering::SeqCst);
    let _ = watcher.join();

    match result? {
        Some(outcome) => Ok(outcome),
        None => {
            let status = status?;
            if cancel.is_cancelled() {
                Ok(RoundOutcome {
                    cancelled: true,
                    ..RoundOutcome::default()
                })
            } else {
                anyhow::bail!(
                    "the round's process ({}) ended without a result ({status})",
                    program.display()
                )
            }
        }
    }
}

fn from_wire(wire: WireOutcome) -> anyhow::Result<RoundOutcome> {
    let mut trials = Vec::with_capacity(wire.trials.len());
    for t in wire.trials {
        let histogram = match t.histogram {
            Some(hex) => {
                let bytes = hex_decode(&hex)?;
                Some(
                    Deserializer::new()
                        .deserialize(&mut bytes.as_slice())
                        .map_err(|e| anyhow::anyhow!("a round sent a bad histogram: {e:?}"))?,
                )
            }
            None => None,
        };
        trials.push(TrialResult {
            metrics: t.metrics,
            histogram,
            seconds: t.seconds,
            health: t.health,
            replaced: t.replaced,
        });
    }
    Ok(RoundOutcome {
        trials,
        warnings: wire.warnings,
        error: wire.error,
        cancelled: wire.cancelled,
        seconds: wire.seconds,
    })
}

fn to_wire(outcome: RoundOutcome) -> anyhow::Result<WireOutcome> {
    let mut trials = Vec::with_capacity(outcome.trials.len());
    for t in outcome.trials {
        let histogram = match &t.histogram {
            Some(h) => {
                let mut bytes = Vec::new();
                V2DeflateSerializer::new()
                    .serialize(h, &mut bytes)
                    .map_err(|e| anyhow::anyhow!("cannot serialize a histogram: {e:?}"))?;
                Some(hex_encode(&bytes))
            }
            None => None,
        };
        trials.push(WireTrial {
            metrics: t.metrics,
            histogram,
            seconds: t.seconds,
            health: t.health,
            replaced: t.replaced,
        });
    }
    Ok(WireOutcome {
        trials,
        warnings: outcome.warnings,
        error: outcome.error,
        cancelled: outcome.cancelled,
        seconds: outcome.seconds,
    })
}

fn hex_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hex_decode(text: &str) -> anyhow::Result<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        anyhow::bail!("a round sent hex of odd length");
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&text[i..i + 2], 16)
                .map_err(|_| anyhow::anyhow!("a round sent bad hex"))
        })
        .collect()
}

/// Progress of the child: each trial as one line on stdout.
struct LineProgress;

impl Progress for LineProgress {
    fn trial_finished(&self, counted: u32, warmup: bool, primary: f64, unit: &str) {
        emit(&RoundEvent::Trial {
            counted,
            warmup,
            value: primary,
            unit: unit.to_string(),
        });
    }
}

/// The case a job asks for: the plan's typed values where they fit this
/// build's workload (a job from this sledge), else the text resolved
/// against this build's parameters as the command line's would be, with
/// defaults for what the text lacks (a job from another build, older or
/// newer, whose parameters may differ).
fn job_params(
    workload: &'static dyn Workload,
    text: &BTreeMap<String, String>,
    values: Option<&ParamSet>,
    cpus: usize,
) -> anyhow::Result<ParamSet> {
    if let Some(values) = values
        && values
            .check_fits(workload.id(), &workload.params(), |name| {
                workload.takes_param(name)
            })
            .is_ok()
    {
        return Ok(values.clone());
    }
    let assignments = text
        .iter()
        .map(|(k, v)| (k.clone(), vec![v.clone()]))
        .collect();
    crate::engine::params::resolve_cases(
        workload.id(),
        &workload.params_given(&assignments),
        &assignments,
        cpus,
    )?
    .into_iter()
    .next()
    .ok_or_else(|| anyhow::anyhow!("the round's parameters resolve to no case"))
}

fn emit(event: &RoundEvent) {
    let mut out = std::io::stdout().lock();
    // A parent that went away gets SIGTERM'd children; nothing to report to.
    if serde_json::to_writer(&mut out, event).is_ok() {
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
}

/// The child's side: reads a [`RoundJob`] from stdin, runs it in this
/// process and writes its events to stdout. `cancel` is set by the
/// caller's signal handler.
pub fn serve_round(cancel: &CancelToken) -> anyhow::Result<()> {
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    // serde's message may quote a value of the job: masked.
    let job: RoundJob = serde_json::from_str(&line).map_err(|e| {
        anyhow::anyhow!(
            "{ROUND_SUBCOMMAND} expects a round job on stdin: {}",
            crate::secrets::redact(&e.to_string())
        )
    })?;
    let workload = crate::workloads::find(&job.workload)
        .ok_or_else(|| anyhow::anyhow!("unknown workload `{}`", job.workload))?;
    let params = job_params(
        workload,
        &job.params,
        job.values.as_ref(),
        job.env.cpus.len(),
    )?;
    let planned = PlannedCase { workload, params };
    let ctx = TrialContext {
        cpus: job.cpus,
        cancel: cancel.clone(),
        round: job.request.round,
        shared: job.request.shared.clone(),
    };
    // Tests of the whole command line may ask for a host that is always
    // quiet, so that their verdicts do not depend on this machine's load;
    // only together with the test workloads, never in a user's run.
    let quiet = ScriptedMonitor::quiet();
    let monitor: &dyn TrialMonitor =
        if crate::workloads::scripted::enabled() && std::env::var_os(QUIET_HOST_VAR).is_some() {
            &quiet
        } else {
            &ProcMonitor
        };
    let executor = InProcess { monitor };
    let outcome = executor.run_round(&Round {
        planned: &planned,
        request: &job.request,
        env: &job.env,
        ctx: &ctx,
        progress: &LineProgress,
    });
    emit(&RoundEvent::Done(to_wire(outcome)?));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ParamValue;

    /// `cpu.primes` resolved with `threads=all` on 2 CPUs, as the plan
    /// holds it.
    fn planned_primes() -> (&'static dyn Workload, ParamSet) {
        let workload = crate::workloads::find("cpu.primes").unwrap();
        let set = crate::engine::test_fixtures::one_case(workload, &[("threads", "all")], 2);
        (workload, set)
    }

    #[test]
    fn a_job_from_this_sledge_is_read_as_its_values() {
        let (workload, set) = planned_primes();
        let got = job_params(workload, &set.to_raw_strings(), Some(&set), 2).unwrap();
        // The text says 2; the values keep that it was `all`.
        assert_eq!(got, set);
        assert_eq!(got.given_as_all(), ["threads"]);
    }

    #[test]
    fn a_job_from_another_build_is_resolved_from_its_text() {
        let (workload, set) = planned_primes();
        let text = set.to_raw_strings();
        // An older sledge sends no values.
        let older = job_params(workload, &text, None, 2).unwrap();
        assert_eq!(older.to_strings(), set.to_strings());
        // A newer one's values name a parameter this build lacks: the
        // text, which names only this build's, is what is read.
        let mut values: BTreeMap<String, ParamValue> = set
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        values.insert("gained_later".into(), ParamValue::Int(1));
        let newer = ParamSet::from_values(values);
        let got = job_params(workload, &text, Some(&newer), 2).unwrap();
        assert_eq!(got.to_strings(), set.to_strings());
        // Text this build refuses is an error naming it.
        let mut bad = text.clone();
        bad.insert("threads".into(), "none".into());
        let err = job_params(workload, &bad, None, 2).unwrap_err().to_string();
        assert!(err.contains("threads"), "{err}");
    }

    #[test]
    fn hex_round_trips() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(hex_decode(&hex_encode(&bytes)).unwrap(), bytes);
        assert!(hex_decode("abc").is_err());
        assert!(hex_decode("zz").is_err());
    }

    #[test]
    fn an_outcome_survives_the_wire() {
        let mut histogram = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        histogram.record(1234).unwrap();
        histogram.record(99_999).unwrap();
        let outcome = RoundOutcome {
            trials: vec![TrialResult {
                metrics: vec![Metric::higher("events_per_sec", "events/s", 1234.5678)],
                histogram: Some(histogram.clone()),
                seconds: 0.5,
                health: TrialHealth {
                    steal_pct: 3.5,
                    clock_mhz: Some(3100.5),
                    clock_source: Some(crate::monitor::ClockSource::AperfMperf),
                    throttle_events: Some(2),
                    energy_joules: Some(12.25),
                    power_watts: Some(24.5),
                    flags: vec![crate::monitor::Disturbance::Throttled],
                    ..TrialHealth::default()
                },
                replaced: true,
            }],
            warnings: vec!["w".into()],
            error: Some("e".into()),
            cancelled: false,
            seconds: 1.25,
        };
        let line = serde_json::to_string(&RoundEvent::Done(to_wire(outcome).unwrap())).unwrap();
        let RoundEvent::Done(wire) = serde_json::from_str(&line).unwrap() else {
            panic!("not a done event: {line}");
        };
        let back = from_wire(wire).unwrap();
        let trial = &back.trials[0];
        assert_eq!(trial.metrics[0].value, 1234.5678);
        assert_eq!(trial.metrics[0].unit, "events/s");
        assert_eq!(trial.histogram.as_ref().unwrap(), &histogram);
        assert_eq!(trial.health.steal_pct, 3.5);
        // The hardware figures and the flag travel with the trial.
        assert_eq!(trial.health.clock_mhz, Some(3100.5));
        assert_eq!(trial.health.throttle_events, Some(2));
        assert_eq!(trial.health.energy_joules, Some(12.25));
        assert_eq!(trial.health.flags, [crate::monitor::Disturbance::Throttled]);
        assert!(trial.replaced);
        assert_eq!((back.error.as_deref(), back.seconds), (Some("e"), 1.25));
    }
}
