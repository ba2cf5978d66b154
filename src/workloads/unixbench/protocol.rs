//! The protocol between the parent and a UnixBench copy, both sides of it:
//! the words on the copy's stdin and stdout, the [`Gate`] a copy waits at
//! for the common start, and its result line (see `copy_main` for the
//! sequence).
//!
//! It sits apart from `copy_main` (which runs a program) and `copies`
//! (which starts the copies) because every program's loop waits at the
//! gate: with the gate in `copy_main`, which calls every program, each
//! program's module and `copy_main` would import each other.

use std::io::{BufRead, Write};

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
