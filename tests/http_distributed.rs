//! A load from several client hosts, with the agents as child processes
//! of the sledge binary (the same protocol as over ssh, through pipes)
//! against the built-in server on loopback. Every load is bounded in time.

use std::process::Command;
use std::time::{Duration, Instant};

use sledge::engine::CancelToken;
use sledge::http::distributed::{self, AgentLoad, LocalAgents, SshAgents, Transport, WireRate};
use sledge::http::{Server, ServerConfig};

use crate::common::Sandbox;
use crate::netns_hosts::NetnsHosts;

fn server() -> Server {
    Server::start(&ServerConfig {
        sizes: vec![1, 2048],
        ..ServerConfig::loopback()
    })
    .expect("server starts")
}

fn sledge_binary() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("sledge")
}

/// The environment variable that tells one test's agents from the
/// others' (the tests run in parallel in this process).
const TAG: &str = "SLEDGE_TEST_AGENT_TAG";

/// Agents of `inner` marked with `tag` in their environment.
struct Tagged<T> {
    tag: &'static str,
    inner: T,
}

impl<T: Transport> Transport for Tagged<T> {
    fn agent_command(&self, host: &str) -> anyhow::Result<Command> {
        let mut command = self.inner.agent_command(host)?;
        command.env(TAG, self.tag);
        Ok(command)
    }
}

fn local(tag: &'static str) -> Tagged<LocalAgents> {
    Tagged {
        tag,
        inner: LocalAgents {
            program: sledge_binary(),
        },
    }
}

fn hosts(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// A closed loop of `connections` per host for `seconds`, 1 s timeout.
fn load(url: String, connections: usize, seconds: f64) -> AgentLoad {
    AgentLoad {
        urls: vec![url],
        connections,
        threads: Some(1),
        keep_alive: true,
        think_s: 0.0,
        rate: None,
        timeout_s: Some(1.0),
        duration_s: seconds,
        requests: None,
    }
}

/// Agents of the test `tag` still running as children of this process.
fn agents_left(tag: &str) -> Vec<String> {
    tagged_processes(tag, Some(std::process::id()))
}

/// Processes with `tag` in their environment, children of `parent` (or
/// of anyone).
fn tagged_processes(tag: &str, parent: Option<u32>) -> Vec<String> {
    let me = parent.map(|p| p.to_string());
    let mut left = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let dir = entry.path();
        let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else {
            continue;
        };
        // The parent's pid is the 2nd field after the command's `)`.
        let Some(after) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let ppid = after.split_whitespace().nth(1).unwrap_or("");
        let cmdline = std::fs::read_to_string(dir.join("cmdline")).unwrap_or_default();
        let environ = std::fs::read(dir.join("environ")).unwrap_or_default();
        let marked = environ
            .split(|&b| b == 0)
            .any(|v| v == format!("{TAG}={tag}").as_bytes());
        if me.as_deref().is_none_or(|me| me == ppid) && marked {
            left.push(cmdline.replace('\0', " "));
        }
    }
    left
}

#[test]
fn three_hosts_merge_exactly() {
    let srv = server();
    let load = AgentLoad {
        requests: Some(3000),
        ..load(srv.url("/static/1"), 2, 20.0)
    };
    let report = distributed::run(
        &local("merge"),
        &hosts(&["h1", "h2", "h3"]),
        &load,
        &CancelToken::new(),
    )
    .unwrap();
    assert_eq!(report.failed_hosts, 0);
    assert!(!report.interrupted);
    let parts: Vec<_> = report
        .hosts
        .iter()
        .map(|h| h.report.as_ref().expect("every host finished"))
        .collect();
    // The request count was split 1000 each, and nothing was lost.
    for p in &parts {
        assert_eq!(p.responses, 1000);
        assert_eq!(p.errors.total(), 0);
    }
    let merged = report.merged.as_ref().unwrap();
    assert_eq!(
        merged.responses,
        parts.iter().map(|p| p.responses).sum::<u64>()
    );
    assert_eq!(merged.responses, 3000);
    assert_eq!(merged.sent, parts.iter().map(|p| p.sent).sum::<u64>());
    assert_eq!(merged.bytes, parts.iter().map(|p| p.bytes).sum::<u64>());
    assert_eq!(merged.connections, 6);
    // The merged histogram is the hosts' added count for count, so its
    // percentiles are those of every request.
    let mut all = parts[0].tally.latency.clone();
    for p in &parts[1..] {
        all.add(&p.tally.latency).unwrap();
    }
    assert_eq!(merged.tally.latency, all);
    assert_eq!(merged.latency.count, 3000);
    assert_eq!(
        merged.latency.p99_ms,
        all.value_at_quantile(0.99) as f64 / 1e6
    );
    // Each host's clock was measured (the same clock here: the offset is
    // within the round trip) and its start was close to the agreed one.
    for h in &report.hosts {
        let clock = h.clock.expect("clock measured");
        assert_eq!(clock.exchanges, 8);
        assert!(
            clock.offset_ns.abs() <= clock.round_trip_ns.max(1_000_000),
            "{clock:?}"
        );
        assert!(h.started_late_s.unwrap() < 0.25, "{h:?}");
    }
    assert!(
        agents_left("merge").is_empty(),
        "{:?}",
        agents_left("merge")
    );
}

