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
    let out = sandbox
        .sledge()
        .args([
            "run",
            "net.stream",
            "-p",
            "peer=root@db2",
            "--no-idle-check",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("sledge runs");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("__net-serve"),
        "{out:?}"
    );
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
