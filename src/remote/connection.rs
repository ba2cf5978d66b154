//! One OpenSSH ControlMaster connection to a host, and the commands, file
//! copies and streamed processes that share it.
//!
//! Every ssh started here runs in its own process group, so that a Ctrl-C
//! at the terminal reaches sledge alone: sledge then decides how to stop
//! the remote side, instead of every ssh dying at once and leaving remote
//! processes running with nobody to stop them.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::host::SshHost;

/// How long `ssh -O exit` and the master's own exit may take on drop.
const CLOSE_WAIT: Duration = Duration::from_secs(3);

/// Seconds between keep-alive probes on an idle connection, and how many
/// may go unanswered: a host that vanishes (power, network) is noticed
/// within about 15 s instead of at the kernel's TCP timeout.
const ALIVE_INTERVAL_SECS: u32 = 5;
const ALIVE_COUNT_MAX: u32 = 3;

/// How to reach the hosts.
#[derive(Debug, Clone)]
pub struct SshOptions {
    /// A private key to log in with (`ssh -i`, and only that key); else
    /// the user's ssh agent and configuration decide.
    pub identity: Option<PathBuf>,
    /// A known_hosts file to use instead of the user's own. New host keys
    /// are accepted and recorded (`StrictHostKeyChecking=accept-new`); a
    /// key that changed is refused either way.
    pub known_hosts: Option<PathBuf>,
    /// How long connecting (TCP and the SSH handshake) may take.
    pub connect_timeout: Duration,
}

