//! `sledge http`: ad-hoc load against any HTTP/1.1 server, like wrk or ab,
//! and `--serve` to run the built-in server on its own.

use std::net::SocketAddr;
use std::time::Duration;

pub use super::http_args::HttpArgs;
use super::output::{ExitStatus, UsageError, print};
use crate::engine::CancelToken;
use crate::http::{self, LoadConfig, Model, Rate, ServerConfig};
use crate::report::http_load::{LoadShown, nothing_succeeded};
use crate::suite::interrupt;
use crate::sys::affinity;

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

/// Runs the load (or the server) and prints what it measured.
pub fn execute(args: HttpArgs) -> anyhow::Result<ExitStatus> {
    let cancel = CancelToken::new();
    {
        let cancel = cancel.clone();
        // Every Ctrl-C asks the same: stop, and print what was measured.
        interrupt::install(
            vec![Box::new(move || cancel.cancel())],
            "an interrupt will end the load without its figures",
        );
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
    let shown = LoadShown {
        urls: &args.urls,
        report: &report,
        peak_rss,
        interrupted,
    };
    if args.json {
        print(&shown.json()?)?;
    } else {
        print(&shown.text())?;
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
