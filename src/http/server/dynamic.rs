//! The dynamic page: per request, connect to a database, read one row
//! holding a 100 B string, send it, disconnect, as the reference article's
//! PHP + MySQL page did. The connection set-up is the point: it is what
//! such a page costs a server, so there is no pooling and no connection is
//! ever reused.
//!
//! The database is one of
//! - `sqlite`: an embedded file, created when the server starts (in a
//!   marked scratch directory of the temporary directory, which the next
//!   run removes should this process be killed: `monitor::maker_mark`) and
//!   removed when it stops;
//! - `postgres://user[:password]@host[:port]/database`, or libpq's keyword
//!   form `host=... user=... dbname=...` (`tokio-postgres` on a runtime per
//!   server thread, no TLS; see `pg_client`);
//! - `mysql://user[:password]@host[:port]/database` for MariaDB or MySQL
//!   (the `mysql` crate, synchronous, no TLS).
//!
//! For a server, preparing creates a table with a name unique to this
//! process and server (so that runs sharing a database do not collide),
//! marked by a comment naming this process (`monitor::maker_mark`), and
//! inserts the row; [`Database::remove`], or failing that the drop, drops
//! the table again, and a later sledge drops it should this process be
//! killed first (only a table with a valid mark, made on this host by a
//! process that is gone). Each page is then one connection, one text-protocol
//! `SELECT body ... WHERE id = 1` (a single round trip, as PHP's
//! `mysql_query` sends it) and a clean disconnect.
//!
//! The MySQL client is told the server's packet limit instead of asking for
//! it, and not to switch to the server's Unix socket, so that a page costs
//! what a PHP page costs: the handshake and the one query, over the
//! transport the URL names.
//!
//! Every message names the database with its password replaced by `***`
//! (`crate::secrets`), and so do the case's label and the stored run. A
//! password is still better left out of the command line, where every
//! local user sees it: without one, the clients' own sources are used
//! (`PGPASSWORD` or `~/.pgpass`, `~/.my.cnf` or `MYSQL_PWD`; see
//! `db_password`).

use super::db_password::{self, PgLogin};
use super::pg_client;
use crate::monitor::maker_mark::{MakerMark, MarkedDir};
use crate::secrets::redact;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use rusqlite::{Connection, OpenFlags};

/// Length of the string the page reads, as in the reference article.
pub const ROW_BYTES: usize = 100;

/// How long connecting to a database server may take unless the URL says
/// otherwise; a server that does not answer fails the case, not hangs it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Reads and writes to a MySQL server, unless the URL says otherwise: a
/// page is one short query, so a server silent this long has stalled, and
/// the worker waiting on it is free again (and stopping the server, or
/// Ctrl-C, waits no longer than this). PostgreSQL pages have the same
/// bound (`pg_client`).
const IO_TIMEOUT: Duration = pg_client::IO_TIMEOUT;
/// PostgreSQL: how long a statement may run on the server
/// (`statement_timeout`), how long sent data may stay unacknowledged
/// (`tcp_user_timeout`) and how soon an idle connection is probed
/// (keepalives), unless the URL says otherwise; with the client's own
/// deadlines they bound a stalled query, a lost network and a dead host.
const PG_STATEMENT_TIMEOUT: Duration = Duration::from_secs(5);
const PG_TCP_USER_TIMEOUT: Duration = Duration::from_secs(5);
const PG_KEEPALIVES_IDLE: Duration = Duration::from_secs(5);
/// The packet limit the MySQL client assumes instead of asking the server
/// on every connection (the row is 100 B; MariaDB's default is 16 MiB).
const MYSQL_MAX_PACKET: usize = 16 << 20;

/// The text of the one row: 100 printable bytes.
pub fn row_text() -> String {
    (0..ROW_BYTES)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect()
}

/// Where the dynamic page's row lives: the checked `db` parameter.
#[derive(Clone, PartialEq, Eq)]
pub enum DbSource {
    /// An embedded SQLite file.
    Sqlite,
    /// A PostgreSQL server, by URL.
    Postgres(String),
    /// A MariaDB or MySQL server, by URL.
    Mysql(String),
}

