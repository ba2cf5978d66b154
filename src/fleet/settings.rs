//! How the fleet reaches its hosts and what it runs there.

use crate::remote::{SshOptions, ThisBinary};

/// Environment variables passed on to the remote sledge: sledge's own test
/// hooks (which enable hidden workloads and script their values), so that
/// a fleet run of them behaves there as here. Nothing else of this
/// side's environment is sent.
const FORWARDED_ENV_PREFIXES: &[&str] = &["SLEDGE_TEST_", "SLEDGE_SCRIPTED_"];

/// How the fleet reaches its hosts and what it runs there.
#[derive(Debug, Clone)]
pub struct FleetSettings {
    /// ssh's identity, known_hosts file and connect timeout.
    pub ssh: SshOptions,
    /// The directory on each host for sledge's copies and scratch
    /// directories; a relative path is taken from the login directory.
    pub remote_dir: String,
    /// The arguments of `sledge run` on every host (targets, parameters,
    /// options), checked on this side first.
    pub run_args: Vec<String>,
    /// This binary, then the builds given for other architectures
    /// (`--binary-for`): each host runs the first one built for it.
    pub binaries: Vec<ThisBinary>,
    /// The environment variables sent along (see [`forwarded_env`]).
    pub env: Vec<(String, String)>,
}

/// This process's environment variables that a remote sledge gets too.
pub fn forwarded_env() -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(name, _)| FORWARDED_ENV_PREFIXES.iter().any(|p| name.starts_with(p)))
        .collect();
    env.sort();
    env
}
