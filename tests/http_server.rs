//! The built-in server's side of HTTP, in both models: what it answers to
//! each method and to requests that break the protocol's rules, and what
//! it keeps once its clients have gone.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sledge::http::Model;

use crate::http::{exchange, fetch, server};

/// The head of a response: its bytes up to and including the empty line.
fn head_of(response: &[u8]) -> &[u8] {
    let end = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response has a head");
    &response[..end + 4]
}

#[test]
fn head_gets_the_get_responses_head_and_no_body() {
    for model in [Model::Async, Model::Threads] {
        let srv = server(model);
        // Inline bodies, a body sent from a file, no such page, and the
        // dynamic page.
        for path in ["/static/2048", "/static/307200", "/nothing", "/dynamic"] {
            let get = fetch(srv.addr(), path);
            let request = format!(
                "HEAD {path} HTTP/1.1\r\nHost: t\r\n\r\nHEAD {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
            );
            let got = exchange(srv.addr(), request.as_bytes());
            // The first answer keeps the connection open, the second
            // closes it: the same head, less and then with the close
            // header, and nothing else.
            let close_head = head_of(&get);
            let keep_head: Vec<u8> = String::from_utf8_lossy(close_head)
                .replace("Connection: close\r\n", "")
                .into_bytes();
            let expected = [keep_head.as_slice(), close_head].concat();
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&expected),
                "{model:?} HEAD {path}"
            );
            assert!(
                get.len() > close_head.len(),
                "{model:?} GET {path} has a body"
            );
        }
        // A refused HEAD has no body either.
        let got = exchange(srv.addr(), b"HEAD /static/1 HTTP/1.1\r\n\r\n");
        assert!(got.starts_with(b"HTTP/1.1 400 "), "{model:?}: {got:?}");
        assert_eq!(got, head_of(&got), "{model:?}");
    }
}

#[test]
fn methods_other_than_get_and_head_are_refused() {
    let long_method = "M".repeat(10 * 1024);
    let long_request = format!("{long_method} /static/1 HTTP/1.1\r\nHost: t\r\n\r\n");
    let refused: &[(&[u8], &str)] = &[
        (b"FOOBAR /static/1 HTTP/1.1\r\nHost: t\r\n\r\n", "501"),
        (b"get /static/1 HTTP/1.1\r\nHost: t\r\n\r\n", "501"),
        (long_request.as_bytes(), "501"),
        // Known methods the server does not serve.
        (b"DELETE /static/1 HTTP/1.1\r\nHost: t\r\n\r\n", "405"),
        (
            b"POST /static/1 HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nab",
            "405",
        ),
        (b"PUT /static/1 HTTP/1.1\r\nHost: t\r\n\r\n", "405"),
        (b"OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n", "405"),
    ];
    for model in [Model::Async, Model::Threads] {
        let srv = server(model);
        for (request, status) in refused {
            let got = exchange(srv.addr(), request);
            let text = String::from_utf8_lossy(&got);
            let shown = String::from_utf8_lossy(&request[..request.len().min(60)]);
            assert!(
                text.starts_with(&format!("HTTP/1.1 {status} ")),
                "{model:?} {shown}: {text}"
            );
            assert!(text.contains("Connection: close\r\n"), "{model:?}: {text}");
            assert_eq!(
                text.contains("\r\nAllow: GET, HEAD\r\n"),
                *status == "405",
                "{model:?} {shown}: {text}"
            );
        }
        // A long method is refused at its first bytes: the rest of its
        // line is never waited for.
        let mut s = TcpStream::connect(srv.addr()).unwrap();
        s.write_all(long_method.as_bytes()).unwrap();
        let (got, closed) = crate::http::read_until_closed(&mut s);
        assert!(closed, "{model:?}: still open");
        assert!(got.starts_with(b"HTTP/1.1 501 "), "{model:?}: {got:?}");
    }
}

#[test]
fn host_headers_header_names_and_leading_empty_lines_follow_rfc_9112() {
    let refused: &[&[u8]] = &[
        // HTTP/1.1 without a Host, or with two.
        b"GET /static/1 HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /static/1 HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"GET /static/1 HTTP/1.0\r\nHost: a\r\nhost: a\r\n\r\n",
        // Whitespace inside a header name, before its colon, or a folded
        // line.
        b"GET /static/1 HTTP/1.1\r\nHost: t\r\nX Pad: 1\r\n\r\n",
        b"GET /static/1 HTTP/1.1\r\nHo st: t\r\n\r\n",
        b"GET /static/1 HTTP/1.1\r\nHost: t\r\nX-Pad\t: 1\r\n\r\n",
        b"GET /static/1 HTTP/1.1\r\nHost: t\r\nX-Pad: 1\r\n folded\r\n\r\n",
        // More empty lines before the request line than the few allowed.
        b"\r\n\r\n\r\n\r\n\r\nGET /static/1 HTTP/1.1\r\nHost: t\r\n\r\n",
    ];
    for model in [Model::Async, Model::Threads] {
        let srv = server(model);
        for request in refused {
            let got = exchange(srv.addr(), request);
            assert!(
                got.starts_with(b"HTTP/1.1 400 "),
                "{model:?} {}: {}",
                String::from_utf8_lossy(request),
                String::from_utf8_lossy(&got)
            );
        }
        // An empty line before a request line is skipped (RFC 9112 §2.2),
        // also between two requests on one connection, and HTTP/1.0 needs
        // no Host.
        let got = exchange(
            srv.addr(),
            b"\r\nGET /static/1 HTTP/1.1\r\nHost: t\r\n\r\n\r\n\nGET /static/1 HTTP/1.0\r\n\r\n",
        );
        let text = String::from_utf8_lossy(&got);
        assert_eq!(
            text.matches("HTTP/1.1 200 OK").count(),
            2,
            "{model:?}: {text}"
        );
    }
}

