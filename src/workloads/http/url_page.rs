//! `http.url`: the built-in generator against any `http://` URL, stored
//! with rounds and confidence intervals like every workload, so that a
//! user's own server (nginx, an application) can be compared between
//! runs, settings (`sledge ab`) and hosts.
//!
//! A workload of its own rather than a `url=` parameter of `http.static`:
//! that workload's `size` and `model` describe the built-in server, which
//! a URL does not start, and its `clients_from` copies sledge to client
//! hosts, which the request's headers and body would have to follow. Here
//! every parameter is about the load and the request, and `server=` about
//! the server, which runs already and is only watched.
//!
//! With `server=`, each trial also counts the server's CPU (see
//! `server_processes`) and the generator's own, and says which side's CPU
//! set the rate, with the thresholds the built-in server's cases use.

use std::net::IpAddr;
use std::path::PathBuf;

use anyhow::{anyhow, bail};

use crate::engine::typed_params::{FromParam, choice_by};
use crate::engine::{
    Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSet, ParamSpec, ParamValue, Params,
    TrialContext, TrialOutput, Workload,
};
use crate::http::request_bytes::{check_body, read_body};
use crate::http::url::reaches_itself;
use crate::http::{self, Header, LoadConfig, LoadReport, Method, RequestSpec};
use crate::monitor::own_processes::{self, OwnProcess};
use crate::workloads::common::params;

use super::cpu_share::{self, Limit};
use super::load_metrics::{error_kind_metrics, load_metrics};
use super::load_params::{self, LoadSettings};
use super::server_processes::{ServerProcesses, ServerSpec, ServerUse};

/// The most generator threads `threads` takes.
const MAX_THREADS: u64 = 1024;

impl FromParam for Method {
    fn from_param(name: &str, value: &ParamValue) -> Self {
        choice_by(name, value, |word| Method::parse(word).ok())
    }
}

crate::workload_params! {
    /// The parameters of `http.url`.
    pub struct UrlParams {
        url: String = ParamSpec {
            name: "url",
            role: ParamRole::Other,
            help: "the URL to load, http://host[:port][/path][?query] (required; no TLS)",
            kind: ParamKind::Text,
            default: "",
        },
        method: Method = ParamSpec {
            name: "method",
            role: ParamRole::Other,
            help: "the requests' method",
            kind: ParamKind::Choice(Method::NAMES),
            default: "GET",
        },
        header: String = ParamSpec {
            name: "header",
            role: ParamRole::Other,
            help: "headers to add, `Name: value` separated by `|` (`||` is a `|` in a value): 'header=Accept: */*|X-Id: 7'; Host, Connection and Content-Length are sledge's, Transfer-Encoding is refused; a User-Agent replaces sledge's; stored with the run like every parameter, a credential header's value (Authorization, Cookie, ...) masked",
            kind: ParamKind::Text,
            default: "",
        },
        body_file: String = ParamSpec {
            name: "body_file",
            role: ParamRole::Other,
            help: "a file whose bytes are every request's body, with its Content-Length (a regular file of at most 64 MiB, read once when the case is prepared)",
            kind: ParamKind::Text,
            default: "",
        },
        server: String = ParamSpec {
            name: "server",
            role: ParamRole::Other,
            help: "the server's pid or process name (as `ps -o comm` shows it), when it runs on this host: its processes and threads (and their children) are found in /proc, and each trial adds its CPU busy share, CPU-seconds per request and which side set the rate",
            kind: ParamKind::Text,
            default: "",
        },
        threads: u64 = ParamSpec {
            name: "threads",
            role: ParamRole::CpuCount,
            help: "generator threads; 0 = the CPUs the server may not use (with server=, when there are any), half the run's CPUs for a server on this host, all of them for one elsewhere; at most one per connection",
            kind: ParamKind::Int { min: 0, max: MAX_THREADS },
            default: "0",
        },
        concurrency: u64 = load_params::concurrency(),
        keepalive: bool = load_params::keepalive(),
        requests: u64 = load_params::requests(),
        think: f64 = load_params::think(),
        rate_per_client: f64 = load_params::rate_per_client(),
        rate: f64 = ParamSpec {
            name: "rate",
            role: ParamRole::Other,
            help: "open loop: requests per second in total (wrk2's -R), spread over the connections; 0 = closed loop (or rate_per_client)",
            kind: ParamKind::Float { min: 0.0, max: 1e9 },
            default: "0",
        },
        timeout: f64 = load_params::timeout("2"),
        time: f64 = params::time("10"),
    }
}

