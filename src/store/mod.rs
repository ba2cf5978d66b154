//! The results store: one SQLite file, or one PostgreSQL database shared
//! by many hosts, that keeps every run.
//!
//! Layout: a run (times, sledge version, profile, host inventory as JSON,
//! command line, status) has cases (workload id and version, parameters as
//! JSON, warnings); a case has trials (wall time, health as JSON), metric
//! summaries, one sample per trial per metric, and optionally a serialized
//! latency histogram. Each case is stored in its own transaction, so a crash
//! loses at most the case in flight. Every run has a UUID that names it
//! across stores: an exported run imported elsewhere keeps it, and
//! importing it twice adds nothing.
//!
//! The schema is versioned (`PRAGMA user_version`, see [`SCHEMA_VERSION`])
//! and the file is marked as sledge's (`PRAGMA application_id`, see
//! [`APPLICATION_ID`]). [`Store::open`] never writes to a file that is not
//! a sledge store: it reads the SQLite header itself before opening
//! anything read-write.
//!
//! Nothing is created by accident: only the default location gets its
//! directory made ([`Store::open_default`]), a path the user typed must be
//! in an existing directory, and commands that only read
//! ([`Store::open_read_only`]) never create a store at all, nor upgrade
//! or otherwise write one.
//!
//! A `postgres://` or `postgresql://` URL in place of the path
//! ([`StoreLocation`]) keeps the same tables, versions and runs in a
//! PostgreSQL database: the queries are shared (`db.rs` is the seam between
//! them and the two databases), only the schema's steps are written for
//! each (`schema.rs`, `pg_schema.rs`).

pub(crate) mod db;
pub(crate) mod db_value;
mod error;
mod history;
pub mod later_params;
mod location;
mod migrations;
mod pg_conn;
pub(crate) mod pg_deadline;
mod pg_schema;
mod read;
mod read_only;
mod schema;
mod schema_version;
mod workload_runs;
mod write;

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::fs;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

pub use error::StoreError;
pub use history::{CaseHistoryEntry, HistoryMetric};
pub use location::StoreLocation;
pub use read::MIN_UUID_PREFIX;
pub use schema::{APPLICATION_ID, SCHEMA_VERSION};
pub use workload_runs::WorkloadRun;
pub use write::Imported;

use crate::results::RunStatus;
use db::{Conn, DbError};

/// How long a connection waits for another process holding the store's
/// lock before giving up. A run stores each case after each of its rounds,
/// between timed trials, so waiting costs it no measurement, while giving
/// up stops the run and loses the round. The lock is held by another
/// sledge's transaction (a case: milliseconds; an `import` of a large
/// export: the whole import, seconds to tens of seconds), `delete`, or a
/// backup or `sqlite3` session: a minute outlasts all but a session left
/// open by hand, which no wait fixes. (PostgreSQL stores have their own
/// statement deadline.)
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// The first 16 bytes of every SQLite 3 database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Size of the SQLite database header.
const HEADER_LEN: usize = 100;

/// Offset of the big-endian `application_id` in the SQLite header.
const APPLICATION_ID_OFFSET: usize = 68;

/// An open results store.
#[derive(Debug)]
pub struct Store {
    conn: Conn,
    /// What messages call the store: its file, or its URL with the
    /// password masked.
    path: PathBuf,
    /// Where it is, password included, to open it again.
    location: StoreLocation,
}

/// One line of `sledge list`: a stored run without its cases.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunListing {
    /// Store id of the run.
    pub id: i64,
    /// The run's UUID, kept across export and import.
    pub uuid: String,
    /// When the run started, RFC 3339 in UTC.
    pub started: String,
    /// When the run ended; absent while running (or if the process died).
    pub finished: Option<String>,
    /// The profile name, or `custom`.
    pub profile: String,
    /// How the run ended.
    pub status: RunStatus,
    /// The host's name, from the inventory taken at the start.
    pub hostname: String,
    /// The host as `sledge fleet run --hosts` named it, for a run made by a
    /// fleet (its `fleet_host=` note); `null` otherwise. Clones of one
    /// image share a host name but not this.
    pub fleet_host: Option<String>,
    /// How many cases were stored.
    pub cases: u32,
    /// The version of sledge that made the run.
    pub sledge_version: String,
}

/// A listing's text escaped for `sledge list` ([`crate::visible`]).
impl crate::visible::EscapeText for RunListing {
    fn escape_text(&mut self) {
        let RunListing {
            id: _,
            uuid,
            started,
            finished,
            profile,
            status: _,
            hostname,
            fleet_host,
            cases: _,
            sledge_version,
        } = self;
        fleet_host.escape_text();
        uuid.escape_text();
        started.escape_text();
        finished.escape_text();
        profile.escape_text();
        hostname.escape_text();
        sledge_version.escape_text();
    }
}

