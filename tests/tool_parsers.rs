//! Each classic tool's parser proved on the real tool: `sledge run
//! command` runs the tool once, its output also copied to a file by
//! `tee`, and the figures sledge stored for that trial are compared with
//! what the tool printed in that very run, read back from the file by a
//! simple extraction of the test's own (a regex on the text, serde_json
//! on fio's and iperf3's JSON), never by the parser under test.
//!
//! A tool missing from `PATH` skips its test (`SLEDGE_TEST_TOOLS=require`
//! makes that a failure), as does a missing server: nginx and iperf3's
//! server are started by the tests on loopback ports and stopped when
//! they end, pgbench runs on a database made for it on the machine's
//! PostgreSQL and dropped afterwards, redis-benchmark on an empty Redis
//! database that it leaves empty.
//!
//! A trial run beside other load is run once more (the engine replaces a
//! disturbed trial), so the file holds the output of the case's last
//! trial, and that trial's samples are the ones compared.

use std::fs::File;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use regex::Regex;
use serde_json::Value;

use crate::common::{HostNeeds, ONE_TRIAL, Program, Sandbox, TOOLS, metric, required, skip};

/// A tool that hangs fails its test in this time rather than the
/// command workload's default hour.
const TIME_LIMIT: &str = "time_limit=60";

/// How long a server the test starts may take to listen.
const SERVER_START: Duration = Duration::from_secs(10);

/// The part of `TOOLS` one test needs: a host that lacks one tool skips
/// only the tests that run it.
fn tools(names: &[&str]) -> HostNeeds {
    let programs: Vec<Program> = names
        .iter()
        .map(|name| {
            let program = TOOLS
                .programs
                .iter()
                .find(|program| program.names[0] == *name)
                .unwrap_or_else(|| panic!("`{name}` is not a program of common::TOOLS"));
            Program {
                names: program.names,
                package: program.package,
            }
        })
        .collect();
    HostNeeds {
        variable: TOOLS.variable,
        root: None,
        // A few bytes per test, for the lifetime `HostNeeds` asks of its
        // programs.
        programs: programs.leak(),
    }
}

/// Skips the calling test, which needs the server `what` that is not
/// there for `why`, saying so in one line; under
/// `SLEDGE_TEST_TOOLS=require` that is a failure.
#[track_caller]
fn server_missing(what: &str, why: &str) {
    if required(TOOLS.variable) {
        panic!(
            "{}=require but {what} is not reachable: {why}",
            TOOLS.variable
        );
    }
    skip(
        &format!("needs {what}, which is not reachable: {why}"),
        TOOLS.variable,
    );
}

/// `path` quoted for `sh`.
fn quoted(path: &Path) -> String {
    let text = path.to_str().expect("a UTF-8 temporary path");
    shlex::try_quote(text)
        .expect("a path without NUL")
        .into_owned()
}

/// `-p name=value` with `value` in double quotes, so that a comma in it
/// (`-t set,get`) does not make a sweep.
fn param(name: &str, value: &str) -> String {
    format!("{name}=\"{}\"", value.replace('"', "\"\""))
}

/// `sledge run command` of `cmd` with `params`, one trial.
fn sledge_run(sandbox: &Sandbox, cmd: &str, params: &[&str]) -> Output {
    let mut sledge = sandbox.sledge();
    sledge
        .args(["run", "command", "--json"])
        .args(ONE_TRIAL)
        .args(["-p", &param("cmd", cmd), "-p", TIME_LIMIT]);
    for p in params {
        sledge.args(["-p", p]);
    }
    sledge.output().expect("sledge runs")
}

/// The one case of a run that succeeded.
fn only_case(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "sledge failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: Value = serde_json::from_slice(&out.stdout).expect("run --json is JSON");
    let cases = run["cases"].as_array().expect("a run has cases");
    assert_eq!(cases.len(), 1, "{run}");
    assert!(cases[0]["error"].is_null(), "{}", cases[0]);
    cases[0].clone()
}

/// What one run of a tool through `sledge run command` left: the case
/// sledge stored and the tool's own output of that trial.
struct ToolRun {
    case: Value,
    printed: String,
}