/// The `http.url` workload.
pub struct UrlPage;

impl Workload for UrlPage {
    fn id(&self) -> &'static str {
        "http.url"
    }
    fn version(&self) -> u32 {
        1
    }
    fn summary(&self) -> &'static str {
        "requests/s, latency and errors of any http:// URL under the built-in generator (wrk / wrk2 / ab load models); with server=, the server's CPU per request"
    }
    fn params(&self) -> Vec<ParamSpec> {
        UrlParams::specs()
    }
    fn build(&self, p: &ParamSet, env: &CaseEnv) -> anyhow::Result<Box<dyn Case>> {
        Ok(Box::new(UrlCase::build(&UrlParams::from_set(p), env)?))
    }

    /// The generator's threads, and a server that may share their CPUs.
    fn cpus_used(&self, _params: &ParamSet) -> Option<usize> {
        None
    }

    /// Its histogram is the requests' latencies: the report draws their
    /// percentile spectrum.
    fn latency_spectrum(&self) -> bool {
        true
    }
}

/// One `http.url` case.
struct UrlCase {
    url: String,
    /// The request, its body read in `prepare`.
    request: RequestSpec,
    body_file: Option<PathBuf>,
    load: LoadConfig,
    /// `threads`, when given.
    threads: Option<usize>,
    /// The CPUs the run may use.
    run_cpus: Vec<usize>,
    /// Where the URL leads.
    ip: IpAddr,
    server_spec: Option<ServerSpec>,
    server: Option<ServerProcesses>,
    /// The server's top processes, claimed as the workload's own: it is
    /// not sledge's descendant, so the monitor would count its CPU as
    /// other processes' and call every trial busy.
    server_claims: Vec<OwnProcess>,
    seen: TrialsSeen,
}

/// What the trials so far showed, for the case's warnings.
#[derive(Debug, Default)]
struct TrialsSeen {
    trials: u32,
    generator: u32,
    server: u32,
    both: u32,
    neither: u32,
    /// Trials with failed requests, and the failures by kind.
    with_errors: u32,
    errors: http::ErrorCounts,
}

impl UrlCase {
    fn build(p: &UrlParams, env: &CaseEnv) -> anyhow::Result<UrlCase> {
        if p.url.trim().is_empty() {
            bail!(
                "http.url needs the URL to load: -p url=http://host[:port]/path (only http://; for the built-in server use http.static)"
            );
        }
        let headers = Header::parse_list(&p.header).map_err(|e| anyhow!("header: {e}"))?;
        let body_file = (!p.body_file.is_empty()).then(|| PathBuf::from(&p.body_file));
        if let Some(path) = &body_file {
            check_body(path).map_err(|e| anyhow!("body_file: {e}"))?;
        }
        let request = RequestSpec {
            method: p.method,
            headers,
            body: Vec::new(),
        };
        // Resolved here too, so that a URL that cannot be used fails the
        // run before its first case.
        let target = http::url::parse_target_for(&p.url, &request)
            .map_err(|e| anyhow!("url={}: {e}", crate::secrets::redact(&p.url)))?;
        let server_spec = ServerSpec::parse(&p.server)?;
        if let Some(spec) = &server_spec {
            ServerProcesses::find(spec)?;
        }
        let connections = p.concurrency as usize;
        let threads = match p.threads as usize {
            0 => None,
            n if n > connections => bail!(
                "threads={n} is more than concurrency={connections}: every generator thread needs a connection of its own; give at most {connections} (or 0 for the default)"
            ),
            n => Some(n),
        };
        let settings = LoadSettings {
            concurrency: p.concurrency,
            keepalive: p.keepalive,
            requests: p.requests,
            think: p.think,
            rate: load_params::open_loop_rate(p.rate_per_client, p.rate)?,
            timeout: p.timeout,
            time: p.time,
        };
        let load = settings.config(threads.unwrap_or(1), None)?;
        Ok(UrlCase {
            url: p.url.clone(),
            request,
            body_file,
            load,
            threads,
            run_cpus: env.cpus.clone(),
            ip: target.addr.ip(),
            server_spec,
            server: None,
            server_claims: Vec::new(),
            seen: TrialsSeen::default(),
        })
    }

