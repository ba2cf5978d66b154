//! The `http.*` workloads: the built-in server under load from the
//! built-in generator, on loopback, each pinned to its own CPUs; or from
//! client hosts over the network (`clients_from`).

mod case;
pub mod clients_from;
mod cpu_share;
pub mod dynamic_page;
pub mod static_page;
