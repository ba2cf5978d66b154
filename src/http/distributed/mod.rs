//! HTTP load from several client hosts at once, merged exactly.
//!
//! One server often out-runs one client machine, so the articles loaded
//! it from several (six httperf clients at 10 requests/s each). The
//! coordinator starts an agent on every client host (over ssh, or as a
//! child process), gives each its share of the load, measures each
//! host's clock against its own, starts them all at one agreed instant,
//! and adds their raw histograms and counters: the merged p99 is the p99
//! of every request, never an average of percentiles.

pub mod agent;
pub mod clock_offset;
pub mod coordinator;
pub mod from_hosts;
pub mod merge;
pub mod protocol;
mod realtime;
pub mod share;
pub mod transport;

pub use coordinator::run;
pub use from_hosts::{FromHosts, run_from};
pub use merge::{DistributedReport, HostLoad};
pub use protocol::{AgentLoad, WireRate};
pub use transport::{LocalAgents, SshAgents, Transport};