impl Store {
    /// `$XDG_DATA_HOME/sledge/results.db`, else
    /// `$HOME/.local/share/sledge/results.db`. A relative or empty
    /// `XDG_DATA_HOME` is ignored, as the XDG specification asks; with
    /// neither variable usable, `sledge-results.db` in the current
    /// directory.
    pub fn default_path() -> PathBuf {
        default_path_from(std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME"))
    }

    /// `given`, or the file at [`Store::default_path`] when no `--store`
    /// was given.
    pub fn location_or_default(given: Option<StoreLocation>) -> StoreLocation {
        given.unwrap_or_else(|| StoreLocation::File(Store::default_path()))
    }

    /// Opens the store at `path`, creating the file if needed (its
    /// directory must exist), and brings its schema up to date.
    ///
    /// A file that is not an SQLite database, or an SQLite database of
    /// another program, is refused and left untouched; so is a store made
    /// by a newer sledge. The connection uses the rollback journal, foreign
    /// keys and a busy timeout of [`BUSY_TIMEOUT`].
    ///
    /// A `postgres://` URL in place of the path opens (and creates or
    /// upgrades) the store in that PostgreSQL database instead.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_at(&StoreLocation::from_arg(path))
    }

    /// [`Store::open`] at a [`StoreLocation`] (`--store`, parsed once).
    pub fn open_at(location: &StoreLocation) -> Result<Store, StoreError> {
        match location {
            StoreLocation::File(path) => Store::open_file(path),
            StoreLocation::Postgres(url) => Store::open_postgres(url, true),
        }
    }

    /// [`Store::open`] on an SQLite file.
    fn open_file(path: &Path) -> Result<Store, StoreError> {
        let path = path.to_path_buf();
        check_parent_dir(&path)?;
        prepare_file(&path)?;

        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&path, flags)
            .map_err(sql_err(&path, "opening the database"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(sql_err(&path, "setting the busy timeout"))?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(sql_err(&path, "enabling foreign keys"))?;

        // The file may have changed since it was inspected; check again with
        // the real connection before anything is written.
        check_ownership(&conn, &path)?;

        schema::migrate(&mut conn, &path, "creating or upgrading the schema")?;
        Ok(Store {
            conn: Conn::Sqlite(conn),
            location: StoreLocation::File(path.clone()),
            path,
        })
    }

    /// Opens the store at its default location ([`Store::default_path`]),
    /// creating that location's directory (mode 0700, as the XDG
    /// specification asks) if it is missing. Only the default location
    /// gets a directory made for it: a path the user typed is taken as
    /// given, so that a typo is an error and not a new directory tree.
    pub fn open_default() -> Result<Store, StoreError> {
        Store::open_making_dir(&Store::default_path())
    }

    /// Opens a new store for the run with `uuid` whose own store (a
    /// PostgreSQL server) was lost midway: `fallback-UUID.db` beside the
    /// default store, whose directory is created if missing.
    pub fn open_fallback(uuid: &str) -> Result<Store, StoreError> {
        Store::open_making_dir(&Store::default_path().with_file_name(format!("fallback-{uuid}.db")))
    }

    /// [`Store::open`], after creating the store's directory (mode 0700)
    /// if it is missing: for the default location only.
    fn open_making_dir(path: &Path) -> Result<Store, StoreError> {
        create_default_dir(path)?;
        Store::open(path)
    }

    /// Opens a store that must already exist, read-write and upgraded as
    /// [`Store::open`] does: a store that does not exist is
    /// [`StoreError::NoStore`] ("no runs yet"), and nothing is created. For
    /// a store this process has been using (a second interrupt marks its
    /// runs partial; a fallback file is shown after a lost store); a
    /// command that only reads opens with [`Store::open_read_only`].
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        if let StoreLocation::Postgres(url) = StoreLocation::from_arg(path) {
            return Store::open_postgres(&url, false);
        }
        match fs::symlink_metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(StoreError::NoStore {
                path: path.to_path_buf(),
            }),
            // A dangling symbolic link leads nowhere either.
            Ok(meta) if meta.file_type().is_symlink() && !path.exists() => {
                Err(StoreError::NoStore {
                    path: path.to_path_buf(),
                })
            }
            _ => Store::open(path),
        }
    }

    /// [`Store::open_existing`] at a [`StoreLocation`] (from
    /// [`Store::location`]: a PostgreSQL URL with its password).
    pub fn open_existing_at(location: &StoreLocation) -> Result<Store, StoreError> {
        match location {
            StoreLocation::File(path) => Store::open_existing(path),
            StoreLocation::Postgres(url) => Store::open_postgres(url, false),
        }
    }

    /// Runs SQLite's `quick_check` over the whole file, so that a damaged
    /// store is found before a run measures anything rather than when its
    /// first case is stored. It reads every page: about as long as reading
    /// the file once.
    ///
    /// A PostgreSQL server keeps its own pages' checksums and reports
    /// damage itself; there the check is that the server answers.
    pub fn check_integrity(&self) -> Result<(), StoreError> {
        let damaged = |found: String| StoreError::Damaged {
            path: self.path.clone(),
            found,
        };
        let conn = match &self.conn {
            Conn::Sqlite(conn) => conn,
            Conn::Postgres(_) => {
                return self
                    .conn
                    .query("SELECT 1", db::params![])
                    .map(drop)
                    .map_err(sql_err(&self.path, "checking that the server answers"));
            }
        };
        let mut stmt = conn
            .prepare("PRAGMA quick_check")
            .map_err(|e| damaged(format!("{e}, while checking its integrity")))?;
        let problems = stmt
            .query_map([], |row| row.get::<_, String>(0))
            .and_then(Iterator::collect::<rusqlite::Result<Vec<String>>>)
            .map_err(|e| damaged(format!("{e}, while checking its integrity")))?;
        if problems.len() == 1 && problems[0] == "ok" {
            return Ok(());
        }
        // SQLite lists up to 100 problems; the first names the place.
        let first = problems
            .first()
            .map(|p| {
                p.replace("*** in database main ***\n", "")
                    .replace('\n', "; ")
            })
            .unwrap_or_default();
        Err(damaged(match problems.len() {
            0 | 1 => format!("integrity check: {first}"),
            n => format!("integrity check: {first}; and {} more problem(s)", n - 1),
        }))
    }

    /// The path the store was opened from, or for a PostgreSQL store its
    /// URL with the password masked: what to show.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the store is, password included: to open it again (never
    /// shown; its `Debug` masks the password).
    pub fn location(&self) -> &StoreLocation {
        &self.location
    }

    /// Opens the store in the PostgreSQL database at `url`: connects
    /// within the connect timeout, then creates or upgrades the schema
    /// under a lock (`create`), or, for a command that only reads, finds
    /// the store there or says there is none.
    fn open_postgres(url: &str, create: bool) -> Result<Store, StoreError> {
        let (conn, path, location) = connect_postgres(url)?;
        let doing = "creating or upgrading the schema";
        if !create
            && let pg_schema::Found::Nothing =
                pg_schema::inspect(&conn).map_err(sql_err(&path, doing))?
        {
            return Err(StoreError::NoStore { path });
        }
        pg_schema::migrate(&conn, &path, doing)?;
        Ok(Store {
            conn,
            path,
            location,
        })
    }
}

