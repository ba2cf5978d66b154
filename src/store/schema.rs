//! The store's schema and its migrations.
//!
//! `PRAGMA user_version` holds the schema version: the number of steps of
//! [`MIGRATIONS`] applied so far. Steps are only ever appended; a released
//! step is never edited. `PRAGMA application_id` marks the file as sledge's.
//!
//! Floating-point columns are nullable because SQLite stores NaN as NULL;
//! the reader maps NULL back to NaN.

use rusqlite::{Connection, TransactionBehavior};

/// `PRAGMA application_id` of a sledge store: "sldg" in ASCII.
pub const APPLICATION_ID: u32 = 0x736C_6467;

/// Migration steps, in order: step `i` takes the schema from version `i` to
/// version `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    // Version 1: runs, cases, trials, metrics, samples, histograms.
    r#"
CREATE TABLE run (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    started         TEXT NOT NULL,
    finished        TEXT,
    sledge_version  TEXT NOT NULL,
    profile         TEXT NOT NULL,
    command_line    TEXT NOT NULL,
    status          TEXT NOT NULL
                    CHECK (status IN ('running', 'complete', 'partial', 'failed')),
    cpus            TEXT NOT NULL DEFAULT '[]',   -- JSON array of CPU numbers
    warnings        TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
    hostname        TEXT NOT NULL DEFAULT '',     -- copied from host, for listings
    host            TEXT NOT NULL DEFAULT '{}'    -- JSON host inventory
);

CREATE TABLE run_case (
    id                INTEGER PRIMARY KEY,
    run_id            INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
    workload          TEXT NOT NULL,
    workload_version  INTEGER NOT NULL,
    params            TEXT NOT NULL DEFAULT '{}', -- JSON object name -> value
    warnings          TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
    error             TEXT
);
CREATE INDEX run_case_run_id ON run_case (run_id);
CREATE INDEX run_case_workload ON run_case (workload, workload_version);

CREATE TABLE trial (
    case_id  INTEGER NOT NULL REFERENCES run_case (id) ON DELETE CASCADE,
    idx      INTEGER NOT NULL,
    seconds  REAL,
    health   TEXT NOT NULL DEFAULT '{}',          -- JSON TrialHealth
    PRIMARY KEY (case_id, idx)
);

CREATE TABLE metric (
    id         INTEGER PRIMARY KEY,
    case_id    INTEGER NOT NULL REFERENCES run_case (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    unit       TEXT NOT NULL,
    direction  TEXT NOT NULL,
    n          INTEGER NOT NULL,
    mean       REAL,
    median     REAL,
    stddev     REAL,
    ci_low     REAL,
    ci_high    REAL,
    min        REAL,
    max        REAL
);
CREATE INDEX metric_case_id ON metric (case_id);

CREATE TABLE sample (
    metric_id  INTEGER NOT NULL REFERENCES metric (id) ON DELETE CASCADE,
    trial_idx  INTEGER NOT NULL,
    value      REAL,
    outlier    INTEGER CHECK (outlier IN (0, 1)), -- NULL: no flag was given
    PRIMARY KEY (metric_id, trial_idx)
);

CREATE TABLE histogram (
    case_id  INTEGER PRIMARY KEY REFERENCES run_case (id) ON DELETE CASCADE,
    kind     TEXT NOT NULL DEFAULT 'latency_ns',  -- HdrHistogram V2 + deflate
    data     BLOB NOT NULL
);
"#,
    // Rounds: each case is measured in rounds of trials; a disturbed trial
    // may be replaced; a run's host identity is kept for noise histories.
    r#"
ALTER TABLE trial ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trial ADD COLUMN replaced INTEGER NOT NULL DEFAULT 0 CHECK (replaced IN (0, 1));
ALTER TABLE run_case ADD COLUMN position INTEGER;              -- in the plan; NULL before rounds
ALTER TABLE run_case ADD COLUMN rounds TEXT NOT NULL DEFAULT '[]'; -- JSON array of RoundRecord
ALTER TABLE metric ADD COLUMN levels TEXT;                     -- JSON Levels; NULL before rounds
ALTER TABLE run ADD COLUMN host_key TEXT NOT NULL DEFAULT '';  -- RunRecord::host_key()
UPDATE run SET host_key = hostname
    || '|' || coalesce(CASE WHEN json_valid(host) THEN json_extract(host, '$.cpu.model') END, '')
    || '|' || coalesce(CASE WHEN json_valid(cpus) THEN json_array_length(cpus) END, 0)
    || '|' || coalesce(CASE WHEN json_valid(host) THEN json_extract(host, '$.os.kernel') END, '');
CREATE INDEX run_host_key ON run (host_key);
CREATE INDEX run_case_lookup ON run_case (workload, workload_version, params);
"#,
    // Free notes given with `sledge run --note` (a price, a rack...).
    r#"
ALTER TABLE run ADD COLUMN notes TEXT NOT NULL DEFAULT '[]';  -- JSON array of strings
"#,
];

/// The schema version this build creates and understands.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// What [`migrate`] found.
pub(crate) enum Migration {
    /// The schema is current (possibly after applying steps).
    Done,
    /// The store was made by a newer sledge; nothing was changed.
    TooNew(i64),
    /// `user_version` is negative, which sledge never writes.
    Invalid(i64),
}

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

/// Brings the schema up to [`SCHEMA_VERSION`], all steps in one
/// transaction. A current store is not written to at all, so a read-only
/// store can still be listed and loaded.
pub(crate) fn migrate(conn: &mut Connection) -> rusqlite::Result<Migration> {
    let version = user_version(conn)?;
    if version < 0 {
        return Ok(Migration::Invalid(version));
    }
    if version > SCHEMA_VERSION {
        return Ok(Migration::TooNew(version));
    }
    if version == SCHEMA_VERSION {
        return Ok(Migration::Done);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another process may have migrated while we waited for the lock.
    let version = user_version(&tx)?;
    if version < 0 {
        return Ok(Migration::Invalid(version));
    }
    if version > SCHEMA_VERSION {
        return Ok(Migration::TooNew(version));
    }
    for step in &MIGRATIONS[version as usize..] {
        tx.execute_batch(step)?;
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID as i32)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(Migration::Done)
}
