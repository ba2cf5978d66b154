//! One client connection to the database under test, the same calls on
//! every engine: prepared statements with `?` placeholders (sysbench and
//! pgbench's prepared mode use server-side prepared statements; SQLite
//! compiles each once per connection), plain statements for `BEGIN`,
//! `COMMIT` and the schema, and errors sorted into the three kinds a
//! benchmark loop must tell apart ([`Failure`]).
//!
//! - SQLite (`rusqlite`): the file in WAL mode; a write transaction begins
//!   `IMMEDIATE`, so that two writers wait for each other (busy timeout)
//!   instead of deadlocking on the upgrade from a read lock.
//! - PostgreSQL (`tokio-postgres` on a current-thread runtime of the
//!   connection's own, every call bounded by a deadline through
//!   `store::pg_deadline`).
//! - MariaDB and MySQL (the `mysql` crate, binary protocol for prepared
//!   statements, text protocol for the rest, as sysbench's driver).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, anyhow};
use tokio::runtime::{Builder, Runtime};

use crate::secrets::redact;
use crate::store::pg_deadline;

/// How long one statement of a trial may take on a server before the
/// connection counts as lost (a statement of these workloads takes
/// milliseconds: a server silent this long has stalled).
pub const STATEMENT_LIMIT: Duration = Duration::from_secs(30);
/// How long one statement of the load (a batch of rows, an index over
/// the whole table) may take.
pub const LOAD_LIMIT: Duration = Duration::from_secs(3600);
/// How long SQLite waits for another connection's lock.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// A value bound to a placeholder.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// An `INTEGER` value.
    Int(i32),
    /// A `CHAR(n)` value.
    Text(String),
}

/// Why a statement failed.
#[derive(Debug)]
pub enum Failure {
    /// A deadlock, a serialization failure, a lock wait timeout or a
    /// duplicate key from two clients' delete-then-insert: sysbench rolls
    /// the transaction back, counts an ignored error and runs the
    /// transaction again (MySQL errors 1213, 1205, 1020; PostgreSQL
    /// 40P01, 40001, 23505; SQLite's busy and locked).
    Retry(String),
    /// The connection is gone (the server closed it, restarted, or did
    /// not answer in time): sysbench reconnects and counts a reconnect.
    Lost(String),
    /// Anything else: the trial fails with it.
    Fatal(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Retry(e) | Failure::Lost(e) | Failure::Fatal(e) => f.write_str(e),
        }
    }
}

/// Where the connections go: checked, with the namespace sledge made.
#[derive(Clone)]
pub enum Target {
    /// The SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL server, its tables in `schema`.
    Postgres {
        config: Box<tokio_postgres::Config>,
        shown: String,
        schema: String,
    },
    /// A MariaDB or MySQL server, its tables in database `database`.
    Mysql {
        opts: Box<mysql::Opts>,
        shown: String,
        database: String,
    },
}

/// The SQL dialect a statement is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
    /// MariaDB and MySQL.
    Mysql,
}

impl Target {
    /// Its dialect.
    pub fn dialect(&self) -> Dialect {
        match self {
            Target::Sqlite(_) => Dialect::Sqlite,
            Target::Postgres { .. } => Dialect::Postgres,
            Target::Mysql { .. } => Dialect::Mysql,
        }
    }

    /// How the target is named in messages (no password).
    pub fn shown(&self) -> String {
        match self {
            Target::Sqlite(path) => format!("sqlite {}", path.display()),
            Target::Postgres { shown, .. } | Target::Mysql { shown, .. } => shown.clone(),
        }
    }

    /// A new connection with statements bounded by `limit`.
    pub fn connect(&self, limit: Duration) -> anyhow::Result<Box<dyn Conn>> {
        match self {
            Target::Sqlite(path) => {
                let conn = rusqlite::Connection::open(path)
                    .with_context(|| format!("opening {}", path.display()))?;
                conn.busy_timeout(SQLITE_BUSY_TIMEOUT)?;
                Ok(Box::new(SqliteConn {
                    conn,
                    statements: Vec::new(),
                }))
            }
            Target::Postgres {
                config,
                shown,
                schema,
            } => {
                let mut conn = PgConn::connect(config, shown, limit)?;
                conn.simple(&format!("SET search_path TO {schema}"))
                    .map_err(|e| anyhow!("db={shown}: {e}"))?;
                if limit > STATEMENT_LIMIT {
                    conn.simple("SET statement_timeout = 0")
                        .map_err(|e| anyhow!("db={shown}: {e}"))?;
                }
                Ok(Box::new(conn))
            }
            Target::Mysql {
                opts,
                shown,
                database,
            } => {
                let opts = mysql::OptsBuilder::from_opts((**opts).clone())
                    .db_name(Some(database.clone()))
                    .read_timeout(Some(limit))
                    .write_timeout(Some(limit));
                let conn = mysql::Conn::new(opts).map_err(|e| {
                    anyhow!("db={shown}: cannot connect: {}", redact(&e.to_string()))
                })?;
                Ok(Box::new(MysqlConn {
                    conn,
                    statements: Vec::new(),
                }))
            }
        }
    }
}