impl DbSource {
    /// Checks a `db` parameter: `sqlite`, a server URL, or libpq's
    /// keyword form (`host=h user=u dbname=d`, PostgreSQL), that parses.
    /// Does not connect.
    pub fn parse(db: &str) -> anyhow::Result<DbSource> {
        if db == "sqlite" {
            return Ok(DbSource::Sqlite);
        }
        let keywords = !db.contains("://") && db.contains('=');
        let source = if db.starts_with("postgres://") || db.starts_with("postgresql://") || keywords
        {
            DbSource::Postgres(db.to_string())
        } else if db.starts_with("mysql://") {
            DbSource::Mysql(db.to_string())
        } else {
            bail!(
                "db={}: expected `sqlite`, `postgres://user@host:port/database`, `host=... user=... dbname=...` (PostgreSQL) or `mysql://user@host:port/database`",
                redact(db)
            );
        };
        match &source {
            DbSource::Postgres(url) => {
                postgres_config(url)?;
            }
            DbSource::Mysql(url) => {
                mysql_opts(url)?;
            }
            DbSource::Sqlite => {}
        }
        Ok(source)
    }

    /// The parameter as it can be shown: the password replaced by `***`.
    pub fn shown(&self) -> String {
        match self {
            DbSource::Sqlite => "sqlite".to_string(),
            DbSource::Postgres(url) | DbSource::Mysql(url) => redact(url),
        }
    }
}

impl fmt::Debug for DbSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DbSource({})", self.shown())
    }
}

/// The client settings of a PostgreSQL URL or keyword string, with the
/// page's timeouts where it sets none; its own password only.
fn postgres_config(url: &str) -> anyhow::Result<tokio_postgres::Config> {
    let mut config = tokio_postgres::Config::from_str(url).map_err(|e| {
        anyhow!(
            "db={}: not a valid PostgreSQL URL or keyword string: {}",
            redact(url),
            redact(&e.to_string())
        )
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(PG_TCP_USER_TIMEOUT);
    }
    if !url.contains("keepalives") {
        config
            .keepalives(true)
            .keepalives_idle(PG_KEEPALIVES_IDLE)
            .keepalives_interval(Duration::from_secs(1))
            .keepalives_retries(3);
    }
    let options = config.get_options().unwrap_or("").to_string();
    if !options.contains("statement_timeout") {
        let timeout = format!("-c statement_timeout={}", PG_STATEMENT_TIMEOUT.as_millis());
        config.options(&if options.is_empty() {
            timeout
        } else {
            format!("{options} {timeout}")
        });
    }
    Ok(config)
}

/// Without a password in `config`, the one libpq would use
/// (`db_password::postgres`).
fn add_postgres_password(config: &mut tokio_postgres::Config, env: db_password::Env<'_>) {
    if config.get_password().is_some() {
        return;
    }
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        // libpq matches a socket directory as `localhost`.
        _ => "localhost".to_string(),
    };
    let Some(user) = config.get_user().map(str::to_string) else {
        return;
    };
    let database = config.get_dbname().unwrap_or(&user).to_string();
    let login = PgLogin {
        host: &host,
        port: config.get_ports().first().copied().unwrap_or(5432),
        database: &database,
        user: &user,
    };
    if let Some(password) = db_password::postgres(env, login) {
        config.password(password);
    }
}

fn mysql_opts(url: &str) -> anyhow::Result<mysql::Opts> {
    let opts = mysql::Opts::from_url(url).map_err(|e| {
        anyhow!(
            "db={}: not a valid MySQL URL: {}",
            redact(url),
            redact(&e.to_string())
        )
    })?;
    if opts.get_db_name().is_none_or(str::is_empty) {
        bail!(
            "db={}: the URL names no database (mysql://user@host:port/DATABASE)",
            redact(url)
        );
    }
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let mut builder = mysql::OptsBuilder::from_opts(opts.clone());
    if opts.get_tcp_connect_timeout().is_none() {
        builder = builder.tcp_connect_timeout(Some(CONNECT_TIMEOUT));
    }
    if opts.get_read_timeout().is_none() {
        builder = builder.read_timeout(Some(IO_TIMEOUT));
    }
    if opts.get_write_timeout().is_none() {
        builder = builder.write_timeout(Some(IO_TIMEOUT));
    }
    if opts.get_max_allowed_packet().is_none() {
        builder = builder.max_allowed_packet(Some(MYSQL_MAX_PACKET));
    }
    if !query.contains("prefer_socket=") {
        builder = builder.prefer_socket(false);
    }
    Ok(builder.into())
}

