//! Test hosts for the fleet and distributed tests: network namespaces
//! running their own sshd, made by `tests/hosts/netns-hosts.sh`, removed
//! when the [`NetnsHosts`] is dropped (also when the test panics).
//!
//! They need root, `ip`, OpenSSH's client and Debian's openssh-server
//! ([`NAMESPACE_HOSTS`]). Without them a test is skipped with a notice on
//! stderr, unless `SLEDGE_TEST_FLEET=require` (which CI sets) makes that a
//! failure.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::NAMESPACE_HOSTS;

/// The script that makes and removes the hosts.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hosts/netns-hosts.sh")
}

/// A set of namespace hosts, torn down on drop.
pub struct NetnsHosts {
    /// The hosts' state: sshd configs, keys, the client key.
    dir: tempfile::TempDir,
    /// `root@198.18.K.2` for each host.
    pub hosts: Vec<String>,
    /// The private key every host accepts for root.
    pub key: PathBuf,
    /// A known_hosts file of the set's own (its host keys are throwaway).
    pub known_hosts: PathBuf,
}

impl NetnsHosts {
    /// Brings up `n` hosts for `test`, or returns `None` after a visible
    /// notice when this machine cannot (a failure instead under
    /// `SLEDGE_TEST_FLEET=require`).
    #[track_caller]
    pub fn up(n: usize, test: &str) -> Option<NetnsHosts> {
        if !NAMESPACE_HOSTS.met() {
            return None;
        }
        let dir = tempfile::tempdir().expect("hosts dir");
        let output = Command::new(script())
            .arg("up")
            .arg(n.to_string())
            .arg(dir.path())
            .output()
            .expect("run netns-hosts.sh");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let set = NetnsHosts {
            hosts: stdout
                .lines()
                .find_map(|l| l.strip_prefix("hosts "))
                .map(|h| h.split(',').map(str::to_string).collect())
                .unwrap_or_default(),
            key: dir.path().join("client_key"),
            known_hosts: dir.path().join("known_hosts"),
            dir,
        };
        assert!(
            output.status.success() && set.hosts.len() == n,
            "{test}: netns-hosts.sh up {n} failed: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        Some(set)
    }

    /// Host `index`'s (0-based) address, `198.18.K.2`: K is whichever
    /// free host number the set claimed, not the index, since concurrent
    /// tests hold hosts of their own.
    pub fn address(&self, index: usize) -> &str {
        let host = &self.hosts[index];
        host.split_once('@')
            .map_or(host.as_str(), |(_, address)| address)
    }

    /// The network namespace of host `index` (0-based), `sledge-hK`.
    pub fn namespace(&self, index: usize) -> String {
        let k = self.address(index).split('.').nth(2).expect("198.18.K.2");
        format!("sledge-h{k}")
    }

    /// The command lines of the processes in host `index`'s namespace
    /// whose command line holds `word` (a server that should have stopped,
    /// say).
    pub fn processes_with(&self, index: usize, word: &str) -> Vec<String> {
        let namespace = self.namespace(index);
        let out = Command::new("ip")
            .args(["netns", "pids", &namespace])
            .output()
            .expect("ip runs");
        assert!(out.status.success(), "ip netns pids {namespace}: {out:?}");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).ok())
            .map(|line| String::from_utf8_lossy(&line).replace('\0', " "))
            .filter(|line| line.contains(word))
            .collect()
    }

    /// The hosts as a `--hosts` list.
    pub fn list(&self) -> String {
        self.hosts.join(",")
    }

    /// Kills every sshd of host `index` (0-based), as a host that dies.
    pub fn kill_sshd(&self, index: usize) {
        let status = Command::new(script())
            .arg("kill-sshd")
            .arg(self.dir.path())
            .arg((index + 1).to_string())
            .status()
            .expect("kill-sshd");
        assert!(status.success());
    }

    /// Holds host `index` (0-based) to `percent`% of one CPU from now on
    /// (100: a whole CPU): its sshd, and every session it starts, run in a
    /// cgroup with that CPU quota and the largest CPU weight, so that other
    /// tests crowding the CPUs do not take its share (removed with the
    /// hosts).
    pub fn quota(&self, index: usize, percent: u32) {
        let status = Command::new(script())
            .arg("quota")
            .arg(self.dir.path())
            .arg((index + 1).to_string())
            .arg(percent.to_string())
            .status()
            .expect("quota");
        assert!(status.success());
    }

    /// The `--identity` and `--known-hosts` options for these hosts.
    pub fn ssh_args(&self) -> Vec<String> {
        vec![
            "--identity".to_string(),
            self.key.display().to_string(),
            "--known-hosts".to_string(),
            self.known_hosts.display().to_string(),
        ]
    }

    /// Library options for these hosts.
    pub fn ssh_options(&self) -> sledge::remote::SshOptions {
        sledge::remote::SshOptions {
            identity: Some(self.key.clone()),
            known_hosts: Some(self.known_hosts.clone()),
            connect_timeout: std::time::Duration::from_secs(5),
        }
    }
}

impl Drop for NetnsHosts {
    fn drop(&mut self) {
        let status = Command::new(script())
            .arg("down")
            .arg(self.dir.path())
            .status();
        if !matches!(status, Ok(s) if s.success()) {
            eprintln!(
                "warning: netns-hosts.sh down {} failed: {status:?}",
                self.dir.path().display()
            );
        }
    }
}
