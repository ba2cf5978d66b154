//! The place a case's tables live, which sledge makes for the case and
//! removes after it: a marked scratch directory holding a SQLite file
//! (WAL), a PostgreSQL schema, or a MariaDB/MySQL database, named
//! `sledge_<workload>_h<host tag>_<pid>_<n>_<clock>` and, on PostgreSQL
//! and MariaDB, commented with this process's mark (`monitor::maker_mark`). Removing drops that
//! one name and nothing else: sledge never drops a schema or database it
//! did not create in this process (a name already taken makes creating
//! fail, so it is never adopted). Removal runs in the case's cleanup,
//! which the engine calls after the trials, after a failure and after
//! Ctrl-C, and failing that when the namespace is dropped.
//!
//! A sledge killed outright runs none of that. So before it creates its
//! schema, a case on PostgreSQL (or its database, on MariaDB, whose
//! databases keep a comment) drops those of this host whose mark names
//! them and whose maker is gone (`leftover_schemas`), as the run's
//! sweep does for marked scratch directories; anything without such a
//! mark is never touched.

use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{anyhow, bail};

use super::conn::{Dialect, Failure, LOAD_LIMIT, Target};
use super::local_pg::LocalPostgres;
use crate::http::server::DbSource;
use crate::http::server::dynamic::{host_tag, mysql_login, postgres_login};
use crate::monitor::maker_mark::{MakerMark, MarkedDir};

/// A namespace sledge made, with the target its connections use.
pub struct Namespace {
    target: Target,
    /// The SQLite file's directory.
    dir: Option<MarkedDir>,
    /// The name on a server; `None` for SQLite.
    name: Option<String>,
    /// How to reach the server without the namespace (to drop it).
    base: Option<Target>,
    removed: bool,
}

