//! `db.oltp` and `db.tpcb` against real database servers: PostgreSQL and
//! MariaDB on loopback (the URLs of `http_db`: the servers CI starts, or
//! `SLEDGE_TEST_POSTGRES` / `SLEDGE_TEST_MYSQL`), skipped with a notice
//! where none is reachable unless `SLEDGE_TEST_DATABASES=require`. The
//! SQLite side is tested in the library (`workloads::db`).
//!
//! Every case is tiny (a few hundred rows, trials of a fraction of a
//! second); each test checks on the server that the schema or database
//! the case made is gone afterwards, also after a failure and Ctrl-C.

use std::collections::BTreeMap;
use std::time::Duration;

use mysql::prelude::Queryable;

use crate::common::{ONE_TRIAL, required, skip};
use crate::http_db::Kind;
use sledge::engine::params::resolve_cases;
use sledge::engine::{CancelToken, Case, CaseEnv, TrialContext, TrialOutput, Workload};
use sledge::monitor::{own_processes, procfs};
use sledge::workloads::db::local_pg::server_bin;
use sledge::workloads::db::oltp::Oltp;
use sledge::workloads::db::tpcb::Tpcb;

fn build(workload: &dyn Workload, assignments: &[(&str, &str)]) -> Box<dyn Case> {
    let assignments: BTreeMap<String, Vec<String>> = assignments
        .iter()
        .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
        .collect();
    let set = resolve_cases(workload.id(), &workload.params(), &assignments, 2)
        .unwrap()
        .remove(0);
    let env = CaseEnv {
        cpus: vec![0],
        total_cache_bytes: 0,
        memory_bytes: 0,
    };
    workload.build(&set, &env).unwrap()
}

/// The namespaces this test process made on the server (schemas or
/// databases named `sledge_<workload>_<this pid>_...`).
fn own_namespaces(kind: Kind, url: &str) -> Vec<String> {
    let query = "SELECT CAST(schema_name AS CHAR(200)) FROM information_schema.schemata \
                 WHERE schema_name LIKE 'sledge%'";
    let names: Vec<String> = match kind {
        Kind::Postgres => {
            let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
            c.query(&query.replace("CHAR(200)", "VARCHAR(200)"), &[])
                .unwrap()
                .iter()
                .map(|row| row.get(0))
                .collect()
        }
        Kind::Mysql => {
            let mut c = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
            c.query(query).unwrap()
        }
    };
    let pid = format!("_{}_", std::process::id());
    names.into_iter().filter(|n| n.contains(&pid)).collect()
}

/// A workload, its parameters and its statements per transaction.
type CaseSpec<'a> = (&'a dyn Workload, Vec<(&'a str, &'a str)>, f64);

fn metric(out: &TrialOutput, name: &str) -> f64 {
    out.metrics
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .value
}

/// The tests share this process's namespaces on the servers: one at a
/// time, so that each sees only its own.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn ctx() -> TrialContext {
    TrialContext::new(vec![0], CancelToken::new())
}

#[test]
fn oltp_and_tpcb_run_on_the_servers_and_drop_their_namespace() {
    let _serial = one_at_a_time();
    for kind in [Kind::Postgres, Kind::Mysql] {
        let Some(url) = kind.live_url() else {
            continue;
        };
        let cases: [CaseSpec; 4] = [
            (
                &Oltp,
                vec![
                    ("mode", "read_write"),
                    ("table_size", "300"),
                    ("tables", "2"),
                ],
                20.0,
            ),
            (
                &Oltp,
                vec![("mode", "point_select"), ("table_size", "300")],
                1.0,
            ),
            (&Tpcb, vec![("script", "tpcb-like")], 7.0),
            (&Tpcb, vec![("script", "select-only")], 1.0),
        ];
        for (workload, mut assignments, per_transaction) in cases {
            assignments.extend([("db", url.as_str()), ("time", "0.3")]);
            let mut case = build(workload, &assignments);
            let ctx = ctx();
            case.prepare(&ctx).unwrap();
            assert_eq!(own_namespaces(kind, &url).len(), 1, "{kind:?}");
            let out = case.trial(&ctx);
            case.cleanup(&ctx).unwrap();
            let out = out.unwrap_or_else(|e| panic!("{kind:?} {}: {e:#}", workload.id()));
            let transactions = metric(&out, "transactions");
            assert!(transactions > 0.0, "{kind:?} {}", workload.id());
            // One client: nothing to retry; every statement counted.
            assert_eq!(metric(&out, "errors"), 0.0);
            // The server is on this host: as root its listening process
            // is found (another user's /proc/<pid>/fd needs root) and its
            // CPU counted.
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                assert!(metric(&out, "server_cpu_busy") > 0.0, "{kind:?}");
                assert!(metric(&out, "server_cpu_seconds_per_txn") > 0.0);
            }
            assert_eq!(metric(&out, "queries"), per_transaction * transactions);
            assert!(
                own_namespaces(kind, &url).is_empty(),
                "{kind:?}: {:?} left behind",
                own_namespaces(kind, &url)
            );
        }
    }
}

