//! The built-in HTTP server the `http.*` workloads measure: static
//! responses of fixed sizes and a database-backed dynamic page, under two
//! server models (event loops or a thread per connection).
//!
//! Routes: `/static/N` (N bytes, for each configured size), `/dynamic`
//! (when a database is configured); anything else is 404.
//!
//! The dynamic page's database call blocks. The `threads` model makes it on
//! the connection's own thread, as a prefork server does. The `async`
//! model makes SQLite's (in-process work, tens of microseconds) in the
//! event loop, like any other request work, and hands a database server's
//! (which waits on another process) to a [`blocking`] pool, as nginx hands
//! PHP to php-fpm, so that one slow connect does not stall every other
//! connection of the loop.

mod blocking;
mod content;
mod db_password;
pub mod dynamic;
mod event_loop;
mod limits;
mod pg_client;
pub mod request_parser;
mod stop;
mod threads;
mod ticker;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use anyhow::{Context, anyhow};
use mio::Waker;
use socket2::{Domain, Protocol, Socket, Type};

pub use content::static_path;
pub use dynamic::{Database, DbSource};
pub use limits::{DEFAULT_MAX_THREADS, HEADER_TIMEOUT, IDLE_TIMEOUT, Limits, SEND_TIMEOUT};
pub use stop::STOP_DEADLINE;
use stop::join_until;

use crate::sys::affinity;

/// The listen backlog; the kernel caps it at `net.core.somaxconn`.
const BACKLOG: i32 = 4096;

/// The static response sizes of the reference articles: 1 B, 2 KiB,
/// 200 KiB, 2 MiB and 10 MiB.
pub const STANDARD_SIZES: [u64; 5] = [1, 2 << 10, 200 << 10, 2 << 20, 10 << 20];

/// How the server handles connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// One epoll loop per thread (event-driven, like nginx).
    Async,
    /// A thread per connection with blocking I/O (like Apache prefork).
    Threads,
}

impl Model {
    /// Parses `async` or `threads`.
    pub fn parse(text: &str) -> Option<Model> {
        match text {
            "async" => Some(Model::Async),
            "threads" => Some(Model::Threads),
            _ => None,
        }
    }
}

/// What to serve and how.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where to listen; port 0 picks a free port.
    pub addr: SocketAddr,
    /// Server model.
    pub model: Model,
    /// Event-loop threads (async model; the threads model has one acceptor).
    pub threads: usize,
    /// Pin server threads to these CPUs.
    pub cpus: Option<Vec<usize>>,
    /// Static response sizes to pre-build, bytes.
    pub sizes: Vec<u64>,
    /// Serve `/dynamic` from this database (a fresh SQLite file, or a
    /// fresh table on a server), or not at all.
    pub dynamic: Option<DbSource>,
    /// Timeouts and the thread cap.
    pub limits: Limits,
}

impl ServerConfig {
    /// A one-thread async server on a free loopback port with the standard
    /// sizes and the dynamic page.
    pub fn loopback() -> Self {
        ServerConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            model: Model::Async,
            threads: 1,
            cpus: None,
            sizes: STANDARD_SIZES.to_vec(),
            dynamic: Some(DbSource::Sqlite),
            limits: Limits::default(),
        }
    }
}

/// A running server; stopped (threads joined, database removed) by
/// [`Server::stop`] or on drop.
pub struct Server {
    addr: SocketAddr,
    /// Kept to remove the database once every thread is done with it.
    content: Option<Arc<content::Content>>,
    pool: Option<Arc<blocking::BlockingPool>>,
    stop: Arc<AtomicBool>,
    wakers: Vec<Arc<Waker>>,
    threads: Vec<JoinHandle<std::io::Result<()>>>,
    failure: Arc<Mutex<Option<String>>>,
}