#[test]
fn an_open_loop_rate_is_split_over_the_hosts() {
    let srv = server();
    // 60 requests/s in total from 2 hosts of 2 connections, for 1 s.
    let load = AgentLoad {
        rate: Some(WireRate::Total(60.0)),
        ..load(srv.url("/static/1"), 2, 1.0)
    };
    let report = distributed::run(
        &local("rate"),
        &hosts(&["a", "b"]),
        &load,
        &CancelToken::new(),
    )
    .unwrap();
    for h in &report.hosts {
        let r = h.report.as_ref().unwrap();
        assert_eq!(r.mode, "open");
        assert_eq!(r.requested_rate, Some(30.0));
        // A schedule of 30/s over 1 s: about 30 requests, each due.
        assert!((25..=32).contains(&r.sent), "{} sent", r.sent);
    }
    let merged = report.merged.unwrap();
    assert_eq!(merged.requested_rate, Some(60.0));
    assert!(merged.latency_from_send.is_some());
}

/// Agents through a shell, so that one host can misbehave.
struct Scripted {
    scripts: Vec<(&'static str, String)>,
}

impl Transport for Scripted {
    fn agent_command(&self, host: &str) -> anyhow::Result<Command> {
        let script = self
            .scripts
            .iter()
            .find(|(h, _)| *h == host)
            .map(|(_, s)| s.clone())
            .unwrap_or_else(|| format!("exec '{}' __http-agent", sledge_binary().display()));
        let mut command = Command::new("sh");
        command.args(["-c", &script]);
        Ok(command)
    }
}

#[test]
fn a_host_that_cannot_start_fails_the_load_by_name_before_any_request() {
    let srv = server();
    let transport = Scripted {
        scripts: vec![(
            "broken",
            "echo 'sledge: command not found' >&2; exit 127".into(),
        )],
    };
    let started = Instant::now();
    let err = distributed::run(
        &Tagged {
            tag: "start",
            inner: transport,
        },
        &hosts(&["ok1", "broken", "ok2"]),
        &load(srv.url("/static/1"), 1, 5.0),
        &CancelToken::new(),
    )
    .unwrap_err();
    let text = format!("{err:#}");
    assert!(text.contains("broken: its agent ended"), "{text}");
    assert!(text.contains("command not found"), "{text}");
    assert!(text.contains("nothing was sent to the server"), "{text}");
    assert!(!text.contains("ok1"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        agents_left("start").is_empty(),
        "{:?}",
        agents_left("start")
    );
}

#[test]
fn a_host_that_dies_midway_is_named_and_the_others_are_kept() {
    let srv = server();
    // The agent of `dies` is killed 1.5 s into a 3 s load.
    let transport = Scripted {
        scripts: vec![(
            "dies",
            format!(
                "exec timeout -s KILL 1.5 '{}' __http-agent",
                sledge_binary().display()
            ),
        )],
    };
    let started = Instant::now();
    let report = distributed::run(
        &Tagged {
            tag: "midway",
            inner: transport,
        },
        &hosts(&["h1", "dies", "h3"]),
        &load(srv.url("/static/1"), 1, 3.0),
        &CancelToken::new(),
    )
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(report.failed_hosts, 1);
    let dead = &report.hosts[1];
    assert_eq!(dead.host, "dies");
    let why = dead.failure.as_deref().unwrap();
    assert!(why.contains("ended without a result"), "{why}");
    assert!(dead.report.is_none());
    let merged = report.merged.as_ref().unwrap();
    let kept: u64 = [&report.hosts[0], &report.hosts[2]]
        .iter()
        .map(|h| h.report.as_ref().unwrap().responses)
        .sum();
    assert!(kept > 0);
    assert_eq!(merged.responses, kept);
    assert!(
        agents_left("midway").is_empty(),
        "{:?}",
        agents_left("midway")
    );
}

#[test]
fn a_cancel_stops_every_agent_and_keeps_what_they_measured() {
    let srv = server();
    let cancel = CancelToken::new();
    let stopper = {
        let cancel = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1500));
            cancel.cancel();
        })
    };
    let started = Instant::now();
    let report = distributed::run(
        &local("cancel"),
        &hosts(&["a", "b"]),
        &load(srv.url("/static/1"), 1, 30.0),
        &cancel,
    )
    .unwrap();
    stopper.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(15));
    assert!(report.interrupted);
    assert_eq!(report.failed_hosts, 0, "{:?}", report.hosts);
    assert!(report.merged.unwrap().responses > 0);
    assert!(
        agents_left("cancel").is_empty(),
        "{:?}",
        agents_left("cancel")
    );
}

