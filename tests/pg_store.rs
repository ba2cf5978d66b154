//! The store on PostgreSQL (`--store postgres://...`): the CLI works as on
//! SQLite, many sledges can create one store at once, passwords never
//! show, and a server that is down, silent or refuses the login is a
//! clear error in time.
//!
//! Each test makes its own database (`sledge_t_PID_N`) on the server at
//! `SLEDGE_TEST_POSTGRES` (default `postgres://postgres@127.0.0.1:5432/test`)
//! and drops it afterwards, also when the test fails. Without a reachable
//! server the tests are skipped with a notice on stderr, unless
//! `SLEDGE_TEST_DATABASES=require` (CI) makes that a failure.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use sledge::results::RunStatus;
use sledge::store::{SCHEMA_VERSION, Store, StoreError, StoreLocation};

use crate::common::{DATABASES, FAST, Sandbox, refusing_port, required, skip, store_fixture_run};

/// The server the tests use (its `test` database is where databases are
/// created from).
fn admin_url() -> String {
    std::env::var("SLEDGE_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// `url` with its database replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (head, query) = url
        .split_once('?')
        .map_or((url, None), |(h, q)| (h, Some(q)));
    let scheme_end = head.find("://").map_or(0, |i| i + 3);
    let base = match head[scheme_end..].find('/') {
        Some(slash) => &head[..scheme_end + slash],
        None => head,
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

/// `url` with `password` put in its user part (the tests' server trusts
/// loopback, so any password logs in: what matters is that it never
/// shows).
fn with_password(url: &str, password: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (user, host) = rest.split_once('@').unwrap();
    let user = user.split(':').next().unwrap();
    format!("{scheme}://{user}:{password}@{host}")
}

/// A database made for one test, dropped (with its connections) when the
/// test ends, passed or failed.
struct TestDb {
    name: String,
    url: String,
}

impl TestDb {
    /// A new empty database, or `None` (with a notice) when no server is
    /// reachable and the databases are not required.
    fn create() -> Option<TestDb> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let admin = admin_url();
        let mut client = match postgres::Client::connect(&admin, postgres::NoTls) {
            Ok(client) => client,
            Err(e) if !required(DATABASES) => {
                skip(
                    &format!(
                        "no PostgreSQL server at {} ({e}); start one (`service postgresql start`) \
                         or point SLEDGE_TEST_POSTGRES at another",
                        sledge::secrets::redact(&admin)
                    ),
                    DATABASES,
                );
                return None;
            }
            Err(e) => panic!(
                "SLEDGE_TEST_DATABASES=require but PostgreSQL at {} is not reachable: {e}",
                sledge::secrets::redact(&admin)
            ),
        };
        let name = format!(
            "sledge_t_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        // One statement each: neither may run inside a transaction.
        client
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
            .expect("dropping a leftover test database");
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("creating the test database");
        Some(TestDb {
            url: with_database(&admin, &name),
            name,
        })
    }

    /// A client of this database, for looking inside.
    fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls).unwrap()
    }

    /// The names of the tables in the database's public schema.
    fn tables(&self) -> Vec<String> {
        self.client()
            .query(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&admin_url(), postgres::NoTls) {
            let _ = client.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// A tiny cpu.primes run.
const TINY: &[&str] = &[
    "run",
    "cpu.primes",
    "-p",
    "max_prime=2000",
    "-p",
    "time=0.05",
];

#[test]
fn run_list_show_compare_export_import_and_report_work_on_a_postgres_store() {
    let Some(db) = TestDb::create() else { return };
    let sandbox = Sandbox::new();
    let url = with_password(&db.url, "s3cret-pw");
    let sledge = || {
        let mut cmd = sandbox.sledge();
        cmd.env("SLEDGE_STORE", &url);
        cmd
    };
    let masked = sledge::secrets::redact(&url);
    let no_password = |text: &[u8]| {
        let text = String::from_utf8_lossy(text);
        assert!(!text.contains("s3cret-pw"), "{text}");
        text.into_owned()
    };

    for _ in 0..2 {
        let out = sledge().args(TINY).args(FAST).assert().success();
        let stderr = no_password(&out.get_output().stderr);
        no_password(&out.get_output().stdout);
        assert!(stderr.contains(&format!("in {masked}")), "{stderr}");
    }
    // The command line is stored with the run, its password masked.
    let out = sledge()
        .args([
            "run",
            "cpu.primes",
            "-p",
            "max_prime=2000",
            "-p",
            "time=0.05",
        ])
        .args(FAST)
        .args(["--store", &url, "--json"])
        .assert()
        .success();
    let run: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let command_line = run["command_line"].as_str().unwrap();
    assert!(command_line.contains(&masked), "{command_line}");
    no_password(command_line.as_bytes());

    let out = sledge().args(["list", "--json"]).assert().success();
    let listed: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 3);
    assert!(
        listed.iter().all(|r| r["status"] == "complete"),
        "{listed:?}"
    );
    assert_eq!(listed[0]["id"], 3, "newest first");

    let out = sledge().args(["show", "last~1"]).assert().success();
    let shown = no_password(&out.get_output().stdout);
    assert!(
        shown.contains("run 2 · profile custom · complete"),
        "{shown}"
    );
    assert!(shown.contains("cpu.primes"), "{shown}");

    let out = sledge().args(["compare", "1", "2"]).assert().success();
    let compared = no_password(&out.get_output().stdout);
    assert!(
        compared.contains("baseline: run 1 · candidate: run 2"),
        "{compared}"
    );
    assert!(compared.contains("cpu.primes"), "{compared}");

    // Export from PostgreSQL, import into SQLite and back into another
    // PostgreSQL database: the same runs, once.
    let export = sandbox.path().join("runs.json");
    sledge()
        .args(["export", "1", "2", "3", "-o"])
        .arg(&export)
        .assert()
        .success();
    let local = sandbox.path().join("local.db");
    sandbox
        .sledge()
        .arg("--store")
        .arg(&local)
        .arg("import")
        .arg(&export)
        .assert()
        .success();
    let Some(other) = TestDb::create() else {
        return;
    };
    for _ in 0..2 {
        sandbox
            .sledge()
            .args(["--store", &other.url, "import"])
            .arg(&export)
            .assert()
            .success();
    }
    let uuids = |store: &str| -> Vec<String> {
        let out = sandbox
            .sledge()
            .args(["--store", store, "list", "--json"])
            .assert()
            .success();
        let runs: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
        let mut uuids: Vec<String> = runs
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["uuid"].as_str().unwrap().to_string())
            .collect();
        uuids.sort();
        uuids
    };
    let original = uuids(&url);
    assert_eq!(uuids(local.to_str().unwrap()), original);
    assert_eq!(uuids(&other.url), original, "imported twice, stored once");
    // The runs read back the same from both databases.
    let from_pg = Store::open(std::path::Path::new(&url)).unwrap();
    let from_sqlite = Store::open(&local).unwrap();
    let a = from_pg
        .load_run(from_pg.resolve_run(&original[0]).unwrap())
        .unwrap();
    let b = from_sqlite
        .load_run(from_sqlite.resolve_run(&original[0]).unwrap())
        .unwrap();
    assert_eq!(
        serde_json::to_value(&a.cases).unwrap(),
        serde_json::to_value(&b.cases).unwrap()
    );

    let report = sandbox.path().join("report.html");
    sledge()
        .args(["report", "1", "2", "-o"])
        .arg(&report)
        .assert()
        .success();
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("cpu.primes"));
    no_password(html.as_bytes());

    sledge().args(["delete", "1", "--yes"]).assert().success();
    let out = sledge().args(["list", "--json"]).assert().success();
    let listed: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);
}

