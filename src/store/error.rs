//! The store's errors. Every variant names the store path (for a
//! PostgreSQL store, its URL with the password masked), says what is
//! wrong and, where there is something to do, what to do.
//!
//! A variant that carries an underlying error shows it inside its own
//! message, before the advice, and does not also return it as its
//! `source()`: `main` prints the whole chain, so an error that did both
//! would print its cause twice. That is why those fields are called
//! `cause`, which thiserror does not treat as a source.

use std::io;
use std::path::PathBuf;

/// What can go wrong with the results store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The directory that should hold the store cannot be created.
    #[error(
        "cannot create store directory {}: {cause}; check the path and its permissions, or choose another store location",
        dir.display()
    )]
    CreateDir {
        /// The directory that could not be created.
        dir: PathBuf,
        /// Why.
        cause: io::Error,
    },

    /// The directory of a store named with `--store` (or `SLEDGE_STORE`)
    /// does not exist. Only the default location's directory is created:
    /// a typo in an explicit path must not silently grow a directory tree.
    #[error(
        "cannot create store {}: directory {} does not exist; create it first or choose another store location",
        path.display(),
        dir.display()
    )]
    NoDirectory {
        /// The store path.
        path: PathBuf,
        /// Its missing directory.
        dir: PathBuf,
    },

    /// Something that is not a directory stands where the store's
    /// directory (or one of its parents) should be.
    #[error(
        "cannot create store {}: {} is not a directory; choose another store location",
        path.display(),
        blocker.display()
    )]
    NotADirectory {
        /// The store path.
        path: PathBuf,
        /// The file in the way.
        blocker: PathBuf,
    },

    /// A command that only reads the store was pointed at a store that does
    /// not exist; nothing was created.
    #[error("no runs yet: there is no store at {}; `sledge run` makes one", path.display())]
    NoStore {
        /// The store path.
        path: PathBuf,
    },

    /// The store file does not exist and cannot be created (usually a
    /// directory that is not writable).
    #[error(
        "cannot create store file {}: {cause}; make its directory writable or choose another store location",
        path.display()
    )]
    CreateFile {
        /// The store path.
        path: PathBuf,
        /// Why.
        cause: io::Error,
    },

    /// The store file exists but cannot be read.
    #[error("cannot read store file {}: {cause}", path.display())]
    Read {
        /// The store path.
        path: PathBuf,
        /// Why.
        cause: io::Error,
    },

    /// The file exists but is not an SQLite database. It was not modified.
    #[error(
        "{} is not an SQLite database ({reason}); it was left untouched: move it away or choose another store location",
        path.display()
    )]
    NotSqlite {
        /// The store path.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },

    /// The file is an SQLite database that belongs to some other program.
    /// It was not modified.
    #[error(
        "{} is not a sledge database (it is an SQLite database of another program: {reason}); it was left untouched: choose another store location",
        path.display()
    )]
    Foreign {
        /// The store path.
        path: PathBuf,
        /// What gave it away (application id, existing tables).
        reason: String,
    },

    /// The store's schema is newer than this build of sledge knows.
    #[error(
        "{} was made by a newer sledge (schema version {found}, this build knows up to {supported}); upgrade sledge or choose another store location",
        path.display()
    )]
    TooNew {
        /// The store path.
        path: PathBuf,
        /// The schema version found in the file.
        found: i64,
        /// The newest schema version this build knows.
        supported: i64,
    },

    /// A command that only reads found a PostgreSQL store at an older
    /// schema: a file store is read through an upgraded copy in memory, a
    /// database is left as found, for a command that writes to upgrade.
    #[error(
        "{} was made by an older sledge (schema version {found}, this build reads {current}); a command that only reads leaves it as it is: `sledge run` or `sledge import` with this build upgrades it in place",
        path.display()
    )]
    OlderDatabase {
        /// The URL, password masked.
        path: PathBuf,
        /// The schema version found in the database.
        found: i64,
        /// The schema version this build reads.
        current: i64,
    },

    /// The run id is not in the store.
    #[error("no run {id} in {}; `sledge list` shows the stored runs", path.display())]
    NoSuchRun {
        /// The run id asked for.
        id: i64,
        /// The store path.
        path: PathBuf,
    },

    /// A `last`/`last~N` reference points before the oldest stored run (or
    /// the store is empty).
    #[error("there is no run `{reference}` in {}: {}", path.display(), holds(*.count))]
    NoRunAt {
        /// The reference as the user typed it.
        reference: String,
        /// How many runs the store holds.
        count: u64,
        /// The store path.
        path: PathBuf,
    },

    /// No stored run has a UUID that starts with the reference.
    #[error("no run with UUID `{reference}` in {}; `sledge list` shows the stored runs", path.display())]
    NoSuchUuid {
        /// The reference as the user typed it.
        reference: String,
        /// The store path.
        path: PathBuf,
    },

    /// Several stored runs have UUIDs that start with the reference.
    #[error("`{reference}` is the start of several runs' UUIDs in {}; give more of the UUID", path.display())]
    AmbiguousUuid {
        /// The reference as the user typed it.
        reference: String,
        /// The store path.
        path: PathBuf,
    },

    /// The reference is both a run's id and the start of another run's
    /// UUID (`00000002`: run 2, or run 3 whose UUID starts `00000002-`):
    /// taking either could show, compare or delete the wrong run.
    #[error(
        "`{reference}` is ambiguous in {}: it is the id of run {id} and the start of the UUID of {uuid_runs}; name run {id} {by_id}, and the other by more of its UUID (`sledge list` shows both)",
        path.display()
    )]
    AmbiguousRunRef {
        /// The reference as the user typed it.
        reference: String,
        /// The run whose id it is.
        id: i64,
        /// The run (or runs) whose UUID it starts, described: `run 3
        /// (00000002-...)`, or `several runs`.
        uuid_runs: String,
        /// How to name the run with that id instead: `as 2` when the
        /// reference had leading zeros, else `by its UUID`.
        by_id: String,
        /// The store path.
        path: PathBuf,
    },

    /// The user's run reference is neither an id nor `last`/`last~N`.
    #[error(
        "`{reference}` is not a run reference: use a run id (`12`), `last` (the newest run), `last~N` (N runs before the newest) or a run UUID; `sledge list` shows the runs in {}",
        path.display()
    )]
    BadRunRef {
        /// The reference as the user typed it.
        reference: String,
        /// The store path.
        path: PathBuf,
    },

    /// A record handed to the store cannot be stored as it is (a bug in the
    /// caller, not in the user's input).
    #[error("cannot store {what} in {}: {reason}", path.display())]
    InvalidRecord {
        /// The store path.
        path: PathBuf,
        /// What was being stored (`case cpu.primes threads=2`).
        what: String,
        /// What is wrong with it.
        reason: String,
    },

    /// Stored data cannot be read back (damaged file or hand edits).
    #[error("{} holds damaged data: {what}; the file may be corrupt", path.display())]
    Corrupt {
        /// The store path.
        path: PathBuf,
        /// What could not be read.
        what: String,
    },

    /// SQLite found the file damaged (its integrity check failed, or a
    /// page could not be read). Checked before a run measures anything.
    #[error(
        "{} is damaged ({found}): move it away (sqlite3's `.recover` may save its runs) or choose another store location",
        path.display()
    )]
    Damaged {
        /// The store path.
        path: PathBuf,
        /// What SQLite reported.
        found: String,
    },

    /// The PostgreSQL server of a `postgres://` store cannot be reached,
    /// refused the login, or did not answer within the connect timeout.
    #[error(
        "cannot open store {}: {reason}; check that the server runs and accepts this URL (host, port, user, password, database)",
        path.display()
    )]
    Connect {
        /// The URL, password masked.
        path: PathBuf,
        /// Why, as the client or the server said it.
        reason: String,
    },

    /// The PostgreSQL database (its current schema) holds tables of the
    /// store's names that are not sledge's. Nothing was changed.
    #[error(
        "{} is not a sledge store ({reason}); it was left untouched: choose another database, or another schema with `?options=-csearch_path%3DNAME`",
        path.display()
    )]
    ForeignDatabase {
        /// The URL, password masked.
        path: PathBuf,
        /// What gave it away.
        reason: String,
    },

    /// A PostgreSQL error, with what the store was doing.
    #[error("store {} failed while {doing}: {cause}", path.display())]
    Postgres {
        /// The URL, password masked.
        path: PathBuf,
        /// What the store was doing (`storing a case`).
        doing: &'static str,
        /// The server's or the client's message.
        cause: String,
    },

    /// An SQLite error, with what the store was doing.
    #[error("store {} failed while {doing}: {cause}", path.display())]
    Sqlite {
        /// The store path.
        path: PathBuf,
        /// What the store was doing (`storing a case`).
        doing: &'static str,
        /// SQLite's error.
        cause: rusqlite::Error,
    },
}

