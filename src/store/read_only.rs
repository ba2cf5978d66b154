//! Opening a store for a command that only reads it (`show`, `compare`,
//! `history`, `export`, `report`, `list`, `plan`, `fleet outliers`): the
//! file is opened read-only, so such a command never creates a store,
//! never upgrades one, and leaves its file as it found it.
//!
//! A store made by an older sledge is read through an upgraded copy in
//! memory: the command shows what it would have shown after an upgrade,
//! and the file waits for the next command that writes (`run`, `import`,
//! `delete`) to be upgraded in place, under its lock.

use std::fs;
use std::io;

use rusqlite::{Connection, OpenFlags};

use super::db::Conn;
use super::error::StoreError;
use super::handle::{Store, connect_postgres};
use super::location::StoreLocation;
use super::pg_schema::{self, Found};
use super::schema::{self, SCHEMA_VERSION};
use super::schema_version::{Version, check_version};
use super::sql_error::sql_err;
use super::sqlite_file::{BUSY_TIMEOUT, check_ownership, inspect_existing};

/// How many pages each step of the copy of an older store takes: the
/// whole of a typical store in a few steps.
const COPY_PAGES_PER_STEP: i32 = 4096;

impl Store {
    /// Opens the existing store at `location` read-only. A store that does
    /// not exist (a missing file, a dangling link) is
    /// [`StoreError::NoStore`] ("no runs yet"), and nothing is created.
    ///
    /// A PostgreSQL store is read through a read-only session, and one
    /// at an older schema is left as found ([`StoreError::OlderDatabase`]).
    pub fn open_read_only(location: &StoreLocation) -> Result<Store, StoreError> {
        let path = match location {
            StoreLocation::File(path) => path,
            StoreLocation::Postgres(url) => return open_postgres_read_only(url),
        };
        // `metadata` follows links: a dangling one leads nowhere either.
        let meta = match fs::metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::NoStore { path: path.clone() });
            }
            Err(cause) => {
                return Err(StoreError::Read {
                    path: path.clone(),
                    cause,
                });
            }
            Ok(meta) => meta,
        };
        inspect_existing(path, &meta)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql_err(path, "opening the database (read-only)"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(sql_err(path, "setting the busy timeout"))?;
        check_ownership(&conn, path)?;
        let found =
            schema::user_version(&conn).map_err(sql_err(path, "reading the schema version"))?;
        let conn = match check_version(path, found, schema::VERSION_KEPT_IN)? {
            Version::Current => conn,
            Version::Older(_) => upgraded_copy(&conn, path)?,
        };
        Ok(Store {
            conn: Conn::Sqlite(conn),
            path: path.clone(),
            location: location.clone(),
        })
    }
}

/// The PostgreSQL store at `url`, found without writing anything and read
/// through a session whose transactions are all read-only. A store at an
/// older schema is not upgraded: a copy in memory is the file store's way,
/// a database has none, and upgrading it is for a command that writes.
fn open_postgres_read_only(url: &str) -> Result<Store, StoreError> {
    let (conn, path, location) = connect_postgres(url)?;
    let found = pg_schema::inspect(&conn).map_err(sql_err(&path, "reading the schema version"))?;
    match found {
        Found::Nothing => Err(StoreError::NoStore { path }),
        Found::Foreign(reason) => Err(StoreError::ForeignDatabase { path, reason }),
        Found::Store(found) => match check_version(&path, found, pg_schema::VERSION_KEPT_IN)? {
            Version::Older(found) => Err(StoreError::OlderDatabase {
                path,
                found,
                current: SCHEMA_VERSION,
            }),
            Version::Current => {
                conn.batch("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                    .map_err(sql_err(&path, "making the session read-only"))?;
                Ok(Store {
                    conn,
                    path,
                    location,
                })
            }
        },
    }
}

/// The store behind `conn`, made by an older sledge (or an empty file),
/// copied into memory and upgraded there; the file is only read.
fn upgraded_copy(conn: &Connection, path: &std::path::Path) -> Result<Connection, StoreError> {
    let doing = "copying an older store into memory to read it";
    let mut copy = Connection::open_in_memory().map_err(sql_err(path, doing))?;
    rusqlite::backup::Backup::new(conn, &mut copy)
        .and_then(|backup| {
            backup.run_to_completion(COPY_PAGES_PER_STEP, std::time::Duration::ZERO, None)
        })
        .map_err(sql_err(path, doing))?;
    schema::migrate(&mut copy, path, "upgrading the copy's schema")?;
    Ok(copy)
}