#[test]
fn two_clients_on_a_small_table_retry_conflicts_and_drop_their_namespace() {
    let _serial = one_at_a_time();
    for kind in [Kind::Postgres, Kind::Mysql] {
        let Some(url) = kind.live_url() else {
            continue;
        };
        let mut case = build(
            &Oltp,
            &[
                ("mode", "write_only"),
                ("table_size", "20"),
                ("threads", "2"),
                ("time", "0.5"),
                ("db", &url),
            ],
        );
        let ctx = ctx();
        case.prepare(&ctx).unwrap();
        let out = case.trial(&ctx);
        case.cleanup(&ctx).unwrap();
        let out = out.unwrap_or_else(|e| panic!("{kind:?}: {e:#}"));
        assert!(metric(&out, "transactions") > 0.0);
        assert_eq!(metric(&out, "reconnects"), 0.0);
        assert!(own_namespaces(kind, &url).is_empty());
    }
}

#[test]
fn ctrl_c_during_the_load_drops_the_namespace() {
    let _serial = one_at_a_time();
    for kind in [Kind::Postgres, Kind::Mysql] {
        let Some(url) = kind.live_url() else {
            continue;
        };
        let mut case = build(&Oltp, &[("table_size", "1000000"), ("db", &url)]);
        let cancel = CancelToken::new();
        let ctx = TrialContext::new(vec![0], cancel.clone());
        let pressed = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            cancel.cancel();
        });
        let err = case.prepare(&ctx).unwrap_err();
        pressed.join().unwrap();
        assert!(format!("{err:#}").contains("cancelled"), "{err:#}");
        // Gone already: a load that fails takes its namespace with it.
        assert!(own_namespaces(kind, &url).is_empty(), "{kind:?}");
        case.cleanup(&ctx).unwrap();
        assert!(own_namespaces(kind, &url).is_empty(), "{kind:?}");
    }
}

#[test]
fn a_missing_database_or_a_wrong_password_fails_clearly_and_makes_nothing() {
    let _serial = one_at_a_time();
    for kind in [Kind::Postgres, Kind::Mysql] {
        let Some(url) = kind.live_url() else {
            continue;
        };
        let (base, _) = url.rsplit_once('/').unwrap();
        let missing = format!("{base}/sledge_no_such_database");
        let mut case = build(&Oltp, &[("db", &missing)]);
        let err = format!("{:#}", case.prepare(&ctx()).unwrap_err());
        case.cleanup(&ctx()).unwrap();
        assert!(err.contains("sledge_no_such_database"), "{kind:?}: {err}");
        assert!(own_namespaces(kind, &url).is_empty());
    }
    // MariaDB's root in CI has no password: any password is wrong.
    if let Some(url) = Kind::Mysql.live_url()
        && let Some(rest) = url.strip_prefix("mysql://root@")
    {
        let wrong = format!("mysql://root:wrongpw@{rest}");
        let mut case = build(&Oltp, &[("db", &wrong)]);
        let err = format!("{:#}", case.prepare(&ctx()).unwrap_err());
        case.cleanup(&ctx()).unwrap();
        assert!(err.contains("Access denied"), "{err}");
        assert!(!err.contains("wrongpw"), "{err}");
        assert!(err.contains("root:***@"), "{err}");
    }
}