/// Without a password in `opts`, the one the MySQL client would use
/// (`db_password::mysql`).
fn add_mysql_password(opts: mysql::Opts, env: db_password::Env<'_>) -> mysql::Opts {
    if opts.get_pass().is_some() {
        return opts;
    }
    match db_password::mysql(env) {
        Some(password) => mysql::OptsBuilder::from_opts(opts)
            .pass(Some(password))
            .into(),
        None => opts,
    }
}

/// The client settings for a checked PostgreSQL `db` parameter, with the
/// page's timeouts where it sets none and, without a password in it, the
/// one libpq would use: what `db.oltp` and `db.tpcb` connect with.
pub fn postgres_login(url: &str) -> anyhow::Result<tokio_postgres::Config> {
    let mut config = postgres_config(url)?;
    add_postgres_password(&mut config, &db_password::process_env);
    Ok(config)
}

/// The client settings for a checked MySQL `db` parameter, as
/// [`postgres_login`] for MariaDB and MySQL.
pub fn mysql_login(url: &str) -> anyhow::Result<mysql::Opts> {
    Ok(add_mysql_password(
        mysql_opts(url)?,
        &db_password::process_env,
    ))
}

/// The database behind the dynamic page, with the row in place.
pub struct Database {
    backend: Backend,
    /// Set once the table or file is gone.
    removed: bool,
}

enum Backend {
    Sqlite {
        /// The marked directory holding the file (and its journal).
        dir: MarkedDir,
        /// The file.
        path: PathBuf,
    },
    Postgres {
        config: Box<tokio_postgres::Config>,
        shown: String,
        table: String,
        select: String,
    },
    Mysql {
        opts: mysql::Opts,
        shown: String,
        table: String,
        select: String,
    },
}

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.backend {
            Backend::Sqlite { path, .. } => write!(f, "Database(sqlite {})", path.display()),
            Backend::Postgres { shown, table, .. } | Backend::Mysql { shown, table, .. } => {
                write!(f, "Database({shown} table {table})")
            }
        }
    }
}

/// The prefix of a page table's name on a database server: the kind, then
/// a tag of this host's name, so that a sledge cleaning up after a killed
/// one only ever considers tables made on its own host (a table of a
/// sledge running on another host sharing the database is not its to
/// judge).
fn table_prefix() -> String {
    format!("sledge_http_page_{}", host_tag())
}

/// `h` and 8 hex digits of this host's name: in the names of what sledge
/// makes on a shared database server, so that a later sledge judges only
/// what was made on its own host (a pid, and a boot id, mean nothing on
/// another one).
pub fn host_tag() -> String {
    // FNV-1a, 32 bits: stable across versions, unlike std's hasher.
    let tag = crate::probe::hostname()
        .bytes()
        .fold(0x811c_9dc5u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
        });
    format!("h{tag:08x}")
}

/// The page tables of this host whose sledge is gone, with their makers'
/// pids, among `rows` of "NAME COMMENT" ([`PG_PAGE_TABLES`],
/// [`MYSQL_PAGE_TABLES`]): only a table whose comment is a well-formed
/// mark naming it (`monitor::maker_mark`), made on this host, by a process
/// that is gone. A table without such a mark is never dropped, whatever
/// its name.
fn leftover_tables(rows: Vec<String>) -> Vec<(String, u32)> {
    let prefix = format!("{}_", table_prefix());
    rows.into_iter()
        .filter_map(|row| {
            let (name, comment) = row.split_once(' ')?;
            let mark = MakerMark::parse(comment)?;
            (name.starts_with(&prefix) && mark.name == name && mark.maker_gone())
                .then(|| (name.to_string(), mark.maker.pid))
        })
        .collect()
}

