//! A case of a `db.*` workload, whatever its script: its tables (loaded
//! once for all the rounds in the process that runs the plan, or where
//! the script changes their shape by each round in `prepare`: untimed
//! either way, the load's time a figure of its own), one connection per
//! client, the script run by every client for `time` in each trial, and
//! the round's own tables dropped in `cleanup`.
//!
//! A server on this host (`postgres-local`'s, or one a URL names by
//! `localhost` or a loopback address) is claimed as the workload's own for
//! the monitor, so that its CPU is not "other processes", and each trial
//! adds its CPU beside the clients' (`server_process`).

use std::time::{Duration, Instant};

use anyhow::anyhow;

use super::clients::{self, Client, Script};
use super::conn::Target;
use super::loaded_tables::{Found, LoadedTables};
use super::namespace::{DbChoice, Namespace};
use super::server_process::WatchedServer;
use crate::engine::{Case, Metric, TrialContext, TrialOutput};
use crate::monitor::procfs;

/// A case running `script` (`db.oltp`'s or `db.tpcb`'s).
pub struct DbCase<S: Script> {
    script: S,
    db: DbChoice,
    /// Connections, each with a thread of its own.
    clients_count: usize,
    time: Duration,
    /// The workload's name after `db.` (in the namespace's name and errors).
    kind: &'static str,
    /// The clients' random streams start from this, the round and their index.
    seed: u64,
    /// The tables this round loaded for itself, when it was not given
    /// tables loaded for all the rounds.
    own_tables: Option<LoadedTables>,
    /// Where the clients' connections go, once prepared.
    target: Option<Target>,
    /// How long loading the tables took, seconds (in whichever process).
    load_seconds: f64,
    clients: Vec<Client>,
    /// The server, when it runs on this host and was found.
    server: Option<WatchedServer>,
    /// Why a server on this host was not found (a warning).
    server_note: Option<String>,
}

impl<S: Script> DbCase<S> {
    /// A case of `script` on `db` with `clients` connections for `time`
    /// per trial; nothing is made before `prepare`.
    pub fn new(
        script: S,
        db: DbChoice,
        clients: usize,
        time: Duration,
        kind: &'static str,
        seed: u64,
    ) -> DbCase<S> {
        DbCase {
            script,
            db,
            clients_count: clients,
            time,
            kind,
            seed,
            own_tables: None,
            target: None,
            load_seconds: 0.0,
            clients: Vec::new(),
            server: None,
            server_note: None,
        }
    }

    /// The namespace of the tables it loaded itself, once prepared (tests
    /// look inside).
    pub fn namespace(&self) -> Option<&Namespace> {
        self.own_tables.as_ref().and_then(LoadedTables::namespace)
    }

    /// Loads the case's tables once, in the process that runs the plan,
    /// for every round of the cases naming the same tables.
    pub fn load_shared(&self, ctx: &TrialContext) -> anyhow::Result<LoadedTables> {
        LoadedTables::load(&self.script, &self.db, self.kind, ctx)
    }
}

/// The CPUs online now (0 when `/proc/stat` cannot be read).
fn online_cpus() -> usize {
    procfs::read_stat().map_or(0, |stat| stat.online_cpus())
}

impl<S: Script + Send> Case for DbCase<S> {
    fn prepare(&mut self, ctx: &TrialContext) -> anyhow::Result<()> {
        let (target, found_server) = match &ctx.shared {
            Some(text) => {
                let found = Found::parse(text)?;
                self.load_seconds = found.load_seconds();
                // postgres-local's server is then found, like any server
                // on this host, by the process listening on its port.
                let server = WatchedServer::find(&found.source()?, None);
                (found.target()?, server)
            }
            None => {
                let tables = self.own_tables.insert(LoadedTables::load(
                    &self.script,
                    &self.db,
                    self.kind,
                    ctx,
                )?);
                self.load_seconds = tables.load_seconds();
                let server = WatchedServer::find(tables.source(), tables.local());
                (tables.target().clone(), server)
            }
        };
        match found_server {
            Ok(server) => self.server = server,
            Err(note) => self.server_note = Some(note),
        }
        self.clients = clients::open(&target, &self.script, self.clients_count)?;
        self.target = Some(target);
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let target = self
            .target
            .clone()
            .ok_or_else(|| anyhow!("db.{}: trial before prepare", self.kind))?;
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
        // Tables loaded for all the rounds stay for the next one.
        self.own_tables.as_mut().map_or(Ok(()), LoadedTables::close)
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
