//! HTTP/1.1 load generation and the built-in server that workloads measure.
//!
//! This is a library layer below the workloads: `sledge http URL` drives the
//! generator against any server, and the `http.*` workloads run it against
//! the built-in server on loopback. Both sides are hand-rolled on epoll
//! (mio) because the generator must cost less CPU per request than wrk and
//! the server less than nginx, or the tool measures itself.

mod arrival;
pub mod distributed;
mod header_value;
mod histogram;
mod line_ends;
pub mod load;
pub mod load_request;
mod nap;
pub(crate) mod ready;
pub mod request_bytes;
pub mod response;
pub mod server;
pub mod tally;
pub mod url;
mod worker;

pub use load::{LoadConfig, LoadReport, Rate, run, run_until_cancelled};
pub use load_request::{BadLoad, LoadRequest};
pub use request_bytes::{Header, Method, RequestSpec};
pub use server::{DbSource, Model, Server, ServerConfig};
pub use tally::{ErrorCounts, LatencySummary};
pub use url::{Target, parse_target, parse_targets, parse_targets_for};
pub use worker::Pacing;
