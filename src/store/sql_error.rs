//! Database errors as [`StoreError`]s that name the store and what was
//! being done.

use std::path::Path;

use super::db::DbError;
use super::error::StoreError;

/// Wraps a database error with the store path and what was being done; an
/// SQLite error that says the file is damaged becomes
/// [`StoreError::Damaged`].
pub(super) fn sql_err<'a, E: Into<DbError>>(
    path: &'a Path,
    doing: &'static str,
) -> impl FnOnce(E) -> StoreError + 'a {
    move |cause| match cause.into() {
        DbError::Sqlite(cause) => sqlite_err(path, doing, cause),
        DbError::Postgres(cause) => StoreError::Postgres {
            path: path.to_path_buf(),
            doing,
            cause,
        },
        DbError::Type(found) => StoreError::Corrupt {
            path: path.to_path_buf(),
            what: format!("{found}, while {doing}"),
        },
    }
}

/// [`sql_err`] for an SQLite error.
fn sqlite_err(path: &Path, doing: &'static str, cause: rusqlite::Error) -> StoreError {
    match cause.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase) => {
            StoreError::Damaged {
                path: path.to_path_buf(),
                found: format!("{cause}, while {doing}"),
            }
        }
        _ => StoreError::Sqlite {
            path: path.to_path_buf(),
            doing,
            cause,
        },
    }
}
