//! `db.oltp`: sysbench 1.0.20's OLTP scripts (`oltp_common.lua` and the
//! `oltp_*` scripts built on it) against SQLite, PostgreSQL or MariaDB.
//!
//! Tables `sbtest1..N`, each `id` (auto-increment primary key), `k`
//! (integer, secondary index `k_N` made after the load), `c CHAR(120)`
//! and `pad CHAR(60)`, filled with `table_size` rows as sysbench's
//! `prepare` fills them: ids 1..N in order, `k` from sysbench's default
//! ("special") distribution over 1..table_size, `c` ten and `pad` five
//! groups of 11 random digits joined by `-`.
//!
//! One transaction of each mode (sysbench's script in brackets), every
//! id drawn from the special distribution and every statement group on a
//! table drawn uniformly:
//! - `read_write` (oltp_read_write): `BEGIN`, 10 point selects, one each
//!   of the simple, sum, order and distinct ranges of 100 ids, an index
//!   update, a non-index update, a delete and the insert of the same id,
//!   `COMMIT`: 20 statements;
//! - `read_only` (oltp_read_only): the reads, in `BEGIN`/`COMMIT`: 16;
//! - `write_only` (oltp_write_only): the writes, in `BEGIN`/`COMMIT`: 6;
//! - `point_select`, `update_index`, `update_non_index`, `delete`: that one
//!   statement, in autocommit; `insert` (oltp_insert): one row with an
//!   auto-increment id.

use anyhow::anyhow;

use super::case::DbCase;
use super::clients::Script;
use super::conn::{Arg, Conn, Dialect, Failure};
use super::namespace::DbChoice;
use crate::engine::{
    Case, CaseEnv, ParamKind, ParamRole, ParamSet, ParamSpec, Params, SharedPreparation,
    TrialContext, UntimedWork, Workload,
};
use crate::workloads::common::params;
use crate::workloads::common::rng::Xoroshiro128Plus;

/// sysbench's per-transaction statement counts (its defaults).
const POINT_SELECTS: usize = 10;
const RANGE_SIZE: i32 = 100;
/// Rows per INSERT while loading.
const LOAD_BATCH: u64 = 1000;

crate::param_choice! {
    /// `mode`: which of sysbench's OLTP scripts.
    pub enum Mode {
        ReadWrite = "read_write",
        ReadOnly = "read_only",
        WriteOnly = "write_only",
        PointSelect = "point_select",
        UpdateIndex = "update_index",
        UpdateNonIndex = "update_non_index",
        Insert = "insert",
        Delete = "delete",
    }
}

/// `db`: the database, shared by the `db.*` workloads.
pub fn db_param() -> ParamSpec {
    ParamSpec {
        name: "db",
        role: ParamRole::Other,
        help: "the database: sqlite (an embedded file in WAL mode, in a scratch directory), postgres-local (a throwaway PostgreSQL server started from the installed server binaries in a scratch directory on a free port, with pg_conf's settings, removed after the case), postgres://user@host[:port]/database (or libpq's `host=... user=... dbname=...`) or mysql://user@host[:port]/database (MariaDB or MySQL; no TLS); on a server the tables go in a schema (PostgreSQL) or database (MySQL) named sledge_..., which sledge creates and drops after the case; a password is best left out: PGPASSWORD or ~/.pgpass, ~/.my.cnf or MYSQL_PWD are used; one given anyway is masked as *** wherever the case is shown or stored",
        kind: ParamKind::Text,
        default: "sqlite",
    }
}

/// `pg_conf`: settings of the `postgres-local` server, shared by the
/// `db.*` workloads.
pub fn pg_conf_param() -> ParamSpec {
    ParamSpec {
        name: "pg_conf",
        role: ParamRole::Other,
        help: "settings of the db=postgres-local server, `name=value` words separated by spaces (synchronous_commit=off shared_buffers=256MB), passed as its -c options; only with db=postgres-local",
        kind: ParamKind::Text,
        default: "",
    }
}

