//! Memory workloads.

pub mod block;
