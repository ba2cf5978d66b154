//! `db.tpcb`: pgbench's built-in scripts against SQLite, PostgreSQL or
//! MariaDB: `tpcb-like` (the default), `simple-update` (`-N`) and
//! `select-only` (`-S`).
//!
//! Tables as `pgbench -i` makes them at `scale`: `pgbench_branches`
//! (`scale` rows), `pgbench_tellers` (10 per branch), `pgbench_accounts`
//! (100 000 per branch), each with a zero balance, an empty filler and a
//! primary key made after the load, and an empty `pgbench_history`; then
//! vacuumed and analyzed, as `pgbench -i` does.
//!
//! One transaction of `tpcb-like`, with `aid`, `bid`, `tid` uniform over
//! the accounts, branches and tellers and `delta` uniform in
//! -5000..=5000: `BEGIN`; add `delta` to the account's balance; read it;
//! add it to the teller's and the branch's; insert a history row; `END`.
//! `simple-update` leaves out the teller's and the branch's updates (so
//! it does not serialise on the few branch rows); `select-only` is the
//! account's read alone, in autocommit.

use anyhow::anyhow;

use super::case::DbCase;
use super::clients::Script;
use super::conn::{Arg, Conn, Dialect, Failure};
use super::namespace::DbChoice;
use super::oltp::{db_param, pg_conf_param, shared_db_key, uniform};
use crate::engine::{
    Case, CaseEnv, ParamKind, ParamRole, ParamSet, ParamSpec, Params, SharedPreparation,
    TrialContext, UntimedWork, Workload,
};
use crate::workloads::common::params;
use crate::workloads::common::rng::Xoroshiro128Plus;

/// Rows of each table per unit of scale.
pub const ACCOUNTS_PER_BRANCH: i32 = 100_000;
/// Tellers per branch.
pub const TELLERS_PER_BRANCH: i32 = 10;
/// Rows per INSERT while loading.
const LOAD_BATCH: i32 = 1000;

crate::param_choice! {
    /// `script`: which of pgbench's built-in scripts.
    pub enum PgbenchScript {
        TpcbLike = "tpcb-like",
        SimpleUpdate = "simple-update",
        SelectOnly = "select-only",
    }
}

crate::workload_params! {
    /// The parameters of `db.tpcb`.
    pub struct TpcbParams {
        script: PgbenchScript = ParamSpec {
            name: "script",
            role: ParamRole::Other,
            help: "pgbench's built-in script: tpcb-like (the default), simple-update (pgbench -N) or select-only (pgbench -S)",
            kind: ParamKind::Choice(PgbenchScript::NAMES),
            default: "tpcb-like",
        },
        scale: u64 = ParamSpec {
            name: "scale",
            role: ParamRole::Other,
            help: "scale factor: branches; 10 tellers and 100 000 accounts each (pgbench -i -s)",
            kind: ParamKind::Int { min: 1, max: 10_000 },
            default: "1",
        },
        clients: u64 = ParamSpec {
            name: "clients",
            role: ParamRole::CpuCount,
            help: "client connections, each on a thread of its own (pgbench -c, with -j equal)",
            kind: ParamKind::Int { min: 1, max: params::MAX_THREADS },
            default: "1",
        },
        time: f64 = params::time("10"),
        db: String = db_param(),
        pg_conf: String = pg_conf_param(),
    }
}

/// The `db.tpcb` workload.
pub struct Tpcb;

impl Workload for Tpcb {
    fn id(&self) -> &'static str {
        "db.tpcb"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "transactions/s of pgbench's built-in TPC-B-like script (and -N, -S) on SQLite, PostgreSQL or MariaDB; compatible with `pgbench`"
    }
    fn params(&self) -> Vec<ParamSpec> {
        TpcbParams::specs()
    }
    fn server_settings(
        &self,
        p: &ParamSet,
    ) -> Option<(String, std::collections::BTreeMap<String, String>)> {
        let p = TpcbParams::from_set(p);
        super::server_settings::read(&p.db, &p.pg_conf)
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        Ok(Box::new(tpcb_case(&TpcbParams::from_set(p))?))
    }
    fn shared_key(&self, p: &ParamSet) -> Option<String> {
        // Every script keeps the tables' shape: the balances change and
        // the history grows, as under pgbench, which loads once
        // (`pgbench -i`) for any number of runs.
        let p = TpcbParams::from_set(p);
        Some(format!(
            "scale={} {}",
            p.scale,
            shared_db_key(&p.db, &p.pg_conf)
        ))
    }
    fn prepare_shared(
        &self,
        p: &ParamSet,
        _env: &CaseEnv,
        ctx: &TrialContext,
    ) -> anyhow::Result<Box<dyn SharedPreparation>> {
        Ok(Box::new(
            tpcb_case(&TpcbParams::from_set(p))?.load_shared(ctx)?,
        ))
    }
    fn untimed_work(&self, p: &ParamSet, _env: &CaseEnv) -> UntimedWork {
        let p = TpcbParams::from_set(p);
        UntimedWork {
            once_seconds: (p.scale * ACCOUNTS_PER_BRANCH as u64) as f64 / 200_000.0,
            per_trial_seconds: 0.0,
        }
    }
}

