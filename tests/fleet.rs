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
