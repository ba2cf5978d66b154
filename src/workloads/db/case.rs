//! A case of a `db.*` workload, whatever its script: a namespace of
//! sledge's own made and loaded in `prepare` (untimed, its time a figure
//! of its own), one connection per client, the script run by every client
//! for `time` in each trial, and the namespace dropped in `cleanup`.
//!
//! A server on this host (`postgres-local`'s, or one a URL names by
//! `localhost` or a loopback address) is claimed as the workload's own for
//! the monitor, so that its CPU is not "other processes", and each trial
//! adds its CPU beside the clients' (`server_process`).

use std::time::{Duration, Instant};

use anyhow::anyhow;

use super::clients::{self, Client, Script};
use super::conn::{LOAD_LIMIT, Target};
use super::local_pg::LocalPostgres;
use super::namespace::{self as ns, DbChoice, Namespace};
use super::server_process::WatchedServer;
use crate::engine::{Case, Metric, TrialContext, TrialOutput};
use crate::monitor::procfs;

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
    /// The server, when it runs on this host and was found.
    pub(super) server: Option<WatchedServer>,
    /// Why a server on this host was not found (a warning).
    pub(super) server_note: Option<String>,
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

/// The CPUs online now (0 when `/proc/stat` cannot be read).
fn online_cpus() -> usize {
    procfs::read_stat().map_or(0, |stat| stat.online_cpus())
}

impl<S: Script + Send> Case for DbCase<S> {
    fn prepare(&mut self, ctx: &TrialContext) -> anyhow::Result<()> {
        let started = Instant::now();
        let source = self.db.open(&mut self.local)?;
        match WatchedServer::find(&source, self.local.as_ref()) {
            Ok(server) => self.server = server,
            Err(note) => self.server_note = Some(note),
        }
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
        let server_before = self.server.as_ref().and_then(WatchedServer::sample);
        let clients_before = procfs::read_self_stat();
        let started = Instant::now();
        let tally = clients::run(
            &mut self.clients,
            &target,
            &self.script,
            self.time,
            ctx,
            self.seed,
        )?;
        let wall = started.elapsed().as_secs_f64();
        let clients_after = procfs::read_self_stat();
        let server_after = self.server.as_ref().and_then(WatchedServer::sample);
        let mut metrics = tally.metrics();
        metrics.push(Metric::lower("load_time", "s", self.load_seconds));
        // The clients are this process's threads: its CPU over the trial
        // (the monitor's thread is a rounding error beside them).
        if let (Some(before), Some(after)) = (clients_before, clients_after) {
            let seconds = after.cpu_ticks().saturating_sub(before.cpu_ticks()) as f64
                / procfs::clock_ticks_per_sec();
            let cpus = online_cpus();
            if wall > 0.0 && cpus > 0 {
                let busy = (seconds / (wall * cpus as f64)).min(1.0);
                metrics.push(Metric::lower("client_cpu_busy", "%", 100.0 * busy));
            }
        }
        if let Some(server) = WatchedServer::used(server_before, server_after) {
            // Higher server shares: the rate describes the server more.
            metrics.push(Metric::higher("server_cpu_busy", "%", 100.0 * server.busy));
            metrics.push(Metric::lower(
                "server_cpu_seconds_per_txn",
                "s",
                server.cpu_seconds / tally.transactions.max(1) as f64,
            ));
        }
        Ok(TrialOutput {
            metrics,
            latency_ns: Some(tally.latency),
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        // The clients' connections go first: a schema in use cannot be
        // dropped until they close.
        self.clients.clear();
        self.server = None;
        ns::close(&mut self.namespace, &mut self.local)
    }

    fn warnings(&self) -> Vec<String> {
        self.server_note
            .iter()
            .map(|note| {
                format!(
                    "db.{}: the database server runs on this host but its CPU is not counted, and the monitor may call its trials busy: {note}",
                    self.kind
                )
            })
            .collect()
    }
}