/// `sledge http --serve` on a free loopback port with `--model threads`;
/// killed when dropped.
struct ServeProcess {
    child: Child,
    addr: SocketAddr,
}

impl ServeProcess {
    fn start() -> ServeProcess {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("sledge"))
            .args(["http", "--serve", "127.0.0.1:0", "--model", "threads"])
            .args(["--max-threads", "4096"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|a| a.parse().ok());
        let Some(addr) = addr else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no address in `{line}`");
        };
        ServeProcess { child, addr }
    }

    /// `(resident set in KiB, threads)` from `/proc/PID/status`.
    fn rss_kib_and_threads(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no {name} in {status}"))
        };
        (field("VmRSS:"), field("Threads:"))
    }

    /// Opens `n` connections, each answered once and then held open
    /// (each holds a connection thread), and returns them.
    fn hold_connections(&self, n: usize) -> Vec<TcpStream> {
        let mut held = Vec::with_capacity(n);
        for _ in 0..n {
            let mut s = TcpStream::connect(self.addr).unwrap();
            s.write_all(b"GET /static/1 HTTP/1.1\r\nHost: t\r\n\r\n")
                .unwrap();
            held.push(s);
        }
        for s in &mut held {
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 512];
            // The one-byte body `a` ends the answer.
            while !got.ends_with(b"\r\n\r\na") {
                let n = s.read(&mut buf).unwrap();
                assert!(n > 0, "closed before its answer");
                got.extend_from_slice(&buf[..n]);
            }
        }
        held
    }

    /// Waits (at most `limit`) until `done` holds for the process's
    /// `(resident KiB, threads)`; returns the last reading.
    fn wait_for(&self, limit: Duration, done: impl Fn((u64, u64)) -> bool) -> (u64, u64) {
        let deadline = Instant::now() + limit;
        loop {
            let now = self.rss_kib_and_threads();
            if done(now) || Instant::now() > deadline {
                return now;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How much more memory the threads model may hold once 1,100
/// connections have come and gone than before: glibc keeps the stacks of
/// ended threads in a cache of at most 40 MiB of address space, each with
/// the pages it last touched (about 24 KiB), so about 4 MiB at 256 KiB
/// per stack; the rest is room for allocator noise. Before connection
/// threads were reaped while idle and their request buffers moved to the
/// stack, 1,100 connections left 20-25 MiB behind.
const KEPT_AFTER_CONNECTIONS_KIB: u64 = 12 * 1024;

#[test]
fn the_threads_model_gives_back_the_memory_of_ended_connections() {
    sledge::sys::fd_limit::ensure_open_files(4096).unwrap();
    let srv = ServeProcess::start();
    let (_, idle_threads) = srv.rss_kib_and_threads();
    // A few connections first, so that what the first ones set up once
    // (the allocator's arenas, the acceptor's list) is in the baseline.
    drop(srv.hold_connections(20));
    srv.wait_for(Duration::from_secs(20), |(_, t)| t <= idle_threads);
    let (before, _) = srv.rss_kib_and_threads();

    let held = srv.hold_connections(1100);
    let (during, threads) = srv.rss_kib_and_threads();
    assert!(threads >= 1100, "{threads} threads for 1,100 connections");
    drop(held);
    let (_, left) = srv.wait_for(Duration::from_secs(20), |(_, t)| t <= idle_threads);
    assert!(left <= idle_threads, "{left} threads still running");
    // The acceptor lets go of ended threads at its next wake-up (within
    // 100 ms); how long that takes is not what is checked here.
    let (after, _) = srv.wait_for(Duration::from_secs(10), |(rss, _)| {
        rss <= before + KEPT_AFTER_CONNECTIONS_KIB
    });
    assert!(
        after <= before + KEPT_AFTER_CONNECTIONS_KIB,
        "resident {before} KiB before 1,100 connections, {during} KiB with them, {after} KiB after"
    );
}
