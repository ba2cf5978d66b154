//! How the coordinator reaches a client host: any command whose stdin and
//! stdout are an agent's. Over ssh for real hosts (running this very
//! sledge, copied there when needed, or a sledge the user names); as a
//! child process of a given sledge binary for tests (the same protocol
//! over pipes).

use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};

use crate::remote::{self, Connection, Placement, SshHost, SshOptions, ThisBinary, ensure_binary};
use crate::sys::signal;

/// The hidden subcommand that runs an agent.
pub const AGENT_SUBCOMMAND: &str = "__http-agent";

/// ssh's exit status when the connection failed or was lost; otherwise it
/// exits with the remote command's status.
const SSH_LOST: i32 = 255;

/// The POSIX shell script that runs an agent on a client host (`$@` is
/// the sledge there and the subcommand). ssh also exits with 255 when the
/// remote command is killed by a signal, which would make a killed agent
/// look like a lost connection; run from this script, the agent is the
/// shell's child, and the shell's exit status, 128 + the signal, is what
/// ssh passes on.
const AGENT_SCRIPT: &str = "\"$@\"; status=$?; exit \"$status\"";

/// Starts agents.
pub trait Transport: Sync {
    /// The command that runs an agent on `host`, its stdin and stdout
    /// carrying the protocol (the coordinator pipes all three streams).
    fn agent_command(&self, host: &str) -> anyhow::Result<Command>;

    /// How the agent's command ending with `status` is told to the user
    /// (`killed by signal 9 (SIGKILL)`); by default as a child process on
    /// this host.
    fn describe_end(&self, status: ExitStatus) -> String {
        match (status.code(), status.signal()) {
            (Some(code), _) => format!("the agent exited with status {code}"),
            (None, Some(sig)) => format!("the agent was killed by {}", signal::describe(sig)),
            (None, None) => status.to_string(),
        }
    }
}

/// Agents as child processes of `program` (a sledge binary) on this host;
/// the host names only label them.
#[derive(Debug, Clone)]
pub struct LocalAgents {
    /// The sledge binary to run.
    pub program: PathBuf,
}

impl Transport for LocalAgents {
    fn agent_command(&self, _host: &str) -> anyhow::Result<Command> {
        let mut command = Command::new(&self.program);
        command.arg(AGENT_SUBCOMMAND);
        Ok(command)
    }
}

/// Agents on other hosts through the system's OpenSSH client: one
/// ControlMaster connection per host (BatchMode: a host that wants a
/// password fails instead of asking), every agent a session on it.
pub struct SshAgents {
    /// Each host's label, its connection and the sledge it runs there.
    connections: Vec<(String, Connection, String)>,
}

/// Space a client host must keep free besides the copy of sledge: the
/// agent writes nothing, so only a margin for the host's own sake.
const AGENT_FREE_BYTES: u64 = 16 << 20;

impl SshAgents {
    /// Connects to every host at once, each to run the sledge at
    /// `program` (the same path everywhere, as it is). Any host that
    /// cannot be reached (unknown, refused, no access, silent past the
    /// connect timeout) is an error naming it with ssh's own words; the
    /// connections made are closed again.
    pub fn connect(
        hosts: &[SshHost],
        options: &SshOptions,
        program: &str,
    ) -> anyhow::Result<SshAgents> {
        Self::open(hosts, options, &|_, _| Ok(program.to_string()))
    }

    /// As [`SshAgents::connect`], each host running this very binary:
    /// copied under `dir` on a host that has no copy of the same bytes
    /// (see [`ensure_binary`]), after checking the host can run it. A host
    /// that cannot is an error naming it and what it lacks. `note` hears
    /// of every copy (host, what).
    pub fn connect_copying(
        hosts: &[SshHost],
        options: &SshOptions,
        binary: &ThisBinary,
        dir: &str,
        note: &(dyn Fn(&SshHost, &str) + Sync),
    ) -> anyhow::Result<SshAgents> {
        let place = Placement {
            dir,
            extra_free_bytes: AGENT_FREE_BYTES,
            purpose: "an HTTP load agent",
        };
        Self::open(hosts, options, &|host, connection| {
            ensure_binary(
                connection,
                std::slice::from_ref(binary),
                place,
                &mut |text| note(host, &text),
            )
            .map(|installed| installed.binary)
            .map_err(|why| format!("{host}: {why}"))
        })
    }

