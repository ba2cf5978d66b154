//! `http.url` and the request builder against servers this test starts:
//! the built-in server as a child process (`sledge http --serve`), and a
//! small server here that checks the method, a header and the body of
//! every request it gets.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::common::{FAST, Sandbox, metric, refusing_port};
use sledge::engine::CancelToken;
use sledge::http::{self, LoadConfig, Method, Model, RequestSpec, Server, ServerConfig};

/// No test server lives longer than this.
const SERVER_LIFETIME: Duration = Duration::from_secs(60);

/// `sledge http --serve` on a port of its choosing, killed when dropped.
struct ServeChild {
    child: Child,
    addr: SocketAddr,
}

impl ServeChild {
    fn start() -> ServeChild {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("sledge"))
            .args(["http", "--serve", "127.0.0.1:0", "-t", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "serving on http://127.0.0.1:PORT (paths ...)".
        let addr = line
            .strip_prefix("serving on http://")
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("unexpected first line: {line}"))
            .parse()
            .unwrap();
        ServeChild { child, addr }
    }
}

impl Drop for ServeChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `sledge run http.url` with the test workloads' quiet host and `args`.
fn run_url(sandbox: &Sandbox, args: &[&str]) -> std::process::Output {
    sandbox
        .sledge()
        .env("SLEDGE_TEST_QUIET_HOST", "1")
        .args(["run", "http.url", "--json"])
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

#[test]
fn a_url_is_a_stored_workload_with_rounds_and_its_servers_cpu() {
    let server = ServeChild::start();
    let url = format!("url=http://{}/static/1", server.addr);
    let pid = format!("server={}", server.child.id());
    let sandbox = Sandbox::new();
    let out = run_url(
        &sandbox,
        &[
            "-p",
            &url,
            "-p",
            &pid,
            "-p",
            "concurrency=4",
            "-p",
            "requests=0",
            "-p",
            "time=1",
            "--no-idle-check",
            "--rounds",
            "2",
            "--warmup",
            "0",
            "--min-trials",
            "1",
            "--max-trials",
            "1",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let run = sandbox.show_last();
    assert_eq!(run["status"], "complete", "{run}");
    let case = &run["cases"][0];
    assert_eq!(case["workload"], "http.url");
    assert!(case["error"].is_null(), "{case}");
    // One trial in each of two rounds, each in a process of its own (and
    // any a busy host had replaced).
    let rounds: Vec<i64> = case["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["replaced"] == false)
        .map(|t| t["round"].as_i64().unwrap())
        .collect();
    assert_eq!(rounds, [0, 1], "{case}");
    let rate = metric(case, "requests_per_sec");
    assert_eq!(rate["summary"]["n"], 2);
    assert!(rate["summary"]["mean"].as_f64().unwrap() > 100.0, "{rate}");
    assert_eq!(metric(case, "errors")["summary"]["mean"], 0.0);
    for kind in [
        "refused", "reset", "timeout", "protocol", "other", "4xx", "5xx",
    ] {
        let errors = metric(case, &format!("errors_{kind}"));
        assert_eq!(errors["summary"]["mean"], 0.0, "{errors}");
    }
    // The server's side: a second of load cost it CPU time, a share of
    // its CPUs and of its busiest thread, and some per request.
    let per_request = metric(case, "server_cpu_seconds_per_request");
    let per_request = per_request["summary"]["mean"].as_f64().unwrap();
    assert!(per_request > 0.0 && per_request < 0.01, "{per_request}");
    for name in [
        "server_cpu_busy",
        "server_busiest_thread_busy",
        "generator_cpu_busy",
    ] {
        let share = metric(case, name)["summary"]["mean"].as_f64().unwrap();
        assert!(share > 0.0 && share <= 100.0, "{name}: {share}");
    }
    // It says which side set the rate, one way or the other.
    let warnings = case["warnings"].to_string();
    assert!(
        warnings.contains("the rate is the")
            || warnings.contains("the rate describes both")
            || warnings.contains("the rate was set by the response time"),
        "{warnings}"
    );
}

/// A server that answers `200` to requests that are a `POST` with the
/// header `X-Check: yes` and exactly `body`, and `400` to any other; it
/// counts the requests it accepted. Bounded in time.
fn checking_server(body: Vec<u8>) -> (SocketAddr, Arc<AtomicU64>, Arc<AtomicBool>, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (count, stopping) = (accepted.clone(), stop.clone());
    let body = Arc::new(body);
    let handle = std::thread::spawn(move || {
        let started = Instant::now();
        let mut connections = Vec::new();
        while !stopping.load(Ordering::Relaxed) && started.elapsed() < SERVER_LIFETIME {
            match listener.accept() {
                Ok((stream, _)) => {
                    let (count, body) = (count.clone(), body.clone());
                    connections.push(std::thread::spawn(move || {
                        serve_checked(stream, &body, &count)
                    }));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
        for connection in connections {
            let _ = connection.join();
        }
    });
    (addr, accepted, stop, handle)
}

/// Answers the requests of one connection until it closes.
fn serve_checked(stream: TcpStream, body: &[u8], accepted: &AtomicU64) {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut head = Vec::new();
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) if line == "\r\n" => break,
                Ok(_) => head.push(line.trim_end().to_string()),
            }
        }
        let header = |name: &str| {
            head.iter().skip(1).find_map(|line| {
                let (n, v) = line.split_once(':')?;
                n.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
            })
        };
        let length: usize = header("content-length").map_or(0, |v| v.parse().unwrap());
        let mut got = vec![0; length];
        if reader.read_exact(&mut got).is_err() {
            return;
        }
        let ok = head[0].starts_with("POST /api?x=1 HTTP/1.1")
            && header("x-check").as_deref() == Some("yes")
            && header("accept").as_deref() == Some("application/json, */*")
            && got == body;
        if ok {
            accepted.fetch_add(1, Ordering::Relaxed);
        }
        let answer: &[u8] = if ok {
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        } else {
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
        };
        if writer.write_all(answer).is_err() {
            return;
        }
    }
}

#[test]
fn a_post_carries_its_headers_and_its_body_file_to_the_server() {
    let body = b"{\"name\": \"sledge\", \"list\": [1, 2, 3]}\n".to_vec();
    let (addr, accepted, stop, handle) = checking_server(body.clone());
    let sandbox = Sandbox::new();
    let file = sandbox.path().join("body.json");
    std::fs::write(&file, &body).unwrap();
    let url = format!("url=http://{addr}/api?x=1");
    let body_file = format!("body_file={}", file.display());
    let mut args = vec![
        "-p",
        &url,
        "-p",
        "method=post",
        "-p",
        &body_file,
        // The header list is one value; a comma inside it puts it in
        // double quotes, as any value holding a comma.
        "-p",
        "header=\"X-Check: yes|Accept: application/json, */*\"",
        "-p",
        "concurrency=2",
        "-p",
        "requests=25",
    ];
    args.extend(FAST);
    let out = run_url(&sandbox, &args);
    // The CLI's flags build the same request.
    let cli = sandbox
        .sledge()
        .args(["http", "-c", "2", "-n", "10", "--json", "-X", "POST"])
        .args(["-H", "X-Check: yes", "-H", "Accept: application/json, */*"])
        .arg("--body-file")
        .arg(&file)
        .arg(format!("http://{addr}/api?x=1"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        cli.status.success(),
        "{}",
        String::from_utf8_lossy(&cli.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    assert_eq!(json["responses"], 10, "{json}");
    assert_eq!(json["errors"]["status_4xx"], 0, "{json}");
    let run = sandbox.show_last();
    let case = &run["cases"][0];
    assert_eq!(case["params"]["method"], "POST");
    assert_eq!(metric(case, "errors_4xx")["summary"]["mean"], 0.0, "{case}");
    assert_eq!(metric(case, "errors")["summary"]["mean"], 0.0, "{case}");
    // Every request reached the server as it was sent: 25 a trial (two,
    // and any a busy host had replaced) and the CLI's 10, nothing else.
    let trials = case["trials"].as_array().unwrap().len() as u64;
    assert!(trials >= 2, "{case}");
    assert_eq!(accepted.load(Ordering::Relaxed), 25 * trials + 10);
}

#[test]
fn headers_that_would_break_the_framing_are_refused_before_anything_is_sent() {
    let sandbox = Sandbox::new();
    let out = sandbox
        .sledge()
        .args(["http", "-n", "1", "-H", "Transfer-Encoding: chunked"])
        .arg("http://127.0.0.1:1/")
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("-H: header `Transfer-Encoding` is set by sledge (bodies are sent with Content-Length only)"),
        "{err}"
    );
    let out = run_url(
        &sandbox,
        &[
            "-p",
            "url=http://127.0.0.1:1/",
            "-p",
            "header=Host: elsewhere",
            "--no-idle-check",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("header `Host` is set by sledge (from the URL)"),
        "{err}"
    );
    sandbox.assert_no_runs();
}

#[test]
fn a_url_that_refuses_fails_its_first_trial_and_leaves_nothing_running() {
    let (_held, port) = refusing_port();
    let sandbox = Sandbox::new();
    let url = format!("url=http://127.0.0.1:{port}/");
    let mut args = vec!["-p", &url];
    args.extend(FAST);
    let started = Instant::now();
    let out = run_url(&sandbox, &args);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(60));
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let error = run["cases"][0]["error"].as_str().expect("the case failed");
    assert!(
        error.contains(&format!("cannot connect to http://127.0.0.1:{port}/")),
        "{error}"
    );
    assert!(
        run["cases"][0]["trials"].as_array().unwrap().is_empty(),
        "{run}"
    );
    // No sledge process of this run is left: none names the port.
    let needle = format!("127.0.0.1:{port}");
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .map(|cmdline| String::from_utf8_lossy(&cmdline).replace('\0', " "))
        .filter(|cmdline| cmdline.contains(&needle))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_server_pid_that_is_not_running_is_refused_when_the_case_is_built() {
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let pid = gone.id();
    let sandbox = Sandbox::new();
    let server = format!("server={pid}");
    let out = run_url(
        &sandbox,
        &[
            "-p",
            "url=http://127.0.0.1:1/",
            "-p",
            &server,
            "--no-idle-check",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("server={pid}: no process {pid} is running")),
        "{err}"
    );
    sandbox.assert_no_runs();
}

#[test]
fn the_answer_to_a_head_is_complete_at_its_head() {
    let srv = Server::start(&ServerConfig {
        model: Model::Async,
        sizes: vec![2048],
        ..ServerConfig::loopback()
    })
    .unwrap();
    let head = RequestSpec {
        method: Method::Head,
        ..RequestSpec::default()
    };
    let mut config = LoadConfig::closed(
        http::parse_targets_for(&[srv.url("/static/2048")], &head).unwrap(),
        2,
    );
    config.requests = Some(100);
    config.timeout = Some(Duration::from_secs(2));
    let started = Instant::now();
    let r = http::run(&config, &CancelToken::new()).unwrap();
    // Read as a GET's, each answer would wait for 2048 body bytes that
    // never come and time out.
    assert_eq!((r.responses, r.errors.total()), (100, 0), "{:?}", r.errors);
    assert!(started.elapsed() < Duration::from_secs(2));
    // Heads only: well under the 2048 bytes a body would add.
    assert!(r.bytes < 100 * 512, "{}", r.bytes);
    // A connection's parser is told once what its answers are like, so a
    // load that mixed a HEAD with a GET is refused before it starts.
    config
        .targets
        .extend(http::parse_targets(&[srv.url("/static/2048")]).unwrap());
    let err = format!("{:#}", http::run(&config, &CancelToken::new()).unwrap_err());
    assert!(
        err.contains("one load asks all its URLs with one method"),
        "{err}"
    );
}
