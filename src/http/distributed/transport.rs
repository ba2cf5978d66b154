//! How the coordinator reaches a client host: any command whose stdin and
//! stdout are an agent's. Over ssh for real hosts; as a child process of
//! a given sledge binary for tests (the same protocol over pipes).

use std::path::PathBuf;
use std::process::Command;

/// The hidden subcommand that runs an agent.
pub const AGENT_SUBCOMMAND: &str = "__http-agent";

/// Starts agents.
pub trait Transport: Sync {
    /// The command that runs an agent on `host`, its stdin and stdout
    /// carrying the protocol (the coordinator pipes all three streams).
    fn agent_command(&self, host: &str) -> anyhow::Result<Command>;
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

/// Agents on other hosts through the system's OpenSSH client, in
/// BatchMode (a host that wants a password fails instead of asking).
#[derive(Debug, Clone)]
pub struct SshAgents {
    /// The sledge command on the client hosts.
    pub remote_program: String,
}

impl Default for SshAgents {
    fn default() -> Self {
        SshAgents {
            remote_program: "sledge".into(),
        }
    }
}

/// How long ssh may take to reach a host.
const SSH_CONNECT_TIMEOUT_S: u32 = 10;

impl Transport for SshAgents {
    fn agent_command(&self, host: &str) -> anyhow::Result<Command> {
        let mut command = Command::new("ssh");
        command
            .args(["-o", "BatchMode=yes"])
            .arg("-o")
            .arg(format!("ConnectTimeout={SSH_CONNECT_TIMEOUT_S}"))
            .args(["-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"])
            .arg(ssh_destination(host))
            .arg(&self.remote_program)
            .arg(AGENT_SUBCOMMAND);
        Ok(command)
    }
}

/// `user@host:port` as ssh takes it (`ssh://user@host:port`).
fn ssh_destination(host: &str) -> String {
    match host.rsplit_once(':') {
        Some((_, port)) if port.parse::<u16>().is_ok() => format!("ssh://{host}"),
        _ => host.to_string(),
    }
}

/// The hosts of `user@h1,user@h2,...`: each non-empty, without spaces, not
/// starting with `-` (which ssh would take for an option), none twice.
pub fn parse_hosts(list: &str) -> anyhow::Result<Vec<String>> {
    let mut hosts: Vec<String> = Vec::new();
    for (i, host) in list.split(',').map(str::trim).enumerate() {
        if host.is_empty() {
            anyhow::bail!(
                "client host {} of `{list}` is empty: give user@host[:port],... separated by single commas",
                i + 1
            );
        }
        if host.starts_with('-') || host.chars().any(char::is_whitespace) {
            anyhow::bail!(
                "`{host}` is not a host: give user@host[:port] (no spaces, not starting with -)"
            );
        }
        if hosts.iter().any(|h| h == host) {
            anyhow::bail!("client host `{host}` is given twice");
        }
        hosts.push(host.to_string());
    }
    Ok(hosts)
}