impl Server {
    /// Binds and starts serving. The sockets are bound first, so that an
    /// address in use is the one error reported, before a database is
    /// made; a failure after that removes the database again.
    pub fn start(config: &ServerConfig) -> anyhow::Result<Server> {
        let loops = match config.model {
            Model::Async => config.threads.max(1),
            Model::Threads => 1,
        };
        let mut addr = config.addr;
        let mut listeners = Vec::with_capacity(loops);
        for _ in 0..loops {
            let listener =
                bind(addr, loops > 1).with_context(|| format!("cannot listen on {addr}"))?;
            addr = listener.local_addr()?;
            listeners.push(listener);
        }
        let database = match &config.dynamic {
            Some(source) => Some(Database::create(source)?),
            None => None,
        };
        let pool = (config.model == Model::Async && database.as_ref().is_some_and(Database::waits))
            .then(|| Arc::new(blocking::BlockingPool::new(config.cpus.clone())));
        let content = Arc::new(
            content::Content::new(&config.sizes, database).context("building the responses")?,
        );
        // From here the server owns every handle: should a thread fail to
        // start, dropping it stops the others and removes the database.
        let mut server = Server {
            addr,
            content: Some(content),
            pool,
            stop: Arc::new(AtomicBool::new(false)),
            wakers: Vec::new(),
            threads: Vec::new(),
            failure: Arc::new(Mutex::new(None)),
        };
        for (i, listener) in listeners.into_iter().enumerate() {
            let (poll, waker) = event_loop::new_poll()?;
            server.wakers.push(waker.clone());
            let shared = Shared {
                content: server.content.clone().expect("set above"),
                pool: server.pool.clone(),
                stop: server.stop.clone(),
            };
            let (failure, cpus, model, limits) = (
                server.failure.clone(),
                config.cpus.clone(),
                config.model,
                config.limits,
            );
            let handle = std::thread::Builder::new()
                .name(format!("sledge-server-{i}"))
                .spawn(move || {
                    let result = serve(model, i, listener, poll, waker, shared, cpus, limits);
                    if let Err(e) = &result {
                        *failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                    }
                    result
                })
                .context("cannot start a server thread")?;
            server.threads.push(handle);
        }
        Ok(server)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://addr/path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A server thread's error, if one stopped with an error.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The dynamic page's SQLite file, if it has one (`None` once stopped).
    pub fn database_path(&self) -> Option<PathBuf> {
        self.content.as_ref()?.database_path()
    }

    /// The table holding the dynamic page's row on a database server
    /// (`None` for SQLite, or once stopped).
    pub fn database_table(&self) -> Option<String> {
        self.content.as_ref()?.database_table()
    }

    /// Stops every thread and waits for them, at most [`STOP_DEADLINE`],
    /// then removes the database (the SQLite file, or the table on a
    /// server). Threads still running then are left behind with a warning
    /// on stderr, and so is the database, which the last of them removes
    /// when it ends.
    pub fn stop(&mut self) -> anyhow::Result<()> {
        self.stop.store(true, Ordering::SeqCst);
        for waker in &self.wakers {
            let _ = waker.wake();
        }
        let deadline = Instant::now() + STOP_DEADLINE;
        let mut first_error = None;
        let (joined, mut left) = join_until(std::mem::take(&mut self.threads), deadline);
        for result in joined {
            match result {
                Some(Ok(())) => {}
                Some(Err(e)) => first_error = first_error.or(Some(anyhow!(e))),
                None => first_error = first_error.or(Some(anyhow!("a server thread panicked"))),
            }
        }
        // The loops are gone; the pool's queued pages finish, then nothing
        // else holds the content.
        if let Some(pool) = self.pool.take() {
            left += pool.stop(deadline);
        }
        let mut kept_database = None;
        if let Some(content) = self.content.take() {
            match Arc::try_unwrap(content) {
                Ok(mut content) => {
                    if let Some(database) = content.take_database()
                        && let Err(e) = database.remove()
                    {
                        first_error = first_error.or(Some(e));
                    }
                }
                // A thread left running still holds the content.
                Err(content) => kept_database = Some(content.database_shown()),
            }
        }
        if left > 0 || kept_database.is_some() {
            let database = match kept_database.flatten() {
                Some(db) => format!(
                    "; the page database ({db}) is removed when they end, or must be removed by hand if sledge exits first"
                ),
                None => String::new(),
            };
            crate::say!(
                "warning: the HTTP server's threads did not all stop within {} s (a client or database that does not answer?); left running{database}",
                STOP_DEADLINE.as_secs()
            );
        }
        match first_error {
            Some(e) => Err(e.context("the HTTP server failed")),
            None => Ok(()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// What every server thread shares.
struct Shared {
    content: Arc<content::Content>,
    /// Where the async model sends pages that wait on a database server.
    pool: Option<Arc<blocking::BlockingPool>>,
    stop: Arc<AtomicBool>,
}

#[allow(clippy::too_many_arguments)]
fn serve(
    model: Model,
    index: usize,
    listener: std::net::TcpListener,
    poll: mio::Poll,
    waker: Arc<Waker>,
    shared: Shared,
    cpus: Option<Vec<usize>>,
    limits: Limits,
) -> std::io::Result<()> {
    let Shared {
        content,
        pool,
        stop,
    } = shared;
    match model {
        Model::Async => {
            if let Some(cpus) = &cpus {
                affinity::set_affinity(&[cpus[index % cpus.len()]])
                    .map_err(std::io::Error::other)?;
            }
            listener.set_nonblocking(true)?;
            event_loop::EventLoop::new(
                poll,
                mio::net::TcpListener::from_std(listener),
                waker,
                content,
                pool,
                stop,
                limits,
            )
            .run()
        }
        Model::Threads => {
            if let Some(cpus) = &cpus {
                affinity::set_affinity(cpus).map_err(std::io::Error::other)?;
            }
            threads::run(listener, poll, waker, content, stop, cpus, limits)
        }
    }
}

/// A listening socket; with `shared`, SO_REUSEPORT so that each event loop
/// has its own on the same port.
fn bind(addr: SocketAddr, shared: bool) -> std::io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    if shared {
        socket.set_reuse_port(true)?;
    }
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_http_doc_states_the_timeouts_the_server_keeps() {
        let doc = include_str!("../../../docs/http.md");
        let words = doc.split_whitespace().collect::<Vec<_>>().join(" ");
        let limits = Limits::default();
        assert_eq!(
            (
                limits.header_timeout,
                limits.idle_timeout,
                limits.send_timeout
            ),
            (HEADER_TIMEOUT, IDLE_TIMEOUT, SEND_TIMEOUT)
        );
        for phrase in [
            format!(
                "a connection that sends nothing is closed {} s after the accept",
                HEADER_TIMEOUT.as_secs()
            ),
            format!(
                "complete within {} s of the accept or of its first byte",
                HEADER_TIMEOUT.as_secs()
            ),
            format!(
                "closed after idling {} s between requests",
                IDLE_TIMEOUT.as_secs()
            ),
            format!(
                "takes no bytes of a response for {} s is dropped",
                SEND_TIMEOUT.as_secs()
            ),
        ] {
            assert!(
                words.contains(&phrase),
                "docs/http.md does not say `{phrase}`"
            );
        }
    }
}
