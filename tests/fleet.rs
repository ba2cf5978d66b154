//! `sledge fleet run` and the remote layer under it, against real sshd
//! processes in network namespaces on this machine (see `netns_hosts`).

use std::time::Duration;

use sledge::remote::{Connection, OutputLine, RemoteError, SshHost};

use crate::netns_hosts::NetnsHosts;

#[test]
fn a_namespace_host_runs_commands_streams_output_and_takes_files() {
    let Some(set) = NetnsHosts::up(1, "a_namespace_host_runs_commands") else {
        return;
    };
    let host: SshHost = set.hosts[0].parse().unwrap();
    let connection = Connection::open(&host, &set.ssh_options()).expect("connect");
    let arch = connection.run("uname -m").expect("uname");
    assert_eq!(arch.trim(), std::env::consts::ARCH);

    // Streamed output arrives line by line, from both streams.
    let mut process = connection
        .spawn("echo one; echo two >&2; echo three")
        .unwrap();
    let mut lines = Vec::new();
    while let Ok(line) = process.next_line(Duration::from_secs(10)) {
        lines.push(line);
    }
    assert!(process.wait().unwrap().success());
    assert!(
        lines.contains(&OutputLine::Stderr("two".to_string())),
        "{lines:?}"
    );
    let out: Vec<_> = lines
        .iter()
        .filter_map(|l| match l {
            OutputLine::Stdout(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(out, ["one", "three"]);

    // A file goes there and comes back unchanged.
    let scratch = tempfile::tempdir().unwrap();
    let local = scratch.path().join("payload");
    std::fs::write(&local, b"bytes \x00\xff and more").unwrap();
    let remote = scratch.path().join("copied").display().to_string();
    connection.upload(&local, &remote, 0o755).unwrap();
    assert_eq!(
        connection.download(&remote).unwrap(),
        b"bytes \x00\xff and more"
    );

    // A failing command names the host and keeps what it said.
    let err = connection.run("echo nope >&2; exit 3").unwrap_err();
    assert!(matches!(err, RemoteError::CommandFailed { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&set.hosts[0]) && text.contains("nope"),
        "{text}"
    );
}

#[test]
fn a_host_without_access_or_sshd_is_a_clear_connect_error() {
    let Some(set) = NetnsHosts::up(1, "a_host_without_access_or_sshd") else {
        return;
    };
    // No key: BatchMode refuses to ask for a password.
    let host: SshHost = set.hosts[0].parse().unwrap();
    let mut options = set.ssh_options();
    options.identity = Some(set.key.with_file_name("no-such-key"));
    let err = Connection::open(&host, &options).err().expect("refused");
    let text = err.to_string();
    assert!(text.contains("cannot connect to root@198.18."), "{text}");
    assert!(text.contains("Permission denied"), "{text}");

    // Nobody listening there (the namespace runs nothing but its sshd).
    let dead: SshHost = format!("{}:2", set.hosts[0]).parse().unwrap();
    let err = Connection::open(&dead, &set.ssh_options())
        .err()
        .expect("refused");
    assert!(err.to_string().contains("Connection refused"), "{err}");
}

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::Instant;

use crate::common::{SSH_CLIENT, Sandbox, wait_bounded};

/// A short scripted run: `rounds` rounds of two trials of `sleep` seconds.
fn scripted_args(rounds: u32, sleep: &str) -> Vec<String> {
    [
        "test.scripted",
        "--rounds",
        &rounds.to_string(),
        "--warmup",
        "0",
        "--min-trials",
        "2",
        "--max-trials",
        "2",
        "--no-idle-check",
        "-p",
        &format!("sleep={sleep}"),
    ]
    .map(str::to_string)
    .to_vec()
}

/// The words of `sledge fleet run` on `hosts` with the set's key, a remote
/// directory of the test's own, then `run`.
fn fleet_words(set: &NetnsHosts, hosts: &str, remote_dir: &Path, run: &[String]) -> Vec<String> {
    let mut words = vec!["fleet".to_string(), "run".to_string()];
    words.extend(["--hosts".to_string(), hosts.to_string()]);
    words.extend(set.ssh_args());
    words.extend([
        "--connect-timeout".to_string(),
        "5".to_string(),
        "--remote-dir".to_string(),
        remote_dir.display().to_string(),
    ]);
    words.extend(run.iter().cloned());
    words
}

/// `sledge` for a fleet run of the scripted workload.
fn fleet_sledge(sandbox: &Sandbox) -> assert_cmd::Command {
    let mut cmd = sandbox.sledge();
    cmd.env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .timeout(Duration::from_secs(90));
    cmd
}

/// Puts a copy of the sledge under test where a fleet run looks for it
/// in `remote_dir` (a hard link: the namespace hosts share this machine's
/// files), so that a test that is not about copying does not copy.
fn seed_binary(remote_dir: &Path) {
    let binary = assert_cmd::cargo::cargo_bin("sledge");
    let sum = StdCommand::new("sha256sum").arg(&binary).output().unwrap();
    let hash = String::from_utf8_lossy(&sum.stdout)[..12].to_string();
    let bin = remote_dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let name = format!("sledge-{}-{hash}", env!("CARGO_PKG_VERSION"));
    std::fs::hard_link(&binary, bin.join(name)).unwrap();
}

/// Marks `dir` as a fleet run marks its scratch directory when it makes it.
fn mark_as_fleet_scratch(dir: &Path) {
    let name = dir.file_name().unwrap().to_str().unwrap();
    std::fs::write(
        dir.join(".sledge-made"),
        format!("sledge-fleet-run/1 {name}\n"),
    )
    .unwrap();
}

/// Makes `dir` look five minutes old.
fn age(dir: &Path) {
    let aged = StdCommand::new("touch")
        .args(["-d", "5 minutes ago"])
        .arg(dir)
        .status()
        .unwrap();
    assert!(aged.success());
}

/// Processes that work in `dir` or name it on their command line.
fn processes_in(dir: &Path) -> Vec<String> {
    let dir = dir.display().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let path = entry.path();
        let cwd = std::fs::read_link(path.join("cwd")).unwrap_or_default();
        let cmdline = std::fs::read(path.join("cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        if cwd.starts_with(&dir) || (cmdline.contains(&dir) && !cmdline.starts_with("ssh ")) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// The entries of `dir`, or none when it does not exist.
fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// The stored runs as `list --json` gives them.
fn stored_runs(sandbox: &Sandbox) -> Vec<serde_json::Value> {
    let out = sandbox.sledge().args(["list", "--json"]).output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_fleet_run_on_three_hosts_lands_three_runs_and_leaves_nothing_there() {
    let Some(set) = NetnsHosts::up(3, "a_fleet_run_on_three_hosts") else {
        return;
    };
    let sandbox = Sandbox::new();
    let remote_dir = sandbox.path().join("remote");
    // No copy there yet: the fleet copies this sledge (once per host).
    let assert = fleet_sledge(&sandbox)
        .args(fleet_words(
            &set,
            &set.list(),
            &remote_dir,
            &scripted_args(2, "0"),
        ))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stdout.contains("fleet run on 3 hosts: 3 runs stored (3 complete), 0 hosts failed"),
        "{stdout}"
    );
    for host in &set.hosts {
        let label = host.trim_start_matches("root@");
        // Progress and the remote's table come prefixed by the host.
        assert!(
            stderr.contains(&format!("[{label}] copying this sledge")),
            "{stderr}"
        );
        assert!(
            stdout.contains(&format!("[{label}] test.scripted")),
            "{stdout}"
        );
        // Its line of the closing table (labels are padded to one width).
        assert!(
            stdout.lines().any(|l| l.starts_with(&format!("  {label} "))
                && l.trim_start_matches(&format!("  {label}"))
                    .trim_start()
                    .starts_with("run ")),
            "{stdout}"
        );
    }

    // Three ordinary runs, one per host, that compare with each other.
    let runs = stored_runs(&sandbox);
    assert_eq!(runs.len(), 3, "{runs:?}");
    assert!(runs.iter().all(|r| r["status"] == "complete"), "{runs:?}");
    // The hosts are clones with one host name: `list` tells them apart by
    // the host `--hosts` named.
    let mut fleet_hosts: Vec<String> = runs
        .iter()
        .map(|r| r["fleet_host"].as_str().unwrap_or_default().to_string())
        .collect();
    fleet_hosts.sort();
    let mut labels: Vec<String> = set
        .hosts
        .iter()
        .map(|h| h.trim_start_matches("root@").to_string())
        .collect();
    labels.sort();
    assert_eq!(fleet_hosts, labels, "{runs:?}");
    let listed = sandbox.sledge().arg("list").assert().success();
    let table = String::from_utf8_lossy(&listed.get_output().stdout).into_owned();
    assert!(
        table.contains("fleet host") && labels.iter().all(|l| table.contains(l.as_str())),
        "{table}"
    );
    // Each run says which host of the fleet ran it.
    let shown = sandbox
        .sledge()
        .args(["show", "1", "--json"])
        .output()
        .unwrap();
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let note = shown["notes"][0].as_str().unwrap_or_default().to_string();
    assert!(
        set.hosts
            .iter()
            .any(|h| note == format!("fleet_host={}", h.trim_start_matches("root@"))),
        "{shown}"
    );
    sandbox
        .sledge()
        .args(["compare", "1", "2", "3"])
        .assert()
        .success();

    // Nothing left on the hosts but the copy of sledge.
    assert_eq!(entries(&remote_dir.join("runs")), Vec::<PathBuf>::new());
    assert_eq!(entries(&remote_dir.join("bin")).len(), 1);
    assert_eq!(processes_in(&remote_dir), Vec::<String>::new());
}

/// Starts a fleet run in the background with its stderr read line by line
/// into the returned channel.
/// The lines the fleet printed on stderr and `lines` has not yet given,
/// once it has exited: read until the reader thread ends at the pipe's end
/// (a line printed just before the exit may still be on its way), or for
/// at most 5 s after the last line should something still hold the pipe.
fn rest_of(lines: &std::sync::mpsc::Receiver<String>) -> Vec<String> {
    let mut rest = Vec::new();
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(5)) {
        rest.push(line);
    }
    rest
}

fn spawn_fleet(
    sandbox: &Sandbox,
    words: &[String],
) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("sledge"))
        .args(words)
        .current_dir(sandbox.path())
        .env("SLEDGE_STORE", sandbox.store())
        .env("SLEDGE_TEST_WORKLOADS", "1")
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (sender, lines) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if sender.send(line).is_err() {
                return;
            }
        }
    });
    (child, lines)
}

/// Waits (bounded) until every one of `labels` said it is running;
/// returns the lines seen.
fn wait_running(lines: &std::sync::mpsc::Receiver<String>, labels: &[&str]) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while !labels.iter().all(|l| {
        seen.iter()
            .any(|s: &String| s.starts_with(&format!("[{l}] running in")))
    }) {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("not every host started its run: {seen:#?}"),
        }
    }
    seen
}

