//! The values that travel between the store's queries and either
//! database: parameters and result columns ([`Value`]), the conversions to
//! and from Rust types, one result row, and what can go wrong.
//!
//! They sit apart from the connection (`db.rs`) because both connections
//! speak them: `db.rs` drives SQLite and `pg_conn.rs` PostgreSQL, and
//! `pg_conn.rs` needs the values without needing `db.rs`.

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
    () => { &[] as &[$crate::store::db_value::Value] };
    ($($value:expr),+ $(,)?) => {
        &[$($crate::store::db_value::ToValue::to_value(&$value)),+] as &[$crate::store::db_value::Value]
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
