//! Telling a file sledge may open read-write (a new or empty file, or a
//! sledge store) from any other, before anything is written to it.

use std::fs;
use std::io::{self, Read as _};
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::error::StoreError;
use super::schema::{self, APPLICATION_ID};
use super::sql_error::sql_err;

/// How long a connection waits for another process holding the store's
/// lock before giving up. A run stores each case after each of its rounds,
/// between timed trials, so waiting costs it no measurement, while giving
/// up stops the run and loses the round. The lock is held by another
/// sledge's transaction (a case: milliseconds; an `import` of a large
/// export: the whole import, seconds to tens of seconds), `delete`, or a
/// backup or `sqlite3` session: a minute outlasts all but a session left
/// open by hand, which no wait fixes. (PostgreSQL stores have their own
/// statement deadline.)
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// The first 16 bytes of every SQLite 3 database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Size of the SQLite database header.
const HEADER_LEN: usize = 100;

/// Offset of the big-endian `application_id` in the SQLite header.
const APPLICATION_ID_OFFSET: usize = 68;

/// Makes sure `path` is either a new empty file, an empty file, or an
/// SQLite database that sledge may open read-write. Never writes to an
/// existing file.
pub(super) fn prepare_file(path: &Path) -> Result<(), StoreError> {
    let read_err = |cause| StoreError::Read {
        path: path.to_path_buf(),
        cause,
    };
    match fs::metadata(path) {
        Ok(meta) => inspect_existing(path, &meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
            {
                Ok(_) => Ok(()),
                // Another process was quicker; inspect what it made.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let meta = fs::metadata(path).map_err(read_err)?;
                    inspect_existing(path, &meta)
                }
                Err(cause) => Err(StoreError::CreateFile {
                    path: path.to_path_buf(),
                    cause,
                }),
            }
        }
        Err(cause) => Err(read_err(cause)),
    }
}

/// Checks an existing file without opening it for writing: its header must
/// be SQLite's, and it must be sledge's or hold nothing at all.
pub(super) fn inspect_existing(path: &Path, meta: &fs::Metadata) -> Result<(), StoreError> {
    let not_sqlite = |reason: &str| StoreError::NotSqlite {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    if meta.is_dir() {
        return Err(not_sqlite("it is a directory"));
    }
    if !meta.is_file() {
        return Err(not_sqlite("it is not a regular file"));
    }
    // Read the header even when the size is 0: some file systems (procfs)
    // report 0 for files that have contents.
    let header = read_header(path).map_err(|cause| StoreError::Read {
        path: path.to_path_buf(),
        cause,
    })?;
    if header.is_empty() {
        // SQLite treats an empty file as an empty database.
        return Ok(());
    }
    if header.len() < SQLITE_MAGIC.len() || &header[..SQLITE_MAGIC.len()] != SQLITE_MAGIC {
        return Err(not_sqlite("it does not start with the SQLite header"));
    }
    if header.len() < HEADER_LEN {
        return Err(not_sqlite("its SQLite header is truncated"));
    }
    let app_id = u32::from_be_bytes(
        header[APPLICATION_ID_OFFSET..APPLICATION_ID_OFFSET + 4]
            .try_into()
            .expect("4 bytes"),
    );
    if app_id == APPLICATION_ID {
        return Ok(());
    }
    if app_id != 0 {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
            reason: format!("application id {app_id:#010x}, sledge's is {APPLICATION_ID:#010x}"),
        });
    }

    // No application id: only an SQLite database that holds nothing may
    // become a store. Look inside with a connection that cannot write.
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .and_then(|conn| conn.busy_timeout(BUSY_TIMEOUT).map(|()| conn))
    .map_err(sql_err(path, "inspecting the existing file (read-only)"))?;
    check_ownership(&conn, path)
}

/// Reads up to the first [`HEADER_LEN`] bytes of `path`.
fn read_header(path: &Path) -> io::Result<Vec<u8>> {
    let mut header = Vec::with_capacity(HEADER_LEN);
    fs::File::open(path)?
        .take(HEADER_LEN as u64)
        .read_to_end(&mut header)?;
    Ok(header)
}

/// Accepts a database marked as sledge's, or one with no mark, no schema
/// version and no schema objects at all (a new, empty file).
pub(super) fn check_ownership(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let sql_err = |cause: rusqlite::Error| {
        sql_err(path, "checking that the file is a sledge database")(cause)
    };
    // One read transaction, so that the mark, the objects and the version
    // come from one state of the file: a sledge starting beside this one may
    // be creating the store, and separate reads could see its tables but
    // not yet its mark. (Dropping the transaction ends it; nothing was
    // written.)
    let snapshot = conn.unchecked_transaction().map_err(sql_err)?;
    let conn = &*snapshot;
    let app_id = schema::application_id(conn).map_err(sql_err)?;
    if app_id == APPLICATION_ID {
        return Ok(());
    }
    let foreign = |reason: String| StoreError::Foreign {
        path: path.to_path_buf(),
        reason,
    };
    if app_id != 0 {
        return Err(foreign(format!(
            "application id {app_id:#010x}, sledge's is {APPLICATION_ID:#010x}"
        )));
    }
    let objects = schema::schema_objects(conn).map_err(sql_err)?;
    if objects > 0 {
        return Err(foreign(format!(
            "it holds {objects} table(s) or index(es) and no sledge application id"
        )));
    }
    let version = schema::user_version(conn).map_err(sql_err)?;
    if version != 0 {
        return Err(foreign(format!(
            "it has user_version {version} and no sledge application id"
        )));
    }
    Ok(())
}
