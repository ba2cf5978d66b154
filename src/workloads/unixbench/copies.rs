//! The parent's side of a UnixBench trial: start N copies of a program at
//! once, each its own fresh process, release them together once all are
//! set up, collect what each measured, and leave no process behind.
//!
//! Every copy and everything it starts (a context partner, spawned
//! children, shells and their commands) is in one new process group, so
//! one `kill` stops them all: on an error, on a cancellation (checked every
//! [`POLL_INTERVAL`]) and when the copies overrun their time limits. Each
//! copy also asks to be killed if sledge dies (see
//! [`crate::sys::child_process::die_with_parent`]). A copy's stdout and stderr share one
//! pipe: protocol lines are read as such, anything else is kept to explain
//! a failure.

use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};

use super::libc_process;
use super::protocol::{self, COPY_MARKER, GO, READY, RESULT_PREFIX};
use super::score::Outcome;
use crate::engine::{CancelToken, Cancelled};

/// How often a waiting parent looks at the cancel flag and the clock.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// The most time copies get to set themselves up (fork a partner, write
/// their files, calibrate) before the start.
pub const READY_LIMIT: Duration = Duration::from_secs(120);

/// Lines of a failed copy's output kept for the error message.
const KEPT_LINES: usize = 20;

/// What to start in each copy.
#[derive(Debug, Clone)]
pub struct CopyCommand {
    /// The sledge binary that runs copies (see [`super::copy_program`]).
    pub executable: PathBuf,
    /// The program and its arguments ([`super::program::Program::to_args`]).
    pub args: Vec<String>,
    /// The duration of the timed loop.
    pub seconds: f64,
    /// The copies' working directory, if not inherited.
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
}

impl CopyCommand {
    /// The most time the copies get from the start until all have reported
    /// and exited: twice the duration plus 30 s (a loop iteration can run
    /// long on a loaded host; none should run for the whole duration).
    pub fn finish_limit(&self) -> Duration {
        Duration::from_secs_f64(self.seconds * 2.0 + 30.0)
    }
}

/// Runs `copies` copies and returns each one's outcome, in copy order.
/// Fails with [`Cancelled`] when `cancel` is set; every copy and its
/// descendants are gone when this returns, whatever the result.
pub fn run_copies(
    command: &CopyCommand,
    copies: usize,
    cancel: &CancelToken,
) -> anyhow::Result<Vec<Outcome>> {
    let mut group = Group::start(command, copies)?;
    group.pump(
        |copy| copy.ready,
        Instant::now() + READY_LIMIT,
        READY_LIMIT,
        ("set itself up", "set themselves up"),
        cancel,
    )?;
    for (index, copy) in group.copies.iter_mut().enumerate() {
        let mut stdin = copy.child.stdin.take().expect("stdin is piped");
        if let Err(err) = writeln!(stdin, "{GO}") {
            return Err(copy.failure(index, &format!("could not be started ({err})")));
        }
    }
    let limit = command.finish_limit();
    group.pump(
        |copy| copy.result.is_some() && copy.closed,
        Instant::now() + limit,
        limit,
        ("finish", "finish"),
        cancel,
    )?;
    group.reap()
}

/// One running copy.
struct Copy {
    child: Child,
    output: OwnedFd,
    partial: Vec<u8>,
    diagnostics: Vec<String>,
    ready: bool,
    result: Option<Outcome>,
    /// Its output pipe reached the end: it and its descendants are gone.
    closed: bool,
}

impl Copy {
    /// Reads what the pipe holds; the caller polled it readable.
    fn read_output(&mut self) -> anyhow::Result<()> {
        let mut buf = [0u8; 4096];
        // SAFETY: `buf` is valid and writable for its length; the
        // descriptor is ours and open.
        let n = unsafe { libc::read(self.output.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                return Ok(());
            }
            return Err(err).context("reading a copy's output");
        }
        if n == 0 {
            self.closed = true;
            if !self.partial.is_empty() {
                let line = String::from_utf8_lossy(&std::mem::take(&mut self.partial)).into_owned();
                self.take_line(line);
            }
            return Ok(());
        }
        self.partial.extend_from_slice(&buf[..n as usize]);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
            self.take_line(line);
        }
        Ok(())
    }

    fn take_line(&mut self, line: String) {
        if line == READY {
            self.ready = true;
        } else if line.starts_with(RESULT_PREFIX)
            && let Some(outcome) = protocol::parse_result(&line)
        {
            self.result = Some(outcome);
        } else if self.diagnostics.len() < KEPT_LINES {
            self.diagnostics.push(line);
        }
    }

    /// An error naming the copy, how it ended and what it said.
    fn failure(&self, index: usize, what: &str) -> anyhow::Error {
        let ended = libc_process::peek_exit(self.child.id() as libc::pid_t)
            .map(|how| format!(" ({how})"))
            .unwrap_or_default();
        let said = if self.diagnostics.is_empty() {
            String::new()
        } else {
            format!(": {}", self.diagnostics.join(" | "))
        };
        anyhow!("copy {index} {what}{ended}{said}")
    }
}

