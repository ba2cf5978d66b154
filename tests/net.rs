//! The `net.*` workloads end to end: over loopback from the command line,
//! and against `sledge __net-serve` in a network namespace (a namespace
//! host of [`NetnsHosts`], skipped with a notice where namespaces cannot
//! be made), including that server killed mid-trial.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::Sandbox;
use crate::netns_hosts::NetnsHosts;

fn headline(show: &serde_json::Value, case: usize) -> f64 {
    show["cases"][case]["metrics"][0]["summary"]["mean"]
        .as_f64()
        .expect("a headline mean")
}

#[test]
fn every_net_workload_runs_over_loopback_from_the_command_line() {
    let sandbox = Sandbox::new();
    sandbox
        .sledge()
        .args([
            "run",
            "net.stream",
            "net.rr",
            "net.crr",
            "net.udp",
            "-p",
            "time=0.2",
            "-p",
            "net.udp:rate=10M",
            "--rounds",
            "1",
            "--max-trials",
            "1",
            "--no-idle-check",
        ])
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let show = sandbox.show_last();
    for case in 0..4 {
        assert!(headline(&show, case) > 0.0, "{show}");
    }
}

#[test]
fn bad_net_parameters_are_refused_naming_them() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .sledge()
        .args(["run", "net.udp", "-p", "rate=fast", "--no-idle-check"])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("sledge runs");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("rate=fast"),
        "{out:?}"
    );
    // A rate too low to send two datagrams in a trial (one every 11.7 s
    // here) measures nothing, and its sender would wait past the trial.
    let out = sandbox
        .sledge()
        .args(["run", "net.udp", "-p", "rate=1K", "-p", "time=0.2"])
        .args(crate::common::FAST)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("sledge runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "rate=1K sends a datagram of msg_size=1460 bytes every 11.680 s, one in a trial of time=0.2 s"
        ) && err.contains("a trial needs two at least"),
        "{err}"
    );
    // A peer over ssh whose name is no safe host name is refused before
    // any ssh starts, by its value; one that does not resolve here (the
    // data connections go to it) fails its case naming it.
    for (peer, says) in [
        ("peer=root@-oProxyCommand=x", "expected [user@]host[:port]"),
        ("peer=root@db2.invalid", "db2.invalid does not resolve"),
    ] {
        let out = sandbox
            .sledge()
            .args(["run", "net.stream", "-p", peer, "-p", "time=0.2"])
            .args(crate::common::FAST)
            .timeout(Duration::from_secs(60))
            .output()
            .expect("sledge runs");
        assert!(!out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(peer) && stderr.contains(says), "{stderr}");
    }
}