    /// The generator's threads and their CPUs when `threads` is 0: the
    /// CPUs the server may not run on, pinned, when there are any; else
    /// half the run's CPUs for a server on this host, as the built-in
    /// server's cases split them, and all of them for a server elsewhere.
    fn default_threads(&self, server_cpus: Option<&[usize]>) -> (usize, Option<Vec<usize>>) {
        let half = (self.run_cpus.len() / 2).max(1);
        match server_cpus {
            Some(server) => {
                let free: Vec<usize> = self
                    .run_cpus
                    .iter()
                    .copied()
                    .filter(|cpu| !server.contains(cpu))
                    .collect();
                if free.is_empty() {
                    (half, None)
                } else {
                    (free.len(), Some(free))
                }
            }
            None if reaches_itself(self.ip) => (half, None),
            None => (self.run_cpus.len().max(1), None),
        }
    }

    /// The server's CPU and the generator's in a trial, as metrics, and
    /// which side set its rate.
    fn cpu_metrics(&mut self, report: &LoadReport, server: Option<ServerUse>) -> Vec<Metric> {
        let mut metrics = Vec::new();
        if let Some(generator) = report.generator_busy {
            metrics.push(Metric::lower("generator_cpu_busy", "%", 100.0 * generator));
        }
        let Some(server) = server else {
            if report.generator_bound {
                self.seen.generator += 1;
            }
            return metrics;
        };
        // Higher server shares: the rate describes the server more.
        metrics.push(Metric::higher("server_cpu_busy", "%", 100.0 * server.busy));
        metrics.push(Metric::higher(
            "server_busiest_thread_busy",
            "%",
            100.0 * server.busiest_thread,
        ));
        metrics.push(Metric::lower(
            "server_cpu_seconds_per_request",
            "s",
            server.cpu_seconds / report.responses.max(1) as f64,
        ));
        // A server is saturated when all its CPUs are, or when its busiest
        // thread is: a single event loop cannot use a second CPU.
        let server_share = server.busy.max(server.busiest_thread);
        match report
            .generator_busy
            .map(|generator| cpu_share::limiting_side(server_share, generator))
        {
            Some(Limit::Generator) => self.seen.generator += 1,
            Some(Limit::Server) => self.seen.server += 1,
            Some(Limit::Both) => self.seen.both += 1,
            Some(Limit::Neither) => self.seen.neither += 1,
            None => {}
        }
        metrics
    }
}