/// The case of these parameters, checked; nothing made yet.
fn tpcb_case(p: &TpcbParams) -> anyhow::Result<TpcbCase> {
    let script = TpcbScript {
        script: p.script,
        scale: p.scale as i32,
    };
    Ok(DbCase::new(
        script,
        DbChoice::parse(&p.db, &p.pg_conf)?,
        p.clients as usize,
        params::trial_time(p.time),
        "tpcb",
        0x7bcb_0000,
    ))
}

/// The text of a load row from its number (`(1,0,'')`).
type RowText = dyn Fn(i32) -> String;

/// One script at one scale.
pub struct TpcbScript {
    /// The script.
    pub script: PgbenchScript,
    /// The scale.
    pub scale: i32,
}

const SQL: [&str; 5] = [
    "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?",
    "SELECT abalance FROM pgbench_accounts WHERE aid = ?",
    "UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?",
    "UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?",
    "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)",
];

impl TpcbScript {
    fn exec(
        conn: &mut dyn Conn,
        stmts: &[usize],
        which: usize,
        args: &[Arg],
        queries: &mut u64,
    ) -> Result<(), Failure> {
        conn.exec(stmts[which], args)?;
        *queries += 1;
        Ok(())
    }
}

impl Script for TpcbScript {
    /// Creates and fills the tables, then their primary keys.
    fn load(
        &self,
        conn: &mut dyn Conn,
        dialect: Dialect,
        ctx: &TrialContext,
    ) -> anyhow::Result<()> {
        let fail = |e: Failure| anyhow!("loading the pgbench tables: {e}");
        for ddl in [
            "CREATE TABLE pgbench_history (tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime TIMESTAMP, filler CHAR(22))",
            "CREATE TABLE pgbench_tellers (tid INTEGER NOT NULL, bid INTEGER, tbalance INTEGER, filler CHAR(84))",
            "CREATE TABLE pgbench_accounts (aid INTEGER NOT NULL, bid INTEGER, abalance INTEGER, filler CHAR(84))",
            "CREATE TABLE pgbench_branches (bid INTEGER NOT NULL, bbalance INTEGER, filler CHAR(88))",
        ] {
            conn.simple(ddl).map_err(fail)?;
        }
        if dialect == Dialect::Sqlite {
            conn.simple("BEGIN").map_err(fail)?;
        }
        let tables: [(&str, i32, &RowText); 3] = [
            (
                "pgbench_branches (bid, bbalance, filler)",
                self.scale,
                &|i| format!("({i},0,'')"),
            ),
            (
                "pgbench_tellers (tid, bid, tbalance, filler)",
                self.scale * TELLERS_PER_BRANCH,
                &|i| format!("({i},{},0,'')", (i - 1) / TELLERS_PER_BRANCH + 1),
            ),
            (
                "pgbench_accounts (aid, bid, abalance, filler)",
                self.scale * ACCOUNTS_PER_BRANCH,
                &|i| format!("({i},{},0,'')", (i - 1) / ACCOUNTS_PER_BRANCH + 1),
            ),
        ];
        for (table, rows, row) in tables {
            let mut next = 1;
            while next <= rows {
                ctx.check_cancelled()?;
                let last = (next + LOAD_BATCH - 1).min(rows);
                let values: Vec<String> = (next..=last).map(row).collect();
                conn.simple(&format!("INSERT INTO {table} VALUES {}", values.join(",")))
                    .map_err(fail)?;
                next = last + 1;
            }
        }
        if dialect == Dialect::Sqlite {
            conn.simple("COMMIT").map_err(fail)?;
        }
        for (table, key) in [
            ("pgbench_branches", "bid"),
            ("pgbench_tellers", "tid"),
            ("pgbench_accounts", "aid"),
        ] {
            ctx.check_cancelled()?;
            let sql = match dialect {
                // SQLite cannot add a primary key to a table: a unique
                // index serves its lookups the same way.
                Dialect::Sqlite => format!("CREATE UNIQUE INDEX {table}_pkey ON {table} ({key})"),
                _ => format!("ALTER TABLE {table} ADD PRIMARY KEY ({key})"),
            };
            conn.simple(&sql).map_err(fail)?;
        }
        let analyze = match dialect {
            Dialect::Sqlite => "ANALYZE",
            Dialect::Postgres => "VACUUM ANALYZE",
            Dialect::Mysql => {
                "ANALYZE TABLE pgbench_branches, pgbench_tellers, pgbench_accounts, pgbench_history"
            }
        };
        conn.simple(analyze)
            .map_err(|e| anyhow!("analyzing the pgbench tables: {e}"))?;
        Ok(())
    }