#[test]
fn the_cli_prints_each_host_and_the_merged_sum() {
    let srv = server();
    let out = Sandbox::new()
        .sledge()
        .args([
            "http",
            "-c",
            "1",
            "-n",
            "300",
            "--from",
            "a,b,c",
            "--from-local",
        ])
        .args(["--json", &srv.url("/static/2048")])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hosts = v["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 3);
    let sum: u64 = hosts
        .iter()
        .map(|h| h["report"]["responses"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, 300);
    assert_eq!(v["merged"]["responses"], 300);
    assert_eq!(v["merged"]["latency"]["count"], 300);
    assert_eq!(v["failed_hosts"], 0);
    assert!(hosts.iter().all(|h| h["clock"]["exchanges"] == 8));

    let out = Sandbox::new()
        .sledge()
        .args([
            "http",
            "-c",
            "1",
            "-n",
            "100",
            "--from",
            "x,y",
            "--from-local",
        ])
        .arg(srv.url("/static/1"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("2 client host(s)"), "{text}");
    assert!(text.contains("merged over 2 host(s)"), "{text}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("x ")),
        "{text}"
    );
}

#[test]
fn bad_host_lists_are_usage_errors_naming_the_host() {
    for (list, expected) in [
        ("a,,b", "host list `a,,b`: entry 2 is empty"),
        (
            "a,-oProxyCommand=x",
            "host `-oProxyCommand=x`: a host name must be",
        ),
        ("a,a", "`a` appears twice"),
        ("u@h1:0", "host `u@h1:0`: port `0` is not a number"),
    ] {
        Sandbox::new()
            .sledge()
            .args(["http", "-d", "1", "--from", list, "http://198.18.0.1:9/"])
            .timeout(Duration::from_secs(30))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(expected));
    }
    // Loopback on a client host is the client itself, in every form, and
    // so is the unspecified address.
    for url in [
        "http://127.0.0.1:9/",
        "http://127.3.2.1:9/",
        "http://0.0.0.0:9/",
        "http://[::1]:9/",
        "http://[::]:9/",
        "http://[::ffff:127.0.0.1]:9/",
        "http://[::ffff:7f00:1]:9/",
        "http://[::ffff:0.0.0.0]:9/",
    ] {
        Sandbox::new()
            .sledge()
            .args(["http", "-d", "1", "--from", "u@h1", url])
            .timeout(Duration::from_secs(30))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(format!(
                "{url} is a loopback address"
            )));
    }
    // The sledge to run there is either named or copied, not both.
    Sandbox::new()
        .sledge()
        .args(["http", "-d", "1", "--from", "u@h1", "--remote-dir", "d"])
        .args(["--remote-sledge", "/usr/bin/sledge", "http://198.18.0.1:9/"])
        .timeout(Duration::from_secs(30))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--remote-sledge"))
        .stderr(predicates::str::contains("--remote-dir"));
    Sandbox::new()
        .sledge()
        .args(["http", "-d", "1", "--from", "u@h1", "--remote-dir", "~/"])
        .arg("http://198.18.0.1:9/")
        .timeout(Duration::from_secs(30))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--remote-dir \"~/\": expected a directory path",
        ));
    // Fewer requests than hosts cannot be split.
    Sandbox::new()
        .sledge()
        .args(["http", "-n", "2", "--from", "a,b,c", "--from-local"])
        .arg("http://198.18.0.1:9/")
        .timeout(Duration::from_secs(30))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "2 request(s) cannot be split over 3",
        ));
}

/// The built-in server on the root side of the first namespace host's
/// link (`198.18.K.1`), which every namespace host reaches.
fn server_for(set: &NetnsHosts) -> Server {
    let first = set.hosts[0].rsplit_once('@').unwrap().1;
    let root_side = first.rsplit_once('.').unwrap().0.to_string() + ".1";
    Server::start(&ServerConfig {
        addr: format!("{root_side}:0").parse().unwrap(),
        sizes: vec![1],
        ..ServerConfig::loopback()
    })
    .expect("server starts on the root side's address")
}

