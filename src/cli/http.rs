//! `sledge http`: ad-hoc load against any HTTP/1.1 server, like wrk or ab,
//! and `--serve` to run the built-in server on its own.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;

use super::output::{ExitStatus, UsageError, print};
use crate::engine::CancelToken;
use crate::engine::params::parse_seconds;
use crate::http::{self, LoadConfig, LoadReport, Model, Rate, ServerConfig};
use crate::sys::affinity;

/// Options of `sledge http`.
#[derive(Debug, Args)]
#[command(after_help = "\
Results are printed, not stored (use the http.static and http.dynamic \
workloads with `sledge run` for stored, repeated trials).

Examples:
  sledge http -c 50 -d 10 http://127.0.0.1:8080/
  sledge http -c 6 --rate-per-client 10 --timeout 1 -n 60000 http://127.0.0.1/
  sledge http -c 1 --rate-per-client 10 -d 60 --from u@h1,u@h2,u@h3 http://198.18.0.1/
  sledge http --serve 127.0.0.1:8080     (then GET /static/1, /static/10485760, /dynamic)
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
    /// Print the results as JSON.
    #[arg(long)]
    pub(super) json: bool,
    /// Run the built-in server on ADDR (e.g. 127.0.0.1:8080) until Ctrl-C
    /// instead of generating load.
    #[arg(long, value_name = "ADDR", conflicts_with = "urls")]
    serve: Option<SocketAddr>,
    /// Server model with --serve: async (event loops) or threads (one per
    /// connection).
    #[arg(long, default_value = "async", value_parser = ["async", "threads"])]
    model: String,
    /// With --serve --model threads: connection threads at once (Apache's
    /// MaxRequestWorkers); more connections wait in the listen queue.
    #[arg(long, value_name = "N", default_value_t = http::server::DEFAULT_MAX_THREADS as u32,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    max_threads: u32,
    /// Database of the /dynamic page with --serve: sqlite (a fresh
    /// embedded file), postgres://user@host:port/database (or libpq's
    /// `host=... user=... dbname=...`) or mysql://user@host:port/database
    /// (a table created for the server and dropped when it stops)
    /// [default: sqlite]. Leave the password out (others see command
    /// lines): PGPASSWORD or ~/.pgpass, ~/.my.cnf or MYSQL_PWD are used.
    #[arg(long, value_name = "DB")]
    db: Option<String>,
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

/// How long a run lasts without -d or -n.
const DEFAULT_DURATION: f64 = 10.0;
/// How long a run with -n but without -d may last at most, so that a
/// server that accepts and never answers cannot hang it.
const MAX_DURATION_WITH_REQUESTS: f64 = 600.0;

/// The request timeout without --timeout, seconds: wrk's, so that a server
/// that accepts and never answers costs each connection 2 s, not the run.
const DEFAULT_TIMEOUT: f64 = 2.0;

/// The longest duration an option takes, seconds.
const MAX_SECONDS: f64 = u32::MAX as f64;

/// `secs` of option `option` as a duration, or a usage error naming the
/// allowed range.
fn duration_of(option: &str, secs: f64) -> Result<Duration, UsageError> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|_| secs <= MAX_SECONDS)
        .ok_or_else(|| {
            UsageError(format!(
                "{option} {secs}: expected from 0 to {MAX_SECONDS} seconds"
            ))
        })
}

fn seconds(text: &str) -> Result<f64, String> {
    parse_seconds(text).ok_or_else(|| format!("`{text}` is not a duration (e.g. 10, 500ms, 2m)"))
}

/// Runs the load (or the server) and prints what it measured.
pub fn execute(args: HttpArgs) -> anyhow::Result<ExitStatus> {
    let cancel = CancelToken::new();
    {
        let cancel = cancel.clone();
        // Another handler may already be installed (tests); then Ctrl-C
        // simply ends the process.
        let _ = ctrlc::set_handler(move || cancel.cancel());
    }
    if let Some(addr) = args.serve {
        return serve(addr, &args, &cancel);
    }
    if args.db.is_some() {
        return Err(UsageError(
            "--db chooses the database of the built-in server's /dynamic page: use it with --serve"
                .into(),
        )
        .into());
    }
    let targets = http::parse_targets(&args.urls).map_err(|e| UsageError(e.to_string()))?;
    let cpus = affinity::allowed_cpus()?.len();
    let threads = args
        .threads
        .unwrap_or(cpus)
        .clamp(1, args.connections.max(1));
    let rate = match (args.rate, args.rate_per_client) {
        (Some(r), _) => Some(Rate::Total(r)),
        (None, Some(r)) => Some(Rate::PerConnection(r)),
        (None, None) => None,
    };
    let duration = match (args.duration, args.requests) {
        (Some(d), _) => d,
        (None, None) => DEFAULT_DURATION,
        (None, Some(_)) => MAX_DURATION_WITH_REQUESTS,
    };
    // 0 means no timeout, as the workloads' `timeout` parameter does.
    let timeout = match args.timeout.unwrap_or(DEFAULT_TIMEOUT) {
        t if t > 0.0 => Some(duration_of("--timeout", t)?),
        _ => None,
    };
    let config = LoadConfig {
        threads,
        keep_alive: !args.no_keepalive,
        think: duration_of("--think", args.think.unwrap_or(0.0))?,
        rate,
        timeout,
        duration: Some(duration_of("--duration", duration)?),
        requests: args.requests,
        ..LoadConfig::closed(targets, args.connections)
    };
    config
        .validate()
        .map_err(|e| UsageError(format!("{e:#}")))?;
    if let Some(hosts) = &args.from {
        return super::http_from::execute(&args, hosts, &config, &cancel);
    }
    // Ctrl-C ends the run early; what it measured until then is printed,
    // marked as interrupted, and the exit status says so.
    let (report, interrupted) = http::run_until_cancelled(&config, &cancel)?;
    let peak_rss = peak_rss_bytes();
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        value["urls"] = serde_json::json!(args.urls);
        value["peak_rss_bytes"] = serde_json::json!(peak_rss);
        value["interrupted"] = serde_json::json!(interrupted);
        print(&(serde_json::to_string_pretty(&value)? + "\n"))?;
    } else {
        let mut text = format_report(&args.urls, &report, peak_rss);
        if interrupted {
            text.push_str(&format!(
                "interrupted (Ctrl-C): these figures cover the first {:.3} s only\n",
                report.seconds
            ));
        }
        print(&text)?;
    }
    if interrupted {
        return Ok(ExitStatus::Interrupted);
    }
    if let Some(why) = nothing_succeeded(&report) {
        eprintln!("error: {why}");
        return Ok(ExitStatus::Failure);
    }
    Ok(ExitStatus::Success)
}