impl ToolRun {
    /// Runs `tool_cmd` (a shell line starting with the tool) with
    /// `params`, its standard output also written to a file by `tee`.
    fn new(sandbox: &Sandbox, tool_cmd: &str, params: &[&str]) -> ToolRun {
        let printed_file = sandbox.path().join("printed.txt");
        let cmd = format!("{tool_cmd} | tee {}", quoted(&printed_file));
        let printed_case = only_case(&sledge_run(sandbox, &cmd, params));
        // What the store holds, read back as `show` reads it.
        let run = sandbox.show_last();
        let case = run["cases"][0].clone();
        assert_eq!(case["metrics"], printed_case["metrics"], "{run}");
        let printed =
            std::fs::read_to_string(&printed_file).expect("the tool's output, as tee wrote it");
        ToolRun { case, printed }
    }

    /// Asserts that the case read its figures with the parser `parser`
    /// was given as (`auto` or a name) and that `headline` came first.
    #[track_caller]
    fn assert_read_by(&self, parser: &str, headline: &str) {
        assert_eq!(self.case["params"]["parser"], parser, "{}", self.case);
        assert_eq!(self.case["metrics"][0]["name"], headline, "{}", self.case);
    }

    /// The sample of `name` that the case's last trial stored, after
    /// checking its unit.
    #[track_caller]
    fn stored(&self, name: &str, unit: &str) -> f64 {
        let trials = self.case["trials"].as_array().expect("a case has trials");
        let last = trials.len().checked_sub(1).expect("a trial ran");
        assert_eq!(trials[last]["replaced"], false, "{}", self.case);
        let metric = metric(&self.case, name);
        assert_eq!(metric["unit"], unit, "the unit of {name}");
        metric["samples"][last]
            .as_f64()
            .unwrap_or_else(|| panic!("no sample {last} of {name}: {metric}"))
    }

    /// Asserts that sledge stored exactly the figure the tool printed.
    #[track_caller]
    fn assert_same(&self, name: &str, unit: &str, printed: f64) {
        let stored = self.stored(name, unit);
        eprintln!("{name}: stored {stored} {unit}, printed {printed}");
        assert_eq!(
            stored, printed,
            "{name}; the tool printed:\n{}",
            self.printed
        );
    }

    /// Asserts that sledge stored the tool's figure `printed` (as the
    /// text shows it: `393.44`) times `scale`, the parser's change of
    /// unit, within half a unit of the text's last digit.
    #[track_caller]
    fn assert_converted(&self, name: &str, unit: &str, printed: &str, scale: f64) {
        let stored = self.stored(name, unit);
        let value: f64 = printed.parse().expect("a printed number");
        let decimals = printed
            .split_once('.')
            .map_or(0, |(_, fraction)| fraction.len());
        let half_digit = 0.5 * 10f64.powi(-(decimals as i32)) * scale;
        eprintln!("{name}: stored {stored} {unit}, printed {printed} (x {scale})");
        assert!(
            (stored - value * scale).abs() <= half_digit * (1.0 + 1e-9),
            "{name}: stored {stored}, printed {printed} x {scale}; the tool printed:\n{}",
            self.printed
        );
    }

    /// The groups of the first match of `pattern` (multi-line) in the
    /// tool's output.
    #[track_caller]
    fn groups(&self, pattern: &str) -> Vec<&str> {
        let regex = Regex::new(&format!("(?m){pattern}")).expect("a test's pattern");
        let found = regex
            .captures(&self.printed)
            .unwrap_or_else(|| panic!("no `{pattern}` in the tool's output:\n{}", self.printed));
        found
            .iter()
            .skip(1)
            .map(|group| group.map_or("", |m| m.as_str()))
            .collect()
    }

    /// The first group of `pattern`, as a number.
    #[track_caller]
    fn number(&self, pattern: &str) -> f64 {
        let text = self.groups(pattern)[0];
        text.parse()
            .unwrap_or_else(|_| panic!("`{text}` of `{pattern}` is no number"))
    }

    /// The first JSON document in the tool's output (fio may print notes
    /// before it).
    fn json(&self) -> Value {
        let start = self.printed.find('{').expect("JSON in the tool's output");
        serde_json::Deserializer::from_str(&self.printed[start..])
            .into_iter::<Value>()
            .next()
            .expect("a JSON document")
            .expect("the tool's JSON parses")
    }
}