/// This process's mark for the page table `table`, as SQL text in single
/// quotes (the mark holds no quote: hex, digits, `:`, `[`, `]`, `=`, `-`
/// and the table's own name); `None` without `/proc` (the table then goes
/// unmarked: a later sledge never drops it).
fn table_mark(table: &str) -> Option<String> {
    let line = MakerMark::new(table)?.to_line();
    (!line.contains(['\'', '\\'])).then(|| format!("'{line}'"))
}

/// Says what a cleanup after a killed sledge removed.
fn say_dropped(shown: &str, dropped: &[(String, u32)]) {
    for (table, pid) in dropped {
        crate::say!(
            "note: db={shown}: dropped table {table}, left behind by a sledge that is gone (pid {pid})"
        );
    }
}

/// The query listing the PostgreSQL tables a plain `DROP TABLE name` would
/// reach whose names start with `sledge`, each as "NAME COMMENT" (names
/// and marks checked in Rust: `_` is a wildcard in LIKE).
const PG_PAGE_TABLES: &str = "SELECT c.relname::text || ' ' || coalesce(obj_description(c.oid, 'pg_class'), '') \
                              FROM pg_class c WHERE c.relkind = 'r' AND pg_table_is_visible(c.oid) \
                              AND c.relname LIKE 'sledge%'";

/// [`PG_PAGE_TABLES`] for MariaDB and MySQL: the tables of the URL's
/// database.
const MYSQL_PAGE_TABLES: &str = "SELECT CONCAT(table_name, ' ', table_comment) FROM information_schema.tables \
                                 WHERE table_schema = DATABASE() AND table_name LIKE 'sledge%'";

/// A name for this process's next table or file: process id, a counter and
/// the clock, so that two runs (even on two hosts) sharing a database do
/// not collide.
fn unique_name(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}_{}_{}_{nanos:08x}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

impl Database {
    /// Checks a `db` parameter without connecting (see [`DbSource::parse`]).
    pub fn check_param(db: &str) -> anyhow::Result<()> {
        DbSource::parse(db).map(|_| ())
    }

    /// Creates the page's database: a fresh SQLite file, or a fresh table
    /// on the server, holding the one row. A server that cannot be reached
    /// or refuses the login fails here, before anything is timed.
    pub fn create(source: &DbSource) -> anyhow::Result<Database> {
        match source {
            DbSource::Sqlite => Database::create_sqlite(),
            DbSource::Postgres(url) => Database::create_postgres(url),
            DbSource::Mysql(url) => Database::create_mysql(url),
        }
    }

    /// Creates a fresh SQLite file with the one row, in a marked scratch
    /// directory of its own in the temporary directory.
    pub fn create_sqlite() -> anyhow::Result<Database> {
        let dir = MarkedDir::create(&std::env::temp_dir(), "http-page")?;
        let path = dir.path().join("page.db");
        let db = Database {
            backend: Backend::Sqlite {
                dir,
                path: path.clone(),
            },
            removed: false,
        };
        let conn = Connection::open(&path)
            .with_context(|| format!("creating the page database {}", path.display()))?;
        conn.execute_batch("CREATE TABLE page (id INTEGER PRIMARY KEY, body TEXT NOT NULL);")
            .and_then(|_| conn.execute("INSERT INTO page (id, body) VALUES (1, ?1)", [row_text()]))
            .with_context(|| format!("filling the page database {}", path.display()))?;
        Ok(db)
    }