crate::workload_params! {
    /// The parameters of `db.oltp`.
    pub struct OltpParams {
        mode: Mode = ParamSpec {
            name: "mode",
            role: ParamRole::Other,
            help: "which sysbench OLTP script: read_write, read_only, write_only, point_select, update_index, update_non_index, insert or delete (oltp_<mode>)",
            kind: ParamKind::Choice(Mode::NAMES),
            default: "read_write",
        },
        tables: u64 = ParamSpec {
            name: "tables",
            role: ParamRole::Other,
            help: "number of tables sbtest1..N (sysbench's --tables)",
            kind: ParamKind::Int { min: 1, max: 1000 },
            default: "1",
        },
        table_size: u64 = ParamSpec {
            name: "table_size",
            role: ParamRole::Other,
            help: "rows per table (sysbench's --table-size)",
            kind: ParamKind::Int { min: 1, max: 1_000_000_000 },
            default: "10000",
        },
        threads: u64 = params::threads("1"),
        time: f64 = params::time("10"),
        db: String = db_param(),
        pg_conf: String = pg_conf_param(),
    }
}

/// The `db.oltp` workload.
pub struct Oltp;

impl Workload for Oltp {
    fn id(&self) -> &'static str {
        "db.oltp"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "transactions/s of sysbench's OLTP scripts (read_write, read_only, point_select, ...) on SQLite, PostgreSQL or MariaDB; compatible with `sysbench oltp_*`"
    }
    fn params(&self) -> Vec<ParamSpec> {
        OltpParams::specs()
    }
    fn server_settings(
        &self,
        p: &ParamSet,
    ) -> Option<(String, std::collections::BTreeMap<String, String>)> {
        let p = OltpParams::from_set(p);
        super::server_settings::read(&p.db, &p.pg_conf)
    }
    fn build(&self, p: &ParamSet, _env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        Ok(Box::new(oltp_case(&OltpParams::from_set(p))?))
    }
    fn shared_key(&self, p: &ParamSet) -> Option<String> {
        let p = OltpParams::from_set(p);
        let keeps_shape = !matches!(p.mode, Mode::Insert | Mode::Delete);
        keeps_shape.then(|| {
            format!(
                "tables={} table_size={} {}",
                p.tables,
                p.table_size,
                shared_db_key(&p.db, &p.pg_conf)
            )
        })
    }
    fn prepare_shared(
        &self,
        p: &ParamSet,
        _env: &CaseEnv,
        ctx: &TrialContext,
    ) -> anyhow::Result<Box<dyn SharedPreparation>> {
        Ok(Box::new(
            oltp_case(&OltpParams::from_set(p))?.load_shared(ctx)?,
        ))
    }
    fn untimed_work(&self, p: &ParamSet, _env: &CaseEnv) -> UntimedWork {
        let p = OltpParams::from_set(p);
        // About 100 000 rows a second into SQLite or a local server.
        UntimedWork {
            once_seconds: (p.tables * p.table_size) as f64 / 100_000.0,
            per_trial_seconds: 0.0,
        }
    }
}

/// The case of these parameters, checked; nothing made yet.
fn oltp_case(p: &OltpParams) -> anyhow::Result<OltpCase> {
    let db = DbChoice::parse(&p.db, &p.pg_conf)?;
    if p.table_size > i32::MAX as u64 / 2 {
        anyhow::bail!("table_size={}: at most {}", p.table_size, i32::MAX / 2);
    }
    let script = OltpScript {
        mode: p.mode,
        tables: p.tables as usize,
        table_size: p.table_size as i32,
    };
    Ok(DbCase::new(
        script,
        db,
        p.threads as usize,
        params::trial_time(p.time),
        "oltp",
        0x0171_7b00,
    ))
}

/// The part of a shared-tables key naming the server, its password
/// masked (the key may be shown in a warning).
pub fn shared_db_key(db: &str, pg_conf: &str) -> String {
    let shown =
        crate::http::server::DbSource::parse(db).map_or_else(|_| db.to_string(), |s| s.shown());
    format!("db={shown} pg_conf={pg_conf}")
}

/// The statements of one table, in [`OltpScript::prepare`]'s order.
#[derive(Clone, Copy)]
enum Stmt {
    Point = 0,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
    InsertAuto,
}

const STMTS_PER_TABLE: usize = 10;

fn statement_sql(t: usize) -> [String; STMTS_PER_TABLE] {
    [
        format!("SELECT c FROM sbtest{t} WHERE id=?"),
        format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
        format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
        format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"),
        format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c"),
        format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
        format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
        format!("DELETE FROM sbtest{t} WHERE id=?"),
        format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
        format!("INSERT INTO sbtest{t} (k, c, pad) VALUES (?, ?, ?)"),
    ]
}

