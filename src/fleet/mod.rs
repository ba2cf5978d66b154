//! `sledge fleet run`: one selection run on many hosts over SSH, every
//! host's run brought back into this machine's store.
//!
//! Nothing here is a protocol of sledge's own: each host is reached with
//! the system's OpenSSH client ([`crate::remote`]), runs this very sledge
//! binary (copied there when it has no copy of the same bytes) with the
//! same arguments and a store of its own in a scratch directory, and hands
//! its run back with `sledge export`; this side imports it, so a fleet's
//! runs are ordinary runs with their hosts' inventories, for `list`,
//! `compare` and `report`.
//!
//! Hosts run in parallel (each on its own thread) or one after another
//! ([`Order::Serial`], for hosts that share a switch or a storage array).
//! A host that fails (unreachable, another architecture, short of space,
//! dead midway) is reported with its reason and the others go on; a stop
//! request interrupts every remote run as Ctrl-C would, keeps what they
//! stored, and cleans every host up.

mod coordinator;
mod finished;
mod fleet_request;
mod host_report;
mod host_run;
pub mod interrupt;
mod order;
mod progress;
mod settings;

pub use coordinator::run;
pub use finished::{FleetOutcome, FleetRun};
pub use fleet_request::{FleetRequest, execute};
pub use host_report::{HostReport, HostResult};
pub use host_run::FLEET_HOST_NOTE;
pub use order::Order;
pub use progress::Progress;
pub use settings::{FleetSettings, forwarded_env};