    fn create_postgres(url: &str) -> anyhow::Result<Database> {
        let mut config = postgres_config(url)?;
        add_postgres_password(&mut config, &db_password::process_env);
        let shown = redact(url);
        let table = unique_name(&table_prefix());
        let db = Database {
            backend: Backend::Postgres {
                config: Box::new(config.clone()),
                shown: shown.clone(),
                select: format!("SELECT body FROM {table} WHERE id = 1"),
                table: table.clone(),
            },
            removed: false,
        };
        // One simple query is one implicit transaction: the table and its
        // row appear together or not at all. Should the answer be lost,
        // dropping `db` still drops the table if it was made.
        // The mark (a comment, which no page reads) is what lets a later
        // sledge drop the table should this process be killed.
        let comment = table_mark(&table)
            .map(|mark| format!("; COMMENT ON TABLE {table} IS {mark}"))
            .unwrap_or_default();
        let create = format!(
            "CREATE TABLE {table} (id INT PRIMARY KEY, body VARCHAR({ROW_BYTES}) NOT NULL); \
             INSERT INTO {table} (id, body) VALUES (1, '{}'){comment}",
            row_text()
        );
        if let Err(e) = pg_client::query_first(&config, &create) {
            if e.is::<pg_client::NotConnected>() {
                // Nothing was sent: there is no table to drop.
                db.forget();
                bail!("db={shown}: {e:#}");
            }
            bail!("db={shown}: cannot create table {table} with its row: {e:#}");
        }
        db.fetch_row()?;
        // The server answered: clean up what killed sledges of this host
        // left there (a failure here must not fail the page).
        if let Ok(rows) = pg_client::query_column(&config, PG_PAGE_TABLES) {
            let dropped: Vec<(String, u32)> = leftover_tables(rows)
                .into_iter()
                .filter(|(t, _)| {
                    pg_client::query_first(&config, &format!("DROP TABLE IF EXISTS {t}")).is_ok()
                })
                .collect();
            say_dropped(&shown, &dropped);
        }
        Ok(db)
    }

    fn create_mysql(url: &str) -> anyhow::Result<Database> {
        use mysql::prelude::Queryable;
        let opts = add_mysql_password(mysql_opts(url)?, &db_password::process_env);
        let shown = redact(url);
        let table = unique_name(&table_prefix());
        let mut conn = mysql::Conn::new(opts.clone())
            .map_err(|e| anyhow!("db={shown}: cannot connect to MySQL/MariaDB: {e}"))?;
        // The mark (a comment, which no page reads) is what lets a later
        // sledge drop the table should this process be killed.
        let comment = table_mark(&table)
            .map(|mark| format!(" COMMENT={mark}"))
            .unwrap_or_default();
        conn.query_drop(format!(
            "CREATE TABLE {table} (id INT PRIMARY KEY, body VARCHAR({ROW_BYTES}) NOT NULL){comment}"
        ))
        .map_err(|e| anyhow!("db={shown}: cannot create table {table}: {e}"))?;
        let db = Database {
            backend: Backend::Mysql {
                opts,
                shown: shown.clone(),
                select: format!("SELECT body FROM {table} WHERE id = 1"),
                table: table.clone(),
            },
            removed: false,
        };
        conn.query_drop(format!(
            "INSERT INTO {table} (id, body) VALUES (1, '{}')",
            row_text()
        ))
        .map_err(|e| anyhow!("db={shown}: cannot insert the row into {table}: {e}"))?;
        // Clean up what killed sledges of this host left (a failure here
        // must not fail the page).
        if let Ok(rows) = conn.query::<String, _>(MYSQL_PAGE_TABLES) {
            let dropped: Vec<(String, u32)> = leftover_tables(rows)
                .into_iter()
                .filter(|(t, _)| conn.query_drop(format!("DROP TABLE IF EXISTS {t}")).is_ok())
                .collect();
            say_dropped(&shown, &dropped);
        }
        drop(conn);
        db.fetch_row()?;
        Ok(db)
    }

    /// Where the SQLite file is; `None` for a server.
    pub fn path(&self) -> Option<&Path> {
        match &self.backend {
            Backend::Sqlite { path, .. } => Some(path),
            _ => None,
        }
    }

    /// The table holding the row on a server; `None` for SQLite.
    pub fn table(&self) -> Option<&str> {
        match &self.backend {
            Backend::Sqlite { .. } => None,
            Backend::Postgres { table, .. } | Backend::Mysql { table, .. } => Some(table),
        }
    }

    /// Whether a page waits on another process (a database server), so
    /// that an event loop must not make the call itself. SQLite's pages
    /// are in-process CPU work and do not.
    pub fn waits(&self) -> bool {
        !matches!(self.backend, Backend::Sqlite { .. })
    }

