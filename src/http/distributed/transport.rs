//! How the coordinator reaches a client host: any command whose stdin and
//! stdout are an agent's. Over ssh for real hosts; as a child process of
//! a given sledge binary for tests (the same protocol over pipes).

use std::path::PathBuf;
use std::process::Command;

use crate::remote::{self, Connection, RemoteError, SshHost, SshOptions};

/// The hidden subcommand that runs an agent.
pub const AGENT_SUBCOMMAND: &str = "__http-agent";

/// Starts agents.
pub trait Transport: Sync {
    /// The command that runs an agent on `host`, its stdin and stdout
    /// carrying the protocol (the coordinator pipes all three streams).
    fn agent_command(&self, host: &str) -> anyhow::Result<Command>;

    /// What an exit status of the agent's command means beyond the
    /// agent's own (ssh's 255: the connection was lost).
    fn explain_exit(&self, _status: std::process::ExitStatus) -> Option<&'static str> {
        None
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
    connections: Vec<(String, Connection)>,
    program: String,
}

impl SshAgents {
    /// Connects to every host at once. Any host that cannot be reached
    /// (unknown, refused, no access, silent past the connect timeout) is
    /// an error naming it with ssh's own words; the connections made are
    /// closed again.
    pub fn connect(
        hosts: &[SshHost],
        options: &SshOptions,
        program: &str,
    ) -> anyhow::Result<SshAgents> {
        let opened: Vec<Result<Connection, RemoteError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = hosts
                .iter()
                .map(|host| scope.spawn(move || Connection::open(host, options)))
                .collect();
            handles
                .into_iter()
                .zip(hosts)
                .map(|(h, host)| {
                    h.join().unwrap_or_else(|_| {
                        Err(RemoteError::Connect {
                            host: host.to_string(),
                            message: "connecting panicked".into(),
                        })
                    })
                })
                .collect()
        });
        let mut connections = Vec::with_capacity(hosts.len());
        let mut failures = Vec::new();
        for (host, result) in hosts.iter().zip(opened) {
            match result {
                Ok(connection) => connections.push((host.to_string(), connection)),
                Err(e) => failures.push(e.to_string()),
            }
        }
        if !failures.is_empty() {
            anyhow::bail!(
                "{} of {} client host(s) cannot be reached; nothing was sent to the server:\n  {}",
                failures.len(),
                hosts.len(),
                failures.join("\n  ")
            );
        }
        Ok(SshAgents {
            connections,
            program: program.to_string(),
        })
    }

    /// The hosts, as [`crate::http::distributed::run`] names them.
    pub fn hosts(&self) -> Vec<String> {
        self.connections.iter().map(|(h, _)| h.clone()).collect()
    }
}

impl Transport for SshAgents {
    fn agent_command(&self, host: &str) -> anyhow::Result<Command> {
        let (_, connection) = self
            .connections
            .iter()
            .find(|(h, _)| h == host)
            .ok_or_else(|| anyhow::anyhow!("{host} is not among the connected hosts"))?;
        Ok(connection.command(&remote::command_line(&[
            self.program.as_str(),
            AGENT_SUBCOMMAND,
        ])))
    }

    fn explain_exit(&self, status: std::process::ExitStatus) -> Option<&'static str> {
        (status.code() == Some(255))
            .then_some("ssh's status for a lost connection or an sshd that went away")
    }
}
