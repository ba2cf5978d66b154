//! The options of `sledge http`, in a file of their own: `http.rs` runs
//! the load from this host and `http_from.rs` from client hosts, and both
//! read them.

use std::net::SocketAddr;

use clap::Args;

use super::format_args::{FormatArgs, FormatFlag, FormatSet};
use super::output::UsageError;
use crate::engine::params::parse_seconds;
use crate::http::distributed::FromHosts;
use crate::http::{BadLoad, LoadRequest};
use crate::report::export::Format;

/// Options of `sledge http`.
#[derive(Debug, Args)]
#[command(after_help = "\
Results are printed, not stored (use the http.url workload with `sledge \
run` for stored, repeated trials against any URL, and http.static and \
http.dynamic for the built-in server).

Examples:
  sledge http -c 50 -d 10 http://127.0.0.1:8080/
  sledge http -c 6 --rate-per-client 10 --timeout 1 -n 60000 http://127.0.0.1/
  sledge http -X POST -H 'Content-Type: text/plain' --body-file b.txt http://127.0.0.1/
  sledge http -c 1 --rate-per-client 10 -d 60 --from u@h1,u@h2,u@h3 http://198.18.0.1/
  sledge http --serve 127.0.0.1:8080     # then GET /static/1, /static/10485760, /dynamic
  sledge http --serve 127.0.0.1:8080 --db postgres://postgres@127.0.0.1/test")]
pub struct HttpArgs {
    /// URLs to request, in turn (same host and port). Only http://.
    #[arg(value_name = "URL", required_unless_present = "serve")]
    pub(super) urls: Vec<String>,
    /// Concurrent connections (clients).
    #[arg(short = 'c', long, default_value_t = 10)]
    pub(super) connections: usize,
    /// Generator threads [default: one per CPU, at most one per connection];
    /// with --serve, server event loops [default: 1].
    #[arg(short = 't', long)]
    pub(super) threads: Option<usize>,
    /// How long to run, in seconds (or 500ms, 2m) [default: 10, or 600 with
    /// -n]. With -n, the run stops at whichever comes first.
    #[arg(short = 'd', long, value_parser = seconds)]
    pub(super) duration: Option<f64>,
    /// Stop after this many requests, or at the duration (-d, 600 s unless
    /// given), whichever comes first.
    #[arg(short = 'n', long)]
    pub(super) requests: Option<u64>,
    /// Open a new connection for every request.
    #[arg(long)]
    pub(super) no_keepalive: bool,
    /// Closed loop: think time between a connection's requests, uniformly
    /// random up to this many seconds (siege's realistic mode).
    #[arg(long, value_parser = seconds)]
    pub(super) think: Option<f64>,
    /// Open loop: requests per second in total; latency counts from when
    /// each request was due.
    #[arg(long, conflicts_with = "rate_per_client")]
    pub(super) rate: Option<f64>,
    /// Open loop: requests per second per connection (httperf's clients).
    #[arg(long)]
    pub(super) rate_per_client: Option<f64>,
    /// A request without a complete response after this many seconds is a
    /// timeout error (connecting included), and its connection is closed
    /// [default: 2, as wrk; 0 = no timeout].
    #[arg(long, value_parser = seconds)]
    pub(super) timeout: Option<f64>,
    /// The requests' method: GET, HEAD, POST, PUT, PATCH, DELETE or
    /// OPTIONS [default: GET].
    #[arg(long, short = 'X', value_name = "METHOD", conflicts_with_all = ["from", "serve"])]
    pub(super) method: Option<String>,
    /// A header to add to every request, `Name: value` (repeat for more).
    /// Host, Connection and Content-Length are sledge's own, and
    /// Transfer-Encoding is refused; a User-Agent replaces sledge's.
    #[arg(short = 'H', long = "header", value_name = "HEADER", conflicts_with_all = ["from", "serve"])]
    pub(super) headers: Vec<String>,
    /// Send this file's bytes as every request's body, with its
    /// Content-Length (a regular file of at most 64 MiB, read once).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["from", "serve"])]
    pub(super) body_file: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub(super) format: FormatArgs<HttpFormats>,
    /// Run the built-in server on ADDR (e.g. 127.0.0.1:8080) until Ctrl-C
    /// instead of generating load.
    #[arg(long, value_name = "ADDR", conflicts_with = "urls")]
    pub(super) serve: Option<SocketAddr>,
    /// Server model with --serve: async (event loops) or threads (one per
    /// connection).
    #[arg(long, default_value = "async", value_parser = ["async", "threads"])]
    pub(super) model: String,
    /// With --serve --model threads: connection threads at once (Apache's
    /// MaxRequestWorkers); more connections wait in the listen queue.
    #[arg(long, value_name = "N", default_value_t = crate::http::server::DEFAULT_MAX_THREADS as u32,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub(super) max_threads: u32,
    /// Database of the /dynamic page with --serve: sqlite (a fresh
    /// embedded file), postgres://user@host:port/database (or libpq's
    /// `host=... user=... dbname=...`) or mysql://user@host:port/database
    /// (a table created for the server and dropped when it stops)
    /// [default: sqlite]. Leave the password out (others see command
    /// lines): PGPASSWORD or ~/.pgpass, ~/.my.cnf or MYSQL_PWD are used.
    #[arg(long, value_name = "DB")]
    pub(super) db: Option<String>,
    /// Generate the load from these client hosts at once instead of this
    /// one: user@host[:port],... reached with ssh (BatchMode), each
    /// running this sledge, copied to a host that has no copy of it (see
    /// --remote-dir, --remote-sledge). -c and -t are per host; --rate and -n are for all
    /// hosts together; --rate-per-client is per connection on every host.
    #[arg(long, value_name = "HOSTS", conflicts_with = "serve")]
    pub(super) from: Option<String>,
    /// With --from: the host names only label agents started on this
    /// host as child processes (the same protocol over pipes; for tests).
    #[arg(long, hide = true, requires = "from")]
    pub(super) from_local: bool,
    /// With --from: the private key to log in with (ssh -i); else ssh's
    /// agent and configuration decide.
    #[arg(short = 'i', long, value_name = "FILE", requires = "from")]
    pub(super) identity: Option<std::path::PathBuf>,
    /// With --from: a known_hosts file to check the hosts' keys against
    /// instead of ssh's own; new hosts are added to it, a changed key is
    /// refused.
    #[arg(long, value_name = "FILE", requires = "from")]
    pub(super) known_hosts: Option<std::path::PathBuf>,
    /// With --from: seconds to wait for each host's SSH connection.
    #[arg(long, value_name = "SECONDS", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub(super) connect_timeout: u64,
    /// With --from: the directory on each client host for the copy of
    /// this sledge, made when the host has no copy of the same bytes (a
    /// relative path is from the login directory; the same default as
    /// `sledge fleet run`, so the two share their copies).
    #[arg(long, value_name = "DIR", default_value = crate::remote::DEFAULT_DIR, requires = "from")]
    pub(super) remote_dir: String,
    /// With --from: run this sledge (of this version) on every client host
    /// instead of copying this one there.
    #[arg(
        long,
        value_name = "PATH",
        requires = "from",
        conflicts_with = "remote_dir"
    )]
    pub(super) remote_sledge: Option<String>,
}

