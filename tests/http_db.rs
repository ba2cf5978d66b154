//! The dynamic page against real database servers: PostgreSQL and MariaDB
//! (or MySQL) on loopback, under both server models. The URLs default to
//! the servers CI starts (`postgres://postgres@127.0.0.1:5432/test`,
//! `mysql://root@127.0.0.1:3306/test`); `SLEDGE_TEST_POSTGRES` and
//! `SLEDGE_TEST_MYSQL` point elsewhere.
//!
//! A test whose server is not reachable is skipped with a notice on
//! stderr, so that `cargo test` needs no database on a developer's
//! machine; with `SLEDGE_TEST_DATABASES=require` (set by CI, which runs
//! both servers) it fails instead, so that a green CI run means the
//! back-ends were exercised.
//!
//! Every load is a few hundred requests without keep-alive, and each test
//! checks on the server's side that every request opened its own
//! connection and that the case's table is gone afterwards.

use std::collections::BTreeSet;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use crate::common::{DATABASES, FAST, Sandbox, required, skip};
use sledge::engine::CancelToken;
use sledge::http::server::dynamic::row_text;
use sledge::http::server::{Database, DbSource};
use sledge::http::{self, LoadConfig, Model, Server, ServerConfig};

const REQUESTS: u64 = 200;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    Postgres,
    Mysql,
}

impl Kind {
    pub(crate) fn url(self) -> String {
        let (var, default) = match self {
            Kind::Postgres => (
                "SLEDGE_TEST_POSTGRES",
                "postgres://postgres@127.0.0.1:5432/test",
            ),
            Kind::Mysql => ("SLEDGE_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test"),
        };
        std::env::var(var).unwrap_or_else(|_| default.to_string())
    }

    /// The URL when something listens there. Otherwise the test is
    /// skipped (`None`, with a notice on stderr), or fails when the
    /// databases are required.
    pub(crate) fn live_url(self) -> Option<String> {
        let url = self.url();
        reachable_or_skip(self, &url, required(DATABASES))
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Postgres => "PostgreSQL",
            Kind::Mysql => "MariaDB/MySQL",
        }
    }

    fn source(self, url: &str) -> DbSource {
        DbSource::parse(url).unwrap()
    }

    /// Connections the server has accepted so far (all clients).
    fn connections(self, url: &str) -> u64 {
        match self {
            Kind::Postgres => {
                let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
                let row = c
                    .query_one(
                        "SELECT sessions::BIGINT FROM pg_stat_database WHERE datname = current_database()",
                        &[],
                    )
                    .unwrap();
                row.get::<_, i64>(0) as u64
            }
            Kind::Mysql => {
                let mut c = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
                let (_, n): (String, u64) = c
                    .query_first("SHOW GLOBAL STATUS LIKE 'Connections'")
                    .unwrap()
                    .unwrap();
                n
            }
        }
    }

    /// The page tables (`sledge_http_page_PID_...`) in the URL's database
    /// made by other processes than this test binary, which makes its own
    /// in-process: those of a `sledge` child run.
    fn foreign_page_tables(self, url: &str) -> BTreeSet<String> {
        let query = "SELECT CAST(table_name AS VARCHAR(200)) FROM information_schema.tables \
                     WHERE table_name LIKE 'sledge_http_page%'";
        let names: Vec<String> = match self {
            Kind::Postgres => {
                let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
                c.query(query, &[])
                    .unwrap()
                    .iter()
                    .map(|row| row.get(0))
                    .collect()
            }
            Kind::Mysql => {
                let mut c = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
                c.query(query.replace("VARCHAR(200)", "CHAR")).unwrap()
            }
        };
        let own = std::process::id();
        names
            .into_iter()
            .filter(|name| table_pid(name) != Some(own))
            .collect()
    }

    /// Makes a table named as the page names its own.
    /// Creates `table`, with `comment` as its comment when given.
    fn make_table(self, url: &str, table: &str, comment: Option<&str>) {
        let sql = format!("CREATE TABLE {table} (id INT PRIMARY KEY)");
        match self {
            Kind::Postgres => {
                let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
                c.batch_execute(&sql).unwrap();
                if let Some(comment) = comment {
                    c.batch_execute(&format!("COMMENT ON TABLE {table} IS '{comment}'"))
                        .unwrap();
                }
            }
            Kind::Mysql => {
                let mut c = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
                let comment = comment
                    .map(|comment| format!(" COMMENT='{comment}'"))
                    .unwrap_or_default();
                c.query_drop(format!("{sql}{comment}")).unwrap();
            }
        }
    }

    fn drop_table(self, url: &str, table: &str) {
        let sql = format!("DROP TABLE IF EXISTS {table}");
        match self {
            Kind::Postgres => {
                let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
                c.batch_execute(&sql).unwrap();
            }
            Kind::Mysql => {
                let mut c = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
                c.query_drop(sql).unwrap();
            }
        }
    }

    /// The comment of `table` (empty when it has none).
    fn table_comment(self, url: &str, table: &str) -> String {
        match self {
            Kind::Postgres => {
                let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
                let query = format!(
                    "SELECT coalesce(obj_description('{table}'::regclass, 'pg_class'), '')"
                );
                c.query_one(query.as_str(), &[]).unwrap().get(0)
            }
            Kind::Mysql => {
                let mut c = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
                let query = format!(
                    "SELECT table_comment FROM information_schema.tables \
                     WHERE table_schema = DATABASE() AND table_name = '{table}'"
                );
                c.query_first::<String, _>(query).unwrap().unwrap()
            }
        }
    }

    fn table_exists(self, url: &str, table: &str) -> bool {
        let query =
            format!("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = '{table}'");
        match self {
            Kind::Postgres => {
                let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
                c.query_one(query.as_str(), &[]).unwrap().get::<_, i64>(0) > 0
            }
            Kind::Mysql => {
                let mut c = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
                c.query_first::<u64, _>(query).unwrap().unwrap() > 0
            }
        }
    }
}