/// A fresh name for a namespace of `workload` (`oltp`, `tpcb`):
/// `sledge_<workload>_<host tag>_<pid>_<n>_<clock>`.
fn unique_name(workload: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "sledge_{workload}_{}_{}_{}_{nanos:08x}",
        host_tag(),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The schemas among `rows` ("NAME COMMENT") that a sledge of this host
/// made and left when it was killed: a sledge name with this host's tag,
/// commented with a well-formed mark naming it, whose maker is gone. A
/// schema without such a mark, or of a sledge still running, or made on
/// another host sharing the server, is never chosen.
fn leftover_schemas(rows: Vec<String>) -> Vec<(String, u32)> {
    let tag = format!("_{}_", host_tag());
    rows.into_iter()
        .filter_map(|row| {
            let (name, comment) = row.split_once(' ')?;
            let mark = MakerMark::parse(comment)?;
            (is_sledge_name(name) && name.contains(&tag) && mark.name == name && mark.maker_gone())
                .then(|| (name.to_string(), mark.maker.pid))
        })
        .collect()
}

/// The query listing the schemas whose names start with `sledge`, one
/// "NAME COMMENT" per line (a comment's own line breaks made spaces), in
/// one value; names and marks are checked in Rust (`_` is a wildcard in
/// LIKE).
const PG_SLEDGE_SCHEMAS: &str = "SELECT coalesce(string_agg(n.nspname::text || ' ' || \
                                 replace(coalesce(obj_description(n.oid, 'pg_namespace'), ''), E'\\n', ' '), E'\\n'), '') \
                                 FROM pg_namespace n WHERE n.nspname LIKE 'sledge%'";

/// [`PG_SLEDGE_SCHEMAS`] for MariaDB: its databases, whose comment (10.5
/// and later) holds the mark. MySQL has no database comments: there the
/// query fails and nothing is swept.
const MARIADB_SLEDGE_DATABASES: &str = "SELECT GROUP_CONCAT(CONCAT(schema_name, ' ', \
                                        REPLACE(schema_comment, '\\n', ' ')) SEPARATOR '\\n') \
                                        FROM information_schema.schemata WHERE schema_name LIKE 'sledge%'";

/// Drops the schemas (PostgreSQL) or databases (MariaDB) a killed sledge
/// of this host left on the server `conn` is connected to, saying which.
/// Not being able to list or drop them is no reason to fail the case: it
/// is said (on PostgreSQL; a MySQL server cannot hold the mark, so there
/// is nothing to say), and the case goes on.
fn sweep_leftover_schemas(conn: &mut dyn super::conn::Conn, shown: &str, dialect: Dialect) {
    let (list, kind) = match dialect {
        Dialect::Postgres => (PG_SLEDGE_SCHEMAS, "schema"),
        Dialect::Mysql => (MARIADB_SLEDGE_DATABASES, "database"),
        Dialect::Sqlite => return,
    };
    let rows = match conn.scalar(list) {
        Ok(text) => text
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect(),
        Err(e) => {
            if dialect == Dialect::Postgres {
                crate::say!(
                    "warning: db={shown}: cannot look for schemas a killed sledge left: {e}"
                );
            }
            return;
        }
    };
    for (name, pid) in leftover_schemas(rows) {
        let drop = match dialect {
            Dialect::Postgres => format!("DROP SCHEMA IF EXISTS {name} CASCADE"),
            _ => format!("DROP DATABASE IF EXISTS {name}"),
        };
        match conn.simple(&drop) {
            Ok(()) => crate::say!(
                "note: db={shown}: dropped {kind} {name}, left behind by a sledge that is gone (pid {pid})"
            ),
            Err(e) => crate::say!(
                "warning: db={shown}: cannot drop {kind} {name}, left behind by a sledge that is gone (pid {pid}): {e}"
            ),
        }
    }
}

/// Whether `name` is a name [`unique_name`] makes: what a drop checks
/// before it sends anything.
fn is_sledge_name(name: &str) -> bool {
    name.starts_with("sledge_")
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Where the connections to the namespace `name` on the server `source`
/// go: its schema (PostgreSQL) or database (MariaDB, MySQL).
pub fn target_in(source: &DbSource, name: &str) -> anyhow::Result<Target> {
    if !is_sledge_name(name) {
        bail!("{name}: not a name sledge makes");
    }
    match source {
        DbSource::Postgres(url) => Ok(Target::Postgres {
            config: Box::new(postgres_login(url)?),
            shown: source.shown(),
            schema: name.to_string(),
        }),
        DbSource::Mysql(url) => Ok(Target::Mysql {
            opts: Box::new(mysql_login(url)?),
            shown: source.shown(),
            database: name.to_string(),
        }),
        DbSource::Sqlite => bail!("sqlite has no namespace named {name}"),
    }
}

impl Namespace {
    /// Makes the namespace for a case of `workload` on `source`: connects
    /// (a server that cannot be reached, or a login refused, fails here
    /// with nothing made) and creates it.
    pub fn create(source: &DbSource, workload: &str) -> anyhow::Result<Namespace> {
        match source {
            DbSource::Sqlite => {
                let dir = MarkedDir::create(&std::env::temp_dir(), &format!("db-{workload}"))?;
                let path = dir.path().join(format!("{workload}.db"));
                let target = Target::Sqlite(path.clone());
                let namespace = Namespace {
                    target,
                    dir: Some(dir),
                    name: None,
                    base: None,
                    removed: false,
                };
                let mut conn = namespace.target.connect(LOAD_LIMIT)?;
                conn.simple("PRAGMA journal_mode = WAL")
                    .map_err(|e| anyhow!("setting WAL mode on {}: {e}", path.display()))?;
                Ok(namespace)
            }
            DbSource::Postgres(url) => {
                let config = Box::new(postgres_login(url)?);
                let shown = source.shown();
                let name = unique_name(workload);
                let target = target_in(source, &name)?;
                let base = Target::Postgres {
                    config: config.clone(),
                    shown: shown.clone(),
                    schema: "public".to_string(),
                };
                let mut conn = base.connect(LOAD_LIMIT)?;
                sweep_leftover_schemas(conn.as_mut(), &shown, Dialect::Postgres);
                conn.simple(&format!("CREATE SCHEMA {name}"))
                    .map_err(|e| anyhow!("db={shown}: cannot create schema {name}: {e}"))?;
                let namespace = Namespace {
                    target,
                    dir: None,
                    name: Some(name.clone()),
                    base: Some(base),
                    removed: false,
                };
                if let Some(mark) = MakerMark::new(&name).map(|m| m.to_line())
                    && !mark.contains(['\'', '\\'])
                {
                    // The mark is a record of who made it; failing to
                    // write it is no reason to fail the case.
                    let _ = conn.simple(&format!("COMMENT ON SCHEMA {name} IS '{mark}'"));
                }
                Ok(namespace)
            }
            DbSource::Mysql(url) => {
                let opts = mysql_login(url)?;
                let shown = source.shown();
                let database = opts.get_db_name().unwrap_or_default().to_string();
                let name = unique_name(workload);
                let target = target_in(source, &name)?;
                let base = Target::Mysql {
                    opts: Box::new(opts.clone()),
                    shown: shown.clone(),
                    database,
                };
                let mut conn = base.connect(LOAD_LIMIT)?;
                sweep_leftover_schemas(conn.as_mut(), &shown, Dialect::Mysql);
                conn.simple(&format!("CREATE DATABASE {name}"))
                    .map_err(|e| anyhow!("db={shown}: cannot create database {name}: {e}"))?;
                if let Some(mark) = MakerMark::new(&name).map(|m| m.to_line())
                    && !mark.contains(['\'', '\\'])
                {
                    // MariaDB 10.5 and later keep a database's comment;
                    // MySQL refuses one, and its database goes unmarked
                    // (never swept), which is no reason to fail the case.
                    let _ = conn.simple(&format!("ALTER DATABASE {name} COMMENT '{mark}'"));
                }
                Ok(Namespace {
                    target,
                    dir: None,
                    name: Some(name),
                    base: Some(base),
                    removed: false,
                })
            }
        }
    }

    /// Where its connections go.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Its name on the server; `None` for SQLite.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The SQLite file's directory; `None` on a server.
    pub fn dir(&self) -> Option<&std::path::Path> {
        self.dir.as_ref().map(MarkedDir::path)
    }

    /// Drops the schema or database, or removes the SQLite directory. An
    /// error says what was left behind.
    pub fn remove(&mut self) -> anyhow::Result<()> {
        if self.removed {
            return Ok(());
        }
        self.removed = true;
        if let Some(dir) = &mut self.dir {
            return dir
                .remove()
                .map_err(|e| anyhow!("removing the SQLite database: {e:#}"));
        }
        let (Some(name), Some(base)) = (&self.name, &self.base) else {
            return Ok(());
        };
        if !is_sledge_name(name) {
            bail!("refusing to drop {name}: not a name sledge makes");
        }
        let sql = match base {
            Target::Postgres { .. } => format!("DROP SCHEMA IF EXISTS {name} CASCADE"),
            _ => format!("DROP DATABASE IF EXISTS {name}"),
        };
        let dropped = base
            .connect(LOAD_LIMIT)
            .and_then(|mut conn| conn.simple(&sql).map_err(|e: Failure| anyhow!("{e}")));
        dropped.map_err(|e| {
            anyhow!(
                "db={}: cannot drop {name}, left behind: {e:#} (drop it by hand: {sql})",
                base.shown()
            )
        })
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            crate::say!("warning: {e:#}");
        }
    }
}

/// The checked `db` parameter: a database by URL (or SQLite), or a
/// throwaway local PostgreSQL server with `pg_conf`'s settings.
#[derive(Debug, Clone)]
pub enum DbChoice {
    /// SQLite, or a server by URL.
    Source(DbSource),
    /// `postgres-local`.
    PostgresLocal {
        /// Its settings (`pg_conf`).
        pg_conf: String,
    },
}

impl DbChoice {
    /// Checks `db` and `pg_conf` without connecting or starting anything.
    pub fn parse(db: &str, pg_conf: &str) -> anyhow::Result<DbChoice> {
        if db == "postgres-local" {
            super::local_pg::conf_options(pg_conf)?;
            return Ok(DbChoice::PostgresLocal {
                pg_conf: pg_conf.to_string(),
            });
        }
        if !pg_conf.trim().is_empty() {
            bail!(
                "pg_conf={pg_conf}: only with db=postgres-local (a server of your own keeps its own settings; change them between the sides of `sledge ab` with --a-setup/--b-setup)"
            );
        }
        DbSource::parse(db).map(DbChoice::Source)
    }

    /// Starts the local server when there is one (kept in `local`), and
    /// returns the database to make the namespace in.
    pub fn open(&self, local: &mut Option<LocalPostgres>) -> anyhow::Result<DbSource> {
        match self {
            DbChoice::Source(source) => Ok(source.clone()),
            DbChoice::PostgresLocal { pg_conf } => {
                let server = local.insert(LocalPostgres::start(pg_conf)?);
                DbSource::parse(&server.url())
            }
        }
    }
}

/// Drops the namespace, then stops the local server: the first error,
/// after trying both.
pub fn close(
    namespace: &mut Option<Namespace>,
    local: &mut Option<LocalPostgres>,
) -> anyhow::Result<()> {
    // A local server goes with everything in it: dropping its schema first
    // would only fail once the server has died.
    let dropped = match (namespace.as_mut(), local.is_some()) {
        (Some(namespace), true) => {
            namespace.removed = true;
            Ok(())
        }
        (Some(namespace), false) => namespace.remove(),
        (None, _) => Ok(()),
    };
    let stopped = local.as_mut().map_or(Ok(()), LocalPostgres::stop);
    *local = None;
    dropped.and(stopped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sledge_names() {
        let name = unique_name("oltp");
        assert!(is_sledge_name(&name), "{name}");
        assert!(!is_sledge_name("test"));
        assert!(!is_sledge_name("sledge_x; DROP"));
        assert_ne!(unique_name("oltp"), unique_name("oltp"));
    }

    #[test]
    fn only_marked_schemas_of_a_gone_sledge_of_this_host_are_leftovers() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let mark = |name: &str, pid: u32| {
            let mut mark = MakerMark::new(name).unwrap();
            mark.maker.pid = pid;
            mark.to_line()
        };
        let tag = host_tag();
        let stale = format!("sledge_oltp_{tag}_{gone}_0_00000000");
        let live = format!("sledge_oltp_{tag}_{}_0_00000000", std::process::id());
        let unmarked = format!("sledge_tpcb_{tag}_{gone}_0_00000000");
        let elsewhere = format!("sledge_oltp_h00000000_{gone}_0_00000000");
        let misnamed = format!("sledge_oltp_{tag}_{gone}_1_00000000");
        let rows = vec![
            format!("{stale} {}", mark(&stale, gone)),
            format!("{live} {}", mark(&live, std::process::id())),
            format!("{unmarked} "),
            format!("{elsewhere} {}", mark(&elsewhere, gone)),
            // A mark naming another schema does not count for this one.
            format!("{misnamed} {}", mark(&stale, gone)),
            "users_schema sledge-made/1".to_string(),
        ];
        assert_eq!(leftover_schemas(rows), vec![(stale, gone)]);
    }

    #[test]
    fn a_sqlite_namespace_goes_away() {
        let mut ns = Namespace::create(&DbSource::Sqlite, "oltp").unwrap();
        let dir = ns.dir().unwrap().to_path_buf();
        assert!(dir.exists());
        let mut conn = ns.target().connect(LOAD_LIMIT).unwrap();
        assert_eq!(
            conn.scalar("PRAGMA journal_mode").unwrap().as_deref(),
            Some("wal")
        );
        drop(conn);
        ns.remove().unwrap();
        assert!(!dir.exists());
    }
}
