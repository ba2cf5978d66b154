//! The store's schema steps: the SQL that takes a store from each version
//! to the next, and the version this build creates, which is their count.
//! Kept apart from the code that applies them (`schema.rs`, `pg_schema.rs`)
//! and from what a version found means (`schema_version.rs`), which all
//! three read.

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
    // Version 2: every run gets a UUID, so that a run exported from one
    // store and imported into another keeps one identity (importing it again
    // adds nothing). Runs stored before get a random version 4 UUID here.
    r#"
ALTER TABLE run ADD COLUMN uuid TEXT;
UPDATE run SET uuid =
    lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' ||
    substr(lower(hex(randomblob(2))), 2) || '-' ||
    substr('89ab', 1 + (abs(random()) % 4), 1) ||
    substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))
  WHERE uuid IS NULL;
CREATE UNIQUE INDEX run_uuid ON run (uuid);
"#,
    // Version 3: rounds. Each case is measured in rounds of trials; a disturbed trial
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
    // Version 4: a run knows which process runs it, so that a run left
    // `running` by a killed sledge can be told apart and marked
    // `abandoned`, a status the CHECK must now allow. SQLite cannot change
    // a CHECK, so the table is rebuilt (with foreign keys off, see
    // `migrate`); ids, and so every case's link, are kept.
    r#"
CREATE TABLE run_v4 (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    started         TEXT NOT NULL,
    finished        TEXT,
    sledge_version  TEXT NOT NULL,
    profile         TEXT NOT NULL,
    command_line    TEXT NOT NULL,
    status          TEXT NOT NULL
                    CHECK (status IN ('running', 'complete', 'partial', 'failed', 'abandoned')),
    cpus            TEXT NOT NULL DEFAULT '[]',
    warnings        TEXT NOT NULL DEFAULT '[]',
    hostname        TEXT NOT NULL DEFAULT '',
    host            TEXT NOT NULL DEFAULT '{}',
    uuid            TEXT,
    host_key        TEXT NOT NULL DEFAULT '',
    owner           TEXT                          -- BOOT_ID:PID:STARTTIME while running
);
INSERT INTO run_v4 (id, started, finished, sledge_version, profile, command_line, status,
                    cpus, warnings, hostname, host, uuid, host_key)
    SELECT id, started, finished, sledge_version, profile, command_line, status,
           cpus, warnings, hostname, host, uuid, host_key
    FROM run;
DROP TABLE run;
ALTER TABLE run_v4 RENAME TO run;
CREATE UNIQUE INDEX run_uuid ON run (uuid);
CREATE INDEX run_host_key ON run (host_key);
"#,
    // Version 5: free notes given with `sledge run --note` (a price, a rack...).
    r#"
ALTER TABLE run ADD COLUMN notes TEXT NOT NULL DEFAULT '[]';  -- JSON array of strings
"#,
    // Version 6: which per-CPU parameters a case was given as `all` (NULL:
    // stored before this was kept), so that an explicit count equal to the
    // run's CPU count is not taken for `all`; and which runs came from a
    // document (`sledge import`), which are never a host's noise history.
    // Before this the store did not say which runs were imported. A run
    // sledge made in this store has recorded its process since version 4;
    // one without (an import, a run landed by `fleet run`, or a run made
    // before version 4) is taken as imported: a history lost costs a
    // comparison the wider no-history threshold, a forged one could hide
    // a regression.
    r#"
ALTER TABLE run_case ADD COLUMN given_as_all TEXT;            -- JSON array of parameter names
ALTER TABLE run ADD COLUMN imported INTEGER NOT NULL DEFAULT 0 CHECK (imported IN (0, 1));
UPDATE run SET imported = 1 WHERE owner IS NULL;
"#,
];

/// The schema version this build creates and understands.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;