/// The copies of one trial, in one process group; dropping it kills and
/// reaps whatever is still there.
struct Group {
    copies: Vec<Copy>,
    pgid: Option<libc::pid_t>,
    reaped: bool,
}

impl Group {
    fn start(command: &CopyCommand, copies: usize) -> anyhow::Result<Self> {
        let mut group = Group {
            copies: Vec::with_capacity(copies),
            pgid: None,
            reaped: false,
        };
        let parent = std::process::id().to_string();
        let seconds = command.seconds.to_string();
        for index in 0..copies {
            let (read, write) = libc_process::pipe().context("creating a copy's output pipe")?;
            let mut cmd = Command::new(&command.executable);
            cmd.arg(COPY_MARKER)
                .arg(&parent)
                .arg(&seconds)
                .args(&command.args)
                .stdin(Stdio::piped())
                .stdout(Stdio::from(write.try_clone()?))
                .stderr(Stdio::from(write))
                .process_group(group.pgid.unwrap_or(0));
            if let Some(cwd) = &command.cwd {
                cmd.current_dir(cwd);
            }
            for (key, value) in &command.env {
                cmd.env(key, value);
            }
            let child = cmd.spawn().with_context(|| {
                format!("starting copy {index} ({})", command.executable.display())
            })?;
            // Dropping the command closes this process's write ends, so
            // the pipe ends when the copy and its descendants are gone.
            drop(cmd);
            group.pgid.get_or_insert(child.id() as libc::pid_t);
            group.copies.push(Copy {
                child,
                output: read,
                partial: Vec::new(),
                diagnostics: Vec::new(),
                ready: false,
                result: None,
                closed: false,
            });
        }
        Ok(group)
    }

    /// Reads the copies' output until every copy satisfies `done`; fails
    /// when one cannot any more (its output ended first), at `deadline`, or
    /// on a cancellation. `what` says what `done` means, for one copy and
    /// for several.
    fn pump(
        &mut self,
        done: impl Fn(&Copy) -> bool,
        deadline: Instant,
        limit: Duration,
        what: (&str, &str),
        cancel: &CancelToken,
    ) -> anyhow::Result<()> {
        loop {
            if let Some((index, copy)) = self
                .copies
                .iter()
                .enumerate()
                .find(|(_, c)| c.closed && !done(c))
            {
                return Err(copy.failure(index, &format!("stopped before it could {}", what.0)));
            }
            if self.copies.iter().all(&done) {
                return Ok(());
            }
            if cancel.is_cancelled() {
                return Err(Cancelled.into());
            }
            let now = Instant::now();
            if now >= deadline {
                let late = self.copies.iter().filter(|c| !done(c)).count();
                bail!(
                    "{late} of {} copies did not {} within {} s; all were stopped",
                    self.copies.len(),
                    what.1,
                    limit.as_secs()
                );
            }
            let open: Vec<usize> = (0..self.copies.len())
                .filter(|&i| !self.copies[i].closed)
                .collect();
            let fds: Vec<_> = open
                .iter()
                .map(|&i| self.copies[i].output.as_raw_fd())
                .collect();
            let readable = libc_process::poll_readable(&fds, POLL_INTERVAL.min(deadline - now))
                .context("waiting for the copies")?;
            for (&i, ready) in open.iter().zip(readable) {
                if ready {
                    self.copies[i].read_output()?;
                }
            }
        }
    }

    /// Waits for every copy (all have closed their output) and returns
    /// their outcomes; a copy that exited with an error fails the trial.
    fn reap(mut self) -> anyhow::Result<Vec<Outcome>> {
        let mut statuses = Vec::with_capacity(self.copies.len());
        for copy in &mut self.copies {
            statuses.push(copy.child.wait().context("waiting for a copy")?);
        }
        self.reaped = true;
        let mut outcomes = Vec::with_capacity(self.copies.len());
        for (index, (copy, status)) in self.copies.iter().zip(statuses).enumerate() {
            if !status.success() {
                bail!(
                    "copy {index} failed ({status}){}",
                    if copy.diagnostics.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", copy.diagnostics.join(" | "))
                    }
                );
            }
            outcomes.push(copy.result.expect("pump waited for every result"));
        }
        Ok(outcomes)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        // Kill the whole group before reaping anything, so its id cannot
        // have been reused by then.
        if let Some(pgid) = self.pgid {
            let _ = crate::sys::child_process::kill_group(pgid);
        }
        for copy in &mut self.copies {
            let _ = copy.child.kill();
            let _ = copy.child.wait();
        }
    }
}