#[test]
fn a_host_whose_sshd_dies_midway_is_reported_and_the_others_land() {
    let Some(set) = NetnsHosts::up(3, "a_host_whose_sshd_dies_midway") else {
        return;
    };
    let sandbox = Sandbox::new();
    let remote_dir = sandbox.path().join("remote");
    seed_binary(&remote_dir);
    let words = fleet_words(&set, &set.list(), &remote_dir, &scripted_args(3, "0.5"));
    let (mut child, lines) = spawn_fleet(&sandbox, &words);
    let labels: Vec<&str> = set
        .hosts
        .iter()
        .map(|h| h.trim_start_matches("root@"))
        .collect();
    wait_running(&lines, &labels);
    std::thread::sleep(Duration::from_millis(1000));
    set.kill_sshd(1);
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    let stderr = rest_of(&lines);
    assert_eq!(status.code(), Some(4), "{stdout}\n{stderr:#?}");
    assert!(
        stdout.contains("fleet run on 3 hosts: 2 runs stored (2 complete), 1 host failed"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with(&format!("  {} ", labels[1]))
                && l.contains("  failed: lost the connection while the run ran")),
        "{stdout}"
    );
    // Its scratch directory could not be removed, and it says so.
    assert!(
        stderr
            .iter()
            .any(|l| l.starts_with("warning: could not remove")),
        "{stderr:#?}"
    );
    let runs = stored_runs(&sandbox);
    assert_eq!(runs.len(), 2, "{runs:?}");
}

