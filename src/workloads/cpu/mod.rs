//! CPU and scheduler workloads compatible with sysbench 1.0.20.

pub mod mutex;
pub mod primes;
pub mod threads;
