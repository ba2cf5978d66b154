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
//! `schema.rs` and `pg_schema.rs`.

use std::ops::Deref;

use super::pg_conn::PgConn;

/// One value of a parameter or of a result column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// SQL NULL.
    Null,
    /// Any integer (booleans are stored as 0 and 1).
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl Value {
    /// The kind of value, for error messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Int(_) => "an integer",
            Value::Real(_) => "a number",
            Value::Text(_) => "text",
            Value::Blob(_) => "bytes",
        }
    }
}

/// Something that can be a query parameter.
pub(crate) trait ToValue {
    /// The value, copied.
    fn to_value(&self) -> Value;
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        self.as_ref().map_or(Value::Null, ToValue::to_value)
    }
}

impl ToValue for i64 {
    fn to_value(&self) -> Value {
        Value::Int(*self)
    }
}

impl ToValue for u32 {
    fn to_value(&self) -> Value {
        Value::Int(i64::from(*self))
    }
}

impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Int(i64::from(*self))
    }
}

impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::Real(*self)
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
}

impl ToValue for [u8] {
    fn to_value(&self) -> Value {
        Value::Blob(self.to_vec())
    }
}

impl ToValue for Vec<u8> {
    fn to_value(&self) -> Value {
        Value::Blob(self.clone())
    }
}

/// The parameters of a query: `params![a, b]` is `&[Value]`.
macro_rules! params {
    () => { &[] as &[$crate::store::db::Value] };
    ($($value:expr),+ $(,)?) => {
        &[$($crate::store::db::ToValue::to_value(&$value)),+] as &[$crate::store::db::Value]
    };
}
pub(crate) use params;

/// Something a result column can be read as.
pub(crate) trait FromValue: Sized {
    /// The column's value as `Self`, or what it was instead.
    fn from_value(value: &Value) -> Result<Self, String>;
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: &Value) -> Result<Self, String> {
        match value {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

impl FromValue for i64 {
    fn from_value(value: &Value) -> Result<Self, String> {
        match value {
            Value::Int(i) => Ok(*i),
            other => Err(format!("expected an integer, found {}", other.kind())),
        }
    }
}

impl FromValue for bool {
    fn from_value(value: &Value) -> Result<Self, String> {
        i64::from_value(value).map(|i| i != 0)
    }
}

impl FromValue for f64 {
    fn from_value(value: &Value) -> Result<Self, String> {
        match value {
            Value::Real(f) => Ok(*f),
            Value::Int(i) => Ok(*i as f64),
            other => Err(format!("expected a number, found {}", other.kind())),
        }
    }
}

impl FromValue for String {
    fn from_value(value: &Value) -> Result<Self, String> {
        match value {
            Value::Text(s) => Ok(s.clone()),
            other => Err(format!("expected text, found {}", other.kind())),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(value: &Value) -> Result<Self, String> {
        match value {
            Value::Blob(b) => Ok(b.clone()),
            other => Err(format!("expected bytes, found {}", other.kind())),
        }
    }
}

/// One result row.
#[derive(Debug, Clone)]
pub(crate) struct Row(pub(crate) Vec<Value>);

impl Row {
    /// Column `index` as `T`.
    pub(crate) fn get<T: FromValue>(&self, index: usize) -> Result<T, DbError> {
        let value = self
            .0
            .get(index)
            .ok_or_else(|| DbError::Type(format!("the result has no column {index}")))?;
        T::from_value(value).map_err(|e| DbError::Type(format!("column {index}: {e}")))
    }
}

/// What went wrong in the database.
#[derive(Debug)]
pub(crate) enum DbError {
    /// SQLite's error.
    Sqlite(rusqlite::Error),
    /// PostgreSQL's error (the server's message, or why the connection
    /// failed or stalled), already free of passwords.
    Postgres(String),
    /// A column did not hold what the store expects.
    Type(String),
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sqlite(e)
    }
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbError::Sqlite(e) => write!(f, "{e}"),
            DbError::Postgres(e) | DbError::Type(e) => f.write_str(e),
        }
    }
}

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
    fn values_read_back_as_what_the_store_asks_for() {
        let row = Row(vec![
            Value::Int(1),
            Value::Null,
            Value::Real(2.5),
            Value::Text("a".into()),
        ]);
        assert_eq!(row.get::<i64>(0).unwrap(), 1);
        assert!(row.get::<bool>(0).unwrap());
        assert_eq!(row.get::<Option<f64>>(1).unwrap(), None);
        assert_eq!(row.get::<f64>(2).unwrap(), 2.5);
        assert_eq!(row.get::<f64>(0).unwrap(), 1.0);
        assert_eq!(row.get::<String>(3).unwrap(), "a");
        let e = row.get::<i64>(3).unwrap_err().to_string();
        assert!(
            e.contains("column 3: expected an integer, found text"),
            "{e}"
        );
        assert!(row.get::<i64>(9).is_err());
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