/// The `sledge __net-serve` processes in the first host of `hosts`,
/// after waiting up to 5 s for them to end.
fn servers_left_in(hosts: &NetnsHosts) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let left = hosts.processes_with(0, "__net-serve");
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_peer_over_ssh_gets_sledge_is_measured_and_keeps_no_server_running() {
    let Some(hosts) = NetnsHosts::up(1, "net_peer_over_ssh") else {
        return;
    };
    let sandbox = Sandbox::new();
    let remote_dir = sandbox.path().join("remote");
    let sledge = || {
        let mut cmd = sandbox.sledge();
        cmd.env("SLEDGE_SSH_IDENTITY", &hosts.key)
            .env("SLEDGE_SSH_KNOWN_HOSTS", &hosts.known_hosts)
            .env("SLEDGE_REMOTE_DIR", &remote_dir);
        cmd
    };
    let peer = format!("peer={}", hosts.hosts[0]);
    sledge()
        .args(["run", "net.stream", "net.rr", "-p", peer.as_str()])
        .args(["-p", "time=0.2", "--rounds", "1", "--max-trials", "1"])
        .arg("--no-idle-check")
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let show = sandbox.show_last();
    assert!(
        headline(&show, 0) > 0.0 && headline(&show, 1) > 0.0,
        "{show}"
    );
    // The copy stays for the next run, as clients_from's does; the server
    // does not.
    let copies = std::fs::read_dir(remote_dir.join("bin")).expect("the copy's directory");
    assert_eq!(copies.count(), 1);
    assert_eq!(servers_left_in(&hosts), Vec::<String>::new());

    // Ctrl-C in a long trial: sledge stops, and so does the peer's server.
    let mut run = Command::new(assert_cmd::cargo::cargo_bin("sledge"));
    run.current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .env_remove("XDG_DATA_HOME")
        .env("SLEDGE_SSH_IDENTITY", &hosts.key)
        .env("SLEDGE_SSH_KNOWN_HOSTS", &hosts.known_hosts)
        .env("SLEDGE_REMOTE_DIR", &remote_dir)
        .args(["run", "net.rr", "-p", peer.as_str(), "-p", "time=30"])
        .args(["--rounds", "1", "--max-trials", "1", "--no-idle-check"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = run.spawn().expect("sledge starts");
    let until = Instant::now() + Duration::from_secs(30);
    while hosts.processes_with(0, "__net-serve").is_empty() {
        assert!(Instant::now() < until, "no server started on the peer");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = crate::common::wait_bounded(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130));
    assert_eq!(servers_left_in(&hosts), Vec::<String>::new());

    // A peer whose sshd refuses (nothing listens on port 1) and one that
    // lacks this sledge's architecture: clear errors naming the host.
    let closed = format!("{}:1", hosts.hosts[0]);
    for (peer, arch, says) in [
        (
            format!("peer={closed}"),
            None,
            format!("cannot connect to {closed}"),
        ),
        (
            peer.clone(),
            Some("riscv64"),
            "this sledge is built for riscv64".to_string(),
        ),
    ] {
        let mut cmd = sledge();
        if let Some(arch) = arch {
            cmd.env("SLEDGE_FLEET_ARCH", arch);
        }
        let out = cmd
            .args(["run", "net.rr", "-p", peer.as_str(), "-p", "time=0.2"])
            .args(crate::common::FAST)
            .timeout(Duration::from_secs(120))
            .output()
            .expect("sledge runs");
        assert!(!out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&says) && stderr.contains(&peer),
            "{peer}: {stderr}"
        );
    }
    assert_eq!(servers_left_in(&hosts), Vec::<String>::new());

    // The ssh connection dropped mid-trial (the peer's sshd killed, its
    // sessions with it): the server there stops, and the trial fails
    // naming the peer, well before its 30 s.
    let started = Instant::now();
    let mut run = sledge();
    run.args(["run", "net.stream", "-p", peer.as_str(), "-p", "time=30"])
        .args(["--rounds", "1", "--max-trials", "1", "--no-idle-check"]);
    let handle = std::thread::spawn(move || run.timeout(Duration::from_secs(90)).output());
    let until = Instant::now() + Duration::from_secs(30);
    while hosts.processes_with(0, "__net-serve").is_empty() {
        assert!(Instant::now() < until, "no server started on the peer");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    hosts.kill_sshd(0);
    let out = handle
        .join()
        .expect("the run's thread")
        .expect("sledge ran");
    assert!(!out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(hosts.address(0)), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(28),
        "{:?}: {stderr}",
        started.elapsed()
    );
    assert_eq!(servers_left_in(&hosts), Vec::<String>::new());
}

/// `sledge __net-serve` inside the first host of a set, killed when
/// dropped.
struct NetServe(Child);

impl NetServe {
    /// Starts it on `address` (`198.18.K.2:PORT`) in `namespace`.
    fn start(namespace: &str, address: &str) -> NetServe {
        let child = Command::new("ip")
            .args(["netns", "exec", namespace])
            .arg(assert_cmd::cargo::cargo_bin("sledge"))
            .args(["__net-serve", "--listen", address])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ip netns exec runs");
        // Until it listens.
        let until = Instant::now() + Duration::from_secs(10);
        let socket: std::net::SocketAddr = address.parse().expect("an address");
        while std::net::TcpStream::connect_timeout(&socket, Duration::from_millis(200)).is_err() {
            assert!(Instant::now() < until, "__net-serve did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        NetServe(child)
    }

    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for NetServe {
    fn drop(&mut self) {
        self.kill();
    }
}

#[test]
fn a_peer_in_a_namespace_is_measured_and_its_death_mid_trial_is_a_clear_error() {
    let Some(hosts) = NetnsHosts::up(1, "net_peer_in_a_namespace") else {
        return;
    };
    let address = format!("{}:5299", hosts.address(0));
    let peer = format!("peer={address}");
    let mut server = NetServe::start(&hosts.namespace(0), &address);
    let sandbox = Sandbox::new();
    sandbox
        .sledge()
        .args([
            "run",
            "net.stream",
            "net.rr",
            "-p",
            peer.as_str(),
            "-p",
            "time=0.2",
            "--rounds",
            "1",
            "--max-trials",
            "1",
            "--no-idle-check",
        ])
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let show = sandbox.show_last();
    assert!(
        headline(&show, 0) > 0.0 && headline(&show, 1) > 0.0,
        "{show}"
    );

    // A long trial, and the peer killed a second into it.
    let started = Instant::now();
    let mut run = sandbox.sledge();
    run.args([
        "run",
        "net.stream",
        "-p",
        peer.as_str(),
        "-p",
        "time=8",
        "--rounds",
        "1",
        "--max-trials",
        "1",
        "--no-idle-check",
    ]);
    let handle = std::thread::spawn(move || run.timeout(Duration::from_secs(60)).output());
    std::thread::sleep(Duration::from_millis(1500));
    server.kill();
    let out = handle
        .join()
        .expect("the run's thread ends")
        .expect("sledge ran");
    assert!(!out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&address), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(40));

    // Nobody there any more: unreachable, named.
    let out = sandbox
        .sledge()
        .args([
            "run",
            "net.rr",
            "-p",
            peer.as_str(),
            "-p",
            "time=0.2",
            "--rounds",
            "1",
            "--no-idle-check",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("sledge runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unreachable") && stderr.contains(&address),
        "{stderr}"
    );
}

#[test]
fn net_serve_says_its_port_and_stops_at_the_end_of_its_input() {
    use std::io::BufRead;
    let mut server = Command::new(assert_cmd::cargo::cargo_bin("sledge"))
        .args(["__net-serve", "--listen", "127.0.0.1:0", "--until-eof"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("sledge starts");
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("a line");
    let addr: std::net::SocketAddr = line
        .trim()
        .strip_prefix("sledge net server listening on ")
        .unwrap_or_else(|| panic!("{line:?}"))
        .parse()
        .expect("an address");
    assert_ne!(addr.port(), 0, "{line}");
    std::net::TcpStream::connect(addr).expect("it listens there");
    // Its input closed, it stops by itself.
    drop(server.stdin.take());
    let status = crate::common::wait_bounded(&mut server, Duration::from_secs(10));
    assert!(status.success(), "{status:?}");
}
