//! One host's part of a fleet run: connect, check, copy sledge if needed,
//! run the selection there with its output streamed, fetch the run as an
//! export document, and clean up.
//!
//! Everything on the host happens under one directory (`--remote-dir`):
//! `bin/` holds the copies of sledge, `runs/run.XXXXXX/` is one run's
//! scratch directory (its store, the remote sledge's pid, and a mark that
//! says a fleet run made it). The scratch directory is removed when the
//! host's part ends, however it ends, as long as the host can still be
//! reached; one that could not be removed (the host died) is removed by
//! the next fleet run that finds its mark and its sledge gone. Nothing
//! there without the mark is ever removed. Paths go to the host quoted and
//! come back exactly as it printed them (a directory may end in a space).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::settings::FleetSettings;
use crate::engine::CancelToken;
use crate::remote::{
    Connection, OutputLine, Placement, RemoteError, SshHost, command_line, ensure_binary, quote,
};

/// Space a host must have free in the remote directory besides the copy
/// of sledge: the run's store and whatever small files workloads write by
/// default. A workload told to write big files elsewhere checks its own
/// directory when its case is built, on the host.
const MIN_FREE_BYTES: u64 = 256 << 20;

/// How long a remote sledge may take to stop after Ctrl-C (it finishes
/// cleaning up its round) before its processes are killed.
const STOP_GRACE: Duration = Duration::from_secs(20);

/// How often the streaming loop looks at the stop request.
const TICK: Duration = Duration::from_millis(100);

/// The note every fleet run carries: `fleet_host=HOST[:PORT]`.
pub use crate::results::FLEET_HOST_NOTE;

/// The file in a fleet run's scratch directory that marks it as made by a
/// fleet run, so that a later one may remove it (see `prepare`).
const SCRATCH_MARK: &str = ".sledge-made";

/// What the mark says, followed by a space and the directory's own name.
const SCRATCH_MARK_TEXT: &str = "sledge-fleet-run/1";

/// How many of the remote's last stderr lines an error quotes.
const STDERR_KEPT: usize = 3;

/// What one host's part produced.
pub(super) struct HostDone {
    /// The export document of the run, or why there is none.
    pub result: Result<Vec<u8>, String>,
    /// Whether it ended because of a stop request.
    pub interrupted: bool,
    /// A scratch directory that could not be removed, with the reason.
    pub left_behind: Option<String>,
}

/// Everything a host's worker needs.
pub(super) struct HostJob<'a> {
    pub index: usize,
    pub host: &'a SshHost,
    pub settings: &'a FleetSettings,
    pub cancel: &'a CancelToken,
    pub hurry: &'a CancelToken,
    pub events: mpsc::Sender<Event>,
}

impl HostJob<'_> {
    fn note(&self, text: impl Into<String>) {
        let _ = self.events.send(Event::Note {
            host: self.index,
            text: text.into(),
        });
    }
}

/// Where things are on the host once it is prepared.
struct Remote {
    /// The absolute path of the sledge copy.
    binary: String,
    /// The absolute scratch directory of this run.
    scratch: String,
}

/// Runs the job on its host; never panics on a host's failure.
pub(super) fn run(job: &HostJob) -> HostDone {
    let failed = |reason: String| HostDone {
        result: Err(reason),
        interrupted: job.cancel.is_cancelled(),
        left_behind: None,
    };
    if job.cancel.is_cancelled() {
        return failed("not started: interrupted".to_string());
    }
    let connection = match Connection::open(job.host, &job.settings.ssh) {
        Ok(connection) => connection,
        Err(err) => return failed(err.to_string()),
    };
    job.note("connected");
    let remote = match prepare(&connection, job) {
        Ok(remote) => remote,
        Err(reason) => return failed(reason),
    };
    let result = if job.cancel.is_cancelled() {
        Err("not started: interrupted".to_string())
    } else {
        run_and_fetch(&connection, job, &remote)
    };
    let left_behind = clean_up(&connection, &remote).err().map(|err| {
        let why = match err {
            // What ssh said, not the clean-up script.
            RemoteError::ConnectionLost { stderr, .. } => stderr
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or("the connection is gone")
                .trim()
                .to_string(),
            other => other.to_string(),
        };
        format!("{} on {} ({why})", remote.scratch, job.host)
    });
    HostDone {
        result,
        interrupted: job.cancel.is_cancelled(),
        left_behind,
    }
}

