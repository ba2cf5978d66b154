//! A stored run as `sledge list` shows it.

use crate::results::RunStatus;

/// One line of `sledge list`: a stored run without its cases.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunListing {
    /// Store id of the run.
    pub id: i64,
    /// The run's UUID, kept across export and import.
    pub uuid: String,
    /// When the run started, RFC 3339 in UTC.
    pub started: String,
    /// When the run ended; absent while running (or if the process died).
    pub finished: Option<String>,
    /// The profile name, or `custom`.
    pub profile: String,
    /// How the run ended.
    pub status: RunStatus,
    /// The host's name, from the inventory taken at the start.
    pub hostname: String,
    /// The host as `sledge fleet run --hosts` named it, for a run made by a
    /// fleet (its `fleet_host=` note); `null` otherwise. Clones of one
    /// image share a host name but not this.
    pub fleet_host: Option<String>,
    /// How many cases were stored.
    pub cases: u32,
    /// The version of sledge that made the run.
    pub sledge_version: String,
}

/// A listing's text escaped for `sledge list` ([`crate::visible`]).
impl crate::visible::EscapeText for RunListing {
    fn escape_text(&mut self) {
        let RunListing {
            id: _,
            uuid,
            started,
            finished,
            profile,
            status: _,
            hostname,
            fleet_host,
            cases: _,
            sledge_version,
        } = self;
        fleet_host.escape_text();
        uuid.escape_text();
        started.escape_text();
        finished.escape_text();
        profile.escape_text();
        hostname.escape_text();
        sledge_version.escape_text();
    }
}
