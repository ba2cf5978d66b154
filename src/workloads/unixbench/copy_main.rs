//! The copy's side of a UnixBench trial: a fresh sledge process started
//! with a hidden first argument runs one program, as UnixBench starts one
//! fresh process per copy.
//!
//! The protocol, on the copy's stdin and stdout (stderr goes to the same
//! pipe as stdout, so its text reaches the parent as diagnostics):
//!
//! 1. `sledge __sledge-unixbench-copy PARENT SECONDS PROGRAM [ARGS...]`
//!    sets itself up (forks its partner, writes and reads its files,
//!    calibrates) and prints [`READY`](super::protocol::READY).
//! 2. Once every copy is ready the parent writes `go` to each copy's stdin;
//!    end of input instead means "stop" (the parent gave up or died).
//! 3. The copy runs its loop for SECONDS, prints
//!    [`RESULT_PREFIX`](super::protocol::RESULT_PREFIX) with its count and
//!    seconds, and exits 0; on failure it prints the error and exits 1.
//!
//! A fresh process (rather than a thread, or a fork of sledge) matters for
//! fidelity: forking and exec'ing cost more in a large address space, and
//! UnixBench's programs are small single-threaded processes.

use super::program::Program;
use super::protocol::{COPY_MARKER, EXIT_NOT_RELEASED, Gate, NotReleased, report};
use super::score::Outcome;
use super::{context, dhrystone, execl, fcopy, pipe, shell, spawn, syscall, whetstone};

/// Runs a UnixBench copy when this process was started as one, and returns
/// its exit code; `None` for a normal sledge invocation. `main` calls it
/// first thing.
pub fn run_if_asked() -> Option<u8> {
    let mut args = std::env::args_os();
    let _program = args.next();
    let marker = args.next()?;
    if marker != COPY_MARKER {
        return None;
    }
    let rest: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    Some(copy_main(&rest))
}

/// A copy: `PARENT SECONDS PROGRAM [ARGS...]`.
fn copy_main(args: &[String]) -> u8 {
    match run(args) {
        Ok(()) => 0,
        Err(err) if err.is::<NotReleased>() => EXIT_NOT_RELEASED,
        Err(err) => {
            crate::say!("error: {err:#}");
            1
        }
    }
}

fn run(args: &[String]) -> anyhow::Result<()> {
    let [parent, seconds, program @ ..] = args else {
        anyhow::bail!("usage: {COPY_MARKER} PARENT SECONDS PROGRAM [ARGS...]");
    };
    let parent: libc::pid_t = parent.parse()?;
    crate::sys::child_process::die_with_parent(parent, libc::SIGKILL).map_err(|_| NotReleased)?;
    let seconds: f64 = seconds.parse()?;
    if !(seconds.is_finite() && seconds > 0.0) {
        anyhow::bail!("the time must be a positive number of seconds, not {seconds}");
    }
    let program = Program::from_args(program)?;
    let outcome = run_program(&program, seconds, &mut Gate::stdio())?;
    report(outcome)?;
    Ok(())
}

/// Runs one copy of `program` in this process: set-up, then
/// [`Gate::open`], then the timed loop for `seconds`. Execl does not
/// return on success: the process becomes the program it execs, whose
/// last image reports.
fn run_program(program: &Program, seconds: f64, gate: &mut Gate) -> anyhow::Result<Outcome> {
    match program {
        Program::Dhrystone => dhrystone::run_copy(seconds, gate),
        Program::Whetstone => whetstone::run_copy(seconds, gate),
        Program::Execl => execl::run_copy(seconds, gate),
        Program::FileCopy { buffer, max_blocks } => {
            fcopy::run_copy(*buffer, *max_blocks, seconds, gate)
        }
        Program::Pipe => pipe::run_copy(seconds, gate),
        Program::Context => context::run_copy(seconds, gate),
        Program::Spawn => spawn::run_copy(seconds, gate),
        Program::Syscall(calls) => syscall::run_copy(*calls, seconds, gate),
        Program::Shell { concurrent } => shell::run_copy(*concurrent, seconds, gate),
    }
}
