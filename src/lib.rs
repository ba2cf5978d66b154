//! sledge: a Linux server benchmark suite.
//!
//! The crate is a library first; `main.rs` only parses the command line and
//! maps errors to exit codes. The modules follow the layers of the design:
//! each one only calls the ones listed after it.

pub mod cli;
pub mod engine;
pub mod fleet;
pub mod http;
pub mod monitor;
pub mod probe;
pub mod remote;
pub mod report;
pub mod results;
pub mod secrets;
pub mod stats;
pub mod store;
pub mod suite;
pub mod workloads;