#[test]
fn ctrl_c_stops_every_remote_run_keeps_what_finished_and_cleans_up() {
    let Some(set) = NetnsHosts::up(2, "ctrl_c_stops_every_remote_run") else {
        return;
    };
    let sandbox = Sandbox::new();
    let remote_dir = sandbox.path().join("remote");
    seed_binary(&remote_dir);
    let words = fleet_words(&set, &set.list(), &remote_dir, &scripted_args(5, "1"));
    let (mut child, lines) = spawn_fleet(&sandbox, &words);
    let labels: Vec<&str> = set
        .hosts
        .iter()
        .map(|h| h.trim_start_matches("root@"))
        .collect();
    wait_running(&lines, &labels);
    std::thread::sleep(Duration::from_millis(1500));
    // The remote sledges and their rounds are running now.
    assert!(!processes_in(&remote_dir.join("runs")).is_empty());
    // SAFETY: kill with a pid this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = wait_bounded(&mut child, Duration::from_secs(60));
    let stderr = rest_of(&lines);
    assert_eq!(status.code(), Some(130), "{stderr:#?}");

    // Each host's run came back, marked partial, and nothing of the run
    // is left on any host: no process, no scratch directory.
    let runs = stored_runs(&sandbox);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs.iter().all(|r| r["status"] == "partial"), "{runs:?}");
    assert_eq!(processes_in(&remote_dir), Vec::<String>::new());
    assert_eq!(entries(&remote_dir.join("runs")), Vec::<PathBuf>::new());
}