    fn prepare(&self, conn: &mut dyn Conn) -> anyhow::Result<Vec<usize>> {
        SQL.iter().map(|sql| conn.prepare(sql)).collect()
    }

    fn transaction(
        &self,
        conn: &mut dyn Conn,
        stmts: &[usize],
        rng: &mut Xoroshiro128Plus,
        queries: &mut u64,
    ) -> Result<(), Failure> {
        let aid = uniform(rng, 1, ACCOUNTS_PER_BRANCH * self.scale);
        if self.script == PgbenchScript::SelectOnly {
            return Self::exec(conn, stmts, 1, &[Arg::Int(aid)], queries);
        }
        let bid = uniform(rng, 1, self.scale);
        let tid = uniform(rng, 1, TELLERS_PER_BRANCH * self.scale);
        let delta = uniform(rng, -5000, 5000);
        conn.begin(true)?;
        *queries += 1;
        Self::exec(conn, stmts, 0, &[Arg::Int(delta), Arg::Int(aid)], queries)?;
        Self::exec(conn, stmts, 1, &[Arg::Int(aid)], queries)?;
        if self.script == PgbenchScript::TpcbLike {
            Self::exec(conn, stmts, 2, &[Arg::Int(delta), Arg::Int(tid)], queries)?;
            Self::exec(conn, stmts, 3, &[Arg::Int(delta), Arg::Int(bid)], queries)?;
        }
        Self::exec(
            conn,
            stmts,
            4,
            &[Arg::Int(tid), Arg::Int(bid), Arg::Int(aid), Arg::Int(delta)],
            queries,
        )?;
        conn.simple("COMMIT")?;
        *queries += 1;
        Ok(())
    }
}

/// A `db.tpcb` case.
pub type TpcbCase = DbCase<TpcbScript>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::CancelToken;
    use crate::engine::TrialOutput;
    use crate::http::server::DbSource;
    use crate::workloads::db::conn::LOAD_LIMIT;
    use std::time::Duration;

    fn case(script: PgbenchScript) -> TpcbCase {
        DbCase::new(
            TpcbScript { script, scale: 1 },
            DbChoice::Source(DbSource::Sqlite),
            2,
            Duration::from_millis(200),
            "tpcb",
            0x7bcb_0000,
        )
    }

    fn metric(out: &TrialOutput, name: &str) -> f64 {
        out.metrics
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .value
    }

    #[test]
    fn each_script_runs_pgbench_s_statements_on_sqlite() {
        let ctx = TrialContext::new(vec![0], CancelToken::new());
        for (script, per_transaction) in [
            (PgbenchScript::TpcbLike, 7.0),
            (PgbenchScript::SimpleUpdate, 5.0),
            (PgbenchScript::SelectOnly, 1.0),
        ] {
            let mut case = case(script);
            case.prepare(&ctx).unwrap();
            let target = case.namespace().unwrap().target().clone();
            let dir = case.namespace().unwrap().dir().unwrap().to_path_buf();
            let mut conn = target.connect(LOAD_LIMIT).unwrap();
            let mut count = |table: &str| {
                conn.scalar(&format!("SELECT COUNT(*) FROM {table}"))
                    .unwrap()
                    .unwrap()
            };
            assert_eq!(count("pgbench_branches"), "1");
            assert_eq!(count("pgbench_tellers"), "10");
            assert_eq!(count("pgbench_accounts"), "100000");
            assert_eq!(count("pgbench_history"), "0");
            let out = case.trial(&ctx).unwrap();
            let transactions = metric(&out, "transactions");
            assert!(transactions > 0.0, "{script}");
            assert_eq!(metric(&out, "errors"), 0.0, "{script}");
            assert_eq!(
                metric(&out, "queries"),
                per_transaction * transactions,
                "{script}"
            );
            let history = if script == PgbenchScript::SelectOnly {
                0.0
            } else {
                transactions
            };
            assert_eq!(count("pgbench_history"), history.to_string(), "{script}");
            if script == PgbenchScript::TpcbLike {
                // Every delta went to the account, its teller and its
                // branch alike.
                let mut sum = |sql: &str| conn.scalar(sql).unwrap().unwrap_or_default();
                let accounts = sum("SELECT SUM(abalance) FROM pgbench_accounts");
                assert_eq!(accounts, sum("SELECT SUM(bbalance) FROM pgbench_branches"));
                assert_eq!(accounts, sum("SELECT SUM(delta) FROM pgbench_history"));
            }
            drop(conn);
            case.cleanup(&ctx).unwrap();
            assert!(!dir.exists(), "{script}: {} left behind", dir.display());
        }
    }
}
