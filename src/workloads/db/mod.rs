//! The `db.*` workloads: the database benchmarks users compare servers by,
//! sysbench's OLTP scripts (`db.oltp`) and pgbench's built-in TPC-B-like
//! scripts (`db.tpcb`), on the embedded SQLite (the default: they run on
//! any machine) or a PostgreSQL or MariaDB/MySQL server by URL.
//!
//! A case makes a namespace of its own (`namespace`: a SQLite file in a
//! scratch directory, a schema or a database named `sledge_...`), loads
//! its tables there in `prepare` (untimed; the load time is a figure of
//! its own), opens one connection per client, runs the clients' loop in
//! each trial (`clients`) and drops the namespace in `cleanup`, which the
//! engine runs after the trials, a failure or Ctrl-C.

pub mod case;
pub mod clients;
pub mod conn;
pub mod loaded_tables;
pub mod local_pg;
pub mod namespace;
pub mod oltp;
pub mod server_process;
pub mod server_settings;
pub mod tpcb;