/// A password with spaces, `://`, `/`, `?`, `#`, `@` and quotes in it
/// (PostgreSQL's client takes everything up to the first `@`; the server
/// trusts loopback, so it logs in) never shows: not in what `run` prints,
/// not in the stored command line, not in `show`, `list` or an error.
#[test]
fn a_password_with_any_characters_never_shows() {
    let Some(db) = TestDb::create() else { return };
    let sandbox = Sandbox::new();
    let url = with_password(&db.url, "Zq my secret://Zq/?#'\"Zq");
    let masked = with_password(&db.url, "***");
    let hidden = |text: &[u8]| {
        let text = String::from_utf8_lossy(text).into_owned();
        assert!(!text.contains("Zq"), "{text}");
        text
    };
    let out = sandbox
        .sledge()
        .args(["--store", &url])
        .args(TINY)
        .args(FAST)
        .assert()
        .success();
    hidden(&out.get_output().stdout);
    let stderr = hidden(&out.get_output().stderr);
    assert!(
        stderr.contains(&format!("stored as run 1 in {masked}")),
        "{stderr}"
    );

    for args in [&["show", "1", "--json"][..], &["show", "1"], &["list"]] {
        let out = sandbox
            .sledge()
            .args(["--store", &url])
            .args(args)
            .assert()
            .success();
        let shown = hidden(&out.get_output().stdout);
        if args.contains(&"--json") {
            let run: serde_json::Value = serde_json::from_str(&shown).unwrap();
            let command_line = run["command_line"].as_str().unwrap();
            assert!(
                command_line.contains(&format!(" --store {masked} run ")),
                "{command_line}"
            );
        }
    }
    // An error names the store, password masked.
    let out = sandbox
        .sledge()
        .args(["--store", &url, "show", "99"])
        .assert()
        .failure();
    hidden(&out.get_output().stderr);
    let (_held, port) = refusing_port();
    let unreachable = format!("postgres://bench:Zq my secret://Zq@127.0.0.1:{port}/results");
    let out = sandbox
        .sledge()
        .args(["--store", &unreachable, "list"])
        .assert()
        .failure();
    let stderr = hidden(&out.get_output().stderr);
    assert!(
        stderr.contains(&format!("postgres://bench:***@127.0.0.1:{port}/results")),
        "{stderr}"
    );
}