/// sysbench's `sb_rand_uniform(a, b)`: a uniform integer in `a..=b`.
pub fn uniform(rng: &mut Xoroshiro128Plus, a: i32, b: i32) -> i32 {
    a + rng.below((b - a + 1) as u64) as i32
}

/// sysbench 1.0.20's default distribution, `special` with its defaults
/// (`--rand-spec-iter=12`, `--rand-spec-pct=1`, `--rand-spec-res=75`):
/// 75% of the values fall on the 1% of the range around its middle, the
/// rest near-normal (the mean of 12 uniform draws) over the whole range.
pub fn special(rng: &mut Xoroshiro128Plus, a: i32, b: i32) -> i32 {
    const ITER: i64 = 12;
    const PCT: i64 = 1;
    const RES: i64 = 75;
    let t = i64::from(b) - i64::from(a);
    let range = t * (100 / (100 - RES));
    let mut res = rng.below((range + 1) as u64) as i64;
    if res < t {
        let sum: i64 = (0..ITER).map(|_| rng.below((t + 1) as u64) as i64).sum();
        return (i64::from(a) + sum / ITER) as i32;
    }
    let d = (t * PCT / 100).max(1);
    res %= d;
    res += t / 2 - t * PCT / (2 * 100);
    (i64::from(a) + res) as i32
}

/// `groups` groups of 11 random digits joined by `-` (sysbench's
/// `c_value_template` with 10 groups, `pad_value_template` with 5).
pub fn digit_groups(rng: &mut Xoroshiro128Plus, groups: usize) -> String {
    let mut s = String::with_capacity(groups * 12);
    for g in 0..groups {
        if g > 0 {
            s.push('-');
        }
        for _ in 0..11 {
            s.push(char::from(b'0' + rng.below(10) as u8));
        }
    }
    s
}

/// One mode on a set of tables.
pub struct OltpScript {
    /// The mode.
    pub mode: Mode,
    /// Tables.
    pub tables: usize,
    /// Rows per table when loaded.
    pub table_size: i32,
}

impl OltpScript {
    /// Whether a transaction of the mode writes.
    fn writes(&self) -> bool {
        !matches!(self.mode, Mode::ReadOnly | Mode::PointSelect)
    }

    /// Whether the mode runs its statements inside `BEGIN`/`COMMIT`.
    fn in_transaction(&self) -> bool {
        matches!(
            self.mode,
            Mode::ReadWrite | Mode::ReadOnly | Mode::WriteOnly
        )
    }

    fn table(&self, rng: &mut Xoroshiro128Plus) -> usize {
        uniform(rng, 1, self.tables as i32) as usize - 1
    }

    fn id(&self, rng: &mut Xoroshiro128Plus) -> i32 {
        special(rng, 1, self.table_size)
    }

    fn exec(
        conn: &mut dyn Conn,
        stmts: &[usize],
        table: usize,
        stmt: Stmt,
        args: &[Arg],
        queries: &mut u64,
    ) -> Result<(), Failure> {
        conn.exec(stmts[table * STMTS_PER_TABLE + stmt as usize], args)?;
        *queries += 1;
        Ok(())
    }

    fn point_selects(
        &self,
        conn: &mut dyn Conn,
        stmts: &[usize],
        rng: &mut Xoroshiro128Plus,
        count: usize,
        queries: &mut u64,
    ) -> Result<(), Failure> {
        let t = self.table(rng);
        for _ in 0..count {
            let id = self.id(rng);
            Self::exec(conn, stmts, t, Stmt::Point, &[Arg::Int(id)], queries)?;
        }
        Ok(())
    }

    fn ranges(
        &self,
        conn: &mut dyn Conn,
        stmts: &[usize],
        rng: &mut Xoroshiro128Plus,
        queries: &mut u64,
    ) -> Result<(), Failure> {
        for stmt in [
            Stmt::SimpleRange,
            Stmt::SumRange,
            Stmt::OrderRange,
            Stmt::DistinctRange,
        ] {
            let t = self.table(rng);
            let id = self.id(rng);
            Self::exec(
                conn,
                stmts,
                t,
                stmt,
                &[Arg::Int(id), Arg::Int(id + RANGE_SIZE - 1)],
                queries,
            )?;
        }
        Ok(())
    }

