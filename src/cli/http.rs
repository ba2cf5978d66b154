//! `sledge http`: ad-hoc load against any HTTP/1.1 server, like wrk or ab,
//! and `--serve` to run the built-in server on its own.

use std::net::SocketAddr;
use std::time::Duration;

pub use super::http_args::HttpArgs;
use super::http_args::load_usage;
use super::output::{ExitStatus, UsageError, print};
use crate::engine::CancelToken;
use crate::http::{self, Model, ServerConfig};
use crate::report::export::View;
use crate::report::http_load::{LoadShown, nothing_succeeded};
use crate::suite::interrupt;

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
    let config = args.load_request().config().map_err(load_usage)?;
    if let Some(hosts) = &args.from {
        return super::http_from::execute(&args, hosts, &config, &cancel);
    }
    // Ctrl-C ends the run early; what it measured until then is printed,
    // marked as interrupted, and the exit status says so.
    let (report, interrupted) = http::run_until_cancelled(&config, &cancel)?;
    let shown = LoadShown {
        urls: &args.urls,
        report: &report,
        peak_rss: crate::sys::peak_rss::peak_rss_bytes(),
        interrupted,
    };
    print(&args.format.format().render(&View::HttpLoad(&shown))?)?;
    if interrupted {
        return Ok(ExitStatus::Interrupted);
    }
    if let Some(why) = nothing_succeeded(&report) {
        crate::say!("error: {why}");
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
    crate::say!(
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