/// One connection.
pub trait Conn: Send {
    /// Prepares `sql` (placeholders `?`) and returns its number.
    fn prepare(&mut self, sql: &str) -> anyhow::Result<usize>;
    /// Runs prepared statement `stmt` with `args`, reading any rows.
    fn exec(&mut self, stmt: usize, args: &[Arg]) -> Result<(), Failure>;
    /// Runs a statement without parameters (`BEGIN`, DDL, a batch insert).
    fn simple(&mut self, sql: &str) -> Result<(), Failure>;
    /// Runs a query without parameters and returns the first column of
    /// its first row as text.
    fn scalar(&mut self, sql: &str) -> Result<Option<String>, Failure>;
    /// Begins a transaction; `writes`: it will write.
    fn begin(&mut self, writes: bool) -> Result<(), Failure> {
        let _ = writes;
        self.simple("BEGIN")
    }
}

/// `?` placeholders as PostgreSQL's `$1`, `$2`, ...
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}

struct SqliteConn {
    conn: rusqlite::Connection,
    statements: Vec<String>,
}

impl rusqlite::ToSql for Arg {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Arg::Int(i) => i.to_sql(),
            Arg::Text(s) => s.to_sql(),
        }
    }
}

fn sqlite_failure(e: rusqlite::Error) -> Failure {
    use rusqlite::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Failure::Retry(e.to_string()),
        _ => Failure::Fatal(e.to_string()),
    }
}

impl Conn for SqliteConn {
    fn prepare(&mut self, sql: &str) -> anyhow::Result<usize> {
        self.conn
            .prepare_cached(sql)
            .with_context(|| format!("preparing {sql}"))?;
        self.statements.push(sql.to_string());
        Ok(self.statements.len() - 1)
    }
    fn exec(&mut self, stmt: usize, args: &[Arg]) -> Result<(), Failure> {
        let sql = &self.statements[stmt];
        let mut statement = self.conn.prepare_cached(sql).map_err(sqlite_failure)?;
        let mut rows = statement
            .query(rusqlite::params_from_iter(args.iter()))
            .map_err(sqlite_failure)?;
        while rows.next().map_err(sqlite_failure)?.is_some() {}
        Ok(())
    }
    fn simple(&mut self, sql: &str) -> Result<(), Failure> {
        self.conn.execute_batch(sql).map_err(sqlite_failure)
    }
    fn scalar(&mut self, sql: &str) -> Result<Option<String>, Failure> {
        self.conn
            .query_row(sql, [], |row| {
                let value: rusqlite::types::Value = row.get(0)?;
                Ok(match value {
                    rusqlite::types::Value::Null => None,
                    rusqlite::types::Value::Integer(i) => Some(i.to_string()),
                    rusqlite::types::Value::Real(f) => Some(f.to_string()),
                    rusqlite::types::Value::Text(t) => Some(t),
                    rusqlite::types::Value::Blob(_) => None,
                })
            })
            .map_err(sqlite_failure)
    }
    fn begin(&mut self, writes: bool) -> Result<(), Failure> {
        self.simple(if writes { "BEGIN IMMEDIATE" } else { "BEGIN" })
    }
}

struct PgConn {
    runtime: Runtime,
    client: tokio_postgres::Client,
    statements: Vec<tokio_postgres::Statement>,
    limit: Duration,
}

/// The SQLSTATEs sysbench's PostgreSQL driver ignores and retries.
const PG_RETRY: [&str; 3] = ["40P01", "40001", "23505"];

fn pg_failure(e: &tokio_postgres::Error) -> Failure {
    let text = pg_deadline::describe(e);
    match e.code() {
        Some(code) if PG_RETRY.contains(&code.code()) => Failure::Retry(text),
        Some(code) if code.code().starts_with("57P") || code.code().starts_with("08") => {
            Failure::Lost(text)
        }
        Some(_) => Failure::Fatal(text),
        None if e.is_closed() || e.as_db_error().is_none() => Failure::Lost(text),
        None => Failure::Fatal(text),
    }
}

impl PgConn {
    fn connect(
        config: &tokio_postgres::Config,
        shown: &str,
        limit: Duration,
    ) -> anyhow::Result<PgConn> {
        let runtime = Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .context("starting the PostgreSQL client")?;
        let (client, connection) = pg_deadline::connect(&runtime, config, limit)
            .map_err(|e| anyhow!("db={shown}: cannot connect: {e}"))?;
        runtime.spawn(connection);
        Ok(PgConn {
            runtime,
            client,
            statements: Vec::new(),
            limit,
        })
    }
}