    fn index_update(
        &self,
        conn: &mut dyn Conn,
        stmts: &[usize],
        rng: &mut Xoroshiro128Plus,
        queries: &mut u64,
    ) -> Result<(), Failure> {
        let t = self.table(rng);
        let id = self.id(rng);
        Self::exec(conn, stmts, t, Stmt::IndexUpdate, &[Arg::Int(id)], queries)
    }

    fn non_index_update(
        &self,
        conn: &mut dyn Conn,
        stmts: &[usize],
        rng: &mut Xoroshiro128Plus,
        queries: &mut u64,
    ) -> Result<(), Failure> {
        let t = self.table(rng);
        let c = digit_groups(rng, 10);
        let id = self.id(rng);
        Self::exec(
            conn,
            stmts,
            t,
            Stmt::NonIndexUpdate,
            &[Arg::Text(c), Arg::Int(id)],
            queries,
        )
    }

    fn delete_insert(
        &self,
        conn: &mut dyn Conn,
        stmts: &[usize],
        rng: &mut Xoroshiro128Plus,
        queries: &mut u64,
    ) -> Result<(), Failure> {
        let t = self.table(rng);
        let id = self.id(rng);
        let k = self.id(rng);
        Self::exec(conn, stmts, t, Stmt::Delete, &[Arg::Int(id)], queries)?;
        let c = digit_groups(rng, 10);
        let pad = digit_groups(rng, 5);
        Self::exec(
            conn,
            stmts,
            t,
            Stmt::Insert,
            &[Arg::Int(id), Arg::Int(k), Arg::Text(c), Arg::Text(pad)],
            queries,
        )
    }
}

