//! The PostgreSQL side of the dynamic page: `tokio-postgres` driven by one
//! current-thread runtime per server thread, with a deadline on every step.
//!
//! The synchronous `postgres` crate builds a new runtime for every
//! connection, which a page that connects per request would pay each time
//! (and the page is meant to cost the connection, not a runtime). It also
//! has no deadline on the login: `connect_timeout` bounds only the TCP
//! connect, so a server that accepts and then says nothing would hold a
//! server thread forever. Here the connection and login together are
//! bounded by `connect_timeout` (as libpq bounds them), and the query and
//! the disconnect by [`IO_TIMEOUT`], through the store's
//! `store::pg_deadline`, which both of sledge's PostgreSQL clients share.

use std::cell::RefCell;
use std::time::Duration;

use anyhow::{Context, anyhow};
use tokio::runtime::{Builder, Runtime};
use tokio_postgres::{Config, SimpleQueryMessage};

use crate::store::pg_deadline;

/// How long the query and the disconnect of one page may take before the
/// page fails: a page is one short query, so a server silent this long has
/// stalled (and stopping the server, or Ctrl-C, waits no longer).
pub(super) const IO_TIMEOUT: Duration = Duration::from_secs(5);

thread_local! {
    /// This thread's runtime, built on its first page.
    static RUNTIME: RefCell<Option<Runtime>> = const { RefCell::new(None) };
}

/// Runs `step` on this thread's runtime (built on its first page).
fn with_runtime<T>(step: impl FnOnce(&Runtime) -> Result<T, String>) -> anyhow::Result<T> {
    RUNTIME.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let runtime = Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()
                .context("starting the PostgreSQL client")?;
            *slot = Some(runtime);
        }
        step(slot.as_ref().expect("built above")).map_err(|e| anyhow!(e))
    })
}

/// The connection or the login failed: the statement was never sent, so
/// it cannot have done anything on the server.
#[derive(Debug, thiserror::Error)]
#[error("cannot connect: {0:#}")]
pub(super) struct NotConnected(anyhow::Error);

/// Connects, runs `sql` with the simple query protocol, disconnects
/// cleanly; returns the first column of the first row, if any. A failure
/// names the step that failed; one before the statement was sent is a
/// [`NotConnected`].
pub(super) fn query_first(config: &Config, sql: &str) -> anyhow::Result<Option<String>> {
    Ok(query_column(config, sql)?.into_iter().next())
}

/// As [`query_first`], returning the first column of every row.
pub(super) fn query_column(config: &Config, sql: &str) -> anyhow::Result<Vec<String>> {
    let (client, connection) =
        with_runtime(|runtime| pg_deadline::connect(runtime, config, IO_TIMEOUT))
            .map_err(NotConnected)?;
    // The connection future does the socket I/O; it runs beside the query
    // and ends once the client is dropped and the Terminate message is out.
    let query = async move {
        let messages = client.simple_query(sql).await;
        drop(client);
        messages
    };
    let (messages, closed) = with_runtime(|runtime| {
        pg_deadline::block(runtime, IO_TIMEOUT, async {
            let (messages, closed) = futures_util::future::join(query, connection).await;
            Ok((messages, closed))
        })
    })
    .map_err(|e| e.context(sql.to_string()))?;
    let messages = messages.map_err(|e| anyhow!("{sql}: {}", pg_deadline::describe(&e)))?;
    closed.map_err(|e| anyhow!("disconnecting: {}", pg_deadline::describe(&e)))?;
    Ok(messages
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(row) => row.get(0).map(str::to_string),
            _ => None,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::str::FromStr;
    use std::time::Instant;

    #[test]
    fn a_server_that_accepts_but_never_answers_fails_the_login_in_time() {
        // A listener that completes the TCP handshake (the kernel does) but
        // never reads the startup message or answers it.
        let silent = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = silent.local_addr().unwrap().port();
        let config = Config::from_str(&format!(
            "postgres://u@127.0.0.1:{port}/db?connect_timeout=1"
        ))
        .unwrap();
        let started = Instant::now();
        let e = query_first(&config, "SELECT 1").unwrap_err();
        let waited = started.elapsed();
        assert!(e.is::<NotConnected>(), "{e:#}");
        let text = format!("{e:#}");
        assert!(text.contains("cannot connect"), "{text}");
        assert!(text.contains("no answer within 1 s"), "{text}");
        assert!(waited >= Duration::from_millis(900), "{waited:?}");
        // Well under the run-away case, with room for a loaded machine.
        assert!(waited < Duration::from_secs(10), "{waited:?}");
        drop(silent);
    }

    #[test]
    fn nothing_listening_is_a_refused_connection() {
        let free = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = free.local_addr().unwrap().port();
        drop(free);
        let config = Config::from_str(&format!("postgres://u@127.0.0.1:{port}/db")).unwrap();
        let e = query_first(&config, "SELECT 1").unwrap_err();
        assert!(e.is::<NotConnected>(), "{e:#}");
        let text = format!("{e:#}");
        assert_eq!(
            text,
            "cannot connect: error connecting to server: Connection refused (os error 111)"
        );
        assert!(text.to_lowercase().contains("refused"), "{text}");
    }
}