    /// One page: connect, read the row, disconnect.
    pub fn fetch_row(&self) -> anyhow::Result<String> {
        match &self.backend {
            Backend::Sqlite { path, .. } => {
                let conn = Connection::open_with_flags(
                    path,
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )
                .with_context(|| format!("opening {}", path.display()))?;
                let body = conn
                    .query_row("SELECT body FROM page WHERE id = 1", [], |row| row.get(0))
                    .with_context(|| format!("reading the row from {}", path.display()))?;
                drop(conn);
                Ok(body)
            }
            Backend::Postgres {
                config,
                shown,
                select,
                ..
            } => {
                let body = pg_client::query_first(config, select)
                    .map_err(|e| anyhow!("db={shown}: {e:#}"))?;
                body.ok_or_else(|| anyhow!("db={shown}: {select} returned no row"))
            }
            Backend::Mysql {
                opts,
                shown,
                select,
                ..
            } => {
                use mysql::prelude::Queryable;
                let mut conn = mysql::Conn::new(opts.clone())
                    .map_err(|e| anyhow!("db={shown}: cannot connect: {e}"))?;
                let body: Option<String> = conn
                    .query_first(select)
                    .map_err(|e| anyhow!("db={shown}: {select}: {e}"))?;
                drop(conn);
                body.ok_or_else(|| anyhow!("db={shown}: {select} returned no row"))
            }
        }
    }

    /// Marks the table or file as never made: nothing to remove.
    fn forget(mut self) {
        self.removed = true;
    }

    /// Removes the file or drops the table; an error says what was left
    /// behind.
    pub fn remove(mut self) -> anyhow::Result<()> {
        self.remove_inner()
    }