    /// Connects to every host at once and asks `program` for the sledge
    /// each runs; any failure closes every connection again.
    fn open(
        hosts: &[SshHost],
        options: &SshOptions,
        program: &(dyn Fn(&SshHost, &Connection) -> Result<String, String> + Sync),
    ) -> anyhow::Result<SshAgents> {
        let opened: Vec<Result<(Connection, String), String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = hosts
                .iter()
                .map(|host| {
                    scope.spawn(move || {
                        let connection =
                            Connection::open(host, options).map_err(|e| e.to_string())?;
                        let path = program(host, &connection)?;
                        Ok((connection, path))
                    })
                })
                .collect();
            handles
                .into_iter()
                .zip(hosts)
                .map(|(h, host)| {
                    h.join()
                        .unwrap_or_else(|_| Err(format!("{host}: preparing it panicked")))
                })
                .collect()
        });
        let mut connections = Vec::with_capacity(hosts.len());
        let mut failures = Vec::new();
        for (host, result) in hosts.iter().zip(opened) {
            match result {
                Ok((connection, path)) => connections.push((host.to_string(), connection, path)),
                Err(e) => failures.push(e),
            }
        }
        if !failures.is_empty() {
            anyhow::bail!(
                "{} of {} client host(s) cannot be reached or cannot run sledge; nothing was sent to the server:\n  {}",
                failures.len(),
                hosts.len(),
                failures.join("\n  ")
            );
        }
        Ok(SshAgents { connections })
    }

    /// This machine's address as the first host sees it: where its ssh
    /// session comes from (`$SSH_CONNECTION`), so an address on a network
    /// that joins the two, for a server the hosts are to load.
    pub fn this_side_address(&self) -> anyhow::Result<std::net::IpAddr> {
        let (host, connection, _) = self
            .connections
            .first()
            .ok_or_else(|| anyhow::anyhow!("no client host is connected"))?;
        let said = connection.run("echo $SSH_CONNECTION")?;
        said.split_whitespace()
            .next()
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{host} does not say where its ssh session comes from (SSH_CONNECTION is {:?})",
                    said.trim()
                )
            })
    }

    /// The hosts, as [`crate::http::distributed::run`] names them.
    pub fn hosts(&self) -> Vec<String> {
        self.connections.iter().map(|(h, _, _)| h.clone()).collect()
    }
}

impl Transport for SshAgents {
    fn agent_command(&self, host: &str) -> anyhow::Result<Command> {
        let (_, connection, program) = self
            .connections
            .iter()
            .find(|(h, _, _)| h == host)
            .ok_or_else(|| anyhow::anyhow!("{host} is not among the connected hosts"))?;
        Ok(connection.command(&remote::command_line(&[
            "sh",
            "-c",
            AGENT_SCRIPT,
            "sh",
            program.as_str(),
            AGENT_SUBCOMMAND,
        ])))
    }

    /// The agent's end as [`AGENT_SCRIPT`] and ssh report it: ssh's 255 is
    /// the connection, 128 + N the agent killed by signal N, anything
    /// else the agent's own status.
    fn describe_end(&self, status: ExitStatus) -> String {
        match (status.code(), status.signal()) {
            (Some(SSH_LOST), _) => {
                format!("the ssh connection failed or was lost (ssh exited with status {SSH_LOST})")
            }
            (Some(code), _) if code > 128 => {
                format!("the agent was killed by {}", signal::describe(code - 128))
            }
            (Some(code), _) => format!("the agent exited with status {code}"),
            (None, Some(sig)) => format!("ssh was killed here by {}", signal::describe(sig)),
            (None, None) => status.to_string(),
        }
    }
}