fn ssh_agents(set: &NetnsHosts) -> SshAgents {
    let hosts: Vec<_> = set.hosts.iter().map(|h| h.parse().unwrap()).collect();
    // The namespaces share this machine's files: the binary is there.
    SshAgents::connect(
        &hosts,
        &set.ssh_options(),
        sledge_binary().to_str().unwrap(),
    )
    .expect("the namespace hosts are reachable")
}

#[test]
fn three_namespace_hosts_over_ssh_merge_exactly() {
    let Some(set) = NetnsHosts::up(3, "three_namespace_hosts_over_ssh_merge_exactly") else {
        return;
    };
    let srv = server_for(&set);
    let agents = ssh_agents(&set);
    let load = AgentLoad {
        requests: Some(30_000),
        threads: Some(1),
        ..load(srv.url("/static/1"), 4, 20.0)
    };
    let report = distributed::run(&agents, &agents.hosts(), &load, &CancelToken::new()).unwrap();
    assert_eq!(report.failed_hosts, 0, "{:?}", report.hosts);
    let parts: Vec<_> = report
        .hosts
        .iter()
        .map(|h| h.report.as_ref().unwrap())
        .collect();
    let merged = report.merged.as_ref().unwrap();
    let sum: u64 = parts.iter().map(|p| p.responses).sum();
    assert_eq!(merged.responses, sum);
    assert_eq!(sum, 30_000);
    let mut all = parts[0].tally.latency.clone();
    for p in &parts[1..] {
        all.add(&p.tally.latency).unwrap();
    }
    assert_eq!(merged.tally.latency, all);
    let all_p99_ms = all.value_at_quantile(0.99) as f64 / 1e6;
    assert_eq!(merged.latency.p99_ms, all_p99_ms);
    drop(agents);
    assert!(
        agents_on_hosts(&set).is_empty(),
        "{:?}",
        agents_on_hosts(&set)
    );
    // The figures of the demo (`cargo test -- --nocapture` shows them).
    for h in &report.hosts {
        let (r, c) = (h.report.as_ref().unwrap(), h.clock.unwrap());
        eprintln!(
            "{}: {} responses, {:.0} req/s, p99 {:.3} ms, clock {:+.3} ms ± {:.3}, late {:.2} ms",
            h.host,
            r.responses,
            r.requests_per_sec,
            r.latency.p99_ms,
            c.offset_ns as f64 / 1e6,
            c.round_trip_ns as f64 / 2e6,
            h.started_late_s.unwrap() * 1e3
        );
    }
    eprintln!(
        "merged: {} responses (sum of hosts {sum}), {:.0} req/s, p99 {:.3} ms (all latencies together: {all_p99_ms:.3} ms)",
        merged.responses, merged.requests_per_sec, merged.latency.p99_ms
    );
}

/// Agents still running in the namespaces of `set`, waiting up to 5 s for
/// them to go (they stop when their ssh session closes).
fn agents_on_hosts(set: &NetnsHosts) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let mut left = Vec::new();
        for host in &set.hosts {
            let k = host.split('.').nth(2).unwrap();
            let out = Command::new("ip")
                .args(["netns", "pids", &format!("sledge-h{k}")])
                .output()
                .unwrap();
            assert!(out.status.success(), "ip netns pids sledge-h{k}: {out:?}");
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                let cmdline =
                    std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                if cmdline.contains("__http-agent") {
                    left.push(format!("{host}: {}", cmdline.replace('\0', " ")));
                }
            }
        }
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Established TCP connections whose local end is on `port` (the
/// server's side, in this namespace).
fn established_to(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let local_port = format!(":{port:04X}");
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // Field 1 is the local address, field 3 the state (01:
            // ESTABLISHED).
            fields.len() > 3 && fields[1].ends_with(&local_port) && fields[3] == "01"
        })
        .count()
}

