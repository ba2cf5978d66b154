//! The case every UnixBench workload builds: one trial is one UnixBench
//! pass, `copies` copies of the program at once for `time` seconds, scored
//! as UnixBench's `Run` scores a pass.

use std::path::PathBuf;

use anyhow::Context;

use super::copies::{CopyCommand, run_copies};
use super::forkexec;
use super::libc_process;
use super::program::Program;
use super::score::combine;
use super::shell_script;
use crate::engine::{Case, Metric, ParamKind, ParamRole, ParamSpec, TrialContext, TrialOutput};
use crate::workloads::common::params::MAX_THREADS;
use crate::workloads::common::workdir::{ScratchDir, remove_scratch};

/// `copies`: UnixBench's `-c`.
pub fn copies_param() -> ParamSpec {
    ParamSpec {
        name: "copies",
        role: ParamRole::CpuCount,
        help: "copies of the program running at once, each its own process (UnixBench's -c; `all`: one per CPU)",
        kind: ParamKind::Threads { max: MAX_THREADS },
        default: "1",
    }
}

/// `time`: the program's duration; UnixBench's default for it.
pub fn time_param(default: &'static str) -> ParamSpec {
    ParamSpec {
        name: "time",
        role: ParamRole::TrialTime,
        help: "length of one pass in seconds (UnixBench's duration for this test by default)",
        kind: ParamKind::Seconds {
            min: 0.01,
            max: 3600.0,
        },
        default,
    }
}

/// A UnixBench case: the program, how many copies, how long.
pub struct UnixbenchCase {
    workload: &'static str,
    program: Program,
    copies: usize,
    seconds: f64,
    executable: PathBuf,
    /// Where to create the scratch directory, for programs using files.
    scratch_parent: Option<PathBuf>,
    scratch: Option<ScratchDir>,
}

impl UnixbenchCase {
    /// A case of `workload` running `copies` copies of `program` for
    /// `seconds` (its `copies` and `time` parameters). `scratch_parent` is
    /// the checked directory for a program that uses files.
    pub fn new(
        workload: &'static str,
        program: Program,
        copies: u64,
        seconds: f64,
        scratch_parent: Option<PathBuf>,
    ) -> anyhow::Result<Self> {
        let executable = super::copy_executable::copy_program().with_context(|| {
            format!("{workload}: cannot find sledge's own executable to start copies")
        })?;
        Ok(UnixbenchCase {
            workload,
            program,
            copies: copies as usize,
            seconds,
            executable,
            scratch_parent,
            scratch: None,
        })
    }

    fn command(&self) -> CopyCommand {
        let env = self.program.environment();
        CopyCommand {
            executable: self.executable.clone(),
            args: self.program.to_args(),
            seconds: self.seconds,
            cwd: self.scratch.as_ref().map(|s| s.path().to_path_buf()),
            env,
        }
    }
}

impl Case for UnixbenchCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        if let Some(parent) = &self.scratch_parent {
            let scratch = ScratchDir::create(parent, self.workload)?;
            match self.program {
                Program::Shell { .. } => shell_script::write_into(scratch.path())
                    .with_context(|| format!("{}: writing the scripts", self.workload))?,
                Program::Execl | Program::Spawn => forkexec::write_into(scratch.path())
                    .with_context(|| format!("{}: writing the fork/exec program", self.workload))?,
                _ => {}
            }
            self.scratch = Some(scratch);
        }
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        ctx.check_cancelled()?;
        // UnixBench syncs before every pass so that one test's writes are
        // not flushed during the next.
        libc_process::sync_all();
        let outcomes = run_copies(&self.command(), self.copies, &ctx.cancel)
            .with_context(|| format!("{} ({} copies)", self.workload, self.copies))?;
        let (name, unit, timebase) = self.program.headline();
        let score = combine(&outcomes, timebase)
            .with_context(|| format!("{}: the copies reported no time", self.workload))?;
        Ok(TrialOutput {
            metrics: vec![
                Metric::higher(name, unit, score),
                Metric::higher(format!("{name}_per_copy"), unit, score / self.copies as f64),
            ],
            latency_ns: None,
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        remove_scratch(&mut self.scratch)
    }
}