/// Why a run counts as failed: not one request got a complete response
/// with a status below 400 (a server that is down, silent, or answers
/// only errors). `None` when at least one succeeded.
pub(super) fn nothing_succeeded(r: &LoadReport) -> Option<String> {
    let e = &r.errors;
    let succeeded = r.responses - e.status_4xx - e.status_5xx;
    (succeeded == 0).then(|| {
        format!(
            "no request succeeded: {} sent, {} complete responses ({} 4xx, {} 5xx), {} without a response (refused {}, reset {}, timeout {}, protocol {}, other {})",
            r.sent,
            r.responses,
            e.status_4xx,
            e.status_5xx,
            e.without_response(),
            e.refused,
            e.reset,
            e.timeout,
            e.protocol,
            e.other
        )
    })
}

fn serve(addr: SocketAddr, args: &HttpArgs, cancel: &CancelToken) -> anyhow::Result<ExitStatus> {
    let dynamic = http::DbSource::parse(args.db.as_deref().unwrap_or("sqlite"))
        .map_err(|e| UsageError(format!("{e:#}").replacen("db=", "--db ", 1)))?;
    let config = ServerConfig {
        addr,
        model: Model::parse(&args.model).expect("clap checked the model"),
        threads: args.threads.unwrap_or(1),
        dynamic: Some(dynamic),
        limits: http::server::Limits {
            max_threads: args.max_threads as usize,
            ..Default::default()
        },
        ..ServerConfig::loopback()
    };
    crate::sys::fd_limit::ensure_open_files(4096).ok();
    let mut server = http::Server::start(&config)?;
    eprintln!(
        "serving on http://{} (paths /static/1, /static/2048, /static/204800, /static/2097152, /static/10485760, /dynamic); Ctrl-C stops",
        server.addr()
    );
    while !cancel.is_cancelled() {
        std::thread::sleep(Duration::from_millis(100));
        if let Some(failure) = server.failure() {
            anyhow::bail!("the server failed: {failure}");
        }
    }
    server.stop()?;
    Ok(ExitStatus::Interrupted)
}

/// The process's peak resident set (VmHWM), bytes.
pub(super) fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

pub(super) fn format_report(urls: &[String], r: &LoadReport, peak_rss: Option<u64>) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "{} URL(s): {}", urls.len(), urls.join(" "));
    let _ = writeln!(
        s,
        "{} loop, {} connection(s), {} thread(s), keep-alive {}",
        r.mode,
        r.connections,
        r.threads,
        if r.keep_alive { "on" } else { "off" }
    );
    let _ = writeln!(
        s,
        "{} responses in {:.3} s ({} sent), {:.1} MiB read",
        r.responses,
        r.seconds,
        r.sent,
        r.bytes as f64 / 1048576.0
    );
    let _ = writeln!(s, "  requests/s    {:>12.1}", r.requests_per_sec);
    let _ = writeln!(
        s,
        "  transfer      {:>12.2} MiB/s",
        r.bytes_per_sec / 1048576.0
    );
    if let Some(requested) = r.requested_rate {
        let _ = writeln!(
            s,
            "  rate          {:>12.1} requested, {:.1} achieved (req/s); {} late, {} dropped",
            requested, r.achieved_rate, r.late, r.dropped
        );
    }
    let _ = writeln!(
        s,
        "  {:<12}{:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "(ms)", "mean", "p50", "p90", "p99", "p99.9", "max", "n"
    );
    let mut row = |name: &str, l: &http::LatencySummary| {
        let _ = writeln!(
            s,
            "  {:<12}{:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10}",
            name, l.mean_ms, l.p50_ms, l.p90_ms, l.p99_ms, l.p99_9_ms, l.max_ms, l.count
        );
    };
    if let Some(sent) = &r.latency_from_send {
        row("latency/due", &r.latency);
        row("latency/sent", sent);
    } else {
        row("latency", &r.latency);
    }
    row("connect", &r.connect);
    let e = &r.errors;
    let _ = writeln!(
        s,
        "  errors        {:>12} (refused {}, reset {}, timeout {}, protocol {}, other {}, 4xx {}, 5xx {})",
        e.total(),
        e.refused,
        e.reset,
        e.timeout,
        e.protocol,
        e.other,
        e.status_4xx,
        e.status_5xx
    );
    if let Some(busy) = r.generator_busy {
        let _ = writeln!(
            s,
            "  generator     {:>11.0}% busy{}",
            busy * 100.0,
            if r.generator_bound {
                ": the generator may have set the rate, not the server (add threads, or connections with --rate)"
            } else {
                ""
            }
        );
    }
    if let Some(rss) = peak_rss {
        let _ = writeln!(s, "  peak RSS      {:>12.1} MiB", rss as f64 / 1048576.0);
    }
    s
}