impl Script for OltpScript {
    /// Creates and fills the tables, then their secondary indexes.
    fn load(
        &self,
        conn: &mut dyn Conn,
        dialect: Dialect,
        ctx: &TrialContext,
    ) -> anyhow::Result<()> {
        let id = match dialect {
            Dialect::Sqlite => "id INTEGER PRIMARY KEY",
            Dialect::Postgres => "id SERIAL PRIMARY KEY",
            Dialect::Mysql => "id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY",
        };
        let mut rng = Xoroshiro128Plus::seeded(0x5b7e_57ab);
        for t in 1..=self.tables {
            let fail = |e: Failure| anyhow!("loading sbtest{t}: {e}");
            conn.simple(&format!(
                "CREATE TABLE sbtest{t} ({id}, k INTEGER DEFAULT 0 NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL)"
            ))
            .map_err(fail)?;
            let size = self.table_size as u64;
            let mut done = 0;
            if dialect == Dialect::Sqlite {
                conn.simple("BEGIN").map_err(fail)?;
            }
            while done < size {
                ctx.check_cancelled()?;
                let n = LOAD_BATCH.min(size - done);
                let mut sql = format!("INSERT INTO sbtest{t} (k, c, pad) VALUES ");
                for i in 0..n {
                    if i > 0 {
                        sql.push(',');
                    }
                    let k = special(&mut rng, 1, self.table_size);
                    let c = digit_groups(&mut rng, 10);
                    let pad = digit_groups(&mut rng, 5);
                    sql.push_str(&format!("({k},'{c}','{pad}')"));
                }
                conn.simple(&sql).map_err(fail)?;
                done += n;
            }
            if dialect == Dialect::Sqlite {
                conn.simple("COMMIT").map_err(fail)?;
            }
            ctx.check_cancelled()?;
            conn.simple(&format!("CREATE INDEX k_{t} ON sbtest{t}(k)"))
                .map_err(fail)?;
        }
        let analyze = match dialect {
            Dialect::Sqlite | Dialect::Postgres => "ANALYZE".to_string(),
            Dialect::Mysql => format!(
                "ANALYZE TABLE {}",
                (1..=self.tables)
                    .map(|t| format!("sbtest{t}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        conn.simple(&analyze)
            .map_err(|e| anyhow!("analyzing the tables: {e}"))?;
        Ok(())
    }

    fn prepare(&self, conn: &mut dyn Conn) -> anyhow::Result<Vec<usize>> {
        let mut stmts = Vec::with_capacity(self.tables * STMTS_PER_TABLE);
        for t in 1..=self.tables {
            for sql in statement_sql(t) {
                stmts.push(conn.prepare(&sql)?);
            }
        }
        Ok(stmts)
    }

    fn transaction(
        &self,
        conn: &mut dyn Conn,
        stmts: &[usize],
        rng: &mut Xoroshiro128Plus,
        queries: &mut u64,
    ) -> Result<(), Failure> {
        if self.in_transaction() {
            conn.begin(self.writes())?;
            *queries += 1;
        }
        match self.mode {
            Mode::ReadWrite | Mode::ReadOnly | Mode::WriteOnly => {
                if self.mode != Mode::WriteOnly {
                    self.point_selects(conn, stmts, rng, POINT_SELECTS, queries)?;
                    self.ranges(conn, stmts, rng, queries)?;
                }
                if self.mode != Mode::ReadOnly {
                    self.index_update(conn, stmts, rng, queries)?;
                    self.non_index_update(conn, stmts, rng, queries)?;
                    self.delete_insert(conn, stmts, rng, queries)?;
                }
            }
            Mode::PointSelect => self.point_selects(conn, stmts, rng, 1, queries)?,
            Mode::UpdateIndex => self.index_update(conn, stmts, rng, queries)?,
            Mode::UpdateNonIndex => self.non_index_update(conn, stmts, rng, queries)?,
            Mode::Delete => {
                let t = self.table(rng);
                let id = self.id(rng);
                Self::exec(conn, stmts, t, Stmt::Delete, &[Arg::Int(id)], queries)?;
            }
            Mode::Insert => {
                let t = self.table(rng);
                let k = self.id(rng);
                let c = digit_groups(rng, 10);
                let pad = digit_groups(rng, 5);
                Self::exec(
                    conn,
                    stmts,
                    t,
                    Stmt::InsertAuto,
                    &[Arg::Int(k), Arg::Text(c), Arg::Text(pad)],
                    queries,
                )?;
            }
        }
        if self.in_transaction() {
            conn.simple("COMMIT")?;
            *queries += 1;
        }
        Ok(())
    }
}

/// A `db.oltp` case.
pub type OltpCase = DbCase<OltpScript>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::TrialOutput;
    use crate::engine::{CancelToken, params::resolve_cases};
    use crate::workloads::db::conn::LOAD_LIMIT;
    use std::collections::BTreeMap;

    /// A connection that runs nothing and counts what it was asked.
    #[derive(Default)]
    struct Counting {
        sql: Vec<String>,
        ran: Vec<String>,
    }

    impl Conn for Counting {
        fn prepare(&mut self, sql: &str) -> anyhow::Result<usize> {
            self.sql.push(sql.to_string());
            Ok(self.sql.len() - 1)
        }
        fn exec(&mut self, stmt: usize, args: &[Arg]) -> Result<(), Failure> {
            let sql = &self.sql[stmt];
            assert_eq!(sql.matches('?').count(), args.len(), "{sql}");
            self.ran.push(sql.clone());
            Ok(())
        }
        fn simple(&mut self, sql: &str) -> Result<(), Failure> {
            self.ran.push(sql.to_string());
            Ok(())
        }
        fn scalar(&mut self, _sql: &str) -> Result<Option<String>, Failure> {
            Ok(None)
        }
    }

    fn kinds(ran: &[String]) -> BTreeMap<String, usize> {
        let mut kinds = BTreeMap::new();
        for sql in ran {
            let kind = if sql.starts_with("SELECT c FROM") && sql.contains("id=?") {
                "point"
            } else if sql.starts_with("SELECT DISTINCT") {
                "distinct"
            } else if sql.starts_with("SELECT SUM") {
                "sum"
            } else if sql.contains("ORDER BY") {
                "order"
            } else if sql.starts_with("SELECT c") {
                "simple"
            } else if sql.contains("SET k=k+1") {
                "index_update"
            } else if sql.contains("SET c=") {
                "non_index_update"
            } else if sql.starts_with("DELETE") {
                "delete"
            } else if sql.starts_with("INSERT") {
                "insert"
            } else {
                sql.as_str()
            };
            *kinds.entry(kind.to_string()).or_insert(0) += 1;
        }
        kinds
    }

    #[test]
    fn each_mode_runs_sysbench_s_statements() {
        let expected: [(Mode, &[(&str, usize)]); 8] = [
            (
                Mode::ReadWrite,
                &[
                    ("BEGIN", 1),
                    ("COMMIT", 1),
                    ("delete", 1),
                    ("distinct", 1),
                    ("index_update", 1),
                    ("insert", 1),
                    ("non_index_update", 1),
                    ("order", 1),
                    ("point", 10),
                    ("simple", 1),
                    ("sum", 1),
                ],
            ),
            (
                Mode::ReadOnly,
                &[
                    ("BEGIN", 1),
                    ("COMMIT", 1),
                    ("distinct", 1),
                    ("order", 1),
                    ("point", 10),
                    ("simple", 1),
                    ("sum", 1),
                ],
            ),
            (
                Mode::WriteOnly,
                &[
                    ("BEGIN", 1),
                    ("COMMIT", 1),
                    ("delete", 1),
                    ("index_update", 1),
                    ("insert", 1),
                    ("non_index_update", 1),
                ],
            ),
            (Mode::PointSelect, &[("point", 1)]),
            (Mode::UpdateIndex, &[("index_update", 1)]),
            (Mode::UpdateNonIndex, &[("non_index_update", 1)]),
            (Mode::Insert, &[("insert", 1)]),
            (Mode::Delete, &[("delete", 1)]),
        ];
        let total = |mode| {
            expected
                .iter()
                .find(|(m, _)| *m == mode)
                .map(|(_, k)| k.iter().map(|(_, n)| n).sum::<usize>())
        };
        assert_eq!(total(Mode::ReadWrite), Some(20));
        assert_eq!(total(Mode::ReadOnly), Some(16));
        assert_eq!(total(Mode::WriteOnly), Some(6));
        for (mode, counts) in expected {
            let script = OltpScript {
                mode,
                tables: 3,
                table_size: 1000,
            };
            let mut conn = Counting::default();
            let stmts = script.prepare(&mut conn).unwrap();
            assert_eq!(stmts.len(), 3 * STMTS_PER_TABLE);
            let mut rng = Xoroshiro128Plus::seeded(1);
            let mut queries = 0;
            script
                .transaction(&mut conn, &stmts, &mut rng, &mut queries)
                .unwrap();
            let want: BTreeMap<String, usize> =
                counts.iter().map(|(k, n)| (k.to_string(), *n)).collect();
            assert_eq!(kinds(&conn.ran), want, "{mode}");
            assert_eq!(queries as usize, conn.ran.len(), "{mode}");
        }
    }

    #[test]
    fn ids_follow_sysbench_s_special_distribution() {
        let mut rng = Xoroshiro128Plus::seeded(7);
        let n = 100_000;
        let mut middle = 0;
        for _ in 0..n {
            let id = special(&mut rng, 1, 10_000);
            assert!((1..=10_000).contains(&id), "{id}");
            // The 1% around the middle: ids 4951..=5050.
            if (4951..=5050).contains(&id) {
                middle += 1;
            }
        }
        // 75% land there, plus the near-normal part's share of it.
        let share = f64::from(middle) / f64::from(n);
        assert!((0.75..0.85).contains(&share), "{share}");
        for _ in 0..1000 {
            assert_eq!(special(&mut rng, 1, 1), 1);
            assert!((1..=3).contains(&uniform(&mut rng, 1, 3)));
        }
    }

    #[test]
    fn strings_have_sysbench_s_shapes() {
        let mut rng = Xoroshiro128Plus::seeded(3);
        let c = digit_groups(&mut rng, 10);
        let pad = digit_groups(&mut rng, 5);
        assert_eq!(c.len(), 119);
        assert_eq!(pad.len(), 59);
        assert!(
            c.split('-')
                .all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit()))
        );
    }

    fn case(assignments: &[(&str, &str)]) -> Box<dyn Case> {
        let assignments: BTreeMap<String, Vec<String>> = assignments
            .iter()
            .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
            .collect();
        let set = resolve_cases("db.oltp", &Oltp.params(), &assignments, 2)
            .unwrap()
            .remove(0);
        let env = CaseEnv {
            cpus: vec![0],
            total_cache_bytes: 0,
            memory_bytes: 0,
        };
        Oltp.build(&set, &env).unwrap()
    }

    fn oltp_case(assignments: &[(&str, &str)]) -> OltpCase {
        let p = OltpParams::from_set(
            &resolve_cases(
                "db.oltp",
                &Oltp.params(),
                &assignments
                    .iter()
                    .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
                    .collect(),
                2,
            )
            .unwrap()[0],
        );
        super::oltp_case(&p).unwrap()
    }

    fn metric(out: &TrialOutput, name: &str) -> f64 {
        out.metrics
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .value
    }

    #[test]
    fn sqlite_loads_runs_and_removes_its_tables() {
        let ctx = TrialContext::new(vec![0], CancelToken::new());
        let mut case = oltp_case(&[
            ("tables", "2"),
            ("table_size", "150"),
            ("threads", "2"),
            ("time", "0.2"),
        ]);
        case.prepare(&ctx).unwrap();
        let dir = case.namespace().unwrap().dir().unwrap().to_path_buf();
        let target = case.namespace().unwrap().target().clone();
        let mut conn = target.connect(LOAD_LIMIT).unwrap();
        for t in 1..=2 {
            let mut count = |sql: &str| conn.scalar(sql).unwrap().unwrap();
            assert_eq!(count(&format!("SELECT COUNT(*) FROM sbtest{t}")), "150");
            assert_eq!(count(&format!("SELECT MAX(id) FROM sbtest{t}")), "150");
            assert_eq!(
                count(&format!(
                    "SELECT COUNT(*) FROM sqlite_master WHERE type='index' AND name='k_{t}'"
                )),
                "1"
            );
            assert_eq!(
                count(&format!(
                    "SELECT MIN(length(c)) || ' ' || MAX(length(pad)) FROM sbtest{t}"
                )),
                "119 59"
            );
        }
        drop(conn);
        let out = case.trial(&ctx).unwrap();
        let transactions = metric(&out, "transactions");
        assert!(transactions > 0.0);
        assert_eq!(metric(&out, "errors"), 0.0);
        assert_eq!(metric(&out, "queries"), 20.0 * transactions);
        assert_eq!(out.latency_ns.as_ref().unwrap().len() as f64, transactions);
        assert!(metric(&out, "load_time") > 0.0);
        case.cleanup(&ctx).unwrap();
        assert!(!dir.exists(), "{} left behind", dir.display());
    }

    #[test]
    fn every_mode_runs_on_sqlite() {
        let ctx = TrialContext::new(vec![0], CancelToken::new());
        for mode in Mode::NAMES {
            let mut case = case(&[("mode", mode), ("table_size", "100"), ("time", "0.05")]);
            case.prepare(&ctx).unwrap();
            let out = case.trial(&ctx);
            case.cleanup(&ctx).unwrap();
            let out = out.unwrap_or_else(|e| panic!("{mode}: {e:#}"));
            assert!(metric(&out, "transactions") > 0.0, "{mode}");
        }
    }

    #[test]
    fn ctrl_c_during_the_load_leaves_nothing() {
        let cancel = CancelToken::new();
        cancel.cancel();
        let ctx = TrialContext::new(vec![0], cancel);
        let mut case = oltp_case(&[("table_size", "5000")]);
        let err = case.prepare(&ctx).unwrap_err();
        assert!(
            err.is::<crate::engine::Cancelled>()
                || err.root_cause().is::<crate::engine::Cancelled>(),
            "{err:#}"
        );
        // A load that fails takes its namespace with it (the run's
        // TMPDIR is checked empty after a run in tests/db_workloads.rs).
        assert!(case.namespace().is_none());
        case.cleanup(&ctx).unwrap();
    }

    #[test]
    fn bad_databases_are_refused_when_the_case_is_built() {
        let set = resolve_cases(
            "db.oltp",
            &Oltp.params(),
            &BTreeMap::from([("db".to_string(), vec!["oracle://u:secret@h/x".to_string()])]),
            2,
        )
        .unwrap()
        .remove(0);
        let env = CaseEnv {
            cpus: vec![0],
            total_cache_bytes: 0,
            memory_bytes: 0,
        };
        let err = match Oltp.build(&set, &env) {
            Ok(_) => panic!("accepted"),
            Err(e) => format!("{e:#}"),
        };
        assert!(err.contains("expected `sqlite`"), "{err}");
        assert!(!err.contains("secret"), "{err}");
    }
}
