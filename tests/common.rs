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
            values: None,
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

/// A program that some tests need beyond what every machine running the
/// suite is assumed to have (docs/testing.md: a Rust toolchain, Debian's
/// build-essential and a base system), and the Debian package that
/// provides it.
pub struct Program {
    /// Its names on `PATH`, any of which will do; the first is the one
    /// messages name.
    pub names: &'static [&'static str],
    pub package: &'static str,
}

/// What a group of tests needs of the host, and the environment variable
/// whose value `require` makes a test fail, not skip, where the host
/// lacks it: CI sets every such variable, so that nothing skips there.
pub struct HostNeeds {
    pub variable: &'static str,
    /// Why the group needs root, if it does.
    pub root: Option<&'static str>,
    pub programs: &'static [Program],
}

/// The variable of the tests against real database servers (PostgreSQL,
/// MariaDB), which are skipped where none is reachable.
#[allow(dead_code)]
pub const DATABASES: &str = "SLEDGE_TEST_DATABASES";

/// The variable of the tests that run a 32-bit sledge (`pkg/i686.sh`),
/// named by `SLEDGE_I686_BINARY`; skipped where none is named.
#[allow(dead_code)]
pub const I686: &str = "SLEDGE_TEST_I686";

/// `build.kernel` refuses to start without the kernel's lexer and parser
/// generators and `bc`, even on the tests' fixture tree.
#[allow(dead_code)]
pub const KERNEL_TOOLS: HostNeeds = HostNeeds {
    variable: "SLEDGE_TEST_KERNEL_TOOLS",
    root: None,
    programs: &[
        Program {
            names: &["flex"],
            package: "flex",
        },
        Program {
            names: &["bison"],
            package: "bison",
        },
        Program {
            names: &["bc"],
            package: "bc",
        },
    ],
};

/// The HTML report rendered by a real browser.
#[allow(dead_code)]
pub const BROWSER: HostNeeds = HostNeeds {
    variable: "SLEDGE_TEST_BROWSER",
    root: None,
    programs: &[Program {
        names: &["chromium", "chromium-browser", "google-chrome"],
        package: "chromium",
    }],
};

/// The fleet's and the distributed load's test hosts: network namespaces
/// running their own sshd (`tests/hosts/netns-hosts.sh`).
#[allow(dead_code)]
pub const NAMESPACE_HOSTS: HostNeeds = HostNeeds {
    variable: "SLEDGE_TEST_FLEET",
    root: Some("network namespaces"),
    programs: &[
        Program {
            names: &["ip"],
            package: "iproute2",
        },
        Program {
            names: &["ssh"],
            package: "openssh-client",
        },
        Program {
            names: &["ssh-keygen"],
            package: "openssh-client",
        },
        Program {
            names: &["sshd"],
            package: "openssh-server",
        },
    ],
};

/// OpenSSH's client alone, for tests that try a host that is not there:
/// what they expect to read is ssh's own complaint.
#[allow(dead_code)]
pub const SSH_CLIENT: HostNeeds = HostNeeds {
    variable: "SLEDGE_TEST_FLEET",
    root: None,
    programs: &[Program {
        names: &["ssh"],
        package: "openssh-client",
    }],
};

/// The classic tools whose output the `command` workload's parsers read,
/// run for real (`tests/tool_parsers.rs`), and the servers two of them
/// load: nginx for wrk and ab (pgbench and redis-benchmark use the
/// machine's PostgreSQL and Redis servers, which the tests check for
/// themselves).
#[allow(dead_code)]
pub const TOOLS: HostNeeds = HostNeeds {
    variable: "SLEDGE_TEST_TOOLS",
    root: None,
    programs: &[
        Program {
            names: &["fio"],
            package: "fio",
        },
        Program {
            names: &["pgbench"],
            package: "postgresql",
        },
        Program {
            names: &["sysbench"],
            package: "sysbench",
        },
        Program {
            names: &["redis-benchmark"],
            package: "redis-tools",
        },
        Program {
            names: &["redis-cli"],
            package: "redis-tools",
        },
        Program {
            names: &["wrk"],
            package: "wrk",
        },
        Program {
            names: &["ab"],
            package: "apache2-utils",
        },
        Program {
            names: &["stress-ng"],
            package: "stress-ng",
        },
        Program {
            names: &["iperf3"],
            package: "iperf3",
        },
        Program {
            names: &["nginx"],
            package: "nginx-light",
        },
    ],
};