#[test]
fn a_stored_run_reads_back_the_same_from_both_databases() {
    let Some(db) = TestDb::create() else { return };
    let sandbox = Sandbox::new();
    let samples = [10.0, 12.5, 11.0, 30.0];
    let pg = std::path::Path::new(&db.url);
    let pg_id = store_fixture_run(pg, RunStatus::Complete, &samples);
    let sqlite_id = store_fixture_run(&sandbox.store(), RunStatus::Complete, &samples);
    let a = Store::open(pg).unwrap().load_run(pg_id).unwrap();
    let b = Store::open(&sandbox.store())
        .unwrap()
        .load_run(sqlite_id)
        .unwrap();
    let metric = &a.cases[0].metrics[0];
    assert_eq!(metric.samples, samples);
    assert_eq!(metric.outliers, b.cases[0].metrics[0].outliers);
    assert_eq!(metric.summary, b.cases[0].metrics[0].summary);
    assert_eq!(
        serde_json::to_value(&a.cases).unwrap(),
        serde_json::to_value(&b.cases).unwrap()
    );
    assert_eq!(a.status, RunStatus::Complete);
}

#[test]
fn sledges_creating_one_postgres_store_at_once_apply_each_step_once() {
    // Under the server's default isolation and under repeatable read set
    // as the database's default: the migration must see what another
    // committed while it waited for the lock either way.
    for isolation in ["read committed", "repeatable read"] {
        let Some(db) = TestDb::create() else { return };
        db.client()
            .batch_execute(&format!(
                "ALTER DATABASE {} SET default_transaction_isolation = '{isolation}'",
                db.name
            ))
            .unwrap();
        // Without the lock, all but one would fail on `CREATE TABLE run`
        // (already exists) or add a second sledge_meta row. The starts
        // are spread over 24 ms so that some sledges look at the schema
        // while the first one's migration commits: one that read
        // `sledge_meta` and `run` in two statements could see `run` alone
        // then, and call the store another program's.
        let handles: Vec<_> = (0..24u64)
            .map(|i| {
                let url = db.url.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_millis(i));
                    Store::open(std::path::Path::new(&url)).map(drop)
                })
            })
            .collect();
        for handle in handles {
            handle
                .join()
                .unwrap()
                .unwrap_or_else(|e| panic!("{isolation}: {e:?}"));
        }
        let mut client = db.client();
        let meta = client
            .query(
                "SELECT application_id, schema_version FROM sledge_meta",
                &[],
            )
            .unwrap();
        assert_eq!(meta.len(), 1, "{isolation}");
        assert_eq!(meta[0].get::<_, i64>(0), 0x736C_6467);
        assert_eq!(meta[0].get::<_, i64>(1), sledge::store::SCHEMA_VERSION);
        assert_eq!(
            db.tables(),
            [
                "histogram",
                "metric",
                "run",
                "run_case",
                "sample",
                "sledge_meta",
                "trial"
            ],
            "{isolation}"
        );
    }
}

