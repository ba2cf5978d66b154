//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::Command;

/// A temporary directory holding a store, removed when dropped.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

#[allow(dead_code)]
impl Sandbox {
    pub fn new() -> Self {
        Sandbox {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// The store path inside the sandbox.
    pub fn store(&self) -> PathBuf {
        self.dir.path().join("results.db")
    }

    /// `sledge` with `--store` pointing into the sandbox and run from it.
    pub fn sledge(&self) -> Command {
        let mut cmd = Command::cargo_bin("sledge").expect("sledge binary");
        cmd.current_dir(self.dir.path())
            .env("SLEDGE_STORE", self.store())
            .env_remove("XDG_DATA_HOME");
        cmd
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `sledge show last --json`, parsed.
    pub fn show_last(&self) -> serde_json::Value {
        let show = self
            .sledge()
            .args(["show", "last", "--json"])
            .output()
            .expect("sledge show");
        assert!(show.status.success(), "{show:?}");
        serde_json::from_slice(&show.stdout).expect("show --json is JSON")
    }

    /// Asserts that `sledge list --json` lists no run.
    pub fn assert_no_runs(&self) {
        self.sledge()
            .args(["list", "--json"])
            .assert()
            .success()
            .stdout("[]\n");
    }
}

/// The metric `name` of a case of `show --json` or `run --json`; panics
/// naming the case when it has none.
#[allow(dead_code)]
pub fn metric<'a>(case: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    case["metrics"]
        .as_array()
        .expect("a case has metrics")
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {case}"))
}

/// Flags that make a run as short as possible: no idle check, one round
/// of two trials without a warm-up.
#[allow(dead_code)]
pub const FAST: &[&str] = &[
    "--no-idle-check",
    "--rounds",
    "1",
    "--warmup",
    "0",
    "--min-trials",
    "2",
    "--max-trials",
    "2",
];

/// Waits for `child` to exit, killing it and failing after `limit`.
pub fn wait_bounded(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("sledge did not stop within {limit:?} of the interrupt");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Writes a run through the store API, as `sledge run` would have stored
/// it, so that a test controls its state: one `cpu.primes` case
/// (`max_prime=10000 threads=1`) of one round whose headline metric
/// `events_per_sec` has `samples` (none: the run stored no case). A
/// `running` run is left unfinished, as by a sledge that is still running
/// or was killed. Returns the run's id.
#[allow(dead_code)]
pub fn store_fixture_run(store: &Path, status: sledge::results::RunStatus, samples: &[f64]) -> i64 {
    use sledge::results::{
        CaseRecord, MetricRecord, RoundRecord, RunRecord, RunStatus, TrialRecord,
    };
    let mut store = sledge::store::Store::open(store).expect("fixture store");
    let run = RunRecord {
        id: 0,
        uuid: String::new(),
        started: "2026-01-01T00:00:00Z".to_string(),
        finished: None,
        sledge_version: env!("CARGO_PKG_VERSION").to_string(),
        profile: "custom".to_string(),
        command_line: "sledge run cpu.primes".to_string(),
        notes: Vec::new(),
        status: RunStatus::Running,
        cpus: vec![0],
        warnings: Vec::new(),
        host: Default::default(),
        cases: Vec::new(),
    };
    let id = store.begin_run(&run).expect("fixture run");
    if !samples.is_empty() {
        let case = CaseRecord {
            workload: "cpu.primes".to_string(),
            workload_version: sledge::workloads::find("cpu.primes")
                .expect("cpu.primes")
                .version(),
            params: [("max_prime", "10000"), ("threads", "1")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
            given_as_all: None,
            warnings: Vec::new(),
            error: None,
            rounds: vec![RoundRecord {
                round: 0,
                order: 0,
                seconds: samples.len() as f64,
            }],
            trials: (0..samples.len() as u32)
                .map(|index| TrialRecord {
                    index,
                    round: 0,
                    replaced: false,
                    seconds: 1.0,
                    health: Default::default(),
                })
                .collect(),
            metrics: vec![MetricRecord {
                name: "events_per_sec".to_string(),
                unit: "events/s".into(),
                direction: sledge::stats::Direction::Higher,
                summary: sledge::stats::summarize(samples).expect("samples"),
                levels: None,
                samples: samples.to_vec(),
                outliers: sledge::stats::tukey_outliers(samples),
            }],
            latency_histogram: None,
        };
        store.add_case(id, &case).expect("fixture case");
    }
    if status != RunStatus::Running {
        store
            .finish_run(id, status, "2026-01-01T00:01:00Z", &[])
            .expect("fixture finish");
    }
    id
}

/// A loopback port that refuses connections while the returned socket
/// lives: bound and not listening, so nothing else can listen there.
#[allow(dead_code)]
pub fn refusing_port() -> (socket2::Socket, u16) {
    let held = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    held.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    let port = held.local_addr().unwrap().as_socket().unwrap().port();
    (held, port)
}