/// The number at `pointer` of `json`.
#[track_caller]
fn at(json: &Value, pointer: &str) -> f64 {
    json.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {pointer} of the tool's JSON"))
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Whether a TCP socket of this network namespace listens on `port`,
/// read from `/proc/net/tcp{,6}` so that no connection is made to find
/// out (iperf3's server takes any connection for a test).
fn listening(port: u16) -> bool {
    const LISTEN: &str = "0A";
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|table| {
        std::fs::read_to_string(table).is_ok_and(|text| {
            text.lines().skip(1).any(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let local_port = fields
                    .get(1)
                    .and_then(|local| local.rsplit_once(':'))
                    .and_then(|(_, hex)| u16::from_str_radix(hex, 16).ok());
                local_port == Some(port) && fields.get(3) == Some(&LISTEN)
            })
        })
    })
}

/// A server a test started: killed and reaped when the test ends, passed
/// or failed.
struct Server {
    child: Child,
}

impl Server {
    /// Starts `command`, its output in `log`, and waits until it listens
    /// on `port`.
    fn start(command: &mut Command, port: u16, log: &Path) -> Server {
        let out = File::create(log).expect("the server's log");
        let err = out.try_clone().expect("the server's log, twice");
        let child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {command:?}: {e}"));
        let mut server = Server { child };
        let deadline = Instant::now() + SERVER_START;
        while !listening(port) {
            let log_text = || std::fs::read_to_string(log).unwrap_or_default();
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "{command:?} ended ({status}) before it listened on {port}:\n{}",
                    log_text()
                );
            }
            assert!(
                Instant::now() < deadline,
                "{command:?} did not listen on {port} within {SERVER_START:?}:\n{}",
                log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// nginx on a loopback port of its own, configured in `dir`: one
/// process (no master, so that killing it leaves no worker), no access
/// log, a short page at `/`. Returns the server and its URL.
fn nginx(dir: &Path) -> (Server, String) {
    let port = free_port();
    let nginx_dir = dir.join("nginx");
    std::fs::create_dir(&nginx_dir).expect("nginx's directory");
    let at = |name: &str| nginx_dir.join(name).display().to_string();
    // Every path nginx writes is in its directory, so that it needs
    // neither root nor Debian's /var/lib/nginx.
    let config = format!(
        "daemon off;\nmaster_process off;\npid {pid};\nerror_log {log};\n\
         events {{ worker_connections 256; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {body};\n  proxy_temp_path {proxy};\n\
         \x20 fastcgi_temp_path {fastcgi};\n  uwsgi_temp_path {uwsgi};\n  scgi_temp_path {scgi};\n\
         \x20 server {{\n    listen 127.0.0.1:{port};\n    location / {{ return 200 \"a page for the tool tests\\n\"; }}\n  }}\n}}\n",
        pid = at("nginx.pid"),
        log = at("error.log"),
        body = at("body"),
        proxy = at("proxy"),
        fastcgi = at("fastcgi"),
        uwsgi = at("uwsgi"),
        scgi = at("scgi"),
    );
    let config_file = nginx_dir.join("nginx.conf");
    std::fs::write(&config_file, config).expect("nginx's configuration");
    let server = Server::start(
        Command::new("nginx")
            .arg("-p")
            .arg(&nginx_dir)
            .arg("-c")
            .arg(&config_file)
            .arg("-e")
            .arg(at("error.log")),
        port,
        &nginx_dir.join("output.log"),
    );
    (server, format!("http://127.0.0.1:{port}/"))
}

#[test]
fn fio_figures_are_the_ones_fio_printed() {
    if !tools(&["fio"]).met() {
        return;
    }
    let sandbox = Sandbox::new();
    let run = ToolRun::new(
        &sandbox,
        &format!(
            "fio --output-format=json --name=tiny --rw=randread --bs=4k --size=4M --directory={}",
            quoted(sandbox.path())
        ),
        &[],
    );
    run.assert_read_by("auto", "read_iops");
    let read = &run.json()["jobs"][0]["read"];
    run.assert_same("read_iops", "ios/s", at(read, "/iops"));
    run.assert_same(
        "read_bw",
        "MiB/s",
        at(read, "/bw_bytes") / (1024.0 * 1024.0),
    );
    run.assert_same(
        "read_clat_p99",
        "µs",
        at(read, "/clat_ns/percentile/99.000000") / 1e3,
    );
    // The parser weights the mean by the I/O count, which for one job
    // may round in the last bit.
    let mean = at(read, "/clat_ns/mean") / 1e3;
    let stored = run.stored("read_clat_mean", "µs");
    assert!((stored - mean).abs() <= mean * 1e-12, "{stored} {mean}");
}

#[test]
fn an_explicit_parser_reads_a_tool_the_command_does_not_start_with() {
    if !tools(&["fio"]).met() {
        return;
    }
    let sandbox = Sandbox::new();
    let fio = format!(
        "env fio --output-format=json --name=tiny --rw=write --bs=4k --size=4M --directory={}",
        quoted(sandbox.path())
    );
    let run = ToolRun::new(&sandbox, &fio, &["parser=fio"]);
    run.assert_read_by("fio", "write_iops");
    let write = &run.json()["jobs"][0]["write"];
    run.assert_same("write_iops", "ios/s", at(write, "/iops"));
    run.assert_same(
        "write_bw",
        "MiB/s",
        at(write, "/bw_bytes") / (1024.0 * 1024.0),
    );
    run.assert_same(
        "write_clat_p50",
        "µs",
        at(write, "/clat_ns/percentile/50.000000") / 1e3,
    );
    // Left to choose, the workload sees `env`, which is no tool: the
    // command is timed and nothing is read from its output.
    let case = only_case(&sledge_run(&sandbox, &fio, &[]));
    let names: Vec<&str> = case["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .map(|m| m["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(names, ["wall", "user", "system", "max_rss"], "{case}");
}

#[test]
fn sysbench_cpu_and_memory_figures_are_the_ones_sysbench_printed() {
    if !tools(&["sysbench"]).met() {
        return;
    }
    let sandbox = Sandbox::new();
    let cpu = ToolRun::new(
        &sandbox,
        "sysbench cpu --cpu-max-prime=2000 --events=2000 --time=0 run",
        &[],
    );
    cpu.assert_read_by("auto", "events_per_sec");
    cpu.assert_same(
        "events_per_sec",
        "events/s",
        cpu.number(r"events per second:\s+([0-9.]+)$"),
    );
    cpu.assert_same("total_time", "s", cpu.number(r"total time:\s+([0-9.]+)s$"));
    cpu.assert_same(
        "events",
        "events",
        cpu.number(r"total number of events:\s+([0-9]+)$"),
    );
    cpu.assert_same("latency_avg", "ms", cpu.number(r"^\s+avg:\s+([0-9.]+)$"));
    cpu.assert_same(
        "latency_p95",
        "ms",
        cpu.number(r"95th percentile:\s+([0-9.]+)$"),
    );

    let memory = ToolRun::new(&sandbox, "sysbench memory --memory-total-size=64M run", &[]);
    memory.assert_read_by("auto", "mib_per_sec");
    memory.assert_same(
        "mib_per_sec",
        "MiB/s",
        memory.number(r"MiB transferred \(([0-9.]+) MiB/sec\)$"),
    );
    memory.assert_same(
        "operations_per_sec",
        "ops/s",
        memory.number(r"^Total operations: [0-9]+ \(([0-9.]+) per second\)$"),
    );
    memory.assert_same(
        "events",
        "events",
        memory.number(r"total number of events:\s+([0-9]+)$"),
    );
}

#[test]
fn stress_ng_figures_are_the_ones_stress_ng_printed() {
    if !tools(&["stress-ng"]).met() {
        return;
    }
    let sandbox = Sandbox::new();
    let run = ToolRun::new(
        &sandbox,
        "stress-ng --cpu 1 -t 1 --metrics-brief --stdout",
        &[],
    );
    run.assert_read_by("auto", "cpu_bogo_ops_per_sec_real");
    // `stress-ng: metrc: [PID] cpu  744  1.00  0.61  0.00  742.78  1226.66`:
    // bogo ops, real, user and system seconds, then the two rates.
    let row = run.groups(r"metrc: \[[0-9]+\] cpu\s+(\S+)\s+\S+\s+\S+\s+\S+\s+(\S+)\s+(\S+)\s*$");
    let figure = |i: usize| row[i].parse::<f64>().expect("a figure of the row");
    run.assert_same("cpu_bogo_ops_per_sec_real", "bogo ops/s", figure(1));
    run.assert_same("cpu_bogo_ops_per_sec_usr_sys", "bogo ops/s", figure(2));
    run.assert_same("cpu_bogo_ops", "bogo ops", figure(0));
}

#[test]
fn wrk_figures_are_the_ones_wrk_printed() {
    if !tools(&["wrk", "nginx"]).met() {
        return;
    }
    let sandbox = Sandbox::new();
    let (_nginx, url) = nginx(sandbox.path());
    let run = ToolRun::new(&sandbox, &format!("wrk -t1 -c4 -d1s --latency {url}"), &[]);
    run.assert_read_by("auto", "requests_per_sec");
    run.assert_same(
        "requests_per_sec",
        "req/s",
        run.number(r"^Requests/sec:\s+([0-9.]+)$"),
    );
    run.assert_same(
        "requests",
        "requests",
        run.number(r"^\s+([0-9]+) requests in "),
    );
    // wrk writes each time in the unit that suits it; sledge stores ms.
    let in_ms = |unit: &str| match unit {
        "us" => 1e-3,
        "ms" => 1.0,
        "s" => 1e3,
        other => panic!("a wrk time in `{other}`"),
    };
    let latency =
        run.groups(r"^\s+Latency\s+([0-9.]+)(us|ms|s)\s+([0-9.]+)(us|ms|s)\s+([0-9.]+)(us|ms|s)");
    run.assert_converted("latency_avg", "ms", latency[0], in_ms(latency[1]));
    run.assert_converted("latency_max", "ms", latency[4], in_ms(latency[5]));
    for percent in ["50", "99"] {
        let printed = run.groups(&format!(r"^\s+{percent}%\s+([0-9.]+)(us|ms|s)$"));
        let name = format!("latency_p{percent}");
        run.assert_converted(&name, "ms", printed[0], in_ms(printed[1]));
    }
    // wrk's `KB` and `MB` are powers of 1024.
    let transfer = run.groups(r"^Transfer/sec:\s+([0-9.]+)(B|KB|MB|GB)$");
    let in_mib = match transfer[1] {
        "B" => 1.0 / (1024.0 * 1024.0),
        "KB" => 1.0 / 1024.0,
        "MB" => 1.0,
        _ => 1024.0,
    };
    run.assert_converted("transfer_per_sec", "MiB/s", transfer[0], in_mib);
}

#[test]
fn ab_figures_are_the_ones_ab_printed() {
    if !tools(&["ab", "nginx"]).met() {
        return;
    }
    let sandbox = Sandbox::new();
    let (_nginx, url) = nginx(sandbox.path());
    let run = ToolRun::new(&sandbox, &format!("ab -n 2000 -c 4 {url}"), &[]);
    run.assert_read_by("auto", "requests_per_sec");
    run.assert_same(
        "requests_per_sec",
        "req/s",
        run.number(r"^Requests per second:\s+([0-9.]+) "),
    );
    run.assert_same(
        "time_per_request",
        "ms",
        run.number(r"^Time per request:\s+([0-9.]+) \[ms\] \(mean\)$"),
    );
    run.assert_same(
        "complete_requests",
        "requests",
        run.number(r"^Complete requests:\s+([0-9]+)$"),
    );
    run.assert_same(
        "time_taken",
        "s",
        run.number(r"^Time taken for tests:\s+([0-9.]+) seconds$"),
    );
    // ab's Kbytes are KiB.
    let transfer = run.groups(r"^Transfer rate:\s+([0-9.]+) \[Kbytes/sec\]")[0];
    run.assert_converted("transfer_rate", "MiB/s", transfer, 1.0 / 1024.0);
}

#[test]
fn iperf3_figures_are_the_ones_iperf3_printed() {
    if !tools(&["iperf3"]).met() {
        return;
    }
    let sandbox = Sandbox::new();
    let port = free_port();
    // Not `-1`: a disturbed trial runs the client a second time.
    let _server = Server::start(
        Command::new("iperf3").args(["-s", "-B", "127.0.0.1", "-p", &port.to_string()]),
        port,
        &sandbox.path().join("iperf3-server.log"),
    );
    let run = ToolRun::new(
        &sandbox,
        &format!("iperf3 -c 127.0.0.1 -p {port} -t 1 -J"),
        &[],
    );
    run.assert_read_by("auto", "receiver_bitrate");
    let end = &run.json()["end"];
    run.assert_same(
        "receiver_bitrate",
        "Mbit/s",
        at(end, "/sum_received/bits_per_second") / 1e6,
    );
    run.assert_same(
        "sender_bitrate",
        "Mbit/s",
        at(end, "/sum_sent/bits_per_second") / 1e6,
    );
    run.assert_same("retransmits", "segments", at(end, "/sum_sent/retransmits"));
    run.assert_same(
        "cpu_host_total",
        "%",
        at(end, "/cpu_utilization_percent/host_total"),
    );
}

/// The PostgreSQL server of the database tests (docs/testing.md).
fn postgres_admin_url() -> String {
    std::env::var("SLEDGE_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// A database made for pgbench, dropped with its connections when the
/// test ends, passed or failed.
struct PgbenchDatabase {
    name: String,
    url: String,
}

impl PgbenchDatabase {
    /// A new empty database, or why none could be made.
    fn create() -> Result<PgbenchDatabase, String> {
        let admin = postgres_admin_url();
        let shown = sledge::secrets::redact(&admin);
        let mut client = postgres::Client::connect(&admin, postgres::NoTls)
            .map_err(|e| format!("PostgreSQL at {shown}: {e}"))?;
        let name = format!("sledge_tools_{}", std::process::id());
        client
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .and_then(|()| client.batch_execute(&format!("CREATE DATABASE {name}")))
            .map_err(|e| format!("creating database {name} at {shown}: {e}"))?;
        let (head, query) = admin
            .split_once('?')
            .map_or((admin.as_str(), None), |(h, q)| (h, Some(q)));
        let server = head.rsplit_once('/').map_or(head, |(server, _)| server);
        let url = match query {
            Some(query) => format!("{server}/{name}?{query}"),
            None => format!("{server}/{name}"),
        };
        Ok(PgbenchDatabase { name, url })
    }

    /// Whether the server still has the database.
    fn exists(name: &str) -> bool {
        let mut client = postgres::Client::connect(&postgres_admin_url(), postgres::NoTls)
            .expect("PostgreSQL, again");
        let row = client
            .query_one(
                "SELECT count(*) FROM pg_database WHERE datname = $1",
                &[&name],
            )
            .expect("pg_database");
        row.get::<_, i64>(0) > 0
    }
}

impl Drop for PgbenchDatabase {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&postgres_admin_url(), postgres::NoTls) {
            let _ = client.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

#[test]
fn pgbench_figures_are_the_ones_pgbench_printed() {
    if !tools(&["pgbench"]).met() {
        return;
    }
    let database = match PgbenchDatabase::create() {
        Ok(database) => database,
        Err(why) => return server_missing("a PostgreSQL server", &why),
    };
    let url = shlex::try_quote(&database.url)
        .expect("a URL without NUL")
        .into_owned();
    let init = Command::new("pgbench")
        .args(["-i", "-q", "-s", "1", &database.url])
        .output()
        .expect("pgbench -i");
    assert!(
        init.status.success(),
        "pgbench -i: {}",
        String::from_utf8_lossy(&init.stderr)
    );

    let sandbox = Sandbox::new();
    let run = ToolRun::new(&sandbox, &format!("pgbench -c 2 -j 2 -t 50 {url}"), &[]);
    run.assert_read_by("auto", "tps");
    run.assert_same(
        "tps",
        "tx/s",
        run.number(r"^tps = ([0-9.]+) \(without initial connection time\)$"),
    );
    // `-t` prints the processed count over the planned one: `100/100`.
    run.assert_same(
        "transactions",
        "transactions",
        run.number(r"^number of transactions actually processed: ([0-9]+)/"),
    );
    run.assert_same(
        "latency_average",
        "ms",
        run.number(r"^latency average = ([0-9.]+) ms$"),
    );
    run.assert_same(
        "initial_connection_time",
        "ms",
        run.number(r"^initial connection time = ([0-9.]+) ms$"),
    );

    let name = database.name.clone();
    drop(database);
    assert!(!PgbenchDatabase::exists(&name), "database {name} is left");
}

const REDIS: &str = "127.0.0.1:6379";

/// The one key redis-benchmark's SET and GET tests use without `-r`.
const REDIS_BENCHMARK_KEY: &str = "key:__rand_int__";

/// `redis-cli` against the machine's Redis, database `db`: its answer.
fn redis_cli(db: u32, args: &[&str]) -> Result<String, String> {
    let (host, port) = REDIS.split_once(':').expect("host:port");
    let out = Command::new("redis-cli")
        .args(["-h", host, "-p", port, "-n", &db.to_string()])
        .args(args)
        .output()
        .map_err(|e| format!("redis-cli: {e}"))?;
    let answer = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || answer.starts_with("ERR") {
        return Err(format!(
            "redis-cli {args:?}: {answer}{}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(answer)
}

/// An empty database of the machine's Redis that redis-benchmark may
/// write to: what the benchmark writes is deleted when the test ends,
/// passed or failed.
struct RedisDatabase {
    number: u32,
}

impl RedisDatabase {
    /// The highest-numbered empty database (Redis has 16 unless
    /// configured otherwise; the test leaves 0 to the machine's users), or
    /// why there is none.
    fn empty() -> Result<RedisDatabase, String> {
        let address: SocketAddr = REDIS.parse().expect("an address");
        TcpStream::connect_timeout(&address, Duration::from_secs(2))
            .map_err(|e| format!("Redis at {REDIS}: {e}"))?;
        for number in (1..16).rev() {
            if redis_cli(number, &["dbsize"])? == "0" {
                return Ok(RedisDatabase { number });
            }
        }
        Err(format!(
            "Redis at {REDIS} has no empty database among 1 to 15"
        ))
    }
}

impl Drop for RedisDatabase {
    fn drop(&mut self) {
        let _ = redis_cli(self.number, &["del", REDIS_BENCHMARK_KEY]);
    }
}

#[test]
fn redis_benchmark_figures_are_the_ones_redis_benchmark_printed() {
    if !tools(&["redis-benchmark", "redis-cli"]).met() {
        return;
    }
    let database = match RedisDatabase::empty() {
        Ok(database) => database,
        Err(why) => return server_missing("a Redis server", &why),
    };
    let (host, port) = REDIS.split_once(':').expect("host:port");
    let sandbox = Sandbox::new();
    let run = ToolRun::new(
        &sandbox,
        &format!(
            "redis-benchmark -h {host} -p {port} --dbnum {} -n 2000 -c 4 -t set,get --csv",
            database.number
        ),
        &[],
    );
    run.assert_read_by("auto", "SET_rps");
    // `"test","rps","avg_latency_ms",...` then `"SET","38461.54","1.154",...`.
    let rows: Vec<Vec<&str>> = run
        .printed
        .lines()
        .map(|line| line.trim_matches('"').split("\",\"").collect())
        .collect();
    let header = rows
        .iter()
        .find(|row| row[0] == "test")
        .expect("redis-benchmark's CSV header");
    let figure = |test: &str, column: &str| -> f64 {
        let row = rows
            .iter()
            .find(|row| row[0] == test)
            .unwrap_or_else(|| panic!("no {test} row in:\n{}", run.printed));
        let at = header
            .iter()
            .position(|name| *name == column)
            .unwrap_or_else(|| panic!("no {column} column in {header:?}"));
        row[at].parse().expect("a figure")
    };
    run.assert_same("SET_rps", "req/s", figure("SET", "rps"));
    run.assert_same("SET_avg_latency_ms", "ms", figure("SET", "avg_latency_ms"));
    run.assert_same("GET_rps", "req/s", figure("GET", "rps"));
    run.assert_same("GET_p99_latency_ms", "ms", figure("GET", "p99_latency_ms"));

    let number = database.number;
    drop(database);
    assert_eq!(
        redis_cli(number, &["dbsize"]).expect("redis-cli dbsize"),
        "0",
        "the benchmark left keys in Redis database {number}"
    );
}

#[test]
fn output_a_parser_cannot_read_fails_the_trial_saying_what_the_tool_needs() {
    if !tools(&["fio", "stress-ng"]).met() {
        return;
    }
    let sandbox = Sandbox::new();
    let failure = |cmd: &str, params: &[&str]| {
        let out = sledge_run(&sandbox, cmd, params);
        assert!(!out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = failure("fio --version", &["parser=fio"]);
    assert!(
        err.contains(
            "the fio parser could not read the command's output: no JSON object in fio's output"
        ),
        "{err}"
    );
    assert!(
        err.contains("`fio` prints with --output-format=json"),
        "{err}"
    );
    // stress-ng writes its metrics to stderr unless told otherwise.
    let err = failure("stress-ng --cpu 1 --cpu-ops 100 --metrics-brief", &[]);
    assert!(
        err.contains("the stress-ng parser could not read the command's output: no metrics table"),
        "{err}"
    );
    assert!(err.contains("--stdout"), "{err}");
    // The error is the case's, stored with the run.
    let run = sandbox.show_last();
    let stored = run["cases"][0]["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{run}"));
    assert!(stored.contains("the stress-ng parser"), "{stored}");
}