#[test]
fn a_namespace_host_whose_sshd_dies_is_reported_and_the_others_kept() {
    let Some(set) = NetnsHosts::up(3, "a_namespace_host_whose_sshd_dies") else {
        return;
    };
    let srv = server_for(&set);
    let agents = ssh_agents(&set);
    let load = load(srv.url("/static/1"), 1, 4.0);
    let started = Instant::now();
    let report = std::thread::scope(|scope| {
        let run =
            scope.spawn(|| distributed::run(&agents, &agents.hosts(), &load, &CancelToken::new()));
        // Once every host's connection is up (the load has started, the
        // probes before it are closed at once), and a little into it.
        let until = Instant::now() + Duration::from_secs(20);
        while established_to(srv.addr().port()) < 3 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(1000));
        set.kill_sshd(1);
        run.join().unwrap()
    })
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(report.failed_hosts, 1, "{:?}", report.hosts);
    let dead = &report.hosts[1];
    assert_eq!(dead.host, set.hosts[1]);
    let why = dead.failure.as_deref().unwrap();
    assert!(
        why.contains("the ssh connection failed or was lost"),
        "{why}"
    );
    eprintln!("{}: {why}", dead.host);
    let kept: u64 = [&report.hosts[0], &report.hosts[2]]
        .iter()
        .map(|h| h.report.as_ref().unwrap().responses)
        .sum();
    assert!(kept > 0);
    assert_eq!(report.merged.unwrap().responses, kept);
    drop(agents);
    assert!(
        agents_on_hosts(&set).is_empty(),
        "{:?}",
        agents_on_hosts(&set)
    );
}

/// The pids of the agents (not the shells that run them) in the
/// namespace of `host`.
fn agent_pids(host: &str) -> Vec<i32> {
    let k = host.split('.').nth(2).unwrap();
    let out = Command::new("ip")
        .args(["netns", "pids", &format!("sledge-h{k}")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
            args.len() > 1 && args[1] == b"__http-agent" && !args[0].ends_with(b"sh")
        })
        .map(|pid| pid.parse().unwrap())
        .collect()
}

/// ssh exits with 255 both when its connection is lost and when the
/// remote command is killed: a killed agent must be told as killed, with
/// its signal, and not as a lost connection.
#[test]
fn a_namespace_host_whose_agent_is_killed_is_told_apart_from_a_lost_connection() {
    let Some(set) = NetnsHosts::up(2, "a_namespace_host_whose_agent_is_killed") else {
        return;
    };
    let srv = server_for(&set);
    let agents = ssh_agents(&set);
    let load = load(srv.url("/static/1"), 1, 4.0);
    let report = std::thread::scope(|scope| {
        let run =
            scope.spawn(|| distributed::run(&agents, &agents.hosts(), &load, &CancelToken::new()));
        let until = Instant::now() + Duration::from_secs(20);
        while established_to(srv.addr().port()) < 2 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(500));
        let pids = agent_pids(&set.hosts[1]);
        assert_eq!(pids.len(), 1, "{pids:?}");
        // SAFETY: kill with the pid of the agent this test started.
        assert_eq!(unsafe { libc::kill(pids[0], libc::SIGKILL) }, 0);
        run.join().unwrap()
    })
    .unwrap();
    assert_eq!(report.failed_hosts, 1, "{:?}", report.hosts);
    let why = report.hosts[1].failure.as_deref().unwrap();
    assert!(
        why.contains("the agent was killed by signal 9 (SIGKILL)"),
        "{why}"
    );
    assert!(!why.contains("connection"), "{why}");
    assert!(report.hosts[0].report.is_some());
    drop(agents);
    assert!(
        agents_on_hosts(&set).is_empty(),
        "{:?}",
        agents_on_hosts(&set)
    );
}

#[test]
fn the_cli_loads_from_namespace_hosts_and_names_a_host_it_cannot_log_in_to() {
    let Some(set) = NetnsHosts::up(2, "the_cli_loads_from_namespace_hosts") else {
        return;
    };
    let srv = server_for(&set);
    let ssh_args = set.ssh_args();
    let out = Sandbox::new()
        .sledge()
        .args(["http", "-c", "2", "-n", "2000", "--from", &set.list()])
        .args(&ssh_args)
        .args(["--remote-sledge", sledge_binary().to_str().unwrap()])
        .args(["--json", &srv.url("/static/1")])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hosts = v["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 2);
    assert_eq!(hosts[0]["host"], set.hosts[0].as_str());
    assert_eq!(v["merged"]["responses"], 2000);

    // A key the hosts do not accept: BatchMode refuses, the host is named.
    let wrong_key = set.key.with_file_name("no-such-key");
    Sandbox::new()
        .sledge()
        .args(["http", "-d", "1", "--from", &set.list()])
        .arg("--identity")
        .arg(&wrong_key)
        .arg("--known-hosts")
        .arg(&set.known_hosts)
        .arg(srv.url("/static/1"))
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1)
        .stderr(predicates::str::contains(format!(
            "cannot connect to {}",
            set.hosts[0]
        )))
        .stderr(predicates::str::contains("nothing was sent to the server"));
    // A host whose sledge is missing: named, with the shell's complaint.
    Sandbox::new()
        .sledge()
        .args(["http", "-d", "1", "--from", &set.list()])
        .args(&ssh_args)
        .args(["--remote-sledge", "/nonexistent/sledge"])
        .arg(srv.url("/static/1"))
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1)
        .stderr(predicates::str::contains(format!(
            "{}: its agent ended",
            set.hosts[1]
        )))
        .stderr(predicates::str::contains("/nonexistent/sledge"));
}

