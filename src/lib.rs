//! sledge: a Linux server benchmark suite.
//!
//! The crate is a library first; `main.rs` only parses the command line and
//! maps errors to exit codes. The modules are layers: each one only imports
//! the ones after it in this order (a test, `tests/layers.rs`, checks it):
//!
//! Layers, highest first: cli > fleet > report > analysis > suite > workloads > http > engine > store > results > monitor > probe > stats > secrets > remote > sys > visible
//!
//! - `cli`: one file per subcommand, wiring only.
//! - `fleet`: a run on many hosts over SSH (checks, copying sledge, export
//!   and import).
//! - `report`: tables, JSON, CSV, Markdown, the portable export document
//!   and the HTML report: the rendering of runs and of `analysis`'s views.
//! - `analysis`: the judgement the reports show, as typed views:
//!   comparisons and verdicts, history change points, fleet outliers,
//!   pivots, scaling fits, run-to-run noise, prices.
//! - `suite`: profiles, planning and executing a run (rounds in their own
//!   processes), leftovers of killed runs.
//! - `workloads`: one module per family, each implementing the Workload
//!   trait of `engine`, which is why they sit above it: the engine drives
//!   them through that trait without importing them.
//! - `http`: the load generator and the built-in server, and the load from
//!   several client hosts (`http::distributed`).
//! - `engine`: the Workload trait, parameters, trials, rounds, cancellation.
//! - `store`: the results database and its migrations.
//! - `results`: the records a run produces, shared by engine, store and
//!   report.
//! - `monitor`: `/proc` sampling and the hardware readers during trials,
//!   and the mark that proves which process made a directory (`maker_mark`).
//! - `probe`: the host inventory.
//! - `stats`: pure statistics.
//! - `secrets`: masking passwords.
//! - `remote`: hosts reached through the system's OpenSSH client.
//! - `sys`: thin wrappers over the OS (affinity, limits, mappings, starting
//!   threads together), knowing nothing of benchmarks.
//! - `visible`: text from a store, a document or another host escaped for
//!   showing (control characters, bidi overrides), below everything that
//!   shows text.

pub mod analysis;
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
pub mod sys;
pub mod visible;
pub mod workloads;
