//! The case both HTTP workloads share: start the server in `prepare`, run
//! the generator in each trial, stop the server in `cleanup`.
//!
//! With more than one CPU the server gets the first half of the run's
//! CPUs and the generator the rest, so the generator does not steal the
//! server's cores (and the numbers describe the server, not the fight).

use anyhow::Context;

use crate::engine::{
    Case, CaseEnv, Metric, ParamKind, ParamRole, ParamSpec, Params, TrialContext, TrialOutput,
};
use crate::http::server::{DEFAULT_MAX_THREADS, DbSource, Limits};
use crate::http::{self, LoadConfig, Model, Server, ServerConfig};
use crate::workloads::common::params;

use super::clients_from::{self, Clients};
use super::cpu_share;
use super::load_metrics::load_metrics;
use super::load_params::{self, LoadSettings};

/// Descriptors kept free beyond two per connection (both ends live in
/// this process).
const SPARE_FDS: u64 = 128;

crate::param_choice! {
    /// `model`'s choices: the built-in server's models.
    pub enum ServerModel {
        Async = "async",
        Threads = "threads",
    }
}

impl From<ServerModel> for Model {
    fn from(model: ServerModel) -> Model {
        match model {
            ServerModel::Async => Model::Async,
            ServerModel::Threads => Model::Threads,
        }
    }
}

/// `model`: the server model.
pub fn model() -> ParamSpec {
    ParamSpec {
        name: "model",
        role: ParamRole::Other,
        help: "server model: async (event loops, like nginx) or threads (a thread per connection, like Apache prefork)",
        kind: ParamKind::Choice(ServerModel::NAMES),
        default: "async",
    }
}

crate::workload_params! {
    /// The parameters both HTTP workloads share, after each one's own.
    pub struct HttpLoadParams {
        concurrency: u64 = load_params::concurrency(),
        keepalive: bool = load_params::keepalive(),
        model: ServerModel = model(),
        requests: u64 = load_params::requests(),
        think: f64 = load_params::think(),
        rate_per_client: f64 = load_params::rate_per_client(),
        timeout: f64 = load_params::timeout("0"),
        time: f64 = params::time("10"),
        clients_from: String = clients_from::param(),
    }
}

/// The shared parameters, after the workload's own.
pub fn common_params() -> Vec<ParamSpec> {
    HttpLoadParams::specs()
}

/// A server plus generator case for `path` on a server built from `server`.
pub struct HttpCase {
    server_config: ServerConfig,
    path: String,
    load: LoadConfig,
    server: Option<Server>,
    /// The client hosts the load comes from; none: this host's generator.
    client_hosts: Vec<crate::remote::SshHost>,
    /// Their connections while the case runs.
    clients: Option<Clients>,
    warnings: Vec<String>,
    /// Trials so far, and those whose rate was the generator's limit.
    trials: u32,
    generator_bound: u32,
}

impl HttpCase {
    /// Builds the case from the common parameters.
    pub fn build(
        p: &HttpLoadParams,
        env: &CaseEnv,
        sizes: Vec<u64>,
        dynamic: Option<DbSource>,
        path: String,
    ) -> anyhow::Result<HttpCase> {
        let connections = p.concurrency as usize;
        let client_hosts = clients_from::hosts(&p.clients_from)?;
        let remote = !client_hosts.is_empty();
        crate::sys::fd_limit::ensure_open_files(2 * connections as u64 + SPARE_FDS)?;
        // The generator runs elsewhere: the server has every CPU.
        let (server_cpus, client_cpus) = if remote {
            ((env.cpus.len() > 1).then(|| env.cpus.clone()), None)
        } else {
            split_cpus(&env.cpus)
        };
        let mut warnings = Vec::new();
        if client_cpus.is_none() && !remote {
            warnings.push(
                "one CPU: the server and the generator share it, so the rate describes both"
                    .to_string(),
            );
        }
        let settings = LoadSettings {
            concurrency: p.concurrency,
            keepalive: p.keepalive,
            requests: p.requests,
            think: p.think,
            rate: load_params::open_loop_rate(p.rate_per_client, 0.0)?,
            timeout: p.timeout,
            time: p.time,
        };
        let threads = client_cpus.as_ref().map_or(1, Vec::len).min(connections);
        let load = settings.config(threads, client_cpus)?;
        if remote {
            clients_from::check_split(&load, client_hosts.len())?;
        }
        let server_config = ServerConfig {
            model: p.model.into(),
            threads: server_cpus.as_ref().map_or(1, Vec::len),
            cpus: server_cpus,
            sizes,
            dynamic,
            limits: Limits {
                // Every client gets its thread in the threads model, also
                // while the threads of closed connections are ending.
                max_threads: DEFAULT_MAX_THREADS.max(2 * connections),
                ..Limits::default()
            },
            ..ServerConfig::loopback()
        };
        Ok(HttpCase {
            server_config,
            path,
            load,
            server: None,
            client_hosts,
            clients: None,
            warnings,
            trials: 0,
            generator_bound: 0,
        })
    }
}