impl Conn for PgConn {
    fn prepare(&mut self, sql: &str) -> anyhow::Result<usize> {
        let sql = numbered_placeholders(sql);
        let statement = pg_deadline::block(&self.runtime, self.limit, self.client.prepare(&sql))
            .map_err(|e| anyhow!("preparing {sql}: {e}"))?;
        self.statements.push(statement);
        Ok(self.statements.len() - 1)
    }
    fn exec(&mut self, stmt: usize, args: &[Arg]) -> Result<(), Failure> {
        let values: Vec<Box<dyn tokio_postgres::types::ToSql + Sync>> = args
            .iter()
            .map(|a| -> Box<dyn tokio_postgres::types::ToSql + Sync> {
                match a {
                    Arg::Int(i) => Box::new(*i),
                    Arg::Text(s) => Box::new(s.clone()),
                }
            })
            .collect();
        let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
            values.iter().map(|v| v.as_ref()).collect();
        let statement = &self.statements[stmt];
        let limit = self.limit;
        let result = self.runtime.block_on(async {
            tokio::time::timeout(limit, self.client.execute(statement, &refs)).await
        });
        match result {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(pg_failure(&e)),
            Err(_) => Err(Failure::Lost(format!(
                "no answer within {} s",
                limit.as_secs_f64()
            ))),
        }
    }
    fn simple(&mut self, sql: &str) -> Result<(), Failure> {
        self.scalar(sql).map(drop)
    }
    fn scalar(&mut self, sql: &str) -> Result<Option<String>, Failure> {
        let limit = self.limit;
        let result = self
            .runtime
            .block_on(async { tokio::time::timeout(limit, self.client.simple_query(sql)).await });
        match result {
            Ok(Ok(messages)) => Ok(messages.iter().find_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_string),
                _ => None,
            })),
            Ok(Err(e)) => Err(pg_failure(&e)),
            Err(_) => Err(Failure::Lost(format!(
                "no answer within {} s",
                limit.as_secs_f64()
            ))),
        }
    }
}

struct MysqlConn {
    conn: mysql::Conn,
    statements: Vec<mysql::Statement>,
}

/// The error codes sysbench's MySQL driver ignores by default
/// (`--mysql-ignore-errors`): deadlock, lock wait timeout, record changed.
const MYSQL_RETRY: [u16; 3] = [1213, 1205, 1020];

fn mysql_failure(e: mysql::Error) -> Failure {
    let text = redact(&e.to_string());
    match &e {
        mysql::Error::MySqlError(server) if MYSQL_RETRY.contains(&server.code) => {
            Failure::Retry(text)
        }
        // Server shutdown, connection killed.
        mysql::Error::MySqlError(server) if [1053, 1927, 2006, 2013].contains(&server.code) => {
            Failure::Lost(text)
        }
        mysql::Error::MySqlError(_) => Failure::Fatal(text),
        mysql::Error::IoError(_) | mysql::Error::DriverError(_) => Failure::Lost(text),
        _ => Failure::Fatal(text),
    }
}

impl Conn for MysqlConn {
    fn prepare(&mut self, sql: &str) -> anyhow::Result<usize> {
        use mysql::prelude::Queryable;
        let statement = self
            .conn
            .prep(sql)
            .map_err(|e| anyhow!("preparing {sql}: {}", redact(&e.to_string())))?;
        self.statements.push(statement);
        Ok(self.statements.len() - 1)
    }
    fn exec(&mut self, stmt: usize, args: &[Arg]) -> Result<(), Failure> {
        use mysql::prelude::Queryable;
        let values: Vec<mysql::Value> = args
            .iter()
            .map(|a| match a {
                Arg::Int(i) => mysql::Value::Int(i64::from(*i)),
                Arg::Text(s) => mysql::Value::Bytes(s.as_bytes().to_vec()),
            })
            .collect();
        let statement = &self.statements[stmt];
        self.conn
            .exec_drop(statement, mysql::Params::Positional(values))
            .map_err(mysql_failure)
    }
    fn simple(&mut self, sql: &str) -> Result<(), Failure> {
        use mysql::prelude::Queryable;
        self.conn.query_drop(sql).map_err(mysql_failure)
    }
    fn scalar(&mut self, sql: &str) -> Result<Option<String>, Failure> {
        use mysql::prelude::Queryable;
        let row: Option<mysql::Row> = self.conn.query_first(sql).map_err(mysql_failure)?;
        Ok(row.and_then(|row| {
            row.as_ref(0).and_then(|value| match value {
                mysql::Value::NULL => None,
                mysql::Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
                other => Some(other.as_sql(true)),
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_for_postgres() {
        assert_eq!(
            numbered_placeholders("SELECT c FROM t WHERE id BETWEEN ? AND ?"),
            "SELECT c FROM t WHERE id BETWEEN $1 AND $2"
        );
    }
}
