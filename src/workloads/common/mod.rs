//! Pieces shared by several workloads.

pub mod address_space;
pub mod event_loop;
pub mod params;
pub mod pthread_mutex;
pub mod rng;
pub mod sysbench_accounting;
pub mod workdir;