#[test]
fn an_unreachable_server_fails_the_preparation_naming_it() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    for url in [
        format!("postgres://u:secretpw@127.0.0.1:{port}/x"),
        format!("mysql://u:secretpw@127.0.0.1:{port}/x"),
    ] {
        let mut case = build(&Tpcb, &[("db", &url)]);
        let err = format!("{:#}", case.prepare(&ctx()).unwrap_err());
        case.cleanup(&ctx()).unwrap();
        assert!(err.contains("cannot connect"), "{err}");
        assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
        assert!(!err.contains("secretpw"), "{err}");
    }
}

#[test]
fn a_login_without_the_right_to_create_a_schema_fails_naming_it() {
    let _serial = one_at_a_time();
    let Some(url) = Kind::Postgres.live_url() else {
        return;
    };
    // A role that may log in but not create schemas in the database.
    let role = "sledge_test_no_create";
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!(
            "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') \
             THEN CREATE ROLE {role} LOGIN; END IF; END $$"
        ))
        .unwrap();
    let (scheme_user, rest) = url.split_once('@').unwrap();
    let scheme = scheme_user.split("://").next().unwrap();
    let limited = format!("{scheme}://{role}@{rest}");
    let mut case = build(&Oltp, &[("db", &limited)]);
    let err = format!("{:#}", case.prepare(&ctx()).unwrap_err());
    case.cleanup(&ctx()).unwrap();
    assert!(err.contains("cannot create schema sledge_oltp_"), "{err}");
    assert!(err.contains("permission denied"), "{err}");
    assert!(own_namespaces(Kind::Postgres, &url).is_empty());
}

/// The monitor counts a local server's CPU as the workload's own: the
/// postmaster `pg_ctl` detached (not this process's descendant) is
/// claimed while the case lives, the monitor's tree ticks grow by the
/// server's CPU over a trial, and the claim goes with the case.
#[test]
fn a_local_servers_cpu_is_the_workloads_own_for_the_monitor() {
    if server_bin().is_err() {
        let why = "no PostgreSQL server binaries for db=postgres-local";
        assert!(!required("SLEDGE_TEST_DATABASES"), "{why}");
        skip(why, "SLEDGE_TEST_DATABASES");
        return;
    }
    // The other tests here claim the servers they load on this host, and
    // a claim that ends between this test's two reads takes that server's
    // ticks (since it started) out of the tree.
    let _serial = one_at_a_time();
    let mut case = build(
        &Oltp,
        &[
            ("db", "postgres-local"),
            ("mode", "point_select"),
            ("table_size", "300"),
            ("threads", "2"),
            ("time", "1"),
        ],
    );
    let ctx = ctx();
    case.prepare(&ctx).unwrap();
    let servers: Vec<u32> = own_processes::claimed()
        .into_iter()
        .filter(|&pid| procfs::read_pid_stat(pid).is_some_and(|s| s.comm == "postgres"))
        .collect();
    assert_eq!(servers.len(), 1, "the postmaster is claimed: {servers:?}");
    let postmaster = procfs::read_pid_stat(servers[0]).unwrap();
    assert_ne!(postmaster.ppid, std::process::id(), "not a child of ours");
    // What the claim adds to the monitor's walk: the walk with the
    // claimed processes less the walk without them, read back to back.
    // (Not the walk less this process's own ticks: another test's child
    // reaped meanwhile moves its ticks from the walk's live descendants
    // into this process's own, which made that difference short.)
    let claimed_ticks = || {
        let with = own_processes::read_own_ticks().unwrap();
        let without = procfs::read_tree_ticks(&[]).unwrap();
        with.saturating_sub(without)
    };
    let claimed_before = claimed_ticks();
    let out = case.trial(&ctx);
    let claimed_after = claimed_ticks();
    case.cleanup(&ctx).unwrap();
    let out = out.unwrap();
    let server_ticks = metric(&out, "server_cpu_seconds_per_txn")
        * metric(&out, "transactions")
        * procfs::clock_ticks_per_sec();
    assert!(metric(&out, "server_cpu_busy") > 0.0);
    assert!(metric(&out, "client_cpu_busy") > 0.0);
    // The claim's share grew by the server's CPU over the trial: a tick
    // of rounding at each of the four reads (and what other tests burn
    // between two reads of a pair, well under a tick).
    let grew = claimed_after.saturating_sub(claimed_before);
    assert!(
        grew as f64 >= server_ticks - 4.0,
        "the claimed processes' ticks grew by {grew}, the server used {server_ticks:.0} ({claimed_before} -> {claimed_after})"
    );
    assert!(!own_processes::claimed().contains(&servers[0]));
}