/// The files in `dir`, or none when it does not exist.
fn files_in(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

#[test]
fn client_hosts_without_sledge_get_this_one_copied_once() {
    let Some(set) = NetnsHosts::up(2, "client_hosts_without_sledge") else {
        return;
    };
    let srv = server_for(&set);
    let sandbox = Sandbox::new();
    let remote_dir = sandbox.path().join("remote");
    let run = || {
        sandbox
            .sledge()
            .args(["http", "-c", "2", "-n", "1000", "--from", &set.list()])
            .args(set.ssh_args())
            .arg("--remote-dir")
            .arg(&remote_dir)
            .args(["--json", &srv.url("/static/1")])
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap()
    };

    // A host of another architecture (as this sledge is told to expect)
    // is refused by name before anything is copied or sent.
    let refused = sandbox
        .sledge()
        .env("SLEDGE_FLEET_ARCH", "riscv64")
        .args(["http", "-n", "1000", "--from", &set.hosts[0]])
        .args(set.ssh_args())
        .arg("--remote-dir")
        .arg(&remote_dir)
        .arg(srv.url("/static/1"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!(
            "{}: the host's architecture is {}, this sledge is built for riscv64",
            set.hosts[0],
            std::env::consts::ARCH
        )) && stderr.contains("nothing was sent to the server"),
        "{stderr}"
    );
    assert_eq!(
        files_in(&remote_dir.join("bin")),
        Vec::<std::path::PathBuf>::new()
    );

    // No sledge there: copied (the hosts share this machine's files, so
    // whichever host looks last may find the other's copy), then run.
    let out = run();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("] copying this sledge ("), "{stderr}");
    let copies = files_in(&remote_dir.join("bin"));
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert_eq!(
        std::fs::read(&copies[0]).unwrap(),
        std::fs::read(sledge_binary()).unwrap(),
        "the copy is this very binary"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hosts"].as_array().unwrap().len(), 2);
    assert_eq!(v["failed_hosts"], 0);
    assert_eq!(v["merged"]["responses"], 1000);
    let copied = std::fs::metadata(&copies[0]).unwrap().modified().unwrap();

    // The copy is there now: not sent again, and still what runs.
    let out = run();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("copying this sledge"), "{stderr}");
    assert_eq!(files_in(&remote_dir.join("bin")), copies);
    assert_eq!(
        std::fs::metadata(&copies[0]).unwrap().modified().unwrap(),
        copied
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["merged"]["responses"], 1000);

    // What the agents run is that copy: a stand-in that answers
    // --version as this sledge but nothing else fails the load. (A new
    // file: an agent still ending may hold the old one open to run.)
    std::fs::remove_file(&copies[0]).unwrap();
    std::fs::write(
        &copies[0],
        format!(
            "#!/bin/sh\n[ \"$1\" = --version ] && {{ echo 'sledge {}'; exit 0; }}\n\
             echo stand-in sledge >&2; exit 3\n",
            env!("CARGO_PKG_VERSION")
        ),
    )
    .unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&copies[0], executable).unwrap();
    let out = run();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("copying this sledge"), "{stderr}");
    assert!(
        stderr.contains(&format!("{}: its agent ended", set.hosts[0]))
            && stderr.contains("stand-in sledge"),
        "{stderr}"
    );
    drop(srv);
    assert!(
        agents_on_hosts(&set).is_empty(),
        "{:?}",
        agents_on_hosts(&set)
    );
}

