//! The database server's process when it runs on this host: the
//! postmaster of `db=postgres-local`, or the process listening on the
//! port of a URL whose host is this machine (`localhost`, `127.0.0.1`,
//! `::1`). A case claims it for the monitor (`monitor::own_processes`: its
//! CPU is the workload's, not a disturbance) and counts its CPU per trial.
//!
//! The listening process is found from the socket, not from the
//! database: `/proc/net/tcp{,6}` gives the listening socket's inode for
//! the port, and the process holding `socket:[inode]` among its file
//! descriptors is the server. That works for PostgreSQL and MariaDB alike
//! (PostgreSQL's `pg_backend_pid()` has no MariaDB counterpart: a MariaDB
//! connection is a thread, not a process). Reading another user's
//! `/proc/<pid>/fd` needs root or that user; without it the server is not
//! found, and the case says so once instead of counting its CPU.

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::path::Path;

use super::local_pg::LocalPostgres;
use crate::http::server::DbSource;
use crate::http::server::dynamic::{mysql_login, postgres_login};
use crate::monitor::own_processes::{self, OwnProcess};
use crate::monitor::procfs;
use crate::workloads::http::server_processes::{
    ServerProcesses, ServerSample, ServerSpec, ServerUse,
};

/// PostgreSQL's default port.
const POSTGRES_PORT: u16 = 5432;
/// TCP state `LISTEN` in `/proc/net/tcp` (`include/net/tcp_states.h`).
const TCP_LISTEN: &str = "0A";

/// The server of a case on this host: claimed as the workload's own for
/// as long as this lives, and sampled around each trial.
pub struct WatchedServer {
    processes: ServerProcesses,
    _claim: OwnProcess,
}

impl WatchedServer {
    /// The server behind `source` (started as `local`, when there is one):
    /// `Ok(None)` when it runs elsewhere (or is SQLite, inside sledge),
    /// `Err` saying why a server on this host was not found.
    pub fn find(
        source: &DbSource,
        local: Option<&LocalPostgres>,
    ) -> Result<Option<WatchedServer>, String> {
        let pid = match local {
            Some(server) => postmaster_pid(server.data_dir()).ok_or_else(|| {
                format!(
                    "the local server's postmaster.pid in {} cannot be read",
                    server.data_dir().display()
                )
            })?,
            None => {
                let Some(port) = local_port(source) else {
                    return Ok(None);
                };
                listening_process(port).ok_or_else(|| {
                    format!(
                        "no process listening on port {port} of this host could be read in /proc (another user's server needs root to be found)"
                    )
                })?
            }
        };
        let processes =
            ServerProcesses::find(&ServerSpec::Pid(pid)).map_err(|e| format!("{e:#}"))?;
        let claim = own_processes::claim(pid)
            .ok_or_else(|| format!("the server's process {pid} is gone"))?;
        Ok(Some(WatchedServer {
            processes,
            _claim: claim,
        }))
    }

    /// Its CPU time now; `None` once it is gone (a server killed or
    /// restarted mid-trial: the clients count the reconnects, and that
    /// trial has no server figures).
    pub fn sample(&self) -> Option<ServerSample> {
        self.processes.sample().ok()
    }

    /// What it used between two samples.
    pub fn used(before: Option<ServerSample>, after: Option<ServerSample>) -> Option<ServerUse> {
        after?.since(&before?)
    }
}

/// The postmaster's pid: the first line of `postmaster.pid` in its data
/// directory.
pub fn postmaster_pid(data: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    text.lines().next()?.trim().parse().ok()
}

/// The port of `source` when its host is this machine; `None` for SQLite,
/// a host elsewhere or a Unix socket.
pub fn local_port(source: &DbSource) -> Option<u16> {
    match source {
        DbSource::Sqlite => None,
        DbSource::Postgres(url) => {
            let config = postgres_login(url).ok()?;
            let local = config.get_hosts().iter().any(|host| match host {
                tokio_postgres::config::Host::Tcp(name) => is_this_host(name),
                _ => false,
            });
            let port = config.get_ports().first().copied().unwrap_or(POSTGRES_PORT);
            local.then_some(port)
        }
        DbSource::Mysql(url) => {
            let opts = mysql_login(url).ok()?;
            // The mysql crate's port defaults to 3306 when the URL has none.
            is_this_host(&opts.get_ip_or_hostname()).then_some(opts.get_tcp_port())
        }
    }
}

