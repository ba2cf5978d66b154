//! A case of a `db.*` workload, whatever its script: a namespace of
//! sledge's own made and loaded in `prepare` (untimed, its time a figure
//! of its own), one connection per client, the script run by every client
//! for `time` in each trial, and the namespace dropped in `cleanup`.

use std::time::{Duration, Instant};

use anyhow::anyhow;

use super::clients::{self, Client, Script};
use super::conn::{LOAD_LIMIT, Target};
use super::local_pg::LocalPostgres;
use super::namespace::{self as ns, DbChoice, Namespace};
use crate::engine::{Case, Metric, TrialContext, TrialOutput};

/// A case running `script` (`db.oltp`'s or `db.tpcb`'s).
pub struct DbCase<S: Script> {
    pub(super) script: S,
    pub(super) db: DbChoice,
    pub(super) local: Option<LocalPostgres>,
    /// Connections, each with a thread of its own.
    pub(super) clients_count: usize,
    pub(super) time: Duration,
    pub(super) namespace: Option<Namespace>,
    pub(super) clients: Vec<Client>,
    pub(super) load_seconds: f64,
    /// The workload's name after `db.` (in the namespace's name and errors).
    pub(super) kind: &'static str,
    /// The clients' random streams start from this, the round and their index.
    pub(super) seed: u64,
}

impl<S: Script> DbCase<S> {
    /// The namespace, once prepared (tests look inside).
    pub fn namespace(&self) -> Option<&Namespace> {
        self.namespace.as_ref()
    }
}

impl<S: Script + Send> Case for DbCase<S> {
    fn prepare(&mut self, ctx: &TrialContext) -> anyhow::Result<()> {
        let started = Instant::now();
        let source = self.db.open(&mut self.local)?;
        let namespace = self
            .namespace
            .insert(Namespace::create(&source, self.kind)?);
        let target: Target = namespace.target().clone();
        let mut conn = target.connect(LOAD_LIMIT)?;
        self.script
            .load(conn.as_mut(), target.dialect(), ctx)
            .map_err(|e| e.context(format!("db={}", target.shown())))?;
        drop(conn);
        self.load_seconds = started.elapsed().as_secs_f64();
        self.clients = clients::open(&target, &self.script, self.clients_count)?;
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let target = self
            .namespace
            .as_ref()
            .ok_or_else(|| anyhow!("db.{}: trial before prepare", self.kind))?
            .target()
            .clone();
        let tally = clients::run(
            &mut self.clients,
            &target,
            &self.script,
            self.time,
            ctx,
            self.seed,
        )?;
        let mut metrics = tally.metrics();
        metrics.push(Metric::lower("load_time", "s", self.load_seconds));
        Ok(TrialOutput {
            metrics,
            latency_ns: Some(tally.latency),
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        // The clients' connections go first: a schema in use cannot be
        // dropped until they close.
        self.clients.clear();
        ns::close(&mut self.namespace, &mut self.local)
    }
}