#[allow(dead_code)]
impl HostNeeds {
    /// What this host lacks of the group, in one phrase (`` `flex`,
    /// `bison`; on Debian: apt-get install flex bison ``), or `None`.
    pub fn lacking(&self) -> Option<String> {
        // SAFETY: geteuid(2) has no preconditions and cannot fail.
        let root_missing = self.root.filter(|_| unsafe { libc::geteuid() } != 0);
        let programs: Vec<&Program> = self
            .programs
            .iter()
            .filter(|program| find_program(program.names).is_none())
            .collect();
        if root_missing.is_none() && programs.is_empty() {
            return None;
        }
        let mut what: Vec<String> = root_missing
            .map(|why| format!("root ({why})"))
            .into_iter()
            .collect();
        what.extend(programs.iter().map(|p| format!("`{}`", p.names[0])));
        let mut packages: Vec<&str> = Vec::new();
        for program in &programs {
            if !packages.contains(&program.package) {
                packages.push(program.package);
            }
        }
        let mut phrase = what.join(", ");
        if !packages.is_empty() {
            phrase.push_str("; on Debian: apt-get install ");
            phrase.push_str(&packages.join(" "));
        }
        Some(phrase)
    }

    /// Whether the calling test can run here. When it cannot, it fails
    /// under `VARIABLE=require` (the panic points at the caller), and
    /// otherwise says on stderr, in one line, that it is skipped and what
    /// to install.
    #[track_caller]
    pub fn met(&self) -> bool {
        self.met_for(None)
    }

    /// As [`HostNeeds::met`] for the `part` of a test that needs the
    /// group, where the rest of the test runs anyway.
    #[track_caller]
    pub fn met_in_part(&self, part: &str) -> bool {
        self.met_for(Some(part))
    }

    #[track_caller]
    fn met_for(&self, part: Option<&str>) -> bool {
        let variable = self.variable;
        // Read first, so that a value that means nothing is refused also
        // where nothing lacks.
        let required = required(variable);
        let Some(lacking) = self.lacking() else {
            return true;
        };
        if required {
            panic!(
                "{}: {variable}=require but this host lacks {lacking}",
                this_test()
            );
        }
        let test = match part {
            Some(part) => format!("{} (only {part})", this_test()),
            None => this_test(),
        };
        skip_line(&test, &format!("needs {lacking}"), variable);
        false
    }
}

/// The first of `names` found as an executable file on `PATH`.
pub fn find_program(names: &[&str]) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    names
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Whether `variable` makes the tests that need what it stands for fail,
/// not skip, where this host lacks it: `require`. Unset or empty: skip.
/// Any other value is a mistake, refused at once, not taken for either.
pub fn required(variable: &str) -> bool {
    match std::env::var(variable) {
        Err(std::env::VarError::NotPresent) => false,
        Ok(value) if value == "require" => true,
        Ok(value) if value.is_empty() => false,
        other => panic!(
            "{variable} must be `require` or unset (skip the tests that need what this host lacks); got {other:?}"
        ),
    }
}

/// The name of the running test (`build::a_kernel_tarball_...`): the
/// test harness names each test's thread after it.
pub fn this_test() -> String {
    std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string()
}

/// Says on stderr, in one line, that the running test is skipped, why,
/// and which variable would have made that a failure. Written to stderr
/// itself, past the harness's capture of `eprintln!`, so that a plain
/// `cargo test` shows every skip.
pub fn skip(why: &str, variable: &str) {
    skip_line(&this_test(), why, variable);
}

fn skip_line(test: &str, why: &str, variable: &str) {
    use std::io::Write as _;
    let line = format!("SKIPPED {test}: {why} ({variable}=require makes this a failure)\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// The pids of the processes whose command line is exactly `words`.
#[allow(dead_code)]
pub fn processes_running(words: &[&str]) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| {
                let args: Vec<&[u8]> = line.split(|b| *b == 0).filter(|a| !a.is_empty()).collect();
                args == words.iter().map(|w| w.as_bytes()).collect::<Vec<_>>()
            })
        })
        .collect()
}

/// Waits up to 5 s for no process to run `words`; the pids left.
#[allow(dead_code)]
pub fn gone_within_seconds(words: &[&str]) -> Vec<u32> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let left = processes_running(words);
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// One round of one trial without a warm-up: a case run once (or twice,
/// when its first trial ran beside other load).
#[allow(dead_code)]
pub const ONE_TRIAL: &[&str] = &[
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