/// A small tmpfs, unmounted when dropped.
struct TinyMount(PathBuf);

impl Drop for TinyMount {
    fn drop(&mut self) {
        let _ = StdCommand::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn hosts_that_cannot_run_it_are_refused_by_name_and_nothing_is_stored() {
    let sandbox = Sandbox::new();
    // Mounted before the hosts start, so that their sshd sees it too.
    let tiny = sandbox.path().join("tiny");
    std::fs::create_dir(&tiny).unwrap();
    let mounted = unsafe { libc::geteuid() } == 0
        && StdCommand::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(&tiny)
            .status()
            .is_ok_and(|s| s.success());
    let _unmount = mounted.then(|| TinyMount(tiny.clone()));
    let Some(set) = NetnsHosts::up(1, "hosts_that_cannot_run_it") else {
        return;
    };
    let remote_dir = sandbox.path().join("remote");
    let host = &set.hosts[0];
    let run = scripted_args(1, "0");

    // A host of another architecture (as this sledge is told to expect).
    let assert = fleet_sledge(&sandbox)
        .env("SLEDGE_FLEET_ARCH", "riscv64")
        .args(fleet_words(&set, host, &remote_dir, &run))
        .assert()
        .code(1);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let arch = std::env::consts::ARCH;
    assert!(
        stdout.contains(&format!(
            "failed: the host's architecture is {arch}, this sledge is built for riscv64"
        )),
        "{stdout}"
    );
    // Nothing was copied there.
    assert_eq!(entries(&remote_dir.join("bin")), Vec::<PathBuf>::new());

    // The same host served by a build given for its architecture
    // (`--binary-for`): a file of that architecture, checked before any
    // host is touched, then copied there and run.
    let other_build = sandbox.path().join("sledge-other");
    std::fs::copy(assert_cmd::cargo::cargo_bin("sledge"), &other_build).unwrap();
    let mut words = fleet_words(&set, host, &remote_dir, &run);
    let at = words.iter().position(|w| w == "--remote-dir").unwrap();
    words.splice(
        at..at,
        [
            "--binary-for".to_string(),
            format!("{arch}={}", other_build.display()),
        ],
    );
    // (Into a store of its own: this test's store must stay empty.)
    let served = Sandbox::new();
    let assert = fleet_sledge(&served)
        .env("SLEDGE_FLEET_ARCH", "riscv64")
        .args(&words)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains("1 run stored"), "{stdout}");
    assert_eq!(entries(&remote_dir.join("bin")).len(), 1);
    std::fs::remove_dir_all(&remote_dir).unwrap();
    // A file that is no build for the architecture named is refused.
    let at = words.iter().position(|w| w == "--binary-for").unwrap();
    words[at + 1] = format!("s390x={}", other_build.display());
    let assert = fleet_sledge(&sandbox).args(&words).assert().code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("--binary-for s390x=") && stderr.contains("not s390x"),
        "{stderr}"
    );

    // A host that does not let this key in.
    let other_key = sandbox.path().join("other_key");
    let made = StdCommand::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&other_key)
        .status()
        .unwrap();
    assert!(made.success());
    let mut words = fleet_words(&set, host, &remote_dir, &run);
    let key_at = words.iter().position(|w| w == "--identity").unwrap() + 1;
    words[key_at] = other_key.display().to_string();
    let assert = fleet_sledge(&sandbox).args(&words).assert().code(1);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains(&format!("failed: cannot connect to {host}: "))
            && stderr.contains("Permission denied"),
        "{stderr}"
    );

    // A host without the space for a copy of sledge.
    if mounted {
        let assert = fleet_sledge(&sandbox)
            .args(fleet_words(&set, host, &tiny, &run))
            .assert()
            .code(1);
        let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
        assert!(
            stdout.contains("failed: only 1 MiB free in ")
                && stdout.contains(&format!("{}, a fleet run needs", tiny.display())),
            "{stdout}"
        );
        assert_eq!(entries(&tiny.join("bin")), Vec::<PathBuf>::new());
    }
    sandbox.assert_no_runs();
}

