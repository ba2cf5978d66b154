//! The results store: one SQLite file, or one PostgreSQL database shared
//! by many hosts, that keeps every run.
//!
//! Layout: a run (times, sledge version, profile, host inventory as JSON,
//! command line, status) has cases (workload id and version, parameters as
//! JSON, warnings); a case has trials (wall time, health as JSON), metric
//! summaries, one sample per trial per metric, and optionally a serialized
//! latency histogram. Each case is stored in its own transaction, so a crash
//! loses at most the case in flight. Every run has a UUID that names it
//! across stores: an exported run imported elsewhere keeps it, and
//! importing it twice adds nothing.
//!
//! The schema is versioned (`PRAGMA user_version`, see [`SCHEMA_VERSION`])
//! and the file is marked as sledge's (`PRAGMA application_id`, see
//! [`APPLICATION_ID`]). [`Store::open`] never writes to a file that is not
//! a sledge store: it reads the SQLite header itself before opening
//! anything read-write.
//!
//! Nothing is created by accident: only the default location gets its
//! directory made ([`Store::open_default`]), a path the user typed must be
//! in an existing directory, and commands that only read
//! ([`Store::open_read_only`]) never create a store at all, nor upgrade
//! or otherwise write one.
//!
//! A `postgres://` or `postgresql://` URL in place of the path
//! ([`StoreLocation`]) keeps the same tables, versions and runs in a
//! PostgreSQL database: the queries are shared (`db.rs` is the seam between
//! them and the two databases), only the schema's steps are written for
//! each (`schema.rs`, `pg_schema.rs`).

mod case_history;
pub(crate) mod db;
pub(crate) mod db_value;
mod directory;
mod error;
mod handle;
pub mod later_params;
mod location;
mod migrations;
mod pg_conn;
pub(crate) mod pg_deadline;
mod pg_schema;
mod read;
mod read_only;
mod run_listing;
mod schema;
mod schema_version;
mod sql_error;
mod sqlite_file;
mod workload_runs;
mod write;

#[cfg(test)]
mod tests;

pub use case_history::{CaseHistoryEntry, HistoryMetric};
pub use error::StoreError;
pub use handle::Store;
pub use location::StoreLocation;
pub use read::MIN_UUID_PREFIX;
pub use run_listing::RunListing;
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};
pub use workload_runs::WorkloadRun;
pub use write::Imported;
