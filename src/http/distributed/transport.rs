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
