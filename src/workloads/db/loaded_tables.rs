//! A case's tables, made and loaded: a namespace of sledge's own (with
//! `postgres-local`'s server, when it is the one holding them) and the
//! time the load took.
//!
//! Loaded once in the process that runs the plan, they are shared by
//! every round of the cases that name the same tables (see
//! `engine::shared_data`): the rounds get a [`Found`], which says
//! how to reach them, and the tables go when the last case using them has
//! had its last round. A case whose transactions change the tables' shape
//! (`db.oltp`'s `insert` and `delete` modes) loads its own in each round.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, anyhow};
use serde::{Deserialize, Serialize};

use super::clients::Script;
use super::conn::{LOAD_LIMIT, Target};
use super::local_pg::LocalPostgres;
use super::namespace::{self as ns, DbChoice, Namespace};
use crate::engine::{SharedPreparation, TrialContext};
use crate::http::server::DbSource;

/// Tables sledge made and loaded, removed by [`LoadedTables::close`] or,
/// failing that, when dropped.
pub struct LoadedTables {
    namespace: Option<Namespace>,
    /// `postgres-local`'s server, when it holds them.
    local: Option<LocalPostgres>,
    /// The server they are on, as the rounds reach it.
    source: DbSource,
    /// How long making the namespace and loading took, seconds.
    load_seconds: f64,
}

/// Where a round finds tables loaded for it: what travels to its process.
/// It holds the server's URL as given, password included (a pipe to the
/// round, never stored or shown).
#[derive(Serialize, Deserialize)]
pub struct Found {
    /// The server (`sqlite` for the embedded one).
    db: String,
    /// The schema or database on a server.
    name: Option<String>,
    /// The SQLite file.
    sqlite: Option<PathBuf>,
    /// The load's time, seconds.
    load_seconds: f64,
}

impl LoadedTables {
    /// Makes a namespace on `db` (starting `postgres-local`'s server
    /// first) and loads `script`'s tables there; nothing is left behind
    /// when it fails or is cancelled.
    pub fn load<S: Script>(
        script: &S,
        db: &DbChoice,
        kind: &'static str,
        ctx: &TrialContext,
    ) -> anyhow::Result<LoadedTables> {
        let started = Instant::now();
        let mut local = None;
        let source = db.open(&mut local)?;
        let mut tables = LoadedTables {
            namespace: Some(Namespace::create(&source, kind)?),
            local,
            source,
            load_seconds: 0.0,
        };
        let target = tables.target().clone();
        let mut conn = target.connect(LOAD_LIMIT)?;
        script
            .load(conn.as_mut(), target.dialect(), ctx)
            .map_err(|e| e.context(format!("db={}", target.shown())))?;
        drop(conn);
        tables.load_seconds = started.elapsed().as_secs_f64();
        Ok(tables)
    }

    /// Where their connections go.
    pub fn target(&self) -> &Target {
        self.namespace
            .as_ref()
            .expect("tables used after close")
            .target()
    }

    /// The namespace (tests look inside).
    pub fn namespace(&self) -> Option<&Namespace> {
        self.namespace.as_ref()
    }

    /// `postgres-local`'s server, when it holds them.
    pub fn local(&self) -> Option<&LocalPostgres> {
        self.local.as_ref()
    }

    /// The server they are on.
    pub fn source(&self) -> &DbSource {
        &self.source
    }

    /// How long making the namespace and loading took, seconds.
    pub fn load_seconds(&self) -> f64 {
        self.load_seconds
    }

    /// Drops the namespace and stops `postgres-local`'s server; idempotent.
    pub fn close(&mut self) -> anyhow::Result<()> {
        ns::close(&mut self.namespace, &mut self.local)
    }
}

impl SharedPreparation for LoadedTables {
    fn for_rounds(&self) -> String {
        let namespace = self.namespace.as_ref();
        let found = Found {
            db: match &self.source {
                DbSource::Sqlite => "sqlite".to_string(),
                DbSource::Postgres(url) | DbSource::Mysql(url) => url.clone(),
            },
            name: namespace.and_then(|n| n.name().map(str::to_string)),
            sqlite: match namespace.map(Namespace::target) {
                Some(Target::Sqlite(path)) => Some(path.clone()),
                _ => None,
            },
            load_seconds: self.load_seconds,
        };
        serde_json::to_string(&found).expect("a Found always serializes")
    }

    fn release(mut self: Box<Self>) -> anyhow::Result<()> {
        self.close()
    }
}

impl Found {
    /// Reads what [`LoadedTables::for_rounds`] wrote.
    pub fn parse(text: &str) -> anyhow::Result<Found> {
        serde_json::from_str(text).context("the tables loaded for the rounds cannot be read")
    }

    /// The server they are on.
    pub fn source(&self) -> anyhow::Result<DbSource> {
        DbSource::parse(&self.db)
    }

    /// Where their connections go.
    pub fn target(&self) -> anyhow::Result<Target> {
        let source = self.source()?;
        match (&source, &self.name, &self.sqlite) {
            (DbSource::Sqlite, _, Some(path)) => Ok(Target::Sqlite(path.clone())),
            (DbSource::Postgres(_) | DbSource::Mysql(_), Some(name), _) => {
                ns::target_in(&source, name)
            }
            _ => Err(anyhow!(
                "the tables loaded for the rounds are on {} with no place named",
                source.shown()
            )),
        }
    }

    /// The load's time, seconds.
    pub fn load_seconds(&self) -> f64 {
        self.load_seconds
    }
}
