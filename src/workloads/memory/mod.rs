//! Memory workloads.

pub mod block;
pub mod chase;
pub mod latency;
pub mod numa;
pub mod spin_barrier;
pub mod stream;
pub mod stream_kernels;