#[test]
fn both_databases_hold_the_same_columns() {
    let Some(db) = TestDb::create() else { return };
    let sandbox = Sandbox::new();
    drop(Store::open(std::path::Path::new(&db.url)).unwrap());
    drop(Store::open(&sandbox.store()).unwrap());
    let sqlite = rusqlite::Connection::open(sandbox.store()).unwrap();
    let mut client = db.client();
    for table in ["run", "run_case", "trial", "metric", "sample", "histogram"] {
        let mut from_sqlite: Vec<String> = sqlite
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let mut from_pg: Vec<String> = client
            .query(
                "SELECT column_name::text FROM information_schema.columns
                 WHERE table_schema = 'public' AND table_name = $1",
                &[&table],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        from_sqlite.sort();
        from_pg.sort();
        assert_eq!(from_pg, from_sqlite, "table {table}");
    }
}

#[test]
fn commands_that_only_read_create_nothing_in_an_empty_database() {
    let Some(db) = TestDb::create() else { return };
    let sandbox = Sandbox::new();
    sandbox
        .sledge()
        .args(["--store", &db.url, "list"])
        .assert()
        .success()
        .stdout(predicates::str::contains("no runs stored yet"));
    sandbox
        .sledge()
        .args(["--store", &db.url, "show", "last"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no runs yet"));
    assert!(db.tables().is_empty(), "{:?}", db.tables());
}

/// The schema version recorded in the test database's store.
fn schema_version(db: &TestDb) -> i64 {
    db.client()
        .query_one("SELECT schema_version FROM sledge_meta", &[])
        .unwrap()
        .get(0)
}

#[test]
fn commands_that_only_read_leave_an_older_store_as_found_and_never_write() {
    let Some(db) = TestDb::create() else { return };
    let location = StoreLocation::Postgres(db.url.clone());
    Store::open_at(&location).unwrap();
    let current = schema_version(&db);
    assert_eq!(current, SCHEMA_VERSION);

    // A store an older sledge made (its marker one version back): reading
    // it is refused with what to do, and nothing is upgraded.
    let older = current - 1;
    db.client()
        .execute("UPDATE sledge_meta SET schema_version = $1", &[&older])
        .unwrap();
    let Err(err) = Store::open_read_only(&location) else {
        panic!("a store at an older schema opened read-only");
    };
    assert!(matches!(err, StoreError::OlderDatabase { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains(&format!("schema version {older}")), "{text}");
    assert!(text.contains("`sledge run` or `sledge import`"), "{text}");
    assert_eq!(schema_version(&db), older);

    // At the current version it opens, and its session cannot write.
    db.client()
        .execute("UPDATE sledge_meta SET schema_version = $1", &[&current])
        .unwrap();
    let id = store_fixture_run(
        std::path::Path::new(&db.url),
        RunStatus::Complete,
        &[1.0, 2.0, 3.0],
    );
    let mut store = Store::open_read_only(&location).unwrap();
    assert_eq!(store.list_runs().unwrap().len(), 1);
    let text = store
        .delete_runs(&[id])
        .expect_err("a read-only session refuses a write")
        .to_string();
    assert!(text.contains("read-only"), "{text}");
    assert_eq!(store.list_runs().unwrap().len(), 1);
}

#[test]
fn a_database_with_tables_of_another_program_is_left_untouched() {
    let Some(db) = TestDb::create() else { return };
    db.client()
        .batch_execute("CREATE TABLE run (id INTEGER, what TEXT)")
        .unwrap();
    let err = Store::open(std::path::Path::new(&db.url)).unwrap_err();
    assert!(matches!(err, StoreError::ForeignDatabase { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("has a table `run` and no sledge_meta table"),
        "{text}"
    );
    assert_eq!(db.tables(), ["run"]);
}

#[test]
fn a_login_the_server_refuses_is_a_clear_error_with_the_password_masked() {
    let Some(_db) = TestDb::create() else { return };
    let url = with_database(
        &with_password(&admin_url(), "s3cret-pw").replacen("://postgres", "://no_such_role_x", 1),
        "test",
    );
    let sandbox = Sandbox::new();
    let out = sandbox
        .sledge()
        .args(["--store", &url])
        .args(TINY)
        .args(FAST)
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(!stderr.contains("s3cret-pw"), "{stderr}");
    assert!(
        stderr.contains("cannot open store postgres://no_such_role_x:***@"),
        "{stderr}"
    );
    assert!(stderr.contains("no_such_role_x"), "{stderr}");
    assert_eq!(out.get_output().stdout, b"");
}

#[test]
fn a_server_that_is_down_or_silent_fails_within_the_connect_timeout() {
    // No server needed: a refused port, and a listener that never answers.
    let (_held, refused) = refusing_port();
    let url = format!("postgres://u:s3cret-pw@127.0.0.1:{refused}/db");
    let err = Store::open(std::path::Path::new(&url)).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, StoreError::Connect { .. }), "{text}");
    assert!(
        text.contains(&format!(
            "cannot open store postgres://u:***@127.0.0.1:{refused}/db"
        )),
        "{text}"
    );
    assert!(!text.contains("s3cret-pw"), "{text}");

    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let url = format!("postgres://u:s3cret-pw@127.0.0.1:{port}/db?connect_timeout=1");
    let started = Instant::now();
    let err = Store::open(std::path::Path::new(&url)).unwrap_err();
    let waited = started.elapsed();
    let text = err.to_string();
    assert!(text.contains("no answer within 1 s"), "{text}");
    assert!(!text.contains("s3cret-pw"), "{text}");
    // Bounded: not the run-away case (with room for a loaded machine).
    assert!(waited < Duration::from_secs(20), "{waited:?}");
    drop(silent);
}

#[test]
fn a_run_that_loses_its_postgres_store_midway_goes_on_into_a_local_fallback_file() {
    let Some(db) = TestDb::create() else { return };
    let sandbox = Sandbox::new();
    let data = sandbox.path().join("data");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sledge"))
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", &db.url)
        .env("XDG_DATA_HOME", &data)
        .args(["run", "cpu.primes", "-p", "max_prime=2000,2001,2002,2003"])
        .args(["-p", "time=0.5"])
        .args(FAST)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the first case is on the server, the server drops sledge's
    // connection, as a restarted server or a lost network would.
    let mut client = db.client();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let stored: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_tables WHERE tablename = 'run_case'",
                &[],
            )
            .map(|r| r.get(0))
            .unwrap();
        let cases: i64 = if stored > 0 {
            client
                .query_one("SELECT count(*) FROM run_case", &[])
                .unwrap()
                .get(0)
        } else {
            0
        };
        if cases > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "no case stored within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    let dropped: i64 = client
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = 'sledge'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(dropped, 1);
    let status = crate::common::wait_bounded(&mut child, Duration::from_secs(120));
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the run goes on into the local fallback file"),
        "{stderr}"
    );
    assert!(stderr.contains("was lost midway"), "{stderr}");
    // The table of the whole run is shown from the fallback file.
    assert!(stdout.contains("cpu.primes"), "{stdout}");

    let dir = data.join("sledge");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let file = &files[0];
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    let fallback = Store::open_existing(file).unwrap();
    let run = fallback.load_run(1).unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.cases.len(), 4, "every case, before and after the loss");
    assert!(run.cases.iter().all(|c| c.error.is_none()));
    let original: String = client
        .query_one("SELECT uuid FROM run", &[])
        .unwrap()
        .get(0);
    assert_ne!(run.uuid, original);
    assert!(
        run.warnings
            .iter()
            .any(|w| w.contains("was lost midway") && w.contains(&original)),
        "{:?}",
        run.warnings
    );

    // As the message says: export from the file, import into the server.
    let export = sandbox.path().join("run.json");
    sandbox
        .sledge()
        .arg("--store")
        .arg(file)
        .args(["export", "1", "-o"])
        .arg(&export)
        .assert()
        .success();
    sandbox
        .sledge()
        .args(["--store", &db.url, "import"])
        .arg(&export)
        .assert()
        .success();
    let moved = Store::open(std::path::Path::new(&db.url)).unwrap();
    let id = moved.resolve_run(&run.uuid).unwrap();
    assert_eq!(moved.load_run(id).unwrap().cases.len(), 4);
}

#[test]
fn a_malformed_url_and_the_help_never_show_the_password() {
    let sandbox = Sandbox::new();
    let url = "postgres://u:s3cret-pw@127.0.0.1:notaport/db";
    let out = sandbox
        .sledge()
        .args(["--store", url, "list"])
        .assert()
        .code(1);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(!stderr.contains("s3cret-pw"), "{stderr}");
    assert!(
        stderr.contains(
            "cannot open store postgres://u:***@127.0.0.1:notaport/db: not a valid PostgreSQL URL"
        ),
        "{stderr}"
    );
    let out = sandbox
        .sledge()
        .env("SLEDGE_STORE", url)
        .arg("--help")
        .assert()
        .success();
    let help = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(help.contains("SLEDGE_STORE"), "{help}");
    assert!(!help.contains("s3cret-pw"), "{help}");
}

#[test]
fn the_store_api_behaves_the_same_on_both_databases() {
    let Some(db) = TestDb::create() else { return };
    let sandbox = Sandbox::new();
    let pg = std::path::PathBuf::from(&db.url);
    let results: Vec<serde_json::Value> = [pg.as_path(), sandbox.store().as_path()]
        .iter()
        .map(|location| exercise_the_store(location))
        .collect();
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0]["resolved"], serde_json::json!([3, 1, 1, 2, 2]));
    assert_eq!(results[0]["partial"], serde_json::json!([3]));
    assert_eq!(
        results[0]["history"].as_array().unwrap().len(),
        2,
        "{}",
        results[0]
    );
    assert_eq!(results[0]["left"], 0);
    // Deleting cascades to every table.
    let mut client = db.client();
    for table in ["run_case", "trial", "metric", "sample"] {
        let rows: i64 = client
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .unwrap()
            .get(0);
        assert_eq!(rows, 0, "{table}");
    }
}

