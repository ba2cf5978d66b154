//! What the caller is told while the fleet runs.

use super::host_report::HostReport;
use crate::remote::{OutputLine, SshHost};

/// What the caller is told while the fleet runs.
pub enum Progress<'a> {
    /// A step on a host (connected, copying, running).
    Note { host: &'a SshHost, text: &'a str },
    /// A line the remote sledge printed.
    Output {
        host: &'a SshHost,
        line: &'a OutputLine,
    },
    /// A host's part ended (its run already imported when it landed).
    Done { report: &'a HostReport },
}
