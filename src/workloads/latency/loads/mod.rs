//! Background loads that run while a latency is measured: what the machine
//! is busy with when an interactive task, or a timer thread, wants the CPU.
//!
//! Interbench's loads, with sledge's own generators: `cpu` (Burn),
//! `memory` (Memload, in RAM), `io` (Write and Read together), `hackbench`
//! (Hack), `http` (the built-in server under its load generator) and
//! `build` (a compile-like stream of short `cc` processes, standing in for
//! Interbench's simulated compile). Loads run as threads of sledge, and as
//! child processes for `hackbench` and `build`; each stops within a
//! fraction of a second of being told to and leaves nothing behind.

pub mod build;
pub mod cpu;
pub mod hackbench;
pub mod http;
pub mod io;
pub mod memory;

use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::{Context, anyhow, bail};

use crate::engine::params::format_size;
use crate::engine::{CancelToken, CaseEnv, ParamKind, ParamRole, ParamSet, ParamSpec, Params};
use crate::workloads::common::params::MAX_THREADS;
use crate::workloads::common::workdir::{self, ScratchDir};
use crate::workloads::sched::worker_processes;

/// How often the settle wait looks at the user's stop request.
const SETTLE_STEP: std::time::Duration = std::time::Duration::from_millis(20);

crate::param_choice! {
    /// What keeps the machine busy, as the `load` parameter names it.
    pub enum LoadKind {
        None = "none",
        Cpu = "cpu",
        Memory = "memory",
        Io = "io",
        Hackbench = "hackbench",
        Http = "http",
        Build = "build",
    }
}

crate::workload_params! {
    /// The parameters every workload with a background load takes.
    pub struct LoadParams {
        load: LoadKind = ParamSpec {
        name: "load",
        role: ParamRole::Other,
        help: "background load: cpu (spinning threads), memory (copying buffers beyond the caches), io (writes and uncached reads), hackbench, http (built-in server and generator), build (cc jobs)",
        kind: ParamKind::Choice(LoadKind::NAMES),
        default: "none",
        },
        load_threads: u64 = ParamSpec {
        name: "load_threads",
        role: ParamRole::Other,
        help: "threads (or jobs, or hackbench groups) of the background load (`all`: one per CPU of the run, as Interbench)",
        kind: ParamKind::Threads { max: MAX_THREADS },
        default: "all",
        },
        io_size: u64 = ParamSpec {
        name: "io_size",
        role: ParamRole::Other,
        help: "load=io: bytes of each of its two files (written, and read back from the disk)",
        kind: ParamKind::Size {
            min: 1 << 20,
            max: 1 << 40,
            power_of_two: false,
        },
        default: "256M",
        },
        settle: f64 = ParamSpec {
        name: "settle",
        role: ParamRole::Other,
        help: "how long the background load runs before the measurement starts (Interbench waits 1 s)",
        kind: ParamKind::Seconds {
            min: 0.0,
            max: 3600.0,
        },
        default: "1",
        },
        dir: String = workdir::dir_param(),
    }
}

/// The parameters every workload with a background load takes.
pub fn params() -> Vec<ParamSpec> {
    LoadParams::specs()
}

/// A load with its settings checked.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    pub kind: LoadKind,
    /// Threads, jobs or groups.
    pub threads: usize,
    /// Where `io` and `build` put their files (checked).
    dir: Option<PathBuf>,
    io_size: u64,
    /// Bytes per buffer of the `memory` load.
    memory_buffer: usize,
    /// The compiler of the `build` load.
    compiler: Option<PathBuf>,
    /// How long the load runs before a measurement starts.
    pub settle: std::time::Duration,
}

impl LoadPlan {
    /// Reads and checks the load parameters; every problem (no compiler, no
    /// room for the files, a task limit) is reported here, before anything
    /// runs.
    pub fn from_params(workload: &str, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<LoadPlan> {
        let p = LoadParams::from_set(p);
        let kind = p.load;
        let threads = p.load_threads as usize;
        let io_size = p.io_size;
        let mut plan = LoadPlan {
            kind,
            threads,
            dir: None,
            io_size,
            memory_buffer: 0,
            compiler: None,
            settle: std::time::Duration::from_secs_f64(p.settle),
        };
        match kind {
            LoadKind::None | LoadKind::Cpu | LoadKind::Http => {}
            LoadKind::Memory => {
                plan.memory_buffer =
                    memory::buffer_bytes(threads, env.total_cache_bytes, env.memory_bytes);
                if plan.memory_buffer < memory::MIN_BUFFER {
                    bail!(
                        "{workload}: load=memory with {threads} threads would get {} per buffer within an eighth of RAM; allowed is at least {}: lower load_threads",
                        format_size(plan.memory_buffer as u64),
                        format_size(memory::MIN_BUFFER as u64)
                    );
                }
            }
            LoadKind::Io => {
                plan.dir = Some(workdir::check_dir(workload, &p.dir, 2 * io_size)?);
            }
            LoadKind::Hackbench => {
                worker_processes::check_task_limit(hackbench::config(threads).tasks(), true)?;
            }
            LoadKind::Build => {
                plan.compiler = Some(find_compiler_for(workload)?);
                plan.dir = Some(workdir::check_dir(workload, &p.dir, 1 << 20)?);
            }
        }
        Ok(plan)
    }

    /// Creates the load's files (untimed): the scratch directory and, for
    /// `io`, the file to read; for `build`, the source.
    pub fn prepare(&self, workload: &str) -> anyhow::Result<PreparedLoad> {
        let scratch = match &self.dir {
            Some(dir) => Some(ScratchDir::create(dir, workload)?),
            None => None,
        };
        let prepared = PreparedLoad {
            plan: self.clone(),
            scratch,
        };
        match self.kind {
            LoadKind::Io => io::prepare(prepared.scratch_path(), self.io_size)?,
            LoadKind::Build => build::prepare(prepared.scratch_path())?,
            _ => {}
        }
        Ok(prepared)
    }
}

fn find_compiler_for(workload: &str) -> anyhow::Result<PathBuf> {
    build::find_compiler().map_err(|e| anyhow!("{workload}: {e}"))
}

/// A load whose files exist, ready to start (and to start again, trial
/// after trial). Its scratch directory is removed by [`remove`] or on drop.
///
/// [`remove`]: PreparedLoad::remove
#[derive(Debug)]
pub struct PreparedLoad {
    plan: LoadPlan,
    scratch: Option<ScratchDir>,
}

impl PreparedLoad {
    fn scratch_path(&self) -> &std::path::Path {
        self.scratch
            .as_ref()
            .expect("this load has a scratch directory")
            .path()
    }