impl Default for SshOptions {
    fn default() -> Self {
        SshOptions {
            identity: None,
            known_hosts: None,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// Why talking to a host failed. Every variant names the host.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The `ssh` program itself could not be started.
    #[error("cannot start `ssh` for {host} (is OpenSSH's client installed?): {source}")]
    NoSsh {
        host: String,
        #[source]
        source: std::io::Error,
    },
    /// The connection could not be made: unknown host, refused, timed
    /// out, or the login was refused. `message` is what ssh said.
    #[error("cannot connect to {host}: {message}")]
    Connect { host: String, message: String },
    /// The connection broke while a command ran (ssh's status 255).
    #[error("lost the connection to {host} while running `{command}`{}", stderr_suffix(.stderr))]
    ConnectionLost {
        host: String,
        command: String,
        stderr: String,
    },
    /// A remote command ended with a failure status.
    #[error("on {host}, `{command}` failed ({status}){}", stderr_suffix(.stderr))]
    CommandFailed {
        host: String,
        command: String,
        status: String,
        stderr: String,
    },
    /// Local I/O around a command (pipes, files) failed.
    #[error("{what} for {host}: {source}")]
    Io {
        host: String,
        what: String,
        #[source]
        source: std::io::Error,
    },
}

fn stderr_suffix(stderr: &str) -> String {
    let stderr = stderr.trim();
    if stderr.is_empty() {
        String::new()
    } else {
        format!(": {}", last_lines(stderr, 5))
    }
}

/// The last `n` lines of `text`, joined by ` | ` (ssh's own complaint is
/// at the end, after banners and warnings).
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// An open ControlMaster connection to one host. Commands run through it
/// without a new handshake; dropping it closes the master.
pub struct Connection {
    host: SshHost,
    options: SshOptions,
    /// Private: the control socket and the master's log.
    dir: tempfile::TempDir,
    master: Option<Child>,
}

impl Connection {
    /// Connects to `host` (BatchMode: never a password prompt) and returns
    /// once logged in. Fails with [`RemoteError::Connect`], carrying ssh's
    /// own message, when the host is unknown, unreachable, refuses the
    /// login or does not answer within the connect timeout.
    pub fn open(host: &SshHost, options: &SshOptions) -> Result<Connection, RemoteError> {
        let dir = control_dir().map_err(|source| RemoteError::Io {
            host: host.to_string(),
            what: "cannot create the private directory of the ssh control socket".to_string(),
            source,
        })?;
        let log_path = dir.path().join("master.log");
        let log = std::fs::File::create(&log_path).map_err(|source| RemoteError::Io {
            host: host.to_string(),
            what: format!("cannot create {}", log_path.display()),
            source,
        })?;
        let mut connection = Connection {
            host: host.clone(),
            options: options.clone(),
            dir,
            master: None,
        };
        let mut master = connection.ssh();
        master
            .args(["-M", "-N", "-o", "ControlPersist=no"])
            .arg(host.destination())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        let child = master.spawn().map_err(|source| RemoteError::NoSsh {
            host: host.to_string(),
            source,
        })?;
        connection.master = Some(child);
        connection.wait_until_ready(&log_path)?;
        Ok(connection)
    }

    /// Waits for the control socket, which the master creates once logged
    /// in; the master's exit (or the deadline) is a connect error.
    fn wait_until_ready(&mut self, log_path: &Path) -> Result<(), RemoteError> {
        let socket = self.control_path();
        let deadline = Instant::now() + self.options.connect_timeout + Duration::from_secs(5);
        let master = self.master.as_mut().expect("master started");
        loop {
            if socket.exists() {
                return Ok(());
            }
            let exited = master.try_wait().ok().flatten();
            if exited.is_some() || Instant::now() > deadline {
                if exited.is_none() {
                    let _ = master.kill();
                    let _ = master.wait();
                }
                self.master = None;
                let said = std::fs::read_to_string(log_path).unwrap_or_default();
                let message = match (said.trim().is_empty(), exited) {
                    (false, _) => last_lines(&said, 3),
                    (true, Some(status)) => format!("ssh ended ({status}) without saying why"),
                    (true, None) => format!(
                        "no answer within {} s",
                        self.options.connect_timeout.as_secs()
                    ),
                };
                return Err(RemoteError::Connect {
                    host: self.host.to_string(),
                    message,
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The host this connection reaches.
    pub fn host(&self) -> &SshHost {
        &self.host
    }

    fn control_path(&self) -> PathBuf {
        self.dir.path().join("control")
    }

    /// `ssh` with every option of this connection, before the destination.
    fn ssh(&self) -> Command {
        let mut cmd = Command::new("ssh");
        cmd.args(["-o", "BatchMode=yes"])
            .arg("-o")
            .arg(format!(
                "ConnectTimeout={}",
                self.options.connect_timeout.as_secs().max(1)
            ))
            .args(["-o", "StrictHostKeyChecking=accept-new"])
            .arg("-o")
            .arg(format!("ServerAliveInterval={ALIVE_INTERVAL_SECS}"))
            .arg("-o")
            .arg(format!("ServerAliveCountMax={ALIVE_COUNT_MAX}"))
            .args(["-o", "LogLevel=ERROR"])
            .arg("-o")
            .arg(format!("ControlPath={}", self.control_path().display()));
        if let Some(known_hosts) = &self.options.known_hosts {
            cmd.arg("-o")
                .arg(format!("UserKnownHostsFile={}", known_hosts.display()));
        }
        if let Some(identity) = &self.options.identity {
            cmd.arg("-i")
                .arg(identity)
                .args(["-o", "IdentitiesOnly=yes"]);
        }
        if let Some(user) = &self.host.user {
            cmd.arg("-l").arg(user);
        }
        if let Some(port) = self.host.port {
            cmd.arg("-p").arg(port.to_string());
        }
        // Its own process group: a Ctrl-C at the terminal is sledge's to
        // handle, not every ssh's.
        cmd.process_group(0);
        cmd
    }

    /// A `Command` that runs `remote` (a shell command line, see
    /// [`super::shell_quote::quote`]) on the host through the master; standard input is
    /// empty unless the caller sets it.
    pub fn command(&self, remote: &str) -> Command {
        let mut cmd = self.ssh();
        cmd.args(["-o", "ControlMaster=no", "-T"])
            .arg(self.host.destination())
            .arg("--")
            .arg(remote)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `remote` and returns its standard output; a failure status is
    /// an error carrying its standard error.
    pub fn run(&self, remote: &str) -> Result<String, RemoteError> {
        let output = self.output_of(remote, self.command(remote))?;
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Runs `cmd` (an ssh command running `remote`, as [`Self::command`]
    /// makes it) to its end; ssh that cannot start, or a failure status,
    /// is an error (see [`Self::check`]).
    fn output_of(&self, remote: &str, mut cmd: Command) -> Result<Output, RemoteError> {
        let output = cmd.output().map_err(|source| self.no_ssh(source))?;
        self.check(
            remote,
            output.status,
            &String::from_utf8_lossy(&output.stderr),
        )?;
        Ok(output)
    }

    /// The error for an ssh client that could not be started.
    fn no_ssh(&self, source: std::io::Error) -> RemoteError {
        RemoteError::NoSsh {
            host: self.host.to_string(),
            source,
        }
    }

    /// An error for a command that ended with `status`, or `Ok`.
    pub fn check(&self, remote: &str, status: ExitStatus, stderr: &str) -> Result<(), RemoteError> {
        if status.success() {
            return Ok(());
        }
        let command = short_command(remote);
        Err(if status.code() == Some(255) {
            RemoteError::ConnectionLost {
                host: self.host.to_string(),
                command,
                stderr: stderr.to_string(),
            }
        } else {
            RemoteError::CommandFailed {
                host: self.host.to_string(),
                command,
                status: status.to_string(),
                stderr: stderr.to_string(),
            }
        })
    }

    /// Starts `remote` with its output streamed line by line.
    pub fn spawn(&self, remote: &str) -> Result<RemoteProcess, RemoteError> {
        self.spawn_with(remote, Stdio::null())
    }

    /// As [`Self::spawn`], with the remote command's standard input a pipe
    /// from here that stays open until [`RemoteProcess::close_input`] (or
    /// the process's drop): a remote command that stops at the end of its
    /// input then also stops when this side goes away, however it goes.
    pub fn spawn_with_input(&self, remote: &str) -> Result<RemoteProcess, RemoteError> {
        self.spawn_with(remote, Stdio::piped())
    }

    fn spawn_with(&self, remote: &str, stdin: Stdio) -> Result<RemoteProcess, RemoteError> {
        let mut child = self
            .command(remote)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| self.no_ssh(source))?;
        let (sender, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let out_sender = sender.clone();
        std::thread::spawn(move || forward_lines(stdout, &out_sender, OutputLine::Stdout));
        std::thread::spawn(move || forward_lines(stderr, &sender, OutputLine::Stderr));
        let input = child.stdin.take();
        Ok(RemoteProcess {
            child,
            lines,
            input,
        })
    }

    /// Copies the local file `local` to `remote_path` on the host, whole
    /// or not at all (written beside it, then renamed), with mode `mode`.
    pub fn upload(&self, local: &Path, remote_path: &str, mode: u32) -> Result<(), RemoteError> {
        let io_error = |what: String| {
            let host = self.host.to_string();
            move |source| RemoteError::Io { host, what, source }
        };
        let file = std::fs::File::open(local)
            .map_err(io_error(format!("cannot read {}", local.display())))?;
        let target = super::shell_quote::quote(remote_path);
        // Per remote shell: hosts that share a file system may be sent
        // the same file at once.
        let partial = format!("{target}.partial.$$");
        let remote = format!(
            "cat > {partial} && chmod {mode:o} {partial} && mv -f {partial} {target} \
             || {{ rm -f {partial}; exit 1; }}"
        );
        let mut cmd = self.command(&remote);
        cmd.stdin(file);
        self.output_of(&remote, cmd).map(drop)
    }

    /// The contents of the file `remote_path` on the host.
    pub fn download(&self, remote_path: &str) -> Result<Vec<u8>, RemoteError> {
        let remote = format!("cat {}", super::shell_quote::quote(remote_path));
        Ok(self.output_of(&remote, self.command(&remote))?.stdout)
    }

    /// Writes `bytes` to `remote_path` on the host (whole or not at all).
    pub fn write(&self, remote_path: &str, bytes: &[u8]) -> Result<(), RemoteError> {
        let target = super::shell_quote::quote(remote_path);
        // Per remote shell: hosts that share a file system may be sent
        // the same file at once.
        let partial = format!("{target}.partial.$$");
        let remote = format!(
            "cat > {partial} && mv -f {partial} {target} || {{ rm -f {partial}; exit 1; }}"
        );
        let mut child = self
            .command(&remote)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| self.no_ssh(source))?;
        let written = child.stdin.take().expect("piped").write_all(bytes);
        let output = child.wait_with_output().map_err(|source| RemoteError::Io {
            host: self.host.to_string(),
            what: "cannot wait for ssh".to_string(),
            source,
        })?;
        self.check(
            &remote,
            output.status,
            &String::from_utf8_lossy(&output.stderr),
        )?;
        written.map_err(|source| RemoteError::Io {
            host: self.host.to_string(),
            what: format!("cannot send {remote_path}"),
            source,
        })
    }
}

impl Drop for Connection {
    /// Asks the master to exit (`ssh -O exit`), then makes sure it did.
    fn drop(&mut self) {
        let Some(mut master) = self.master.take() else {
            return;
        };
        let mut exit = self.ssh();
        exit.args(["-O", "exit"])
            .arg(self.host.destination())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Ok(mut asked) = exit.spawn() {
            wait_bounded(&mut asked, CLOSE_WAIT);
        }
        wait_bounded(&mut master, CLOSE_WAIT);
    }
}

/// Waits up to `limit` for `child`, then kills it.
fn wait_bounded(child: &mut Child, limit: Duration) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A private directory for the control socket. A socket's path must fit
/// in 108 bytes, so a long `$TMPDIR` falls back to `/tmp`.
fn control_dir() -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new().prefix("sledge-ssh-").tempdir()?;
    if dir.path().as_os_str().len() <= 80 {
        return Ok(dir);
    }
    tempfile::Builder::new()
        .prefix("sledge-ssh-")
        .tempdir_in("/tmp")
}

/// A command shortened for error messages.
fn short_command(remote: &str) -> String {
    const MAX: usize = 120;
    if remote.chars().count() <= MAX {
        remote.to_string()
    } else {
        let head: String = remote.chars().take(MAX).collect();
        format!("{head}...")
    }
}

/// One line of a streamed remote process's output, without its newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputLine {
    Stdout(String),
    Stderr(String),
}

fn forward_lines(
    stream: impl Read,
    sender: &mpsc::Sender<OutputLine>,
    wrap: fn(String) -> OutputLine,
) {
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                let text = text.trim_end_matches(['\n', '\r']).to_string();
                if sender.send(wrap(text)).is_err() {
                    return;
                }
            }
        }
    }
}

/// A remote command started by [`Connection::spawn`], its output arriving
/// line by line.
pub struct RemoteProcess {
    child: Child,
    lines: mpsc::Receiver<OutputLine>,
    /// The remote command's standard input, for
    /// [`Connection::spawn_with_input`].
    input: Option<std::process::ChildStdin>,
}

impl RemoteProcess {
    /// Closes the remote command's standard input (it reads its end).
    pub fn close_input(&mut self) {
        self.input = None;
    }

    /// The next line of output, waiting at most `timeout`:
    /// `Err(Timeout)` when none came, `Err(Disconnected)` once both
    /// streams are closed (the process ended or the connection broke).
    pub fn next_line(&self, timeout: Duration) -> Result<OutputLine, mpsc::RecvTimeoutError> {
        self.lines.recv_timeout(timeout)
    }

    /// Waits for the local ssh to end; its status is the remote command's
    /// (255 when the connection broke).
    pub fn wait(&mut self) -> std::io::Result<ExitStatus> {
        self.child.wait()
    }

    /// The status if the local ssh has ended.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Kills the local ssh client. The remote command goes on unless it
    /// notices its closed output: stop it on the host first.
    pub fn kill_local(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RemoteProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill_local();
        }
    }
}
