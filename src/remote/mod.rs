//! Running things on other hosts through the system's OpenSSH client.
//!
//! sledge has no remote protocol of its own: a fleet run or a distributed
//! load is ssh, a shell and sledge's own command line on the other side.
//! This module only starts `ssh` (and copies this binary with it); it
//! knows nothing of benchmarks.
//!
//! - [`SshHost`] and [`parse_host_list`]: `[user@]host[:port]` entries,
//!   comma-separated, checked strictly (nothing that ssh could read as an
//!   option), every error naming the entry.
//! - [`Connection::open`]: one ControlMaster connection per host, in
//!   BatchMode (a missing key is an error, never a prompt), with a connect
//!   timeout, keep-alives, `StrictHostKeyChecking=accept-new` and, from
//!   [`SshOptions`], an identity file and a known_hosts file. Its control
//!   socket lives in a private temporary directory; dropping the
//!   connection closes the master.
//! - [`Connection::run`] (capture), [`Connection::spawn`] (output streamed
//!   line by line as [`OutputLine`]s), [`Connection::upload`],
//!   [`Connection::write`] and [`Connection::download`] (files through
//!   `cat`, written beside the target and renamed, so never half there).
//! - [`quote`]: a word for the remote POSIX shell.
//! - [`ThisBinary`] and [`ensure_binary`]: this very sledge binary, and
//!   putting it on a host (after checking the host can run it) unless the
//!   same bytes are there already; the fleet and the distributed HTTP load
//!   both run sledge on hosts that may not have it.
//!
//! Every error is a [`RemoteError`] that names the host; what ssh itself
//! said (unknown host, refused, permission denied) is kept in it.

mod binary;
mod connection;
mod from_env;
mod host;
mod install;
mod shell_quote;

pub use binary::{ThisBinary, expected_arch};

pub use connection::{Connection, OutputLine, RemoteError, RemoteProcess, SshOptions};
pub use from_env::{
    IDENTITY_ENV, KNOWN_HOSTS_ENV, REMOTE_DIR_ENV, remote_dir_from_env, ssh_options_from_env,
};
pub use host::{HostError, SshHost, parse_host_list};
pub use install::{DEFAULT_DIR, Installed, Placement, ensure_binary, remote_dir};
pub use shell_quote::{command_line, quote};