/// Runs the store's operations on the store at `location` and returns
/// what each one gave, for comparing the two databases (ids included:
/// both number from 1).
fn exercise_the_store(location: &std::path::Path) -> serde_json::Value {
    let first = store_fixture_run(location, RunStatus::Complete, &[10.0, 11.0, 12.0]);
    let second = store_fixture_run(location, RunStatus::Complete, &[20.0, 21.0, 22.0]);
    let running = store_fixture_run(location, RunStatus::Running, &[1.0, 2.0]);
    let mut store = Store::open(location).unwrap();
    let run = store.load_run(second).unwrap();

    // A case saved again (after another round) replaces its trials and
    // samples.
    let mut case = run.cases[0].clone();
    let case_id = store.save_case(second, Some(1), None, &case).unwrap();
    case.metrics[0].samples.push(23.0);
    case.metrics[0].outliers.push(false);
    store
        .save_case(second, Some(1), Some(case_id), &case)
        .unwrap();
    let reloaded = store.load_run(second).unwrap();
    assert_eq!(reloaded.cases.len(), 2);
    assert_eq!(
        reloaded.cases[1].metrics[0].samples,
        [20.0, 21.0, 22.0, 23.0]
    );

    let uuid = &run.uuid;
    let resolved: Vec<i64> = ["last", "last~2", "1", &uuid[..8], uuid]
        .iter()
        .map(|r| store.resolve_run(r).unwrap())
        .collect();
    let errors: Vec<String> = ["last~9", "99", "nonsense"]
        .iter()
        .map(|r| {
            let e = store.resolve_run(r).unwrap_err().to_string();
            e.replace(&store.path().display().to_string(), "STORE")
        })
        .collect();

    let case0 = &run.cases[0];
    let history = store
        .case_history(
            &run.host_key(),
            &case0.workload,
            case0.workload_version,
            &case0.params,
            &[],
            &[second],
        )
        .unwrap();
    let history: Vec<(i64, f64, usize)> = history
        .iter()
        .map(|h| (h.run_id, h.metrics[0].mean, h.used_trials))
        .collect();

    let partial = store.mark_own_runs_partial("2026-01-02T00:00:00Z").unwrap();
    let listed: Vec<(i64, String, u32)> = store
        .list_runs()
        .unwrap()
        .iter()
        .map(|r| (r.id, r.status.as_str().to_string(), r.cases))
        .collect();
    store.delete_runs(&[first, second, running]).unwrap();
    serde_json::json!({
        "resolved": resolved,
        "errors": errors,
        "history": history,
        "partial": partial,
        "listed": listed,
        "left": store.list_runs().unwrap().len(),
    })
}
