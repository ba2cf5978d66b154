//! The ssh options and the remote directory a `run` takes from the
//! environment. A case's parameters and a profile have no place for a key
//! file or a known_hosts file, so every workload that reaches hosts from
//! inside a `run` (`clients_from` of the `http.*` workloads, a `net.*`
//! peer over ssh) reads them here, the same way.

use std::path::PathBuf;

use anyhow::anyhow;

use super::connection::SshOptions;
use super::install::{DEFAULT_DIR, remote_dir};

/// A private key for the hosts (`ssh -i`).
pub const IDENTITY_ENV: &str = "SLEDGE_SSH_IDENTITY";
/// A known_hosts file for the hosts instead of ssh's own.
pub const KNOWN_HOSTS_ENV: &str = "SLEDGE_SSH_KNOWN_HOSTS";
/// The directory on the hosts for the copy of sledge, instead of
/// [`DEFAULT_DIR`] (the one `sledge fleet run` and `sledge http --from`
/// use by default).
pub const REMOTE_DIR_ENV: &str = "SLEDGE_REMOTE_DIR";

/// The ssh options the environment gives ([`IDENTITY_ENV`],
/// [`KNOWN_HOSTS_ENV`]), ssh's own configuration otherwise.
pub fn ssh_options_from_env() -> SshOptions {
    let path = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    SshOptions {
        identity: path(IDENTITY_ENV),
        known_hosts: path(KNOWN_HOSTS_ENV),
        ..SshOptions::default()
    }
}

/// The directory for the copy of sledge: [`REMOTE_DIR_ENV`]'s, else
/// [`DEFAULT_DIR`]; a value that is no path is an error naming it.
pub fn remote_dir_from_env() -> anyhow::Result<String> {
    match std::env::var(REMOTE_DIR_ENV) {
        Ok(dir) if !dir.is_empty() => remote_dir(&dir).map_err(|e| anyhow!("{REMOTE_DIR_ENV}={e}")),
        _ => Ok(DEFAULT_DIR.to_string()),
    }
}
