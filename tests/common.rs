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
}

/// Flags that make a run as short as possible: no idle check, one trial
/// fewer, a tiny budget.
#[allow(dead_code)]
pub const FAST: &[&str] = &[
    "--no-idle-check",
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
