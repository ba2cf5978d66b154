//! The `http.*` workloads: the built-in server under load from the
//! built-in generator, on loopback, each pinned to its own CPUs.

mod case;
mod cpu_share;
pub mod dynamic_page;
pub mod static_page;