#[test]
fn bad_host_lists_and_unknown_hosts_are_clear_errors() {
    let sandbox = Sandbox::new();
    for (hosts, said) in [
        ("root@h1,,root@h2", "entry 2 is empty"),
        ("root@h1,root@h1", "`root@h1` appears twice"),
        ("root@h1:99999", "port `99999`"),
        ("-oProxyCommand=touch", "not starting with `-`"),
    ] {
        sandbox
            .sledge()
            .args(["fleet", "run", "--hosts", hosts, "cpu.primes"])
            .assert()
            .code(2)
            .stderr(predicates::str::contains(said));
    }
    // The run's own arguments are checked before any host is tried.
    sandbox
        .sledge()
        .args(["fleet", "run", "--hosts", "root@h1", "no.such.workload"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no.such.workload"));
    sandbox
        .sledge()
        .args([
            "fleet",
            "run",
            "--hosts",
            "root@h1",
            "cpu.primes",
            "--store",
            "x.db",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--store after the targets"));
    // A name that does not resolve fails at once, named (by ssh, which
    // resolves it).
    if SSH_CLIENT.met_in_part("a host name that does not resolve") {
        sandbox
            .sledge()
            .args(["fleet", "run", "--hosts", "root@no-such-host.invalid"])
            .args(["--remote-dir", "unused", "cpu.primes"])
            .assert()
            .code(1)
            .stdout(predicates::str::contains(
                "no-such-host.invalid  failed: cannot connect to root@no-such-host.invalid: ",
            ));
    }
    sandbox.assert_no_runs();
}

#[test]
fn a_remote_dir_ending_in_a_space_is_that_directory_and_another_is_not_touched() {
    let Some(set) = NetnsHosts::up(1, "a_remote_dir_ending_in_a_space") else {
        return;
    };
    let sandbox = Sandbox::new();
    // `remote ` (with the space) is the fleet's directory; `remote` is
    // the user's, with a directory in it that looks like an old run's.
    let spaced = sandbox.path().join("remote ");
    let other = sandbox.path().join("remote");
    seed_binary(&spaced);
    let users = other.join("runs/run.OLDONE");
    std::fs::create_dir_all(&users).unwrap();
    std::fs::write(users.join("precious"), "the user's").unwrap();
    age(&users);

    let assert = fleet_sledge(&sandbox)
        .args(fleet_words(
            &set,
            &set.list(),
            &spaced,
            &scripted_args(1, "0"),
        ))
        .assert();
    let output = assert.get_output();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stored_runs(&sandbox).len(), 1, "{stderr}");
    let host = set.hosts[0].trim_start_matches("root@");
    assert!(
        stderr.contains(&format!(
            "[{host}] running in {}/runs/run.",
            spaced.display()
        )),
        "{stderr}"
    );
    // The run happened in `remote /runs` and was cleaned up there; nothing
    // went to `remote`.
    assert!(entries(&spaced.join("runs")).is_empty());
    assert!(users.join("precious").exists(), "{stderr}");
    assert_eq!(entries(&other), [other.join("runs")]);
    assert_eq!(entries(&other.join("runs")), std::slice::from_ref(&users));
}

#[test]
fn serial_hosts_run_one_after_another() {
    let Some(set) = NetnsHosts::up(2, "serial_hosts_run_one_after_another") else {
        return;
    };
    let sandbox = Sandbox::new();
    let remote_dir = sandbox.path().join("remote");
    seed_binary(&remote_dir);
    // What a fleet run that lost its host left there: a scratch directory
    // it marked, whose sledge is gone, older than a minute. The next run
    // removes it; a fresh one (its sledge may be about to start) stays, and
    // so does an old one without the mark (the user's, whatever its name).
    let stale = remote_dir.join("runs/run.stale1");
    let fresh = remote_dir.join("runs/run.fresh1");
    let users = remote_dir.join("runs/run.OLDONE");
    for dir in [&stale, &fresh, &users] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("pid"), "999999999\n").unwrap();
    }
    for dir in [&stale, &fresh] {
        mark_as_fleet_scratch(dir);
    }
    for dir in [&stale, &users] {
        age(dir);
    }

    let mut words = fleet_words(&set, &set.list(), &remote_dir, &scripted_args(1, "0"));
    words.insert(2, "--serial".to_string());
    let assert = fleet_sledge(&sandbox).args(&words).assert().success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    let at = |text: String| {
        stderr
            .find(&text)
            .unwrap_or_else(|| panic!("no {text:?} in {stderr}"))
    };
    let (first, second) = (
        set.hosts[0].trim_start_matches("root@"),
        set.hosts[1].trim_start_matches("root@"),
    );
    // The second host is not even connected before the first one's run
    // is stored here.
    assert!(
        at(format!("[{first}] its run is stored as run 1")) < at(format!("[{second}] connected")),
        "{stderr}"
    );
    assert_eq!(stored_runs(&sandbox).len(), 2);
    assert!(!stale.exists() && fresh.exists() && users.exists());
    assert!(
        stderr.contains(&format!(
            "removed {}, left behind by a fleet run whose sledge is gone",
            stale.display()
        )),
        "{stderr}"
    );
}

#[test]
fn a_second_ctrl_c_kills_the_remote_runs_and_still_cleans_up() {
    let Some(set) = NetnsHosts::up(1, "a_second_ctrl_c_kills_the_remote_runs") else {
        return;
    };
    let sandbox = Sandbox::new();
    let remote_dir = sandbox.path().join("remote");
    seed_binary(&remote_dir);
    // Each round's cleanup takes 30 s, which Ctrl-C does not cut short:
    // only the second interrupt gets past it.
    let mut run = scripted_args(3, "0.5");
    run.extend(["-p".to_string(), "cleanup=30".to_string()]);
    let words = fleet_words(&set, &set.list(), &remote_dir, &run);
    let (mut child, lines) = spawn_fleet(&sandbox, &words);
    let label = set.hosts[0].trim_start_matches("root@");
    wait_running(&lines, &[label]);
    std::thread::sleep(Duration::from_millis(1500));
    let started = Instant::now();
    // SAFETY: kill with a pid this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(1000));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = wait_bounded(&mut child, Duration::from_secs(25));
    let stderr = rest_of(&lines);
    assert_eq!(status.code(), Some(130), "{stderr:#?}");
    assert!(started.elapsed() < Duration::from_secs(25));
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("failed: stopped by the interrupt before the run was stored")),
        "{stderr:#?}"
    );
    assert_eq!(processes_in(&remote_dir), Vec::<String>::new());
    assert_eq!(entries(&remote_dir.join("runs")), Vec::<PathBuf>::new());
    sandbox.assert_no_runs();
}

