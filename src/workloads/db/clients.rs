//! The timed part the database workloads share: one thread per client,
//! each on its own connection (opened before the clock starts), running
//! its script's transaction in a loop until the trial's time is up.
//!
//! Errors are handled as sysbench handles them: a deadlock, a
//! serialization failure, a lock wait timeout or a duplicate key
//! ([`Failure::Retry`]) rolls the transaction back, counts an error and
//! runs a new transaction in its place; a lost connection
//! ([`Failure::Lost`]) is opened again and counts a reconnect (a
//! reconnect that fails fails the trial); anything else fails the trial.
//! A transaction's latency runs from its first statement to its commit,
//! retries included.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::anyhow;
use hdrhistogram::Histogram;

use super::conn::{Conn, Dialect, Failure, Target};
use crate::engine::{Cancelled, Deadline, Metric, TrialContext};
use crate::workloads::common::rng::Xoroshiro128Plus;

/// Connections and the statements of one client.
pub struct Client {
    /// The connection.
    pub conn: Box<dyn Conn>,
    /// The script's prepared statements on it.
    pub stmts: Vec<usize>,
}

/// What a workload's transaction is.
pub trait Script: Sync {
    /// Creates and fills its tables in an empty namespace (untimed).
    fn load(&self, conn: &mut dyn Conn, dialect: Dialect, ctx: &TrialContext)
    -> anyhow::Result<()>;
    /// Prepares its statements on a new connection, in the order
    /// [`Script::transaction`] reads them.
    fn prepare(&self, conn: &mut dyn Conn) -> anyhow::Result<Vec<usize>>;
    /// One transaction, adding every statement that completed to
    /// `queries` (`BEGIN` and `COMMIT` included, as sysbench counts them).
    fn transaction(
        &self,
        conn: &mut dyn Conn,
        stmts: &[usize],
        rng: &mut Xoroshiro128Plus,
        queries: &mut u64,
    ) -> Result<(), Failure>;
}

/// Opens `count` clients with their statements prepared.
pub fn open(target: &Target, script: &dyn Script, count: usize) -> anyhow::Result<Vec<Client>> {
    (0..count).map(|_| open_one(target, script)).collect()
}

fn open_one(target: &Target, script: &dyn Script) -> anyhow::Result<Client> {
    let mut conn = target.connect(super::conn::STATEMENT_LIMIT)?;
    let stmts = script.prepare(conn.as_mut())?;
    Ok(Client { conn, stmts })
}

/// What one trial counted.
#[derive(Debug)]
pub struct Tally {
    /// Transactions completed.
    pub transactions: u64,
    /// Statements completed.
    pub queries: u64,
    /// Errors ignored and retried.
    pub errors: u64,
    /// Connections opened again.
    pub reconnects: u64,
    /// Transaction latencies, ns.
    pub latency: Histogram<u64>,
    /// Wall time, s.
    pub seconds: f64,
}

impl Tally {
    /// The metrics of the trial, the headline (transactions/s) first.
    pub fn metrics(&self) -> Vec<Metric> {
        let per_sec = |n: u64| n as f64 / self.seconds.max(f64::MIN_POSITIVE);
        let ms = |q: f64| self.latency.value_at_quantile(q) as f64 / 1e6;
        vec![
            Metric::higher(
                "transactions_per_sec",
                "transactions/s",
                per_sec(self.transactions),
            ),
            Metric::higher("queries_per_sec", "queries/s", per_sec(self.queries)),
            Metric::lower("latency_avg", "ms", self.latency.mean() / 1e6),
            Metric::lower("latency_p50", "ms", ms(0.50)),
            Metric::lower("latency_p95", "ms", ms(0.95)),
            Metric::lower("latency_p99", "ms", ms(0.99)),
            Metric::higher("transactions", "transactions", self.transactions as f64),
            Metric::higher("queries", "queries", self.queries as f64),
            Metric::lower("errors", "errors", self.errors as f64),
            Metric::lower("reconnects", "reconnects", self.reconnects as f64),
        ]
    }
}

/// A histogram for transaction latencies: 1 ns to an hour, 3 digits.
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

/// Runs `script` on every client for `time` (or until Ctrl-C, which
/// returns [`Cancelled`]).
pub fn run(
    clients: &mut [Client],
    target: &Target,
    script: &dyn Script,
    time: Duration,
    ctx: &TrialContext,
    seed: u64,
) -> anyhow::Result<Tally> {
    let total = Mutex::new(Tally {
        transactions: 0,
        queries: 0,
        errors: 0,
        reconnects: 0,
        latency: histogram(),
        seconds: 0.0,
    });
    let started = Instant::now();
    let deadline = Deadline::after(time, &ctx.cancel);
    let failures: Vec<anyhow::Error> = std::thread::scope(|scope| {
        let handles: Vec<_> = clients
            .iter_mut()
            .enumerate()
            .map(|(i, client)| {
                let deadline = &deadline;
                let total = &total;
                let seed = seed
                    .wrapping_add(u64::from(ctx.round) << 32)
                    .wrapping_add(i as u64);
                scope.spawn(move || client_loop(client, target, script, deadline, total, seed))
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| match h.join() {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e),
                Err(_) => Some(anyhow!("a database client thread panicked")),
            })
            .collect()
    });
    let mut tally = total
        .into_inner()
        .map_err(|_| anyhow!("a client panicked"))?;
    tally.seconds = started.elapsed().as_secs_f64();
    if ctx.cancel.is_cancelled() {
        return Err(Cancelled.into());
    }
    if let Some(e) = failures.into_iter().next() {
        return Err(e);
    }
    Ok(tally)
}

fn client_loop(
    client: &mut Client,
    target: &Target,
    script: &dyn Script,
    deadline: &Deadline,
    total: &Mutex<Tally>,
    seed: u64,
) -> anyhow::Result<()> {
    let mut rng = Xoroshiro128Plus::seeded(seed);
    let mut latency = histogram();
    let (mut transactions, mut queries, mut errors, mut reconnects) = (0u64, 0u64, 0u64, 0u64);
    let mut result = Ok(());
    while !deadline.expired() {
        let start = Instant::now();
        match script.transaction(client.conn.as_mut(), &client.stmts, &mut rng, &mut queries) {
            Ok(()) => {
                transactions += 1;
                let ns = start.elapsed().as_nanos().max(1) as u64;
                let _ = latency.record(ns.min(latency.high()));
            }
            Err(Failure::Retry(_)) => {
                errors += 1;
                // Outside a transaction there is nothing to roll back; an
                // error here is no news.
                let _ = client.conn.simple("ROLLBACK");
            }
            Err(Failure::Lost(e)) => {
                reconnects += 1;
                match open_one(target, script) {
                    Ok(fresh) => *client = fresh,
                    Err(again) => {
                        result = Err(anyhow!(
                            "db={}: the connection was lost ({e}) and reconnecting failed: {again:#}",
                            target.shown()
                        ));
                        break;
                    }
                }
            }
            Err(Failure::Fatal(e)) => {
                result = Err(anyhow!("db={}: {e}", target.shown()));
                break;
            }
        }
    }
    let mut total = total.lock().map_err(|_| anyhow!("a client panicked"))?;
    total.transactions += transactions;
    total.queries += queries;
    total.errors += errors;
    total.reconnects += reconnects;
    total
        .latency
        .add(&latency)
        .map_err(|e| anyhow!("merging latencies: {e}"))?;
    result
}
