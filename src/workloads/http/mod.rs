//! The `http.*` workloads: the built-in server under load from the
//! built-in generator, on loopback, each pinned to its own CPUs, or from
//! client hosts over the network (`clients_from`); and any URL under the
//! built-in generator (`http.url`).

mod case;
pub mod clients_from;
mod cpu_share;
pub mod dynamic_page;
mod load_metrics;
mod load_params;
mod served_page_hooks;
pub(crate) mod server_processes;
pub mod static_page;
pub mod url_page;