/// Whether `host` names this machine: `localhost` or a loopback address.
fn is_this_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

/// The inodes of the sockets listening on `port` in one of
/// `/proc/net/tcp`'s or `/proc/net/tcp6`'s texts.
fn listening_inodes(text: &str, port: u16) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_ascii_whitespace().collect();
            let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
            let local_port = u16::from_str_radix(local.rsplit_once(':')?.1, 16).ok()?;
            (local_port == port && *state == TCP_LISTEN)
                .then(|| inode.parse().ok())
                .flatten()
        })
        .filter(|&inode| inode != 0)
        .collect()
}

/// The process listening on TCP `port` of this host: of the processes
/// holding the listening socket, the one whose parent does not hold it
/// too (a forking server's children may inherit it).
pub fn listening_process(port: u16) -> Option<u32> {
    let inodes: BTreeSet<u64> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .flat_map(|text| listening_inodes(&text, port))
        .collect();
    if inodes.is_empty() {
        return None;
    }
    let wanted: BTreeSet<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    let holders: BTreeSet<u32> = procfs::list_pids()
        .into_iter()
        .filter(|pid| holds_any(*pid, &wanted))
        .collect();
    holders
        .iter()
        .copied()
        .find(|&pid| procfs::read_pid_stat(pid).is_some_and(|stat| !holders.contains(&stat.ppid)))
}

/// Whether process `pid` has one of `links` among its file descriptors.
fn holds_any(pid: u32, links: &BTreeSet<String>) -> bool {
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    entries.flatten().any(|entry| {
        std::fs::read_link(entry.path())
            .ok()
            .and_then(|target| target.to_str().map(|t| links.contains(t)))
            .unwrap_or(false)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MariaDB's and MySQL's default port.
    const MYSQL_PORT: u16 = 3306;

    #[test]
    fn this_host_is_loopback_or_localhost() {
        for host in ["localhost", "127.0.0.1", "127.3.4.5", "::1", "[::1]"] {
            assert!(is_this_host(host), "{host}");
        }
        for host in ["db.example.com", "10.0.0.1", "198.18.0.2", ""] {
            assert!(!is_this_host(host), "{host}");
        }
    }

    #[test]
    fn a_url_on_this_host_gives_its_port() {
        let pg = |url: &str| local_port(&DbSource::Postgres(url.to_string()));
        assert_eq!(pg("postgres://u@127.0.0.1:5433/d"), Some(5433));
        assert_eq!(pg("postgres://u@localhost/d"), Some(POSTGRES_PORT));
        assert_eq!(pg("postgres://u@db.example.com:5433/d"), None);
        let my = |url: &str| local_port(&DbSource::Mysql(url.to_string()));
        assert_eq!(my("mysql://root@127.0.0.1:3307/test"), Some(3307));
        assert_eq!(my("mysql://root@127.0.0.1/test"), Some(MYSQL_PORT));
        assert_eq!(my("mysql://root@10.1.1.1/test"), None);
        assert_eq!(local_port(&DbSource::Sqlite), None);
    }

    #[test]
    fn listening_sockets_are_read_from_proc_net_tcp() {
        // Two listeners (one on 5432 = 0x1538) and a connection to 5432.
        let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   105        0 5945 1 0 100 0 0 10 0\n\
   1: 00000000:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1590 1 0 100 0 0 10 0\n\
   2: 0100007F:C350 0100007F:1538 01 00000000:00000000 00:00000000 00000000     0        0 7777 1 0 20 4 30 10 -1\n";
        assert_eq!(listening_inodes(text, 5432), vec![5945]);
        assert_eq!(listening_inodes(text, 3306), vec![1590]);
        assert!(listening_inodes(text, 80).is_empty());
        assert!(listening_inodes("", 5432).is_empty());
    }

    #[test]
    fn the_listening_process_of_a_port_is_found() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert_eq!(listening_process(port), Some(std::process::id()));
        drop(listener);
        assert_eq!(listening_process(port), None);
    }
}