/// A short CPU-bound run: five rounds of one 0.2 s trial of prime checking
/// on one thread, each round in a fresh process, so that each host's CI
/// covers its round-to-round noise.
fn primes_args() -> Vec<String> {
    [
        "cpu.primes",
        "-p",
        "threads=1",
        "-p",
        "time=0.2",
        "--rounds",
        "5",
        "--warmup",
        "0",
        "--min-trials",
        "1",
        "--max-trials",
        "1",
        "--no-idle-check",
    ]
    .map(str::to_string)
    .to_vec()
}

/// `sledge fleet outliers RUNS --json`, which must succeed.
fn outliers_view(sandbox: &Sandbox, runs: &[&str]) -> serde_json::Value {
    let out = sandbox
        .sledge()
        .args(["fleet", "outliers", "--json"])
        .args(runs)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The first case of the outliers view: each host's mean, ratio and
/// modified z-score, and the spread they were judged against (what a
/// failure needs to say why a host was or was not named).
fn judged_case(sandbox: &Sandbox, runs: &[&str]) -> serde_json::Value {
    outliers_view(sandbox, runs)["populations"][0]["cases"][0].clone()
}

/// The outliers `sledge fleet outliers RUNS --json` names, as
/// `(host, verdict)`.
fn named_outliers(sandbox: &Sandbox, runs: &[&str]) -> Vec<(String, String)> {
    let view = outliers_view(sandbox, runs);
    assert_eq!(view["populations"].as_array().unwrap().len(), 1, "{view}");
    assert_eq!(
        view["populations"][0]["hosts"].as_array().unwrap().len(),
        runs.len()
    );
    view["populations"][0]["outliers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["host"].as_str().unwrap().to_string(),
                o["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_host_under_a_cpu_quota_is_named_an_outlier_and_without_it_none_is() {
    let Some(set) = NetnsHosts::up(3, "a_host_under_a_cpu_quota_is_named") else {
        return;
    };
    let sandbox = Sandbox::new();
    let remote_dir = sandbox.path().join("remote");
    seed_binary(&remote_dir);
    let labels: Vec<&str> = set
        .hosts
        .iter()
        .map(|h| h.trim_start_matches("root@"))
        .collect();
    // One host after another: three CPU-bound hosts at once on a small
    // machine would measure their fight for its CPUs.
    let mut words = fleet_words(&set, &set.list(), &remote_dir, &primes_args());
    words.insert(2, "--serial".to_string());
    // Every host gets a whole CPU at the largest CPU weight: the tests
    // running alongside (a hackbench of many tasks, say) must not take
    // the hosts' CPU, or the unlimited hosts would fall towards the
    // limited one and the difference drown in their noise.
    for index in 0..set.hosts.len() {
        set.quota(index, 100);
    }

    // The same machine three times: no host is named.
    let assert = fleet_sledge(&sandbox).args(&words).assert().success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(
        stdout.contains("outlier hosts among 3 hosts of ")
            && stdout.contains("  none: every host is within the fleet's spread"),
        "{stdout}"
    );
    assert_eq!(named_outliers(&sandbox, &["1", "2", "3"]), []);

    // The second host held to 2% of a CPU: it, and it alone, is named,
    // slower, with nothing in its inventory to tell why (its sessions run
    // under `ip netns exec`, whose `/sys` has no cgroup file systems, so
    // the probe cannot read the quota). Everything that host runs is held
    // (its sshd, the probe, the run, the export of a debug build), so
    // this fleet run once went past the 90 s bound of the others on an
    // idle machine: its bound is wider. A milder quota would be quicker
    // but nearer the outlier threshold: with the two free hosts 35%
    // apart (a spread of 0.30, seen here), a host at 5% would sit at a
    // z of about -3.7 against the -3.5 that names it.
    set.quota(1, 2);
    let assert = fleet_sledge(&sandbox)
        .timeout(Duration::from_secs(240))
        .args(&words)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("  {} (run 5): cpu.primes ", labels[1])))
        .unwrap_or_else(|| {
            panic!(
                "no outlier line for {}: {stdout}\nthe case across the hosts: {}",
                labels[1],
                judged_case(&sandbox, &["4", "5", "6"])
            )
        });
    assert!(line.ends_with(", slower"), "{line}");
    assert!(
        stdout.contains("    no inventory fact sets it apart"),
        "{stdout}"
    );
    for other in [labels[0], labels[2]] {
        assert!(!stdout.contains(&format!("  {other} (run ")), "{stdout}");
    }
    assert_eq!(
        named_outliers(&sandbox, &["4", "5", "6"]),
        [(labels[1].to_string(), "slower".to_string())]
    );
}

#[test]
fn a_battery_of_commands_runs_on_every_host_and_a_missing_program_is_named() {
    let Some(set) = NetnsHosts::up(2, "a_battery_of_commands_runs_on_every_host") else {
        return;
    };
    let sandbox = Sandbox::new();
    let remote_dir = sandbox.path().join("remote");
    seed_binary(&remote_dir);
    let battery = sandbox.path().join("tier.toml");
    std::fs::write(
        &battery,
        "[[case]]\ncommand = \"printf 'n 7'\"\nmetric = \"n:items:higher:regex:n ([0-9]+)\"\n",
    )
    .unwrap();
    let fast = [
        "--rounds",
        "1",
        "--warmup",
        "0",
        "--min-trials",
        "1",
        "--max-trials",
        "1",
        "--no-idle-check",
    ];
    let mut run = vec![battery.display().to_string()];
    run.extend(fast.map(str::to_string));
    fleet_sledge(&sandbox)
        .args(fleet_words(&set, &set.list(), &remote_dir, &run))
        .assert()
        .success();
    // Each host ran the file's very text: its name and hash in every run.
    let runs = stored_runs(&sandbox);
    assert_eq!(runs.len(), 2, "{runs:?}");
    for id in ["1", "2"] {
        let out = sandbox
            .sledge()
            .args(["show", id, "--json"])
            .output()
            .unwrap();
        let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(shown["profile"], "tier", "{shown}");
        assert!(
            shown["notes"].to_string().contains("battery=tier sha256:"),
            "{shown}"
        );
        assert_eq!(shown["cases"][0]["metrics"][0]["summary"]["mean"], 7.0);
    }
    // A program no host has: every host's run is refused before it
    // measures anything, naming the program.
    std::fs::write(
        &battery,
        "[[case]]\ncommand = \"sledge-no-such-program --x\"\n",
    )
    .unwrap();
    let assert = fleet_sledge(&sandbox)
        .args(fleet_words(&set, &set.list(), &remote_dir, &run))
        .assert()
        .code(1);
    let output = assert.get_output();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    for host in &set.hosts {
        let label = host.trim_start_matches("root@");
        assert!(
            said.lines().any(|l| l.contains(label)
                && l.contains("`sledge-no-such-program` is not a program on this host's PATH")),
            "{said}"
        );
    }
    assert_eq!(stored_runs(&sandbox).len(), 2);
    assert_eq!(entries(&remote_dir.join("runs")), Vec::<PathBuf>::new());
}

#[test]
fn pairs_measure_every_host_against_the_reference_and_a_slow_link_is_named() {
    let Some(set) = NetnsHosts::up(5, "pairs_measure_every_host_against_the_reference") else {
        return;
    };
    let sandbox = Sandbox::new();
    let remote_dir = sandbox.path().join("remote");
    seed_binary(&remote_dir);
    let reference = set.hosts[0].clone();
    let measured = set.hosts[1..].join(",");
    let labels: Vec<&str> = set.hosts[1..]
        .iter()
        .map(|h| h.trim_start_matches("root@"))
        .collect();
    // The second measured host's link sends at 100 Mbit/s at most (a
    // token bucket on its veth), the others' as fast as the machine
    // goes. Four measured hosts: the fleet's spread is judged on the
    // three others, which agree more closely than two would.
    let namespace = set.namespace(2);
    let device = format!("sl{}-h", &namespace["sledge-h".len()..]);
    let status = StdCommand::new("ip")
        .args(["netns", "exec", &namespace, "tc", "qdisc", "add", "dev"])
        .args([device.as_str(), "root", "tbf", "rate", "100mbit"])
        .args(["burst", "32kbit", "latency", "50ms"])
        .status()
        .expect("tc runs");
    assert!(status.success(), "tc qdisc add in {namespace}");
    for index in 1..set.hosts.len() {
        set.quota(index, 100);
    }
    let run: Vec<String> = ["net.stream", "-p", "time=0.5"]
        .iter()
        .chain(crate::common::ONE_TRIAL)
        .map(|w| w.to_string())
        .collect();
    let mut words = fleet_words(&set, &measured, &remote_dir, &run);
    words.insert(2, "--pairs".to_string());
    words.insert(3, reference.clone());
    let assert = fleet_sledge(&sandbox)
        .timeout(Duration::from_secs(180))
        .args(&words)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    // Every host ran against the reference's server, at one address.
    let peer = format!("{}:", set.address(0));
    for id in ["1", "2", "3", "4"] {
        let out = sandbox
            .sledge()
            .args(["show", id, "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let case = &shown["cases"][0];
        assert!(
            case["params"]["peer"].as_str().unwrap().starts_with(&peer),
            "{case}"
        );
        assert!(case["error"].is_null(), "{case}");
    }
    assert_eq!(
        named_outliers(&sandbox, &["1", "2", "3", "4"]),
        [(labels[1].to_string(), "slower".to_string())],
        "{stdout}\nthe case across the hosts: {}",
        judged_case(&sandbox, &["1", "2", "3", "4"])
    );
    // The reference's server stopped with the fleet run.
    let until = Instant::now() + Duration::from_secs(5);
    while !set.processes_with(0, "__net-serve").is_empty() {
        assert!(
            Instant::now() < until,
            "{:?}",
            set.processes_with(0, "__net-serve")
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // A reference that is also measured, or a run without net.*
    // workloads, is refused before any host is touched.
    for (hosts, run, says) in [
        (set.list(), "net.stream", "also in --hosts"),
        (
            measured.clone(),
            "cpu.primes",
            "no selected workload has a parameter `peer`",
        ),
    ] {
        let mut words = fleet_words(&set, &hosts, &remote_dir, &[run.to_string()]);
        words.insert(2, "--pairs".to_string());
        words.insert(3, reference.clone());
        let out = fleet_sledge(&sandbox).args(&words).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--pairs") && stderr.contains(says),
            "{stderr}"
        );
    }
}