impl Case for UrlCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        if let Some(path) = &self.body_file {
            self.request.body = read_body(path).map_err(|e| anyhow!("body_file: {e}"))?;
        }
        self.load.targets = http::parse_targets_for(std::slice::from_ref(&self.url), &self.request)
            .map_err(|e| anyhow!("url={}: {e}", crate::secrets::redact(&self.url)))?;
        let server = self
            .server_spec
            .as_ref()
            .map(ServerProcesses::find)
            .transpose()?;
        if self.threads.is_none() {
            let server_cpus = server.as_ref().map(ServerProcesses::cpus);
            let (threads, cpus) = self.default_threads(server_cpus.as_deref());
            self.load.threads = threads.min(self.load.connections);
            self.load.cpus = cpus;
            self.load.validate_settings()?;
        }
        self.server_claims = server
            .iter()
            .flat_map(ServerProcesses::top_pids)
            .filter_map(own_processes::claim)
            .collect();
        self.server = server;
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let before = self
            .server
            .as_ref()
            .map(ServerProcesses::sample)
            .transpose()?;
        let report = http::run(&self.load, &ctx.cancel)?;
        let after = self
            .server
            .as_ref()
            .map(ServerProcesses::sample)
            .transpose()?;
        let errors = report.errors;
        let succeeded = report.responses - errors.status_4xx - errors.status_5xx;
        if succeeded == 0 {
            bail!(
                "no request to {} succeeded: {} sent, {} complete responses ({} 4xx, {} 5xx), {} without a response (refused {}, reset {}, timeout {}, protocol {}, other {})",
                crate::secrets::redact(&self.url),
                report.sent,
                report.responses,
                errors.status_4xx,
                errors.status_5xx,
                errors.without_response(),
                errors.refused,
                errors.reset,
                errors.timeout,
                errors.protocol,
                errors.other
            );
        }
        let mut metrics = load_metrics(&report);
        if report.connect.count > 0 {
            metrics.push(Metric::lower("connect_mean", "ms", report.connect.mean_ms));
        }
        metrics.extend(error_kind_metrics(&errors));
        let server = match (before, after) {
            (Some(before), Some(after)) => after.since(&before),
            _ => None,
        };
        metrics.extend(self.cpu_metrics(&report, server));
        self.seen.trials += 1;
        if errors.total() > 0 {
            self.seen.with_errors += 1;
            self.seen.errors.add(&errors);
        }
        Ok(TrialOutput {
            metrics,
            latency_ns: Some(report.tally.latency),
        })
    }

    fn warnings(&self) -> Vec<String> {
        let t = &self.seen;
        let of = |n: u32| format!("in {n} of {} trials (warm-up included)", t.trials);
        let saturated = 100.0 * cpu_share::SATURATED;
        let room = 100.0 * cpu_share::HAD_ROOM;
        let mut warnings = Vec::new();
        if t.generator > 0 {
            warnings.push(match &self.server {
                Some(server) => format!(
                    "{} the generator's threads were at least {saturated:.0}% busy and the server {} under {room:.0}%: the rate is the generator's limit, not the server's (more `threads`, CPUs of their own for each side, or load from another host)",
                    of(t.generator),
                    server.describe()
                ),
                None => format!(
                    "{} the generator's threads were at least {saturated:.0}% busy: the rate may be the generator's limit, not the server's (more `threads`; on this host, name the server with server= to see its side)",
                    of(t.generator)
                ),
            });
        }
        if let Some(server) = &self.server {
            if t.server > 0 {
                warnings.push(format!(
                    "{} the server {} was at least {saturated:.0}% busy (all its CPUs, or its busiest thread one CPU) and the generator under {room:.0}%: the rate is the server's limit",
                    of(t.server),
                    server.describe()
                ));
            }
            if t.both > 0 {
                warnings.push(format!(
                    "{} both the server and the generator were near their CPUs' limit: the rate describes both (give each CPUs of its own: taskset for the server, `threads` and --cpus for sledge)",
                    of(t.both)
                ));
            }
            if t.neither > 0 && self.load.rate.is_none() {
                warnings.push(format!(
                    "{} neither the server nor the generator was {saturated:.0}% busy: the rate was set by the response time at concurrency={} (more connections show whether the server has capacity left), or by other processes on their CPUs (the trials' health says)",
                    of(t.neither),
                    self.load.connections
                ));
            }
        }
        if t.with_errors > 0 {
            let e = &t.errors;
            warnings.push(format!(
                "{} requests failed ({} in all: {}); requests_per_sec counts every complete response, error statuses included (see the errors_* metrics)",
                of(t.with_errors),
                e.total(),
                e.by_kind()
            ));
        }
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::params::resolve_cases;
    use std::collections::BTreeMap;

    fn env(cpus: Vec<usize>) -> CaseEnv {
        CaseEnv {
            cpus,
            total_cache_bytes: 0,
            memory_bytes: 0,
        }
    }

    fn build(assignments: &[(&str, &str)], cpus: Vec<usize>) -> anyhow::Result<UrlCase> {
        let assignments: BTreeMap<String, Vec<String>> = assignments
            .iter()
            .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
            .collect();
        let set = resolve_cases("http.url", &UrlPage.params(), &assignments, 2)
            .unwrap()
            .remove(0);
        UrlCase::build(&UrlParams::from_set(&set), &env(cpus))
    }

    fn error(assignments: &[(&str, &str)]) -> String {
        match build(assignments, vec![0]) {
            Ok(_) => panic!("{assignments:?} accepted"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn the_named_server_is_the_workloads_own_while_the_case_lives() {
        let mut server = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = server.id();
        let mut case = build(
            &[("url", "http://127.0.0.1:9/"), ("server", &pid.to_string())],
            vec![0],
        )
        .unwrap();
        case.prepare(&TrialContext::new(
            vec![0],
            crate::engine::CancelToken::new(),
        ))
        .unwrap();
        let claimed = own_processes::claimed().contains(&pid);
        drop(case);
        let released = !own_processes::claimed().contains(&pid);
        server.kill().unwrap();
        server.wait().unwrap();
        assert!(claimed, "server={pid} is not claimed");
        assert!(released, "server={pid} is still claimed after the case");
    }

    #[test]
    fn a_missing_or_unusable_url_is_refused_when_the_case_is_built() {
        assert!(error(&[]).contains("needs the URL to load: -p url=http://"));
        let err = error(&[("url", "https://127.0.0.1/")]);
        assert!(err.starts_with("url=https://127.0.0.1/: "), "{err}");
        assert!(err.contains("only http:// is supported"), "{err}");
        let err = error(&[("url", "127.0.0.1:80")]);
        assert!(err.contains("is not a URL of the form http://"), "{err}");
    }

    #[test]
    fn settings_that_cannot_go_together_name_their_parameters() {
        let url = ("url", "http://127.0.0.1:1/");
        let err = error(&[url, ("rate", "100"), ("rate_per_client", "5")]);
        assert!(err.contains("set one of them"), "{err}");
        let err = error(&[url, ("rate", "100"), ("think", "1")]);
        assert!(
            err.contains("think applies to the closed loop and rate"),
            "{err}"
        );
        let err = error(&[url, ("threads", "20"), ("concurrency", "4")]);
        assert!(
            err.starts_with("threads=20 is more than concurrency=4"),
            "{err}"
        );
        let err = error(&[url, ("header", "Content-Length: 3")]);
        assert!(
            err.starts_with("header: header `Content-Length` is set by sledge"),
            "{err}"
        );
        let err = error(&[url, ("body_file", "/nonexistent/body")]);
        assert!(
            err.starts_with("body_file: the body file /nonexistent/body: "),
            "{err}"
        );
        let err = error(&[url, ("server", "no-such-server-name")]);
        assert!(
            err.contains("no process named `no-such-server-name`"),
            "{err}"
        );
    }

    #[test]
    fn default_threads_leave_the_server_its_cpus() {
        let on = |url: &str, cpus: Vec<usize>| {
            build(&[("url", url), ("concurrency", "50")], cpus).unwrap()
        };
        let local = on("http://127.0.0.1:1/", vec![0, 1, 2, 3]);
        // The server pinned to CPU 0: the generator gets the rest.
        assert_eq!(local.default_threads(Some(&[0])), (3, Some(vec![1, 2, 3])));
        // A server on every CPU: half of them, unpinned.
        assert_eq!(local.default_threads(Some(&[0, 1, 2, 3])), (2, None));
        assert_eq!(local.default_threads(None), (2, None));
        assert_eq!(
            on("http://127.0.0.1:1/", vec![0]).default_threads(None),
            (1, None)
        );
        // A server elsewhere: every CPU of the run.
        let remote = on("http://198.18.0.1:1/", vec![0, 1, 2, 3]);
        assert_eq!(remote.default_threads(None), (4, None));
    }
}
