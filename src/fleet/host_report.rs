//! What happened on one host, as the fleet reports it.

use crate::remote::SshHost;
use crate::results::RunStatus;

/// What happened on one host, as the fleet reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum HostResult {
    /// Its run is in the store: under `id` (already there when
    /// `already_stored`), ended with `status` on the host.
    Landed {
        id: i64,
        uuid: String,
        status: RunStatus,
        already_stored: bool,
    },
    /// No run came back; the reason names what failed.
    Failed(String),
}

/// One host's part of the fleet run.
#[derive(Debug, Clone)]
pub struct HostReport {
    pub host: SshHost,
    pub result: HostResult,
    /// Whether the host's part ended because of a stop request.
    pub interrupted: bool,
    /// Wall time of the host's part, connecting and copying included.
    pub seconds: f64,
    /// A scratch directory that could not be removed from the host.
    pub left_behind: Option<String>,
}

impl HostReport {
    /// Whether the host's run landed and completed.
    pub fn complete(&self) -> bool {
        matches!(
            self.result,
            HostResult::Landed {
                status: RunStatus::Complete,
                ..
            }
        )
    }
}