/// The schemas named `sledge_oltp_...` on the server now.
fn oltp_schemas(url: &str) -> Vec<String> {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.query(
        "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'sledge\\_oltp\\_%'",
        &[],
    )
    .unwrap()
    .iter()
    .map(|row| row.get(0))
    .collect()
}

/// `sledge run db.oltp` on the server at `url` with `args` more, started
/// in the background in `sandbox` in a process group of its own (which a
/// test kills or interrupts whole), its output discarded.
fn spawn_oltp_group(
    sandbox: &crate::common::Sandbox,
    url: &str,
    args: &[&str],
) -> std::process::Child {
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("sledge"));
    command
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .args(["run", "db.oltp", "-p", &format!("db={url}")])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command.spawn().unwrap()
}

/// A sledge killed (SIGKILL: no cleanup runs) during a PostgreSQL trial
/// leaves its schema; the next case on that server drops it, and leaves
/// alone a user's schema with a sledge-like name but no mark, and one
/// marked by a sledge that still runs.
#[test]
fn a_schema_left_by_a_killed_sledge_is_dropped_by_the_next_case() {
    let _serial = one_at_a_time();
    let Some(url) = Kind::Postgres.live_url() else {
        return;
    };
    let before = oltp_schemas(&url);
    let sandbox = crate::common::Sandbox::new();
    let mut args = vec!["-p", "table_size=200", "-p", "time=30"];
    args.extend(ONE_TRIAL);
    let mut child = spawn_oltp_group(&sandbox, &url, &args);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let made = loop {
        let new: Vec<String> = oltp_schemas(&url)
            .into_iter()
            .filter(|s| !before.contains(s))
            .collect();
        if let Some(name) = new.into_iter().next() {
            break name;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the sledge run made no schema in 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    // Into its trial: the table is loaded once the clients run.
    std::thread::sleep(Duration::from_secs(2));
    // The process that made the schema (the run's, which loads the tables
    // its rounds share), whose pid its name holds: killed first, so that
    // it cannot clean up when its group's other processes die.
    let round: i32 = made.split('_').nth(3).unwrap().parse().unwrap();
    // SAFETY: kill has no memory preconditions; the pids are the run's.
    unsafe {
        libc::kill(round, libc::SIGKILL);
        libc::kill(-(child.id() as i32), libc::SIGKILL);
    }
    crate::common::wait_bounded(&mut child, Duration::from_secs(30));
    assert!(oltp_schemas(&url).contains(&made), "the kill left {made}");

    // A user's schema with a sledge-like name and no mark, and one marked
    // by this (running) process.
    let tag = sledge::http::server::dynamic::host_tag();
    let users = format!("sledge_oltp_{tag}_1_0_00000000");
    let live = format!("sledge_oltp_{tag}_{}_99_00000000", std::process::id());
    let live_mark = sledge::monitor::maker_mark::MakerMark::new(&live)
        .unwrap()
        .to_line();
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!(
            "CREATE SCHEMA {users}; CREATE TABLE {users}.keep (id int); \
             CREATE SCHEMA {live}; COMMENT ON SCHEMA {live} IS '{live_mark}'"
        ))
        .unwrap();

    let mut case = build(&Oltp, &[("db", &url), ("table_size", "100")]);
    let ctx = ctx();
    let prepared = case.prepare(&ctx);
    case.cleanup(&ctx).unwrap();
    prepared.unwrap();
    let after = oltp_schemas(&url);
    admin
        .batch_execute(&format!(
            "DROP SCHEMA {users} CASCADE; DROP SCHEMA {live} CASCADE"
        ))
        .unwrap();
    assert!(!after.contains(&made), "{made} is still there");
    assert!(after.contains(&users), "the user's schema was dropped");
    assert!(after.contains(&live), "a live sledge's schema was dropped");
}

/// Sets every `synchronous_commit` among the databases of the exported
/// runs' hosts to `value`, and gives each run a new uuid (an import
/// skips a run it holds already).
fn with_synchronous_commit(doc: &mut serde_json::Value, value: &str) -> usize {
    let mut changed = 0;
    match doc {
        serde_json::Value::Object(map) => {
            if let Some(uuid) = map.get_mut("uuid")
                && uuid.is_string()
                && map.contains_key("host")
            {
                // Another valid UUID: the last hex digit changed.
                let mut text = uuid_text(map);
                let last = if text.ends_with('0') { "1" } else { "0" };
                text.pop();
                text.push_str(last);
                map.insert("uuid".to_string(), serde_json::Value::String(text));
            }
            if let Some(serde_json::Value::Object(servers)) = map.get_mut("databases") {
                for settings in servers.values_mut() {
                    if let Some(setting) = settings.get_mut("synchronous_commit") {
                        *setting = serde_json::Value::String(value.to_string());
                        changed += 1;
                    }
                }
            }
            for child in map.values_mut() {
                changed += with_synchronous_commit(child, value);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                changed += with_synchronous_commit(item, value);
            }
        }
        _ => {}
    }
    changed
}

fn uuid_text(map: &serde_json::Map<String, serde_json::Value>) -> String {
    map["uuid"].as_str().unwrap_or_default().to_string()
}

/// A run on PostgreSQL stores the server's version and key settings with
/// its host, export and import keep them, and `compare` names a setting
/// that differs among the host differences.
#[test]
fn the_servers_settings_are_stored_and_compare_names_a_difference() {
    let _serial = one_at_a_time();
    let Some(url) = Kind::Postgres.live_url() else {
        return;
    };
    let sandbox = crate::common::Sandbox::new();
    sandbox
        .sledge()
        .args([
            "run",
            "db.oltp",
            "-p",
            &format!("db={url}"),
            "-p",
            "mode=point_select",
            "-p",
            "table_size=100",
            "-p",
            "time=0.2",
        ])
        .args(ONE_TRIAL)
        .assert()
        .success();
    let shown = sandbox.show_last();
    let settings = &shown["host"]["databases"][url.as_str()];
    assert!(
        settings["server_version"]
            .as_str()
            .is_some_and(|v| !v.is_empty()),
        "{}",
        shown["host"]
    );
    let sync = settings["synchronous_commit"].as_str().unwrap().to_string();
    let other = if sync == "off" { "on" } else { "off" };

    let export = sandbox.path().join("runs.json");
    sandbox
        .sledge()
        .args(["export", "1", "-o"])
        .arg(&export)
        .assert()
        .success();
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    assert_eq!(with_synchronous_commit(&mut doc, other), 1, "{doc}");
    std::fs::write(&export, doc.to_string()).unwrap();
    sandbox
        .sledge()
        .arg("import")
        .arg(&export)
        .assert()
        .success();
    let out = sandbox
        .sledge()
        .args(["compare", "1", "2", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let cmp: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let differences = &cmp["candidates"][0]["host_differences"];
    let named = differences.as_array().unwrap().iter().any(|d| {
        d["what"] == "database synchronous_commit"
            && d["baseline"] == sync.as_str()
            && d["candidate"] == other
    });
    assert!(named, "{differences}");
}

/// MariaDB's version and key settings are read as PostgreSQL's are.
#[test]
fn mariadbs_settings_are_read() {
    let Some(url) = Kind::Mysql.live_url() else {
        return;
    };
    let (shown, settings) = sledge::workloads::db::server_settings::read(&url, "").unwrap();
    assert!(shown.starts_with("mysql://"), "{shown}");
    for name in [
        "version",
        "innodb_buffer_pool_size",
        "innodb_flush_log_at_trx_commit",
        "sync_binlog",
    ] {
        assert!(
            settings.get(name).is_some_and(|v| !v.is_empty()),
            "{name}: {settings:?}"
        );
    }
}

/// Two runs on `postgres-local`, one with `synchronous_commit=off`:
/// each stores its server's settings, and `compare` names the one that
/// differs.
#[test]
fn compare_names_a_local_servers_synchronous_commit() {
    if server_bin().is_err() {
        let why = "no PostgreSQL server binaries for db=postgres-local";
        assert!(!required("SLEDGE_TEST_DATABASES"), "{why}");
        skip(why, "SLEDGE_TEST_DATABASES");
        return;
    }
    let sandbox = crate::common::Sandbox::new();
    for pg_conf in ["pg_conf=synchronous_commit=off", "pg_conf=work_mem=8MB"] {
        sandbox
            .sledge()
            .args([
                "run",
                "db.oltp",
                "-p",
                "db=postgres-local",
                "-p",
                pg_conf,
                "-p",
                "mode=point_select",
                "-p",
                "table_size=100",
                "-p",
                "time=0.2",
            ])
            .args(ONE_TRIAL)
            .assert()
            .success();
    }
    let shown = sandbox.show_last();
    let settings = &shown["host"]["databases"]["postgres-local pg_conf=work_mem=8MB"];
    assert_eq!(settings["work_mem"], "8MB", "{}", shown["host"]);
    assert_eq!(settings["synchronous_commit"], "on");
    let out = sandbox
        .sledge()
        .args(["compare", "1", "2", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let cmp: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let differences = &cmp["candidates"][0]["host_differences"];
    let named =
        |what: &str, baseline: &str, candidate: &str| {
            differences.as_array().unwrap().iter().any(|d| {
                d["what"] == what && d["baseline"] == baseline && d["candidate"] == candidate
            })
        };
    assert!(
        named("database synchronous_commit", "off", "on"),
        "{differences}"
    );
    // PostgreSQL's default work_mem is 4MB.
    assert!(named("database work_mem", "4MB", "8MB"), "{differences}");
}

/// On MariaDB, a database left by a sledge of this host that is gone
/// (its comment a mark naming it) is dropped by the next case there; an
/// unmarked one with a sledge-like name is left alone, and the case's own
/// database carries its mark.
#[test]
fn a_database_left_by_a_gone_sledge_is_dropped_on_mariadb() {
    let _serial = one_at_a_time();
    let Some(url) = Kind::Mysql.live_url() else {
        return;
    };
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let gone = child.id();
    child.wait().unwrap();
    let tag = sledge::http::server::dynamic::host_tag();
    let stale = format!("sledge_oltp_{tag}_{gone}_0_00000000");
    let users = format!("sledge_oltp_{tag}_{gone}_1_00000000");
    let mut mark = sledge::monitor::maker_mark::MakerMark::new(&stale).unwrap();
    mark.maker.pid = gone;
    let mut admin = mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap();
    admin
        .query_drop(format!(
            "CREATE DATABASE {stale} COMMENT '{}'",
            mark.to_line()
        ))
        .unwrap();
    admin
        .query_drop(format!("CREATE DATABASE {users}"))
        .unwrap();
    let mut case = build(&Oltp, &[("db", &url), ("table_size", "100")]);
    let ctx = ctx();
    let prepared = case.prepare(&ctx);
    let own_comment: Option<String> = admin
        .query_first(format!(
            "SELECT schema_comment FROM information_schema.schemata WHERE schema_name LIKE 'sledge\\_oltp\\_%\\_{}\\_%'",
            std::process::id()
        ))
        .unwrap();
    case.cleanup(&ctx).unwrap();
    prepared.unwrap();
    let names: Vec<String> = admin
        .query(
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'sledge%'",
        )
        .unwrap();
    admin.query_drop(format!("DROP DATABASE {users}")).unwrap();
    assert!(!names.contains(&stale), "{stale} is still there");
    assert!(names.contains(&users), "the user's database was dropped");
    let own = sledge::monitor::maker_mark::MakerMark::parse(&own_comment.unwrap_or_default())
        .expect("the case's database is marked");
    assert_eq!(own.maker.pid, std::process::id());
}

/// The `load_time` samples of each case of the last run, by its `mode`.
fn load_times_by_mode(sandbox: &crate::common::Sandbox) -> BTreeMap<String, Vec<f64>> {
    let shown = sandbox.show_last();
    shown["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let load = case["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["name"] == "load_time")
                .unwrap_or_else(|| panic!("no load_time in {case}"));
            let samples = load["samples"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            (
                case["params"]["mode"].as_str().unwrap().to_string(),
                samples,
            )
        })
        .collect()
}

/// Runs `db.oltp` in three modes for three rounds with `db`, its scratch
/// directories in `tmp`, and returns each mode's load times.
fn three_modes_three_rounds(
    sandbox: &crate::common::Sandbox,
    db: &str,
    tmp: &std::path::Path,
) -> BTreeMap<String, Vec<f64>> {
    sandbox
        .sledge()
        .env("TMPDIR", tmp)
        .args([
            "run",
            "db.oltp",
            "-p",
            &format!("db={db}"),
            "-p",
            "mode=point_select,read_only,insert",
            "-p",
            "table_size=200",
            "-p",
            "time=0.05",
        ])
        .args(["--rounds", "3", "--warmup", "0", "--min-trials", "1"])
        .args(["--max-trials", "1"])
        .assert()
        .success();
    load_times_by_mode(sandbox)
}

/// The tables a run loads are loaded once for every round of every case
/// that keeps their shape (a sweep of modes over one table set shares one
/// load, as `sysbench prepare` once and `run` many times), and each round
/// of a mode that changes their shape (`insert`) loads its own; nothing is
/// left behind: no scratch directory, no schema.
#[test]
fn tables_are_loaded_once_for_the_rounds_and_cases_that_share_them() {
    let _serial = one_at_a_time();
    let sandbox = crate::common::Sandbox::new();
    let tmp = sandbox.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut servers = vec!["sqlite".to_string()];
    servers.extend(Kind::Postgres.live_url());
    for db in servers {
        let schemas_before = (db != "sqlite").then(|| oltp_schemas(&db));
        let loads = three_modes_three_rounds(&sandbox, &db, &tmp);
        let one = loads["point_select"][0];
        for mode in ["point_select", "read_only"] {
            assert!(
                loads[mode].iter().all(|&s| s == one),
                "{db}: {mode} shares one load: {loads:?}"
            );
        }
        let mut own: Vec<f64> = loads["insert"].clone();
        own.sort_by(f64::total_cmp);
        own.dedup();
        assert_eq!(own.len(), 3, "{db}: insert loads in each round: {loads:?}");
        assert!(!own.contains(&one), "{db}: {loads:?}");
        let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
        assert!(left.is_empty(), "{db}: left in TMPDIR: {left:?}");
        if let Some(before) = schemas_before {
            assert_eq!(oltp_schemas(&db), before, "{db}: schemas left");
        }
    }
}

/// Ctrl-C while the run's own process loads the tables its rounds share
/// (a million rows on PostgreSQL): the run stops at once with exit 130,
/// marked partial, and its schema is dropped.
#[test]
fn ctrl_c_during_a_shared_load_drops_the_schema_and_the_run_is_partial() {
    let _serial = one_at_a_time();
    let Some(url) = Kind::Postgres.live_url() else {
        return;
    };
    let before = oltp_schemas(&url);
    let sandbox = crate::common::Sandbox::new();
    let mut child = spawn_oltp_group(
        &sandbox,
        &url,
        &["-p", "table_size=1000000", "--rounds", "2"],
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while oltp_schemas(&url).len() <= before.len() {
        assert!(
            std::time::Instant::now() < deadline,
            "the run made no schema in 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Into the load, as a terminal's Ctrl-C reaches the whole group.
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill has no memory preconditions; the group is the run's.
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGINT);
    }
    let status = crate::common::wait_bounded(&mut child, Duration::from_secs(60));
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(oltp_schemas(&url), before, "the schema is left");
    let shown = sandbox.show_last();
    assert_eq!(shown["status"], "partial", "{}", shown["status"]);
}