/// The formats of `sledge http`: `--json`.
#[derive(Debug)]
pub struct HttpFormats;

impl FormatSet for HttpFormats {
    const FLAGS: &'static [FormatFlag] = &[FormatFlag {
        format: Format::Json,
        help: "Print the results as JSON",
    }];
}

impl HttpArgs {
    /// The load these options ask for.
    pub(super) fn load_request(&self) -> LoadRequest {
        LoadRequest {
            urls: self.urls.clone(),
            connections: self.connections,
            threads: self.threads,
            duration: self.duration,
            requests: self.requests,
            no_keepalive: self.no_keepalive,
            think: self.think,
            rate: self.rate,
            rate_per_client: self.rate_per_client,
            timeout: self.timeout,
            method: self.method.clone(),
            headers: self.headers.clone(),
            body_file: self.body_file.clone(),
        }
    }

    /// The client hosts `--from` names and how to reach them.
    pub(super) fn client_hosts(&self, hosts: &str) -> FromHosts {
        FromHosts {
            hosts: hosts.to_string(),
            local: self.from_local,
            identity: self.identity.clone(),
            known_hosts: self.known_hosts.clone(),
            connect_timeout_secs: self.connect_timeout,
            remote_dir: self.remote_dir.clone(),
            remote_sledge: self.remote_sledge.clone(),
        }
    }
}

/// A duration option's seconds (`10`, `500ms`, `2m`).
fn seconds(text: &str) -> Result<f64, String> {
    parse_seconds(text).ok_or_else(|| format!("`{text}` is not a duration (e.g. 10, 500ms, 2m)"))
}

/// A mistake in the load asked for is the command line's: exit status 2.
pub(super) fn load_usage(err: anyhow::Error) -> anyhow::Error {
    match err.downcast::<BadLoad>() {
        Ok(bad) => UsageError(bad.0).into(),
        Err(err) => err,
    }
}