/// `url` when its host and port accept a TCP connection. Otherwise: with
/// `required`, a panic saying what to start; without, `None` and a notice
/// on stderr that the test is skipped.
fn reachable_or_skip(kind: Kind, url: &str, required: bool) -> Option<String> {
    let host_port = url
        .split_once("://")
        .map(|(_, rest)| rest.rsplit_once('@').map_or(rest, |(_, r)| r))
        .and_then(|rest| rest.split(['/', '?']).next())
        .unwrap_or_default()
        .to_string();
    let (default_port, start, var) = match kind {
        Kind::Postgres => (5432, "service postgresql start", "SLEDGE_TEST_POSTGRES"),
        Kind::Mysql => (3306, "service mariadb start", "SLEDGE_TEST_MYSQL"),
    };
    let with_port = if host_port.contains(':') {
        host_port.clone()
    } else {
        format!("{host_port}:{default_port}")
    };
    let reachable = with_port
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .is_some_and(|addr: SocketAddr| {
            TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
        });
    if reachable {
        return Some(url.to_string());
    }
    let name = kind.name();
    assert!(
        !required,
        "{name} is not reachable at {with_port}, and SLEDGE_TEST_DATABASES=require: \
         start it (`{start}`), or point {var} at another server"
    );
    skip(
        &format!(
            "{name} is not reachable at {with_port} (start it with `{start}`, or point {var} \
             at another server)"
        ),
        DATABASES,
    );
    None
}