    /// Starts the load's threads (and through them, its processes).
    pub fn start(&self) -> anyhow::Result<RunningLoad> {
        let plan = &self.plan;
        let n = plan.threads;
        let mut load = RunningLoad::new(plan.kind);
        match plan.kind {
            LoadKind::None => {}
            LoadKind::Cpu => {
                for i in 0..n {
                    load.spawn(i, cpu::burn_until_stopped)?;
                }
            }
            LoadKind::Memory => {
                let bytes = plan.memory_buffer;
                for i in 0..n {
                    load.spawn(i, move |stop| memory::copy_until_stopped(bytes, stop))?;
                }
            }
            LoadKind::Io => {
                let dir = Arc::new(self.scratch_path().to_path_buf());
                let size = plan.io_size;
                let d = dir.clone();
                load.spawn(0, move |stop| io::write_until_stopped(&d, size, stop))?;
                load.spawn(1, move |stop| io::read_until_stopped(&dir, stop))?;
            }
            LoadKind::Hackbench => {
                load.spawn(0, move |stop| hackbench::run_until_stopped(n, stop))?;
            }
            LoadKind::Http => {
                load.spawn(0, move |stop| http::serve_and_load_until_stopped(n, stop))?;
            }
            LoadKind::Build => {
                let dir = Arc::new(self.scratch_path().to_path_buf());
                let cc = Arc::new(plan.compiler.clone().expect("checked in from_params"));
                for job in 0..n {
                    let (dir, cc) = (dir.clone(), cc.clone());
                    load.spawn(job, move |stop| {
                        build::compile_until_stopped(&cc, &dir, job, stop)
                    })?;
                }
            }
        }
        Ok(load)
    }

    /// Starts the load and lets it run for its settle time (none without a
    /// load); `Err(Cancelled)` if the user stops meanwhile.
    pub fn start_and_settle(&self, cancel: &CancelToken) -> anyhow::Result<RunningLoad> {
        let load = self.start()?;
        if self.plan.kind != LoadKind::None {
            let until = std::time::Instant::now() + self.plan.settle;
            while std::time::Instant::now() < until {
                if cancel.is_cancelled() {
                    return Err(crate::engine::Cancelled.into());
                }
                if load.ended_early() {
                    // Stopping reports the thread's error, or the early end.
                    load.stop()?;
                    bail!("the background load ended during its settle time");
                }
                let left = until.saturating_duration_since(std::time::Instant::now());
                std::thread::sleep(SETTLE_STEP.min(left));
            }
        }
        Ok(load)
    }

    /// Removes the scratch directory and its files; idempotent.
    pub fn remove(&mut self) -> anyhow::Result<()> {
        match self.scratch.as_mut() {
            Some(scratch) => scratch.remove(),
            None => Ok(()),
        }
    }
}

/// A load that runs until [`stop`](RunningLoad::stop) (or drop).
pub struct RunningLoad {
    kind: LoadKind,
    stop: CancelToken,
    threads: Vec<JoinHandle<anyhow::Result<()>>>,
}

impl RunningLoad {
    fn new(kind: LoadKind) -> Self {
        RunningLoad {
            kind,
            stop: CancelToken::new(),
            threads: Vec::new(),
        }
    }

    fn spawn(
        &mut self,
        index: usize,
        body: impl FnOnce(&CancelToken) -> anyhow::Result<()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let stop = self.stop.clone();
        let handle = std::thread::Builder::new()
            .name(format!("sledge-load-{index}"))
            .spawn(move || body(&stop))
            .with_context(|| format!("starting a thread of the {} load", self.kind.as_str()))?;
        self.threads.push(handle);
        Ok(())
    }

    /// Whether a load thread has ended although nobody asked it to: the
    /// load is then not running as described.
    pub fn ended_early(&self) -> bool {
        self.threads.iter().any(|t| t.is_finished())
    }

    /// Stops the load and waits for it; a thread that failed (or ended
    /// before being told to) makes this an error.
    pub fn stop(mut self) -> anyhow::Result<()> {
        let early = self.ended_early();
        self.stop_and_join()?;
        if early {
            bail!(
                "the {} load stopped before the measurement ended",
                self.kind.as_str()
            );
        }
        Ok(())
    }

    fn stop_and_join(&mut self) -> anyhow::Result<()> {
        self.stop.cancel();
        let mut first_error = None;
        for thread in self.threads.drain(..) {
            let result = thread
                .join()
                .unwrap_or_else(|_| Err(anyhow!("a load thread panicked")));
            if let Err(e) = result {
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(e.context(format!("background load `{}`", self.kind.as_str()))),
            None => Ok(()),
        }
    }
}

impl Drop for RunningLoad {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}