/// Makes sure the host has this very sledge, or the build given for its
/// architecture ([`ensure_binary`]: checks
/// Linux, the architecture and free space, copies it when the host has no
/// copy of the same bytes), removes scratch directories of fleet runs
/// whose sledge is gone, and makes the scratch directory, marked.
fn prepare(connection: &Connection, job: &HostJob) -> Result<Remote, String> {
    let place = Placement {
        dir: &job.settings.remote_dir,
        extra_free_bytes: MIN_FREE_BYTES,
        purpose: "a fleet run",
    };
    let installed = ensure_binary(connection, &job.settings.binaries, place, &mut |text| {
        job.note(text)
    })?;
    let abs_dir = &installed.dir;
    let runs = quote(&format!("{abs_dir}/runs"));
    // Only a directory a fleet run made is ever removed: one holding the
    // mark written as it was made, naming it (a directory of the user's in
    // `runs/`, even one called `run.*`, has none). Such a directory whose
    // sledge is gone (no pid, or no such process) and that is over a
    // minute old (a new one gets its pid at once) was left by a fleet run
    // that lost this host.
    let make_scratch = format!(
        "mkdir -p {runs} && cd {runs} || exit 1; for d in run.*; do \
         [ -d \"$d\" ] && [ ! -L \"$d\" ] || continue; \
         [ \"$(cat \"$d/{SCRATCH_MARK}\" 2>/dev/null)\" = \"{SCRATCH_MARK_TEXT} $d\" ] || continue; \
         p=$(cat \"$d/pid\" 2>/dev/null || true); \
         if [ -n \"$p\" ] && [ -d \"/proc/$p\" ]; then continue; fi; \
         [ -n \"$(find \"$d\" -maxdepth 0 -mmin +1)\" ] || continue; \
         rm -rf \"$d\" && echo \"removed $PWD/$d\" >&2; done; \
         d=$(mktemp -d \"$PWD/run.XXXXXX\") || exit 1; \
         printf '%s\\n' \"{SCRATCH_MARK_TEXT} ${{d##*/}}\" > \"$d/{SCRATCH_MARK}\" \
         || {{ rm -rf \"$d\"; exit 1; }}; \
         printf '%s\\n' \"$d\""
    );
    let output = connection
        .command(&make_scratch)
        .output()
        .map_err(|e| format!("cannot run ssh: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    connection
        .check(&make_scratch, output.status, &stderr)
        .map_err(|e| e.to_string())?;
    for removed in stderr.lines().filter_map(|l| l.strip_prefix("removed ")) {
        job.note(format!(
            "removed {removed}, left behind by a fleet run whose sledge is gone"
        ));
    }
    // Exactly the path mktemp made: only the line end is not part of it.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let scratch = stdout.strip_suffix('\n').unwrap_or(&stdout).to_string();
    if !scratch.starts_with('/') {
        return Err(format!("mktemp gave no scratch directory: {scratch:?}"));
    }
    Ok(Remote {
        binary: installed.binary,
        scratch,
    })
}

/// `run_args` with every battery file among the targets (a local file
/// ending in `.toml`) sent to the host's scratch directory under its own
/// name (which names the battery when the file does not) and named by
/// its path there: the host runs the same text, with the same hash.
fn with_batteries_sent(
    connection: &Connection,
    remote: &Remote,
    run_args: &[String],
) -> Result<Vec<String>, String> {
    run_args
        .iter()
        .map(|word| {
            let local = std::path::Path::new(word);
            let Some(name) = local
                .file_name()
                .filter(|_| word.ends_with(".toml") && local.is_file())
            else {
                return Ok(word.clone());
            };
            let there = format!("{}/{}", remote.scratch, name.to_string_lossy());
            connection
                .upload(local, &there, 0o644)
                .map_err(|e| format!("cannot send the battery file {word}: {e}"))?;
            Ok(there)
        })
        .collect()
}

/// Runs the selection on the host, streaming its output, stops it when
/// asked, and fetches the run it stored.
fn run_and_fetch(
    connection: &Connection,
    job: &HostJob,
    remote: &Remote,
) -> Result<Vec<u8>, String> {
    let store = format!("{}/results.db", remote.scratch);
    let mut words: Vec<String> = vec!["env".to_string()];
    words.extend(job.settings.env.iter().map(|(k, v)| format!("{k}={v}")));
    words.extend([
        remote.binary.clone(),
        "--store".to_string(),
        store.clone(),
        "run".to_string(),
    ]);
    words.extend(with_batteries_sent(
        connection,
        remote,
        &job.settings.run_args,
    )?);
    // Which host of the fleet ran it, as the user named it: hosts that
    // share a host name (clones, containers) stay apart in `list`, `show`
    // and `report`.
    words.extend([
        "--note".to_string(),
        format!("{FLEET_HOST_NOTE}={}", job.host.label()),
    ]);
    // `exec`: the pid the shell writes is the remote sledge's own.
    let command = format!(
        "cd {} && echo $$ > pid && exec {}",
        quote(&remote.scratch),
        command_line(&words)
    );
    job.note(format!("running in {}", remote.scratch));
    let mut process = connection.spawn(&command).map_err(|e| e.to_string())?;
    let mut last_stderr: Vec<String> = Vec::new();
    let mut stop_asked: Option<Instant> = None;
    let mut interrupt_sent = false;
    let mut killed = false;
    loop {
        match process.next_line(TICK) {
            Ok(line) => {
                if let OutputLine::Stderr(text) = &line
                    && !text.trim().is_empty()
                {
                    last_stderr.push(text.clone());
                    if last_stderr.len() > STDERR_KEPT {
                        last_stderr.remove(0);
                    }
                }
                let _ = job.events.send(Event::Output {
                    host: job.index,
                    line,
                });
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if !job.cancel.is_cancelled() {
            continue;
        }
        let asked = *stop_asked.get_or_insert_with(Instant::now);
        if !interrupt_sent {
            // As Ctrl-C would: the remote sledge stops after its round's
            // cleanup and stores the run as partial.
            let pid = quote(&format!("{}/pid", remote.scratch));
            interrupt_sent = connection
                .run(&format!("test -s {pid} && kill -INT \"$(cat {pid})\""))
                .is_ok();
        }
        if !killed && (job.hurry.is_cancelled() || asked.elapsed() > STOP_GRACE) {
            let _ = kill_remote(connection, remote);
            killed = true;
        }
    }
    let status = process
        .wait()
        .map_err(|e| format!("cannot wait for ssh: {e}"))?;
    if killed {
        // However ssh reports it (the remote's signal, a lost channel).
        return Err("stopped by the interrupt before the run was stored".to_string());
    }
    let said = what_it_said(&last_stderr);
    match status.code() {
        Some(255) => {
            return Err(format!(
                "lost the connection while the run ran{}",
                if said.is_empty() {
                    String::new()
                } else {
                    format!(": {said}")
                }
            ));
        }
        Some(2) => return Err(format!("the remote sledge refused the run: {said}")),
        None => return Err(format!("the remote run ended by {status}")),
        _ => {}
    }
    let export = format!(
        "{} --store {} export last",
        quote(&remote.binary),
        quote(&store)
    );
    connection
        .run(&export)
        .map(String::into_bytes)
        .map_err(|err| match err {
            RemoteError::CommandFailed { .. } => {
                format!("the run stored nothing to bring back ({said}): {err}")
            }
            other => other.to_string(),
        })
}

/// What the remote sledge said last, for an error: its `error:` line when
/// one is among the kept lines (a warning printed before it is not the
/// reason), else every kept line.
fn what_it_said(last_stderr: &[String]) -> String {
    match last_stderr
        .iter()
        .rev()
        .find(|line| line.trim_start().starts_with("error:"))
    {
        Some(error) => error.trim().to_string(),
        None => last_stderr.join(" | "),
    }
}

/// Kills every process of this run on the host: those working in its
/// scratch directory or using its store (the remote sledge and its
/// rounds), never the shell doing it.
fn kill_remote(connection: &Connection, remote: &Remote) -> Result<String, RemoteError> {
    // Two processes scan /proc, not a shell loop of forks per process.
    // The pattern `$s/results.db` is never on this shell's own command
    // line (only the variable is), so the shell does not match itself;
    // grep matches its own, but has ended before the kill.
    let scratch = quote(&remote.scratch);
    connection.run(&format!(
        "s={scratch}; pids=$( {{ grep -lsF -- \"$s/results.db\" /proc/[0-9]*/cmdline; \
         find /proc/[0-9]*/cwd -maxdepth 0 \\( -lname \"$s\" -o -lname \"$s/*\" \\) 2>/dev/null; }} \
         | cut -d/ -f3 | sort -u | grep -vx \"$$\" ); \
         [ -z \"$pids\" ] || kill -9 $pids 2>/dev/null; true"
    ))
}

/// Kills what is left of the run and removes its scratch directory.
fn clean_up(connection: &Connection, remote: &Remote) -> Result<(), RemoteError> {
    kill_remote(connection, remote)?;
    connection
        .run(&format!("rm -rf {}", quote(&remote.scratch)))
        .map(drop)
}

/// What a host's worker sends to the coordinating thread.
pub(super) enum Event {
    Note {
        host: usize,
        text: String,
    },
    Output {
        host: usize,
        line: OutputLine,
    },
    Done {
        host: usize,
        done: HostDone,
        seconds: f64,
    },
}

#[cfg(test)]
mod tests {
    use super::what_it_said;

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_remote_error_line_is_the_reason_not_the_warnings_before_it() {
        let said = what_it_said(&lines(&[
            "warning: other processes used 40% of a CPU before the run",
            "error: parameter `groups` of sched.hackbench: 0 is below the minimum 1",
        ]));
        assert_eq!(
            said,
            "error: parameter `groups` of sched.hackbench: 0 is below the minimum 1"
        );
        // Without an error line, everything kept is quoted.
        let said = what_it_said(&lines(&["ssh: connect to host", "broken pipe"]));
        assert_eq!(said, "ssh: connect to host | broken pipe");
        assert_eq!(what_it_said(&[]), "");
    }
}