/// One client host's own figures, as the article's table has them per
/// client machine: its requests, mean connect and response times, test
/// duration and timeouts, each named `NAME@HOST` (`connect_mean@root@c1`).
/// The merged figures beside them add every host's requests exactly.
fn client_host_metrics(host: &str, r: &http::LoadReport, timeout_set: bool) -> Vec<Metric> {
    let name = |metric: &str| format!("{metric}@{host}");
    let mut metrics = vec![
        Metric::higher(name("requests"), "requests", r.sent as f64),
        Metric::higher(name("responses"), "requests", r.responses as f64),
        Metric::lower(name("latency_mean"), "ms", r.latency.mean_ms),
        Metric::lower(name("duration"), "s", r.seconds),
    ];
    if r.connect.count > 0 {
        metrics.push(Metric::lower(name("connect_mean"), "ms", r.connect.mean_ms));
    }
    if r.errors.timeout > 0 || timeout_set {
        metrics.push(Metric::lower(
            name("timeouts"),
            "requests",
            r.errors.timeout as f64,
        ));
    }
    metrics
}

/// The server's CPUs and the generator's, or `(None, None)` with one CPU.
fn split_cpus(cpus: &[usize]) -> (Option<Vec<usize>>, Option<Vec<usize>>) {
    if cpus.len() < 2 {
        return (None, None);
    }
    let half = cpus.len().div_ceil(2);
    (Some(cpus[..half].to_vec()), Some(cpus[half..].to_vec()))
}

impl Case for HttpCase {
    fn prepare(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        if !self.client_hosts.is_empty() {
            let clients = Clients::connect(&self.client_hosts)?;
            // Loopback would be each client host itself.
            self.server_config.addr = std::net::SocketAddr::new(clients.server_ip()?, 0);
            self.clients = Some(clients);
        }
        let server = Server::start(&self.server_config).context("starting the HTTP server")?;
        self.load.targets = http::parse_targets(&[server.url(&self.path)])?;
        self.server = Some(server);
        Ok(())
    }

    fn trial(&mut self, ctx: &TrialContext) -> anyhow::Result<TrialOutput> {
        let before = cpu_share::snapshot();
        let (report, hosts) = match &self.clients {
            Some(clients) => clients.run(&self.load, &ctx.cancel)?,
            None => (http::run(&self.load, &ctx.cancel)?, Vec::new()),
        };
        let after = cpu_share::snapshot();
        if let Some(failure) = self.server.as_ref().and_then(Server::failure) {
            anyhow::bail!("the HTTP server failed: {failure}");
        }
        let mut metrics = load_metrics(&report);
        // With a timeout set, its count is a figure of the test even when
        // it is 0 (httperf's table has it).
        if report.errors.timeout > 0 || self.load.timeout.is_some() {
            metrics.push(Metric::lower(
                "timeouts",
                "requests",
                report.errors.timeout as f64,
            ));
        }
        if report.connect.count > 0 {
            metrics.push(Metric::lower("connect_mean", "ms", report.connect.mean_ms));
        }
        if !hosts.is_empty() {
            metrics.push(Metric::higher("requests", "requests", report.sent as f64));
        }
        for (host, part) in &hosts {
            metrics.extend(client_host_metrics(host, part, self.load.timeout.is_some()));
        }
        self.trials += 1;
        let shares = match (&before, &after, &self.server_config.cpus, &self.load.cpus) {
            (Some(b), Some(a), Some(server), Some(generator)) => {
                cpu_share::busy_share(b, a, server).zip(cpu_share::busy_share(b, a, generator))
            }
            _ => None,
        };
        if let Some((server, generator)) = shares {
            // Higher server share: the rate describes the server more.
            metrics.push(Metric::higher("server_cpu_busy", "%", 100.0 * server));
            metrics.push(Metric::lower("generator_cpu_busy", "%", 100.0 * generator));
            if cpu_share::generator_bound(server, generator) {
                self.generator_bound += 1;
            }
        }
        Ok(TrialOutput {
            metrics,
            latency_ns: Some(report.tally.latency),
        })
    }

    fn cleanup(&mut self, _ctx: &TrialContext) -> anyhow::Result<()> {
        // Closing the connections ends whatever still runs on the hosts.
        self.clients = None;
        match self.server.take() {
            Some(mut server) => server.stop(),
            None => Ok(()),
        }
    }

