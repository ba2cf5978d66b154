//! The open store: the [`Store`] handle and how it is opened, on an
//! SQLite file or a PostgreSQL database.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::db::{self, Conn};
use super::directory::{check_parent_dir, create_default_dir};
use super::error::StoreError;
use super::location::StoreLocation;
use super::sql_error::sql_err;
use super::sqlite_file::{BUSY_TIMEOUT, check_ownership, prepare_file};
use super::{pg_conn, pg_schema, schema};

/// An open results store.
#[derive(Debug)]
pub struct Store {
    pub(super) conn: Conn,
    /// What messages call the store: its file, or its URL with the
    /// password masked.
    pub(super) path: PathBuf,
    /// Where it is, password included, to open it again.
    pub(super) location: StoreLocation,
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
    pub(super) fn open_making_dir(path: &Path) -> Result<Store, StoreError> {
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
pub(super) fn connect_postgres(url: &str) -> Result<(Conn, PathBuf, StoreLocation), StoreError> {
    let location = StoreLocation::Postgres(url.to_string());
    let path = location.shown();
    let conn = pg_conn::PgConn::connect(url).map_err(|reason| StoreError::Connect {
        path: path.clone(),
        reason,
    })?;
    Ok((Conn::Postgres(conn), path, location))
}

/// [`Store::default_path`] with the environment passed in.
pub(super) fn default_path_from(
    xdg_data_home: Option<OsString>,
    home: Option<OsString>,
) -> PathBuf {
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