    fn remove_inner(&mut self) -> anyhow::Result<()> {
        if self.removed {
            return Ok(());
        }
        self.removed = true;
        match &mut self.backend {
            Backend::Sqlite { dir, .. } => dir
                .remove()
                .map_err(|e| anyhow!("removing the page database: {e:#}")),
            Backend::Postgres {
                config,
                shown,
                table,
                ..
            } => pg_client::query_first(config, &format!("DROP TABLE IF EXISTS {table}"))
                .map(drop)
                .map_err(|e| anyhow!("db={shown}: cannot drop table {table}: {e:#}")),
            Backend::Mysql {
                opts, shown, table, ..
            } => {
                use mysql::prelude::Queryable;
                mysql::Conn::new(opts.clone())
                    .and_then(|mut conn| conn.query_drop(format!("DROP TABLE IF EXISTS {table}")))
                    .map_err(|e| anyhow!("db={shown}: cannot drop table {table}: {e}"))
            }
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Err(e) = self.remove_inner() {
            crate::say!("warning: {e:#}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_row_comes_back_and_the_file_goes_away() {
        let db = Database::create_sqlite().unwrap();
        let path = db.path().unwrap().to_path_buf();
        assert!(!db.waits());
        assert_eq!(db.fetch_row().unwrap(), row_text());
        assert_eq!(row_text().len(), ROW_BYTES);
        drop(db);
        assert!(!path.exists());
    }

    #[test]
    fn params_are_checked_without_connecting() {
        assert_eq!(DbSource::parse("sqlite").unwrap(), DbSource::Sqlite);
        // Nothing listens on port 1; parsing does not connect.
        assert!(matches!(
            DbSource::parse("postgres://u:secret@127.0.0.1:1/db").unwrap(),
            DbSource::Postgres(_)
        ));
        assert!(matches!(
            DbSource::parse("mysql://u:secret@127.0.0.1:1/db").unwrap(),
            DbSource::Mysql(_)
        ));
        for bad in [
            "oracle",
            "postgres://u:secret@127.0.0.1:notaport/db",
            "mysql://u:secret@127.0.0.1:notaport/db",
            "mysql://u:secret@127.0.0.1:3306",
        ] {
            let e = DbSource::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("db="), "{e}");
            assert!(!e.contains("secret"), "{e}");
        }
        let e = DbSource::parse("mysql://u@127.0.0.1:3306").unwrap_err();
        assert!(e.to_string().contains("no database"), "{e}");
    }

    #[test]
    fn database_calls_have_short_timeouts() {
        let pg = postgres_config("postgres://u@127.0.0.1:1/db").unwrap();
        assert_eq!(pg.get_options(), Some("-c statement_timeout=5000"));
        assert_eq!(pg.get_tcp_user_timeout(), Some(&PG_TCP_USER_TIMEOUT));
        assert_eq!(pg.get_keepalives_idle(), PG_KEEPALIVES_IDLE);
        // The URL's own settings win.
        let pg = postgres_config(
            "postgres://u@127.0.0.1:1/db?options=-c%20statement_timeout%3D100&keepalives_idle=60",
        )
        .unwrap();
        assert_eq!(pg.get_options(), Some("-c statement_timeout=100"));
        assert_eq!(pg.get_keepalives_idle(), Duration::from_secs(60));
        let my = mysql_opts("mysql://u@127.0.0.1:1/db").unwrap();
        assert_eq!(my.get_read_timeout(), Some(&IO_TIMEOUT));
        assert_eq!(my.get_write_timeout(), Some(&IO_TIMEOUT));
    }

    #[test]
    fn passwords_are_never_shown() {
        assert_eq!(
            redact("postgres://u:secret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(redact("mysql://u@h/db"), "mysql://u@h/db");
        assert_eq!(
            redact("postgres://u@h/db?password=secret&sslmode=disable"),
            "postgres://u@h/db?password=***&sslmode=disable"
        );
        assert_eq!(redact("mysql://u:se/c@ret@h/db"), "mysql://u:***@h/db");
        let source = DbSource::parse("postgres://u:secret@h/db").unwrap();
        assert!(!format!("{source:?}").contains("secret"));
    }

    #[test]
    fn libpq_keyword_strings_are_postgres_and_their_password_is_masked() {
        let source =
            DbSource::parse("host=127.0.0.1 port=1 user=u password='se cret' dbname=x").unwrap();
        assert!(matches!(source, DbSource::Postgres(_)));
        assert_eq!(
            source.shown(),
            "host=127.0.0.1 port=1 user=u password=*** dbname=x"
        );
        let config = postgres_config("host=h user=u password='se cret' dbname=x").unwrap();
        assert_eq!(config.get_password(), Some(&b"se cret"[..]));
        for bad in [
            "host=h port=notaport user=u password=secretpw dbname=x",
            "host=h user=u password='secretpw",
            "host=h user=u password=secretpw nosuchkey=1",
        ] {
            let e = format!("{:#}", DbSource::parse(bad).unwrap_err());
            assert!(e.starts_with("db=host=h"), "{e}");
            assert!(!e.contains("secretpw"), "{e}");
        }
        let e = format!("{:#}", DbSource::parse("oracle password=x").unwrap_err());
        assert!(!e.contains("=x"), "{e}");
    }

    #[test]
    fn a_password_left_out_comes_from_the_clients_own_sources() {
        let env = |name: &str| match name {
            "PGPASSWORD" => Some("pg env".to_string()),
            "MYSQL_PWD" => Some("my env".to_string()),
            _ => None,
        };
        let mut pg = postgres_config("postgres://u@127.0.0.1:1/db").unwrap();
        add_postgres_password(&mut pg, &env);
        assert_eq!(pg.get_password(), Some(&b"pg env"[..]));
        // The URL's own password wins.
        let mut pg = postgres_config("host=h user=u password=given").unwrap();
        add_postgres_password(&mut pg, &env);
        assert_eq!(pg.get_password(), Some(&b"given"[..]));
        let my = add_mysql_password(mysql_opts("mysql://u@127.0.0.1:1/db").unwrap(), &env);
        assert_eq!(my.get_pass(), Some("my env"));
        let my = add_mysql_password(mysql_opts("mysql://u:given@127.0.0.1:1/db").unwrap(), &env);
        assert_eq!(my.get_pass(), Some("given"));
        let none = |_: &str| None;
        let my = add_mysql_password(mysql_opts("mysql://u@127.0.0.1:1/db").unwrap(), &none);
        assert_eq!(my.get_pass(), None);
    }
}