    fn warnings(&self) -> Vec<String> {
        let mut warnings = self.warnings.clone();
        if self.generator_bound > 0 {
            warnings.push(format!(
                "in {} of {} trials (warm-up included) the generator's CPUs were at least {:.0}% busy and the server's under {:.0}%: the rate is the generator's limit, not the server's (give the run more CPUs, or load the server from another host with `sledge http`)",
                self.generator_bound,
                self.trials,
                100.0 * cpu_share::SATURATED,
                100.0 * cpu_share::HAD_ROOM
            ));
        }
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{CancelToken, Workload, params::resolve_cases};
    use std::collections::BTreeMap;

    fn env() -> CaseEnv {
        CaseEnv {
            cpus: crate::sys::affinity::allowed_cpus().unwrap(),
            total_cache_bytes: 0,
            memory_bytes: 0,
        }
    }

    fn resolve(workload: &dyn Workload, assignments: &[(&str, &str)]) -> crate::engine::ParamSet {
        crate::engine::test_fixtures::one_case(workload, assignments, 2)
    }

    fn run_once(workload: &dyn Workload, assignments: &[(&str, &str)]) -> TrialOutput {
        let env = env();
        let ctx = TrialContext::new(env.cpus.clone(), CancelToken::new());
        let mut case = workload
            .build(&resolve(workload, assignments), &env)
            .unwrap();
        case.prepare(&ctx).unwrap();
        let output = case.trial(&ctx);
        case.cleanup(&ctx).unwrap();
        output.unwrap()
    }

    #[test]
    fn static_and_dynamic_cases_run_and_clean_up() {
        let out = run_once(
            &crate::workloads::http::static_page::StaticPage,
            &[("size", "2K"), ("concurrency", "3"), ("requests", "300")],
        );
        assert_eq!(out.metrics[0].name, "requests_per_sec");
        assert!(out.metrics[0].value > 0.0);
        assert_eq!(out.latency_ns.unwrap().len(), 300);
        let errors = out.metrics.iter().find(|m| m.name == "errors").unwrap();
        assert_eq!(errors.value, 0.0);

        let out = run_once(
            &crate::workloads::http::dynamic_page::DynamicPage,
            &[
                ("concurrency", "2"),
                ("requests", "100"),
                ("model", "threads"),
                ("keepalive", "false"),
            ],
        );
        assert_eq!(out.latency_ns.unwrap().len(), 100);
        assert!(out.metrics.iter().any(|m| m.name == "connect_mean"));
    }

    #[test]
    fn cleanup_removes_the_sqlite_file() {
        let workload = crate::workloads::http::dynamic_page::DynamicPage;
        let p = resolve(&workload, &[("concurrency", "2"), ("requests", "20")]);
        let env = env();
        let ctx = TrialContext::new(env.cpus.clone(), CancelToken::new());
        let mut case = HttpCase::build(
            &HttpLoadParams::from_set(&p),
            &env,
            Vec::new(),
            Some(DbSource::Sqlite),
            "/dynamic".to_string(),
        )
        .unwrap();
        case.prepare(&ctx).unwrap();
        let path = case
            .server
            .as_ref()
            .and_then(Server::database_path)
            .expect("the server has a SQLite file");
        assert!(path.exists(), "{}", path.display());
        let output = case.trial(&ctx);
        case.cleanup(&ctx).unwrap();
        assert_eq!(output.unwrap().latency_ns.unwrap().len(), 20);
        assert!(!path.exists(), "{} left behind", path.display());
    }

    #[test]
    fn rates_outside_the_schedule_are_refused_when_the_case_is_built() {
        let workload = crate::workloads::http::static_page::StaticPage;
        for rate in ["1e-30", "0.0001"] {
            let p = resolve(&workload, &[("rate_per_client", rate)]);
            let err = match workload.build(&p, &env()) {
                Ok(_) => panic!("rate_per_client={rate} accepted"),
                Err(e) => e.to_string(),
            };
            assert!(err.contains("one request per hour"), "{err}");
        }
        let p = resolve(&workload, &[("rate_per_client", "0.001")]);
        assert!(workload.build(&p, &env()).is_ok());
    }

    #[test]
    fn cpus_are_split_between_server_and_generator() {
        assert_eq!(split_cpus(&[0]), (None, None));
        assert_eq!(split_cpus(&[0, 1]), (Some(vec![0]), Some(vec![1])));
        assert_eq!(split_cpus(&[0, 1, 2]), (Some(vec![0, 1]), Some(vec![2])));
    }

    #[test]
    fn database_urls_are_checked_when_the_case_is_built() {
        let build = |db: &str| {
            let specs = crate::workloads::http::dynamic_page::DynamicPage.params();
            let assignments = BTreeMap::from([("db".to_string(), vec![db.to_string()])]);
            let params = resolve_cases("http.dynamic", &specs, &assignments, 2).unwrap();
            let env = CaseEnv {
                cpus: vec![0],
                total_cache_bytes: 0,
                memory_bytes: 0,
            };
            crate::workloads::http::dynamic_page::DynamicPage
                .build(&params[0], &env)
                .map(|_| ())
        };
        // Building does not connect: nothing need listen there yet.
        build("mysql://u@127.0.0.1:1/x").unwrap();
        build("postgres://u@127.0.0.1:1/x").unwrap();
        let err = build("mysql://u:pw@127.0.0.1:bad/x")
            .unwrap_err()
            .to_string();
        assert!(err.contains("db=mysql://u:***@127.0.0.1:bad/x"), "{err}");
        assert!(!err.contains("pw"), "{err}");
    }
}
