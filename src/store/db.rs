//! The seam between the store's queries and the database that runs them:
//! an SQLite file or a PostgreSQL server.
//!
//! Every query of the store is written once, in the SQL both databases
//! understand, with SQLite's numbered parameters (`?1`, `?2`); this module
//! is the one place that knows how the two differ:
//!
//! - parameters: `?N` becomes PostgreSQL's `$N` ([`to_postgres_sql`]);
//! - values: one [`Value`] type goes in and comes out of both, and on
//!   PostgreSQL it takes the type the server expects for each parameter
//!   (an `i64` bound to an `integer` parameter is sent as one), since the
//!   PostgreSQL protocol checks types where SQLite converts;
//! - transactions: a write transaction takes SQLite's write lock at once
//!   (`BEGIN IMMEDIATE`), a read transaction sees one snapshot on both.
//!
//! The schema itself (migrations) is written per database: see
//! `schema.rs` and `pg_schema.rs`; the values that travel to and from
//! either database are `db_value.rs`'s.

use std::ops::Deref;

pub(crate) use super::db_value::{DbError, Row, Value, params};
use super::pg_conn::PgConn;

/// A connection to the store's database.
#[derive(Debug)]
pub(crate) enum Conn {
    /// An SQLite file.
    Sqlite(rusqlite::Connection),
    /// A PostgreSQL server.
    Postgres(PgConn),
}

/// What a transaction is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TxKind {
    /// Writes: on SQLite the write lock is taken at the start, so that two
    /// writers wait for each other instead of failing at their first write.
    Write,
    /// Reads that must all see one state of the store.
    Snapshot,
}

impl Conn {
    /// Runs a statement; returns how many rows it changed.
    pub(crate) fn execute(&self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        match self {
            Conn::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                Ok(stmt.execute(rusqlite::params_from_iter(params.iter()))? as u64)
            }
            Conn::Postgres(pg) => pg.execute(&to_postgres_sql(sql), params),
        }
    }

    /// Runs a query; returns every row.
    pub(crate) fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        match self {
            Conn::Sqlite(conn) => {
                let mut stmt = conn.prepare_cached(sql)?;
                let columns = stmt.column_count();
                let mut rows = stmt.query(rusqlite::params_from_iter(params.iter()))?;
                let mut out = Vec::new();
                while let Some(row) = rows.next()? {
                    let values = (0..columns)
                        .map(|i| row.get_ref(i).map(from_sqlite))
                        .collect::<rusqlite::Result<Vec<_>>>()?;
                    out.push(Row(values));
                }
                Ok(out)
            }
            Conn::Postgres(pg) => pg.query(&to_postgres_sql(sql), params),
        }
    }

    /// Runs a query; returns its first row, if any.
    pub(crate) fn query_opt(&self, sql: &str, params: &[Value]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// Runs a query that returns one row (an aggregate, `RETURNING`).
    pub(crate) fn query_one(&self, sql: &str, params: &[Value]) -> Result<Row, DbError> {
        self.query_opt(sql, params)?
            .ok_or_else(|| DbError::Type("the query returned no row".to_string()))
    }

    /// Runs one query once for each set of parameters in `each`; returns
    /// each one's rows, in order. On PostgreSQL they are sent together
    /// (pipelined) and answered together: one round trip instead of one
    /// per row, which is what storing a case's trials and samples on a
    /// server across a network costs. The first error is returned.
    pub(crate) fn query_many(
        &self,
        sql: &str,
        each: &[Vec<Value>],
    ) -> Result<Vec<Vec<Row>>, DbError> {
        match self {
            Conn::Sqlite(_) => each.iter().map(|params| self.query(sql, params)).collect(),
            Conn::Postgres(pg) => pg.query_many(&to_postgres_sql(sql), each),
        }
    }

    /// Runs statements without parameters, separated by semicolons.
    pub(crate) fn batch(&self, sql: &str) -> Result<(), DbError> {
        match self {
            Conn::Sqlite(conn) => Ok(conn.execute_batch(sql)?),
            Conn::Postgres(pg) => pg.batch(sql),
        }
    }

    /// Starts a transaction, rolled back unless [`Tx::commit`] is called.
    pub(crate) fn begin(&self, kind: TxKind) -> Result<Tx<'_>, DbError> {
        let sql = match (self, kind) {
            (Conn::Sqlite(_), TxKind::Write) => "BEGIN IMMEDIATE",
            // A deferred SQLite transaction reads one snapshot from its
            // first read on.
            (Conn::Sqlite(_), TxKind::Snapshot) => "BEGIN",
            (Conn::Postgres(_), TxKind::Write) => "BEGIN",
            (Conn::Postgres(_), TxKind::Snapshot) => {
                "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
            }
        };
        self.batch(sql)?;
        Ok(Tx {
            conn: self,
            done: false,
        })
    }

    /// The SQLite connection, for tests that look at what only SQLite has
    /// (pragmas).
    #[cfg(test)]
    pub(crate) fn sqlite(&self) -> Option<&rusqlite::Connection> {
        match self {
            Conn::Sqlite(conn) => Some(conn),
            Conn::Postgres(_) => None,
        }
    }
}

/// An open transaction; dropping it without [`Tx::commit`] rolls it back.
pub(crate) struct Tx<'a> {
    conn: &'a Conn,
    done: bool,
}

impl Tx<'_> {
    /// Commits the transaction.
    pub(crate) fn commit(mut self) -> Result<(), DbError> {
        self.done = true;
        self.conn.batch("COMMIT")
    }
}

impl Deref for Tx<'_> {
    type Target = Conn;

    fn deref(&self) -> &Conn {
        self.conn
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if !self.done {
            // A failed rollback leaves nothing to do: SQLite rolls back a
            // failed statement's transaction itself, and a PostgreSQL
            // connection that cannot roll back is lost, which ends it.
            let _ = self.conn.batch("ROLLBACK");
        }
    }
}

/// An SQLite column value as a [`Value`].
fn from_sqlite(value: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Real(f) => ValueRef::Real(*f),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

/// SQLite's numbered parameters (`?1`) as PostgreSQL's (`$1`). The store's
/// queries hold no `?` inside string literals, so every `?` followed by a
/// digit is a parameter.
pub(crate) fn to_postgres_sql(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_parameters_become_dollar_parameters() {
        assert_eq!(
            to_postgres_sql("SELECT id FROM run WHERE substr(uuid, 1, ?2) = ?1 AND x = ?10"),
            "SELECT id FROM run WHERE substr(uuid, 1, $2) = $1 AND x = $10"
        );
        assert_eq!(to_postgres_sql("SELECT '?' , ?"), "SELECT '?' , ?");
    }

    #[test]
    fn a_dropped_transaction_rolls_back_on_sqlite() {
        let conn = Conn::Sqlite(rusqlite::Connection::open_in_memory().unwrap());
        conn.batch("CREATE TABLE t (x INTEGER)").unwrap();
        {
            let tx = conn.begin(TxKind::Write).unwrap();
            tx.execute("INSERT INTO t (x) VALUES (?1)", params![7_i64])
                .unwrap();
        }
        let tx = conn.begin(TxKind::Write).unwrap();
        tx.execute("INSERT INTO t (x) VALUES (?1)", params![Some(8_i64)])
            .unwrap();
        tx.commit().unwrap();
        let rows = conn.query("SELECT x FROM t", params![]).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].get::<i64>(0).unwrap(), 8);
    }
}