/// A connection to the PostgreSQL database at `url` (within the connect
/// timeout), with the masked URL messages use and the location.
fn connect_postgres(url: &str) -> Result<(Conn, PathBuf, StoreLocation), StoreError> {
    let location = StoreLocation::Postgres(url.to_string());
    let path = location.shown();
    let conn = pg_conn::PgConn::connect(url).map_err(|reason| StoreError::Connect {
        path: path.clone(),
        reason,
    })?;
    Ok((Conn::Postgres(conn), path, location))
}

/// Wraps a database error with the store path and what was being done; an
/// SQLite error that says the file is damaged becomes
/// [`StoreError::Damaged`].
fn sql_err<'a, E: Into<DbError>>(
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

/// [`Store::default_path`] with the environment passed in.
fn default_path_from(xdg_data_home: Option<OsString>, home: Option<OsString>) -> PathBuf {
    let tail = Path::new("sledge").join("results.db");
    if let Some(xdg) = xdg_data_home.map(PathBuf::from)
        && xdg.is_absolute()
    {
        return xdg.join(tail);
    }
    match home {
        Some(home) if !home.is_empty() => {
            PathBuf::from(home).join(".local").join("share").join(tail)
        }
        _ => PathBuf::from("sledge-results.db"),
    }
}

/// Checks that the directory of `path` exists (an empty parent is the
/// current directory). Nothing is created: see [`Store::open_default`].
fn check_parent_dir(path: &Path) -> Result<(), StoreError> {
    let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) else {
        return Ok(());
    };
    if dir.is_dir() {
        return Ok(());
    }
    Err(match blocking_file(dir) {
        Some(blocker) => StoreError::NotADirectory {
            path: path.to_path_buf(),
            blocker,
        },
        None => StoreError::NoDirectory {
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
        },
    })
}

/// The nearest existing ancestor of `dir` (itself included) if it is not
/// a directory: the file that stops the directory from being there.
fn blocking_file(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|a| !a.as_os_str().is_empty() && a.exists())
        .filter(|a| !a.is_dir())
        .map(Path::to_path_buf)
}

/// Creates the default store location's directory if it is missing.
fn create_default_dir(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::DirBuilderExt as _;
    let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) else {
        return Ok(());
    };
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(blocker) = blocking_file(dir) {
        return Err(StoreError::NotADirectory {
            path: path.to_path_buf(),
            blocker,
        });
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|cause| StoreError::CreateDir {
            dir: dir.to_path_buf(),
            cause,
        })
}

/// Makes sure `path` is either a new empty file, an empty file, or an
/// SQLite database that sledge may open read-write. Never writes to an
/// existing file.
fn prepare_file(path: &Path) -> Result<(), StoreError> {
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
fn inspect_existing(path: &Path, meta: &fs::Metadata) -> Result<(), StoreError> {
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
fn check_ownership(conn: &Connection, path: &Path) -> Result<(), StoreError> {
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