/// Waits until the server has counted at least `at_least` connections
/// (PostgreSQL counts a session when its backend reports, shortly after it
/// ends); returns the last count.
fn connections_reach(kind: Kind, url: &str, at_least: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let n = kind.connections(url);
        if n >= at_least || Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn get(addr: SocketAddr, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// Both models serve the row from the server with one database connection
/// per request, and stopping the server drops the table.
fn serves_the_row(kind: Kind) {
    let Some(url) = kind.live_url() else { return };
    for model in [Model::Async, Model::Threads] {
        let mut srv = Server::start(&ServerConfig {
            model,
            threads: 2,
            sizes: vec![1],
            dynamic: Some(kind.source(&url)),
            ..ServerConfig::loopback()
        })
        .unwrap_or_else(|e| panic!("{kind:?} {model:?}: {e:#}"));
        let table = srv.database_table().unwrap();
        assert!(kind.table_exists(&url, &table), "{table}");
        let page = get(srv.addr(), "/dynamic");
        assert!(
            page.starts_with("HTTP/1.1 200"),
            "{kind:?} {model:?}: {page}"
        );
        assert!(page.contains(&row_text()), "{page}");

        let before = kind.connections(&url);
        let mut c = LoadConfig::closed(http::parse_targets(&[srv.url("/dynamic")]).unwrap(), 8);
        c.keep_alive = false;
        c.requests = Some(REQUESTS);
        c.duration = Some(Duration::from_secs(30));
        let r = http::run(&c, &CancelToken::new()).unwrap();
        assert_eq!(
            (r.responses, r.errors.total()),
            (REQUESTS, 0),
            "{kind:?} {model:?}: {:?}",
            r.errors
        );
        // Every response is the page with the row (without keep-alive
        // the generator asks for `Connection: close`, as `get` does).
        assert_eq!(r.bytes, REQUESTS * page.len() as u64);
        // Other clients may connect too, hence "at least".
        let after = connections_reach(kind, &url, before + REQUESTS + 1);
        assert!(
            after > before + REQUESTS,
            "{kind:?} {model:?}: {REQUESTS} pages, {} connections",
            after - before
        );

        // The static routes still answer while pages are in the pool.
        assert!(get(srv.addr(), "/static/1").starts_with("HTTP/1.1 200"));
        srv.stop().unwrap();
        assert!(srv.failure().is_none());
        assert!(!kind.table_exists(&url, &table), "{table} left behind");
    }
}

/// The table lives exactly as long as the database handle, whether it is
/// removed or dropped (the cleanup after an error or a Ctrl-C).
fn the_table_is_dropped(kind: Kind) {
    let Some(url) = kind.live_url() else { return };
    let db = Database::create(&kind.source(&url)).unwrap();
    let table = db.table().unwrap().to_string();
    assert!(table.starts_with("sledge_http_page_"), "{table}");
    assert!(db.waits());
    assert!(kind.table_exists(&url, &table));
    assert_eq!(db.fetch_row().unwrap(), row_text());
    db.remove().unwrap();
    assert!(!kind.table_exists(&url, &table), "{table} left behind");

    let db = Database::create(&kind.source(&url)).unwrap();
    let table = db.table().unwrap().to_string();
    drop(db);
    assert!(!kind.table_exists(&url, &table), "{table} left behind");

    // A server that is dropped without being stopped, too.
    let srv = Server::start(&ServerConfig {
        dynamic: Some(kind.source(&url)),
        ..ServerConfig::loopback()
    })
    .unwrap();
    let table = srv.database_table().unwrap();
    assert!(kind.table_exists(&url, &table), "{table}");
    drop(srv);
    assert!(!kind.table_exists(&url, &table), "{table} left behind");
}

/// `url` with `from` replaced by `to`.
fn with(url: &str, from: &str, to: &str) -> String {
    assert!(url.contains(from), "{url} has no {from}");
    url.replacen(from, to, 1)
}

/// A refused port, a bad login and a missing database fail at once, with
/// the URL (without its password) and the reason.
fn fails_fast(kind: Kind) {
    let Some(url) = kind.live_url() else { return };
    let port = match kind {
        Kind::Postgres => ":5432",
        Kind::Mysql => ":3306",
    };
    let (user, bad_login, reason) = match kind {
        // PostgreSQL trusts loopback here: an unknown role is the bad login.
        Kind::Postgres => ("postgres@", "no_such_role_sledge:secret@", "no_such_role"),
        Kind::Mysql => ("root@", "root:secret@", "Access denied"),
    };
    let db = url.rsplit_once('/').unwrap().1;
    let cases = [
        (with(&url, port, ":1"), "cannot connect"),
        (with(&url, user, bad_login), reason),
        (
            with(&url, &format!("/{db}"), "/no_such_database_sledge"),
            "no_such_database_sledge",
        ),
    ];
    for (bad, reason) in cases {
        let started = Instant::now();
        let e = Server::start(&ServerConfig {
            dynamic: Some(kind.source(&bad)),
            ..ServerConfig::loopback()
        })
        .err()
        .unwrap_or_else(|| panic!("{bad} started"));
        let text = format!("{e:#}");
        assert!(started.elapsed() < Duration::from_secs(8), "{bad}: slow");
        assert!(text.contains(reason), "{bad}: {text}");
        assert!(text.contains("db="), "{text}");
        assert!(!text.contains("secret"), "{text}");
    }
    // A password with spaces, `://` or `@` in it: whatever the client
    // makes of it, no part of it shows.
    let role = user.trim_end_matches('@');
    for password in ["Zq my secret Zq", "Zq://Zq", "Zq@Zq pw"] {
        let bad = with(&url, user, &format!("{role}:{password}@"));
        let started = DbSource::parse(&bad).and_then(|source| {
            Server::start(&ServerConfig {
                dynamic: Some(source),
                ..ServerConfig::loopback()
            })
        });
        // PostgreSQL trusts loopback: a password it parses logs in.
        if let Err(e) = started {
            let text = format!("{e:#}");
            assert!(text.contains("db="), "{text}");
            assert!(!text.contains("Zq"), "{text}");
        }
    }
}

#[test]
fn postgres_serves_the_row_one_connection_per_request() {
    serves_the_row(Kind::Postgres);
}

#[test]
fn mysql_serves_the_row_one_connection_per_request() {
    serves_the_row(Kind::Mysql);
}

#[test]
fn postgres_table_is_dropped() {
    the_table_is_dropped(Kind::Postgres);
}

#[test]
fn mysql_table_is_dropped() {
    the_table_is_dropped(Kind::Mysql);
}

#[test]
fn postgres_errors_fail_fast() {
    fails_fast(Kind::Postgres);
}

#[test]
fn mysql_errors_fail_fast() {
    fails_fast(Kind::Mysql);
}

/// The workload end to end through the CLI: a case per database and
/// model, every request answered, no table left behind.
#[test]
fn the_workload_runs_against_both_servers() {
    let (Some(pg), Some(my)) = (Kind::Postgres.live_url(), Kind::Mysql.live_url()) else {
        return;
    };
    let before = [
        Kind::Postgres.foreign_page_tables(&pg),
        Kind::Mysql.foreign_page_tables(&my),
    ];
    let sandbox = Sandbox::new();
    let out = sandbox
        .sledge()
        .args(["run", "http.dynamic", "--json", "-p"])
        .arg(format!("db={pg},{my}"))
        .args(["-p", "model=async,threads", "-p", "concurrency=4"])
        .args([
            "-p",
            "requests=100",
            "-p",
            "keepalive=false",
            "-p",
            "time=5",
        ])
        .args(FAST)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cases = run["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4, "{run}");
    for case in cases {
        assert!(case["error"].is_null(), "{case}");
        let metric = |name: &str| {
            crate::common::metric(case, name)["summary"]["max"]
                .as_f64()
                .unwrap()
        };
        assert!(metric("requests_per_sec") > 0.0, "{case}");
        assert_eq!(metric("errors"), 0.0, "{case}");
    }
    // The run's cases made their tables in the `sledge` process, which has
    // ended: none of them may be left.
    for ((kind, url), before) in [(Kind::Postgres, &pg), (Kind::Mysql, &my)]
        .into_iter()
        .zip(before)
    {
        let after = kind.foreign_page_tables(url);
        // Tests running beside this one make tables of their own, owned by
        // processes still alive; a table left behind belongs to one gone.
        let left: Vec<_> = after
            .difference(&before)
            .filter(|name| !owner_alive(name))
            .collect();
        assert!(left.is_empty(), "{kind:?}: tables left behind: {left:?}");
    }
}

/// The pid in a page table's name, `sledge_http_page_h<host tag>_<pid>_...`.
fn table_pid(table: &str) -> Option<u32> {
    let mut parts = table.strip_prefix("sledge_http_page_")?.split('_');
    parts.next().filter(|tag| tag.starts_with('h'))?;
    parts.next()?.parse().ok()
}

/// Whether the process named in a page table's name is alive.
fn owner_alive(table: &str) -> bool {
    table_pid(table).is_some_and(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists())
}

/// This host's page-table prefix, as the page computes it (FNV-1a of the
/// host name).
fn this_hosts_prefix() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let tag = host.trim().bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    format!("sledge_http_page_h{tag:08x}")
}

/// A pid no process has: a child that exited and was reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// A table left by a killed sledge of this host, marked as its own, is
/// dropped when the page next connects to that database; one of another
/// host, and one with a page table's name but no valid mark, are left
/// alone.
fn leftover_tables_are_dropped(kind: Kind) {
    let Some(url) = kind.live_url() else { return };
    let gone = dead_pid();
    let gone_mark = |table: &str| {
        let mut mark = sledge::monitor::maker_mark::MakerMark::new(table).unwrap();
        mark.maker.pid = gone;
        mark.to_line()
    };
    let stale = format!("{}_{gone}_0_0", this_hosts_prefix());
    let unmarked = format!("{}_{gone}_1_0", this_hosts_prefix());
    let misnamed = format!("{}_{gone}_2_0", this_hosts_prefix());
    let elsewhere = format!("sledge_http_page_h00000000_{gone}_0_0");
    kind.make_table(&url, &stale, Some(&gone_mark(&stale)));
    kind.make_table(&url, &unmarked, None);
    // A mark naming another table does not count for this one.
    kind.make_table(&url, &misnamed, Some(&gone_mark(&stale)));
    kind.make_table(&url, &elsewhere, Some(&gone_mark(&elsewhere)));
    let db = Database::create(&kind.source(&url)).unwrap();
    let ours = db.table().unwrap().to_string();
    assert!(ours.starts_with(&this_hosts_prefix()), "{ours}");
    assert!(!kind.table_exists(&url, &stale), "{stale} left behind");
    for kept in [&unmarked, &misnamed, &elsewhere] {
        assert!(kind.table_exists(&url, kept), "{kept} was dropped");
        kind.drop_table(&url, kept);
    }
    // The page's own table carries its mark: a later sledge could drop it.
    let mark = sledge::monitor::maker_mark::MakerMark::parse(&kind.table_comment(&url, &ours))
        .expect("the page's table is marked");
    assert_eq!(mark.name, ours);
    assert_eq!(mark.maker.pid, std::process::id());
    db.remove().unwrap();
}

#[test]
fn postgres_leftover_tables_are_dropped() {
    leftover_tables_are_dropped(Kind::Postgres);
}

#[test]
fn mysql_leftover_tables_are_dropped() {
    leftover_tables_are_dropped(Kind::Mysql);
}

/// This test binary running one of the database tests against `url`
/// (a port that refuses), with `SLEDGE_TEST_DATABASES` set to `mode`:
/// whether it passed, its stdout and its stderr.
fn run_one_against(test: &str, var: &str, url: &str, mode: Option<&str>) -> (bool, String, String) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([test, "--exact", "--nocapture", "--test-threads", "1"])
        .env(var, url)
        .env_remove("SLEDGE_TEST_DATABASES");
    if let Some(mode) = mode {
        cmd.env("SLEDGE_TEST_DATABASES", mode);
    }
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A database that is down skips its tests with a visible notice, unless
/// SLEDGE_TEST_DATABASES=require, which makes it a failure.
#[test]
fn an_unreachable_database_skips_unless_required() {
    let (held, port) = crate::common::refusing_port();
    for (test, var, url, name) in [
        (
            "http_db::postgres_table_is_dropped",
            "SLEDGE_TEST_POSTGRES",
            format!("postgres://postgres@127.0.0.1:{port}/test"),
            "PostgreSQL",
        ),
        (
            "http_db::mysql_errors_fail_fast",
            "SLEDGE_TEST_MYSQL",
            format!("mysql://root@127.0.0.1:{port}/test"),
            "MariaDB/MySQL",
        ),
    ] {
        let (passed, stdout, stderr) = run_one_against(test, var, &url, None);
        assert!(passed, "{test}: {stdout}{stderr}");
        assert!(stdout.contains("1 passed"), "{test}: {stdout}");
        assert!(
            stderr.contains(&format!(
                "SKIPPED {test}: {name} is not reachable at 127.0.0.1:{port}"
            )),
            "{test}: {stderr}"
        );
        let (passed, stdout, stderr) = run_one_against(test, var, &url, Some("require"));
        assert!(!passed, "{test}: {stdout}{stderr}");
        assert!(stdout.contains("1 failed"), "{test}: {stdout}");
        assert!(
            stderr.contains(&format!(
                "{name} is not reachable at 127.0.0.1:{port}, and SLEDGE_TEST_DATABASES=require"
            )),
            "{test}: {stderr}"
        );
        // A value that means nothing is refused, not taken for "skip".
        let (passed, _, stderr) = run_one_against(test, var, &url, Some("yes"));
        assert!(!passed);
        assert!(
            stderr.contains("SLEDGE_TEST_DATABASES must be `require`"),
            "{stderr}"
        );
    }
    drop(held);
}

/// Without a password in the URL, the MySQL client's own sources give it:
/// `~/.my.cnf`, then `MYSQL_PWD`. A wrong one there makes the login fail
/// with "using password: YES", so it was read and sent.
#[test]
fn mysql_takes_a_password_left_out_of_the_url_from_my_cnf_or_mysql_pwd() {
    let Some(url) = Kind::Mysql.live_url() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let serve = |env: &[(&str, &str)]| {
        let mut cmd = assert_cmd::Command::cargo_bin("sledge").unwrap();
        cmd.current_dir(home.path())
            .env("HOME", home.path())
            .env_remove("MYSQL_PWD")
            .args(["http", "--serve", "127.0.0.1:0", "--db", &url]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.timeout(Duration::from_secs(30)).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = serve(&[("MYSQL_PWD", "wrong-from-env")]);
    assert!(stderr.contains("using password: YES"), "{stderr}");
    assert!(!stderr.contains("wrong-from"), "{stderr}");
    let cnf = home.path().join(".my.cnf");
    std::fs::write(&cnf, "[client]\npassword = wrong-from-file\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cnf, std::fs::Permissions::from_mode(0o600)).unwrap();
    let stderr = serve(&[]);
    assert!(stderr.contains("using password: YES"), "{stderr}");
    assert!(!stderr.contains("wrong-from"), "{stderr}");
}
