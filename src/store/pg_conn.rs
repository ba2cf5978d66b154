//! A PostgreSQL connection for the store: `tokio-postgres` driven by its
//! own current-thread runtime, with a deadline on every step.
//!
//! The synchronous `postgres` crate bounds only the TCP connect
//! (`connect_timeout`) and nothing after it: a server that accepts and
//! then says nothing, or stalls in the middle of a run, would hang sledge
//! for good. Here the connection and login together are bounded by the
//! connect timeout (as libpq bounds them), and every statement by
//! [`IO_TIMEOUT`] (both through `pg_deadline.rs`, which the dynamic page
//! shares); the socket's `tcp_user_timeout` and keepalives notice a lost
//! network or a dead host in the same time.

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use tokio::runtime::{Builder, Runtime};
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use tokio_postgres::{Client, Config, Statement};

use super::db_value::{DbError, Row, Value};
use super::pg_deadline::{self, block, describe};

/// How long connecting and logging in may take unless the URL sets
/// `connect_timeout`.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one statement may take. Storing a case is a few hundred short
/// statements; a server silent this long has stalled or is gone.
pub(crate) const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// How long sent data may stay unacknowledged, and how soon an idle
/// connection is probed, unless the URL says otherwise.
const TCP_TIMEOUT: Duration = Duration::from_secs(10);

/// An open connection to a PostgreSQL server.
pub(crate) struct PgConn {
    /// Taken out on drop, so that the connection can say goodbye.
    client: Option<Client>,
    runtime: Runtime,
    /// Prepared statements by their SQL, as SQLite's `prepare_cached`.
    statements: RefCell<HashMap<String, Statement>>,
}

impl std::fmt::Debug for PgConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PgConn")
    }
}

impl PgConn {
    /// Connects and logs in within the connect timeout. The error is the
    /// reason only (the caller names the server, password masked).
    pub(crate) fn connect(url: &str) -> Result<PgConn, String> {
        let mut config: Config = url
            .parse()
            .map_err(|e| crate::secrets::redact(&format!("not a valid PostgreSQL URL ({e})")))?;
        let login = *config.get_connect_timeout().unwrap_or(&CONNECT_TIMEOUT);
        config.connect_timeout(login);
        if config.get_tcp_user_timeout().is_none() {
            config.tcp_user_timeout(TCP_TIMEOUT);
        }
        // The client's default is 2 hours; the URL cannot be told apart
        // from it when it says the same.
        if config.get_keepalives_idle() == Duration::from_secs(2 * 60 * 60) {
            config.keepalives_idle(TCP_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("sledge");
        }
        let runtime = Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| format!("cannot start the PostgreSQL client: {e}"))?;
        let (client, connection) = pg_deadline::connect(&runtime, &config, login)
            .map_err(|e| format!("cannot connect: {e}"))?;
        // The connection does the socket I/O; it runs whenever a statement
        // is waited for, and ends once the client is dropped.
        runtime.spawn(connection);
        Ok(PgConn {
            client: Some(client),
            runtime,
            statements: RefCell::new(HashMap::new()),
        })
    }

    fn client(&self) -> &Client {
        self.client.as_ref().expect("only taken on drop")
    }

    /// The prepared statement for `sql`.
    fn prepare(&self, sql: &str) -> Result<Statement, DbError> {
        if let Some(stmt) = self.statements.borrow().get(sql) {
            return Ok(stmt.clone());
        }
        let stmt = self.block(self.client().prepare(sql))?;
        self.statements
            .borrow_mut()
            .insert(sql.to_string(), stmt.clone());
        Ok(stmt)
    }

    pub(crate) fn execute(&self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let stmt = self.prepare(sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        self.block(self.client().execute(&stmt, &refs))
    }

    pub(crate) fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let stmt = self.prepare(sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        let rows = self.block(self.client().query(&stmt, &refs))?;
        rows.iter().map(pg_row).collect()
    }

    /// Sends `sql` with every set of parameters in `each` before reading
    /// the answers (`tokio-postgres` pipelines requests polled together).
    pub(crate) fn query_many(
        &self,
        sql: &str,
        each: &[Vec<Value>],
    ) -> Result<Vec<Vec<Row>>, DbError> {
        let stmt = self.prepare(sql)?;
        let stmt = &stmt;
        let client = self.client();
        let all = futures_util::future::join_all(each.iter().map(|params| async move {
            let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
            client.query(stmt, &refs).await
        }));
        let answers = self.block(async { Ok(all.await) })?;
        answers
            .into_iter()
            .map(|rows| {
                rows.map_err(|e| DbError::Postgres(describe(&e)))
                    .and_then(|rows| rows.iter().map(pg_row).collect())
            })
            .collect()
    }

    pub(crate) fn batch(&self, sql: &str) -> Result<(), DbError> {
        self.block(self.client().batch_execute(sql))
    }

    /// Runs `step` within [`IO_TIMEOUT`].
    fn block<T>(
        &self,
        step: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, DbError> {
        block(&self.runtime, IO_TIMEOUT, step).map_err(DbError::Postgres)
    }
}

impl Drop for PgConn {
    fn drop(&mut self) {
        // Dropping the client sends Terminate; let the connection task
        // flush it briefly, so the server logs a clean goodbye.
        drop(self.client.take());
        self.runtime.block_on(async {
            let _ =
                tokio::time::timeout(Duration::from_millis(200), tokio::task::yield_now()).await;
        });
    }
}

/// A PostgreSQL result row as a [`Row`].
fn pg_row(row: &tokio_postgres::Row) -> Result<Row, DbError> {
    (0..row.len())
        .map(|i| {
            row.try_get::<_, Value>(i)
                .map_err(|e| DbError::Postgres(describe(&e)))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Row)
}

/// On PostgreSQL a [`Value`] takes the type the server inferred for its
/// parameter (the column's, or the function argument's), so that the
/// store's queries need no casts.
impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut tokio_postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match (self, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Int(i), &Type::INT8) => i.to_sql(ty, out),
            (Value::Int(i), &Type::INT4) => i32::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), &Type::INT2) => i16::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), &Type::BOOL) => (*i != 0).to_sql(ty, out),
            (Value::Int(i), &Type::FLOAT8) => (*i as f64).to_sql(ty, out),
            (Value::Real(f), &Type::FLOAT8) => f.to_sql(ty, out),
            (Value::Real(f), &Type::FLOAT4) => (*f as f32).to_sql(ty, out),
            (Value::Text(s), &Type::TEXT | &Type::VARCHAR | &Type::BPCHAR | &Type::NAME) => {
                s.as_str().to_sql(ty, out)
            }
            (Value::Blob(b), &Type::BYTEA) => b.as_slice().to_sql(ty, out),
            (value, ty) => Err(format!("cannot send {} as {ty}", value.kind()).into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

impl<'a> tokio_postgres::types::FromSql<'a> for Value {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => {
                Value::Text(<&str>::from_sql(ty, raw)?.to_string())
            }
            Type::BYTEA => Value::Blob(<&[u8]>::from_sql(ty, raw)?.to_vec()),
            ref other => {
                return Err(format!("the store cannot read a column of type {other}").into());
            }
        })
    }

    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Value::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}
