//! The store's schema and its migrations.
//!
//! `PRAGMA user_version` holds the schema version: the number of steps of
//! [`MIGRATIONS`] applied so far. Steps are only ever appended; a released
//! step is never edited. `PRAGMA application_id` marks the file as sledge's.
//! What a version found means is decided in `schema_version.rs`.
//!
//! Floating-point columns are nullable because SQLite stores NaN as NULL;
//! the reader maps NULL back to NaN.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::error::StoreError;
use super::schema_version::{Version, check_version};
use super::sql_error::sql_err;

/// `PRAGMA application_id` of a sledge store: "sldg" in ASCII.
pub const APPLICATION_ID: u32 = 0x736C_6467;

pub(crate) use super::migrations::MIGRATIONS;
pub use super::migrations::SCHEMA_VERSION;

/// Where SQLite keeps the schema version, as messages name it.
pub(crate) const VERSION_KEPT_IN: &str = "user_version";

/// Reads `PRAGMA user_version`.
pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Reads `PRAGMA application_id`.
pub(crate) fn application_id(conn: &Connection) -> rusqlite::Result<u32> {
    // SQLite reports the id as a signed 32-bit number.
    let id: i32 = conn.pragma_query_value(None, "application_id", |row| row.get(0))?;
    Ok(id as u32)
}

/// How many tables, indexes, views and triggers the database holds.
pub(crate) fn schema_objects(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("SELECT count(*) FROM sqlite_schema", [], |row| row.get(0))
}

/// Brings the schema of the store at `path` up to [`SCHEMA_VERSION`],
/// all steps in one transaction; a database error says it came while
/// `doing`. A current store is not written to at all, so a read-only store
/// can still be listed and loaded. A version this build cannot upgrade
/// ([`check_version`]) is refused, and nothing is changed.
pub(crate) fn migrate(
    conn: &mut Connection,
    path: &Path,
    doing: &'static str,
) -> Result<(), StoreError> {
    let sql = |cause: rusqlite::Error| sql_err(path, doing)(cause);
    let found = user_version(conn).map_err(sql)?;
    if check_version(path, found, VERSION_KEPT_IN)? == Version::Current {
        return Ok(());
    }
    // A step may rebuild a table that others reference; with foreign keys
    // on, dropping the old table would delete every row that points at it.
    // The pragma has no effect inside a transaction, so it is set around
    // it, and the references are checked before the commit.
    let foreign_keys: bool = conn
        .pragma_query_value(None, "foreign_keys", |row| row.get(0))
        .map_err(sql)?;
    conn.pragma_update(None, "foreign_keys", false)
        .map_err(sql)?;
    let result = apply_steps(conn, path, doing);
    conn.pragma_update(None, "foreign_keys", foreign_keys)
        .map_err(sql)?;
    result
}

/// Applies the missing steps in one transaction (see [`migrate`]).
fn apply_steps(conn: &mut Connection, path: &Path, doing: &'static str) -> Result<(), StoreError> {
    let sql = |cause: rusqlite::Error| sql_err(path, doing)(cause);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql)?;
    // Another process may have migrated while we waited for the lock.
    let found = user_version(&tx).map_err(sql)?;
    let from = match check_version(path, found, VERSION_KEPT_IN)? {
        Version::Current => SCHEMA_VERSION,
        Version::Older(found) => found,
    };
    for step in &MIGRATIONS[from as usize..] {
        tx.execute_batch(step).map_err(sql)?;
    }
    let dangling: i64 = tx
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |row| {
            row.get(0)
        })
        .map_err(sql)?;
    if dangling > 0 {
        // Dropping the transaction rolls every step back.
        return Err(sql(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT),
            Some(format!(
                "the upgrade left {dangling} reference(s) to missing rows; nothing was changed"
            )),
        )));
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID as i32)
        .map_err(sql)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(sql)?;
    tx.commit().map_err(sql)?;
    Ok(())
}