impl StoreError {
    /// The store path (or for [`StoreError::CreateDir`], the directory) the
    /// error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            StoreError::CreateDir { dir, .. } => dir,
            StoreError::CreateFile { path, .. }
            | StoreError::NoDirectory { path, .. }
            | StoreError::NotADirectory { path, .. }
            | StoreError::NoStore { path }
            | StoreError::Read { path, .. }
            | StoreError::NotSqlite { path, .. }
            | StoreError::Foreign { path, .. }
            | StoreError::TooNew { path, .. }
            | StoreError::OlderDatabase { path, .. }
            | StoreError::NoSuchRun { path, .. }
            | StoreError::NoRunAt { path, .. }
            | StoreError::NoSuchUuid { path, .. }
            | StoreError::AmbiguousUuid { path, .. }
            | StoreError::AmbiguousRunRef { path, .. }
            | StoreError::BadRunRef { path, .. }
            | StoreError::InvalidRecord { path, .. }
            | StoreError::Corrupt { path, .. }
            | StoreError::Damaged { path, .. }
            | StoreError::Sqlite { path, .. }
            | StoreError::Connect { path, .. }
            | StoreError::ForeignDatabase { path, .. }
            | StoreError::Postgres { path, .. } => path,
        }
    }
}

/// The end of [`StoreError::NoRunAt`]'s message.
fn holds(count: u64) -> String {
    match count {
        0 => "it holds no runs yet; `sledge run` stores one".to_string(),
        1 => "it holds 1 run; `sledge list` shows it".to_string(),
        n => format!("it holds {n} runs; `sledge list` shows them"),
    }
}
