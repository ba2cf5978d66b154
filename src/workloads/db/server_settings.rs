//! The version and key settings of a database server a run's cases load,
//! read once when the run starts and stored with the host (so that
//! `compare` names a changed `synchronous_commit` or buffer pool among the
//! host differences, and export and import keep them).
//!
//! A `postgres-local` server exists only inside the rounds, so one is
//! started with the case's `pg_conf` for the reading (initdb and start
//! take a second or two) and stopped again. SQLite is part of sledge.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use super::conn::Target;
use super::local_pg::LocalPostgres;
use crate::http::server::DbSource;
use crate::http::server::dynamic::{mysql_login, postgres_login};

/// How long reading the settings may take: the run must not wait long on
/// a server that does not answer (its cases then fail with the reason).
const SETTINGS_LIMIT: Duration = Duration::from_secs(10);

/// PostgreSQL's settings that move OLTP and TPC-B figures most.
const POSTGRES_SETTINGS: &[&str] = &[
    "server_version",
    "shared_buffers",
    "synchronous_commit",
    "fsync",
    "wal_level",
    "max_connections",
    "work_mem",
    "full_page_writes",
    "checkpoint_timeout",
    "max_wal_size",
];

/// MariaDB's and MySQL's.
const MYSQL_SETTINGS: &[&str] = &[
    "version",
    "innodb_buffer_pool_size",
    "innodb_flush_log_at_trx_commit",
    "sync_binlog",
    "innodb_log_file_size",
    "innodb_flush_method",
    "innodb_doublewrite",
    "max_connections",
    "transaction_isolation",
];

/// The server `db` names, as the run shows it (a URL without its
/// password, or `postgres-local` with its `pg_conf`), with its settings;
/// `None` for SQLite or a server that cannot be read now.
pub fn read(db: &str, pg_conf: &str) -> Option<(String, BTreeMap<String, String>)> {
    // A sweep's cases share their server: it is read (or started) once.
    type Read = Option<(String, BTreeMap<String, String>)>;
    static READ: Mutex<BTreeMap<(String, String), Read>> = Mutex::new(BTreeMap::new());
    let key = (db.to_string(), pg_conf.to_string());
    if let Some(known) = READ.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return known.clone();
    }
    let settings = read_now(db, pg_conf);
    READ.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, settings.clone());
    settings
}

/// [`read`], without remembering.
fn read_now(db: &str, pg_conf: &str) -> Option<(String, BTreeMap<String, String>)> {
    if db == "postgres-local" {
        let mut server = LocalPostgres::start(pg_conf).ok()?;
        let settings = read_now(&server.url(), "").map(|(_, settings)| settings);
        let stopped = server.stop();
        if let Err(e) = stopped {
            crate::say!("warning: {e:#}");
        }
        let shown = match pg_conf.trim() {
            "" => db.to_string(),
            conf => format!("{db} pg_conf={conf}"),
        };
        return Some((shown, settings?));
    }
    let source = DbSource::parse(db).ok()?;
    let (target, names, query): (Target, &[&str], fn(&str) -> String) = match &source {
        DbSource::Sqlite => return None,
        DbSource::Postgres(url) => (
            Target::Postgres {
                config: Box::new(postgres_login(url).ok()?),
                shown: source.shown(),
                schema: "public".to_string(),
            },
            POSTGRES_SETTINGS,
            |name| format!("SELECT current_setting('{name}', true)"),
        ),
        DbSource::Mysql(url) => {
            let opts = mysql_login(url).ok()?;
            let database = opts.get_db_name().unwrap_or_default().to_string();
            (
                Target::Mysql {
                    opts: Box::new(opts),
                    shown: source.shown(),
                    database,
                },
                MYSQL_SETTINGS,
                // A variable this server lacks is an error: read as absent.
                |name| format!("SELECT CAST(@@{name} AS CHAR)"),
            )
        }
    };
    let mut conn = target.connect(SETTINGS_LIMIT).ok()?;
    let settings: BTreeMap<String, String> = names
        .iter()
        .filter_map(|name| {
            let value = conn.scalar(&query(name)).ok()??;
            Some((name.to_string(), value))
        })
        .collect();
    Some((source.shown(), settings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_and_nonsense_have_no_server() {
        assert!(read("sqlite", "").is_none());
        assert!(read("nonsense", "").is_none());
    }

    #[test]
    fn a_local_servers_settings_are_its_pg_conf() {
        if super::super::local_pg::server_bin().is_err() {
            crate::say!("skipped: no PostgreSQL server binaries");
            return;
        }
        let (shown, settings) = read("postgres-local", "synchronous_commit=off").unwrap();
        assert_eq!(shown, "postgres-local pg_conf=synchronous_commit=off");
        assert_eq!(settings["synchronous_commit"], "off");
        assert!(!settings["server_version"].is_empty());
        let (shown, settings) = read("postgres-local", "").unwrap();
        assert_eq!(shown, "postgres-local");
        assert_eq!(settings["synchronous_commit"], "on");
    }

    #[test]
    fn setting_names_are_plain_words() {
        // They go into SQL text unquoted.
        for name in POSTGRES_SETTINGS.iter().chain(MYSQL_SETTINGS) {
            assert!(
                name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{name}"
            );
        }
    }
}
