//! One run of a user's command: started as a process group of its own
//! (`sys::group_command`), its output read while it runs, its time, CPU
//! and peak memory taken when it ends.
//!
//! Standard output is kept only when a metric reads it (up to
//! [`MAX_KEPT`]); standard error is kept whole when a parser reads it and
//! otherwise only its last [`TAIL`] bytes, for the message of a failed
//! run. The pipes are read on threads of their own so that a command that
//! writes much never blocks on a full pipe.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::sys::group_command::{Ending, Finished, spawn_group};

/// The most output kept of one stream.
pub const MAX_KEPT: usize = 64 * 1024 * 1024;

/// How much of the end of standard error a failure quotes.
pub const TAIL: usize = 2048;

/// How long the pipes may stay open after the command ended (something it
/// started outside its group still holding them), before they are left.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// What to keep of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Nothing: the stream goes to /dev/null.
    Nothing,
    /// Its last [`TAIL`] bytes.
    Tail,
    /// All of it, up to [`MAX_KEPT`].
    All,
}

/// A run that ended.
#[derive(Debug)]
pub struct Ran {
    /// How it ended and what it cost.
    pub finished: Finished,
    /// Its standard output, as kept.
    pub stdout: String,
    /// Its standard error, as kept.
    pub stderr: String,
    /// Whether a stream was longer than what was kept of it (and a
    /// [`Keep::All`] stream was cut).
    pub stdout_cut: bool,
}

/// Runs `command` to its end, for at most `limit`, stopping at once when
/// `stop` says so.
pub fn run(
    command: &mut Command,
    stdout: Keep,
    stderr: Keep,
    limit: Duration,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<Ran> {
    command
        .stdin(Stdio::null())
        .stdout(stdio_for(stdout))
        .stderr(stdio_for(stderr));
    let mut started = spawn_group(command)?;
    let out_reader = started
        .child
        .stdout
        .take()
        .map(|pipe| read_on_thread(pipe, stdout));
    let err_reader = started
        .child
        .stderr
        .take()
        .map(|pipe| read_on_thread(pipe, stderr));
    let finished = started.wait(limit, stop)?;
    let (stdout, stdout_cut) = collect(out_reader);
    let (stderr, _) = collect(err_reader);
    Ok(Ran {
        finished,
        stdout,
        stderr,
        stdout_cut,
    })
}

impl Ran {
    /// Whether the command ended by itself with status 0.
    pub fn succeeded(&self) -> bool {
        matches!(self.finished.ending, Ending::Exited(status) if status.success())
    }
}

fn stdio_for(keep: Keep) -> Stdio {
    match keep {
        Keep::Nothing => Stdio::null(),
        Keep::Tail | Keep::All => Stdio::piped(),
    }
}

/// What a reader thread hands back: the text kept, and whether more came.
type Kept = (String, bool);

fn read_on_thread(mut pipe: impl Read + Send + 'static, keep: Keep) -> mpsc::Receiver<Kept> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept: Vec<u8> = Vec::new();
        let mut cut = false;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match pipe.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            kept.extend_from_slice(&buf[..n]);
            match keep {
                Keep::Tail if kept.len() > 4 * TAIL => {
                    kept.drain(..kept.len() - TAIL);
                    cut = true;
                }
                Keep::All if kept.len() > MAX_KEPT => {
                    kept.truncate(MAX_KEPT);
                    cut = true;
                }
                _ => {}
            }
        }
        if keep == Keep::Tail && kept.len() > TAIL {
            kept.drain(..kept.len() - TAIL);
            cut = true;
        }
        let _ = tx.send((String::from_utf8_lossy(&kept).into_owned(), cut));
    });
    rx
}

/// A reader's text, or nothing if its pipe stayed open past the grace
/// (the thread is left to end when the pipe does).
fn collect(reader: Option<mpsc::Receiver<Kept>>) -> Kept {
    reader
        .and_then(|rx| rx.recv_timeout(PIPE_GRACE).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.arg("-c").arg(script);
        command
    }

    #[test]
    fn output_is_kept_as_asked() {
        let ran = run(
            &mut sh("echo out; echo err >&2"),
            Keep::All,
            Keep::Tail,
            Duration::from_secs(30),
            &|| false,
        )
        .unwrap();
        assert!(ran.succeeded());
        assert_eq!(
            (ran.stdout.as_str(), ran.stderr.as_str()),
            ("out\n", "err\n")
        );
        let ran = run(
            &mut sh("echo out"),
            Keep::Nothing,
            Keep::Nothing,
            Duration::from_secs(30),
            &|| false,
        )
        .unwrap();
        assert_eq!(ran.stdout, "");
    }

    #[test]
    fn a_long_stderr_keeps_its_tail_and_a_big_stdout_does_not_block() {
        let ran = run(
            &mut sh("head -c 3000000 /dev/zero | tr '\\0' a; seq 1 20000 >&2; echo last >&2"),
            Keep::All,
            Keep::Tail,
            Duration::from_secs(60),
            &|| false,
        )
        .unwrap();
        assert_eq!(ran.stdout.len(), 3_000_000);
        assert!(
            ran.stderr.len() <= TAIL && ran.stderr.ends_with("20000\nlast\n"),
            "{}",
            ran.stderr
        );
    }

    #[test]
    fn a_failure_keeps_its_status() {
        let ran = run(
            &mut sh("echo why >&2; exit 4"),
            Keep::Nothing,
            Keep::Tail,
            Duration::from_secs(30),
            &|| false,
        )
        .unwrap();
        assert!(!ran.succeeded());
        assert_eq!(ran.stderr, "why\n");
    }
}
