//! Every workload sledge can run, one module per family, and the registry
//! that finds them by id (`registry.rs`).

pub mod build;
pub mod command;
pub mod common;
pub mod cpu;
pub mod crypto;
pub mod db;
pub mod http;
pub mod latency;
pub mod memory;
pub mod net;
mod registry;
pub mod sched;
pub mod scripted;
pub mod storage;
pub mod toy;
pub mod unixbench;

pub use registry::{all, family, find, index_entry_of, later_params_of};
