//! A PostgreSQL login and statements with a deadline on every step, for
//! both of sledge's PostgreSQL clients: the store (`pg_conn.rs`) and the
//! dynamic page's connection per request (`http/server/pg_client.rs`).
//!
//! `tokio-postgres`'s own `connect_timeout` bounds only the TCP connect: a
//! server that accepts and then says nothing would hold the caller for
//! good. Here the connection and the login together are bounded by the
//! connect timeout, as libpq bounds them, and any later step by the limit
//! its caller gives. Errors carry the server's own message, with any
//! password masked.

use std::error::Error as _;
use std::future::Future;
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio_postgres::tls::NoTlsStream;
use tokio_postgres::{Client, Config, Connection, NoTls, Socket};

/// Connects and logs in on `runtime` within `config`'s connect timeout, or
/// `default_limit` when it sets none. The connection future does the
/// socket I/O: the caller spawns it or joins it with its statements.
pub(crate) fn connect(
    runtime: &Runtime,
    config: &Config,
    default_limit: Duration,
) -> Result<(Client, Connection<Socket, NoTlsStream>), String> {
    let limit = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(default_limit);
    block(runtime, limit, config.connect(NoTls))
}

/// Runs `step` to completion on `runtime`, within `limit`.
pub(crate) fn block<T>(
    runtime: &Runtime,
    limit: Duration,
    step: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, String> {
    match runtime.block_on(async { tokio::time::timeout(limit, step).await }) {
        Ok(result) => result.map_err(|e| describe(&e)),
        Err(_) => Err(format!("no answer within {} s", limit.as_secs_f64())),
    }
}

/// A PostgreSQL error with the server's message when there is one
/// (`tokio_postgres::Error`'s own text is only "db error"), passwords
/// masked.
pub(crate) fn describe(e: &tokio_postgres::Error) -> String {
    let text = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut text = e.to_string();
            let mut source = e.source();
            while let Some(s) = source {
                text.push_str(&format!(": {s}"));
                source = s.source();
            }
            text
        }
    };
    crate::secrets::redact(&text)
}
