//! The copy's side of a UnixBench trial: a fresh sledge process started
//! with a hidden first argument runs one program, as UnixBench starts one
//! fresh process per copy.
//!
//! The protocol, on the copy's stdin and stdout (stderr goes to the same
//! pipe as stdout, so its text reaches the parent as diagnostics):
//!
//! 1. `sledge __sledge-unixbench-copy PARENT SECONDS PROGRAM [ARGS...]`
//!    sets itself up (forks its partner, writes and reads its files,
//!    calibrates) and prints [`READY`].
//! 2. Once every copy is ready the parent writes `go` to each copy's stdin;
//!    end of input instead means "stop" (the parent gave up or died).
//! 3. The copy runs its loop for SECONDS, prints [`RESULT_PREFIX`] with its
//!    count and seconds, and exits 0; on failure it prints the error and
//!    exits 1.
//!
//! A fresh process (rather than a thread, or a fork of sledge) matters for
//! fidelity: forking and exec'ing cost more in a large address space, and
//! UnixBench's programs are small single-threaded processes.

use std::io::{BufRead, Write};

use super::process;
use super::program::Program;
use super::score::Outcome;

/// The hidden first argument that makes sledge run one UnixBench copy.
pub const COPY_MARKER: &str = "__sledge-unixbench-copy";

/// The line a copy prints when it is set up and waits for the start.
pub const READY: &str = "sledge-copy ready";

/// The start of the line a copy prints with its outcome: `count seconds`.
pub const RESULT_PREFIX: &str = "sledge-copy result ";

/// The word the parent writes to release a ready copy.
pub const GO: &str = "go";

/// Exit code of a copy that was never released (the parent stopped).
pub const EXIT_NOT_RELEASED: u8 = 3;

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
            eprintln!("error: {err:#}");
            1
        }
    }
}

fn run(args: &[String]) -> anyhow::Result<()> {
    let [parent, seconds, program @ ..] = args else {
        anyhow::bail!("usage: {COPY_MARKER} PARENT SECONDS PROGRAM [ARGS...]");
    };
    let parent: libc::pid_t = parent.parse()?;
    process::die_with_parent(parent).map_err(|_| NotReleased)?;
    let seconds: f64 = seconds.parse()?;
    if !(seconds.is_finite() && seconds > 0.0) {
        anyhow::bail!("the time must be a positive number of seconds, not {seconds}");
    }
    let program = Program::from_args(program)?;
    let outcome = program.run_copy(seconds, &mut Gate::stdio())?;
    report(outcome)?;
    Ok(())
}

/// The start was not given: the parent closed the copy's input.
#[derive(Debug, thiserror::Error)]
#[error("the copy was not released")]
pub struct NotReleased;

/// Where a copy waits for the common start.
pub struct Gate {
    stdio: bool,
}

impl Gate {
    /// The protocol's gate: print [`READY`], wait for [`GO`] on stdin.
    pub fn stdio() -> Self {
        Gate { stdio: true }
    }

    /// A gate that opens at once, for running a program's loop in-process
    /// (tests).
    pub fn open_at_once() -> Self {
        Gate { stdio: false }
    }

    /// Says the copy is ready and waits until the parent releases it.
    pub fn open(&mut self) -> anyhow::Result<()> {
        if !self.stdio {
            return Ok(());
        }
        let mut out = std::io::stdout().lock();
        writeln!(out, "{READY}")?;
        out.flush()?;
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        if line.trim() == GO {
            Ok(())
        } else {
            Err(NotReleased.into())
        }
    }
}

/// Prints a copy's outcome in the protocol's form.
pub fn report(outcome: Outcome) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{RESULT_PREFIX}{} {}", outcome.count, outcome.seconds)?;
    out.flush()
}

/// Reads a result line's `count seconds`; `None` if malformed.
pub fn parse_result(line: &str) -> Option<Outcome> {
    let rest = line.strip_prefix(RESULT_PREFIX)?;
    let mut words = rest.split_ascii_whitespace();
    let count: f64 = words.next()?.parse().ok()?;
    let seconds: f64 = words.next()?.parse().ok()?;
    (count.is_finite() && count >= 0.0 && seconds.is_finite() && seconds > 0.0)
        .then_some(Outcome { count, seconds })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_round_trip() {
        let outcome = Outcome {
            count: 1234567.0,
            seconds: 10.000123,
        };
        let line = format!("{RESULT_PREFIX}{} {}", outcome.count, outcome.seconds);
        assert_eq!(parse_result(&line), Some(outcome));
        assert_eq!(parse_result("sledge-copy result 12"), None);
        assert_eq!(parse_result("sledge-copy result 12 0"), None);
        assert_eq!(parse_result("sledge-copy result NaN 1"), None);
        assert_eq!(parse_result("hello"), None);
    }
}
