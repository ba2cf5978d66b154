//! What the server allows a client: its timeouts and its thread cap.

use std::time::Duration;

/// From accepting a connection, or from the first byte of a later
/// request, until the request's head is complete: nginx's
/// `client_header_timeout`. A connection that sends nothing at all after
/// the accept is closed after this too.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(60);
/// A kept-alive connection's wait for its next request, from the end of
/// the last response: nginx's `keepalive_timeout`, longer than the header
/// timeout so that a client that paces its requests (a browser, a
/// monitoring probe every minute) finds its connection still open.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(75);
/// Without any progress writing a response to a client that does not
/// read: nginx's `send_timeout`.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(60);

/// What the server allows a client, so that clients that stall, idle or
/// flood cannot hold its memory, descriptors or threads for ever. The
/// defaults are nginx's and Apache's where they have one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From accepting a connection, or from the first byte of a later
    /// request, until the request's head is complete; then the connection
    /// is closed ([`HEADER_TIMEOUT`] by default).
    pub header_timeout: Duration,
    /// Between requests on a kept-alive connection ([`IDLE_TIMEOUT`] by
    /// default).
    pub idle_timeout: Duration,
    /// Without any progress writing a response to a client that does not
    /// read ([`SEND_TIMEOUT`] by default).
    pub send_timeout: Duration,
    /// The threads model's connection threads at once (Apache's
    /// `MaxRequestWorkers`); further connections wait in the listen queue
    /// until a thread ends.
    pub max_threads: usize,
}

/// The default cap on connection threads: Apache's `MaxRequestWorkers` is
/// 256 (prefork) to 400 (worker, event); this is higher so that the
/// articles' 500 clients each get their thread.
pub const DEFAULT_MAX_THREADS: usize = 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: HEADER_TIMEOUT,
            idle_timeout: IDLE_TIMEOUT,
            send_timeout: SEND_TIMEOUT,
            max_threads: DEFAULT_MAX_THREADS,
        }
    }
}

impl Limits {
    /// The shortest of the timeouts.
    pub(super) fn shortest_timeout(&self) -> Duration {
        self.header_timeout
            .min(self.idle_timeout)
            .min(self.send_timeout)
    }
}