#[test]
fn clients_from_loads_a_workloads_server_from_namespace_hosts() {
    let Some(set) = NetnsHosts::up(2, "clients_from_loads_a_workloads_server") else {
        return;
    };
    let sandbox = Sandbox::new();
    let remote_dir = sandbox.path().join("remote");
    // A sweep: this host, then both client hosts (a list in quotes is
    // one value).
    let sweep = format!("clients_from=local,\"{}\"", set.list());
    let out = sandbox
        .sledge()
        .env("SLEDGE_SSH_IDENTITY", &set.key)
        .env("SLEDGE_SSH_KNOWN_HOSTS", &set.known_hosts)
        .env("SLEDGE_REMOTE_DIR", &remote_dir)
        .args(["run", "http.static", "-p", &sweep])
        // Trials of 0.3 s: the CPU shares come from /proc/stat's 10 ms
        // ticks, which a trial of a few milliseconds on a busy host (a
        // thousand requests) can fall between, leaving it no share.
        .args(["-p", "requests=0", "-p", "time=0.3", "-p", "concurrency=2"])
        .args(crate::common::FAST)
        .timeout(Duration::from_secs(180))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // The copy the client hosts ran.
    assert_eq!(files_in(&remote_dir.join("bin")).len(), 1);
    let run = sandbox.show_last();
    let cases = run["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2, "{run}");
    assert_eq!(cases[0]["params"]["clients_from"], "local");
    assert_eq!(cases[1]["params"]["clients_from"], set.list().as_str());
    for case in cases {
        assert!(case["error"].is_null(), "{case}");
        let metric = |name: &str| crate::common::metric(case, name);
        let rate = metric("requests_per_sec");
        assert!(rate["summary"]["mean"].as_f64().unwrap() > 0.0, "{case}");
        let errors = metric("errors");
        assert_eq!(errors["summary"]["mean"].as_f64(), Some(0.0), "{case}");
    }
    // This host's generator shares its CPUs; the client hosts do not.
    let has_generator_share = |i: usize| {
        cases[i]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == "generator_cpu_busy")
    };
    if std::thread::available_parallelism().unwrap().get() > 1 {
        assert!(has_generator_share(0));
    }
    assert!(!has_generator_share(1));
    assert!(
        agents_on_hosts(&set).is_empty(),
        "{:?}",
        agents_on_hosts(&set)
    );

    // A host whose sshd is not there (a closed port) fails the case by
    // name.
    let closed = format!("{}:1", set.hosts[0]);
    let out = sandbox
        .sledge()
        .env("SLEDGE_SSH_IDENTITY", &set.key)
        .env("SLEDGE_SSH_KNOWN_HOSTS", &set.known_hosts)
        .env("SLEDGE_REMOTE_DIR", &remote_dir)
        .args([
            "run",
            "http.static",
            "-p",
            &format!("clients_from={closed}"),
        ])
        .args(["-p", "requests=100"])
        .args(crate::common::FAST)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("cannot connect to {closed}")),
        "{said}"
    );
}

#[test]
fn bad_clients_from_lists_are_refused_before_the_run_naming_the_entry() {
    for (value, says) in [
        (
            "clients_from=\"a,,b\"",
            "clients_from=a,,b: host list `a,,b`: entry 2 is empty",
        ),
        ("clients_from=\"a,a\"", "`a` appears twice"),
        ("clients_from=-oProxyCommand=x", "host `-oProxyCommand=x`"),
    ] {
        let sandbox = Sandbox::new();
        let out = sandbox
            .sledge()
            .args(["run", "http.static", "-p", value])
            .args(crate::common::FAST)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{value}: {out:?}");
        assert!(stderr.contains(says), "{value}: {stderr}");
        assert!(stderr.contains("in double quotes"), "{stderr}");
        sandbox.assert_no_runs();
    }
    // More client hosts than requests cannot share them.
    let out = Sandbox::new()
        .sledge()
        .args(["run", "http.static", "-p", "clients_from=\"a,b,c\""])
        .args(["-p", "requests=2"])
        .args(crate::common::FAST)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot be split over 3"), "{stderr}");
}

#[test]
fn a_server_out_of_a_hosts_reach_fails_before_the_start() {
    let (_socket, port) = crate::common::refusing_port();
    let err = distributed::run(
        &local("unreachable"),
        &hosts(&["a", "b"]),
        &load(format!("http://127.0.0.1:{port}/"), 1, 5.0),
        &CancelToken::new(),
    )
    .unwrap_err();
    let text = format!("{err:#}");
    assert!(
        text.contains("2 of 2 client host(s) could not start"),
        "{text}"
    );
    assert!(
        text.contains(&format!("a: cannot connect to http://127.0.0.1:{port}/")),
        "{text}"
    );
    assert!(agents_left("unreachable").is_empty());
}

#[test]
fn ctrl_c_prints_what_every_host_measured_until_then() {
    let srv = server();
    let mut child = std::process::Command::new(sledge_binary())
        .args([
            "http",
            "-c",
            "1",
            "-d",
            "30",
            "--from",
            "a,b",
            "--from-local",
        ])
        .arg(srv.url("/static/1"))
        .env(TAG, "ctrl_c")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2000));
    // SAFETY: kill with a child's pid and a signal number.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = crate::common::wait_bounded(&mut child, Duration::from_secs(15));
    assert_eq!(status.code(), Some(130));
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert!(out.contains("merged over 2 host(s)"), "{out}");
    assert!(out.contains("interrupted (Ctrl-C)"), "{out}");
    assert!(tagged_processes("ctrl_c", None).is_empty());
}

/// The figures of the one case of the last run, by metric name.
fn case_means(sandbox: &Sandbox) -> (serde_json::Value, std::collections::BTreeMap<String, f64>) {
    let run = sandbox.show_last();
    let cases = run["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1, "{run}");
    let case = cases[0].clone();
    assert!(case["error"].is_null(), "{case}");
    let means = case["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                m["summary"]["mean"].as_f64().unwrap(),
            )
        })
        .collect();
    (case, means)
}

/// The article's web test, scaled down: 20 requests per client host at
/// 10 requests/s instead of 10,000, so a host's test lasts 1.9 s (its
/// last request is due 19 intervals after its first) where the
/// article's lasted 999.9 s; everything else (six hosts, one connection
/// per request, a 1 s timeout) as the profile has it.
#[test]
fn the_six_client_web_test_reports_every_host_and_their_exact_merge() {
    let Some(set) = NetnsHosts::up(6, "the_six_client_web_test") else {
        return;
    };
    let sandbox = Sandbox::new();
    let remote_dir = sandbox.path().join("remote");
    let clients = format!("clients_from=\"{}\"", set.list());
    let run = |extra: &[&str]| {
        let out = sandbox
            .sledge()
            .env("SLEDGE_SSH_IDENTITY", &set.key)
            .env("SLEDGE_SSH_KNOWN_HOSTS", &set.known_hosts)
            .env("SLEDGE_REMOTE_DIR", &remote_dir)
            .args(["run", "web-six-clients", "--no-idle-check", "-p", &clients])
            .args(["-p", "requests=120"])
            .args(extra)
            .timeout(Duration::from_secs(180))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let per_host = |means: &std::collections::BTreeMap<String, f64>, name: &str| -> Vec<f64> {
        set.hosts
            .iter()
            .map(|h| {
                *means
                    .get(&format!("{name}@{h}"))
                    .unwrap_or_else(|| panic!("no {name}@{h} in {means:?}"))
            })
            .collect()
    };

    run(&[]);
    let (case, means) = case_means(&sandbox);
    assert_eq!(case["params"]["rate_per_client"], "10", "{case}");
    assert_eq!(case["params"]["timeout"], "1", "{case}");
    assert_eq!(case["params"]["keepalive"], "false", "{case}");
    // Each host sent its 20; the merge is their exact sum.
    let requests = per_host(&means, "requests");
    assert_eq!(requests, [20.0; 6], "{means:?}");
    assert_eq!(means["requests"], requests.iter().sum::<f64>());
    let responses = per_host(&means, "responses");
    let timeouts = per_host(&means, "timeouts");
    for ((answered, timed_out), sent) in responses.iter().zip(&timeouts).zip(&requests) {
        assert_eq!(answered + timed_out, *sent, "{means:?}");
    }
    assert_eq!(means["timeouts"], timeouts.iter().sum::<f64>());
    // A connection per request, each one timed.
    for connect in per_host(&means, "connect_mean") {
        assert!(connect > 0.0, "{means:?}");
    }
    // The duration: the schedule's 1.9 s at least, ended by the request
    // count (not by the profile's time limit); the merge's is the longest
    // host's, since they all started at one instant.
    let durations = per_host(&means, "duration");
    for &d in &durations {
        assert!((1.9..1200.0).contains(&d), "{means:?}");
    }
    assert_eq!(
        means["duration"],
        durations.iter().copied().fold(0.0, f64::max)
    );

    // Responses of 10 MiB hardly arrive within 1 ms: every host counts
    // timeouts, each request it sent either timed out or was answered,
    // and the merge counts every host's.
    run(&["-p", "size=10M", "-p", "timeout=0.001"]);
    let (_, means) = case_means(&sandbox);
    let requests = per_host(&means, "requests");
    let responses = per_host(&means, "responses");
    let timeouts = per_host(&means, "timeouts");
    for ((answered, timed_out), sent) in responses.iter().zip(&timeouts).zip(&requests) {
        assert!(*timed_out > 0.0, "{means:?}");
        assert_eq!(answered + timed_out, *sent, "{means:?}");
    }
    assert_eq!(means["timeouts"], timeouts.iter().sum::<f64>());
    assert_eq!(means["requests"], requests.iter().sum::<f64>());
    assert!(
        agents_on_hosts(&set).is_empty(),
        "{:?}",
        agents_on_hosts(&set)
    );
}
