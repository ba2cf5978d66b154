//! The HTTP load generator against in-process servers on port 0: the
//! built-in server and small misbehaving ones written here. Every server
//! loop is bounded in count and time.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::common::refusing_port;
use sledge::engine::CancelToken;
use sledge::http::server::dynamic::row_text;
use sledge::http::{self, LoadConfig, Model, Rate, Server, ServerConfig};

/// No test server lives longer than this.
const SERVER_LIFETIME: Duration = Duration::from_secs(20);

pub(crate) fn server(model: Model) -> Server {
    Server::start(&ServerConfig {
        model,
        sizes: vec![1, 2048, 300 * 1024],
        ..ServerConfig::loopback()
    })
    .expect("server starts")
}

/// A closed loop on `urls`, bounded in time (a run needs a duration or a
/// timeout); tests add a request count.
fn config(urls: &[String], connections: usize) -> LoadConfig {
    let mut c = LoadConfig::closed(http::parse_targets(urls).unwrap(), connections);
    c.duration = Some(Duration::from_secs(30));
    c
}

/// The whole response to one request with `Connection: close`.
pub(crate) fn fetch(addr: SocketAddr, path: &str) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    out
}

const CLOSE_HEADER: usize = "Connection: close\r\n".len();

#[test]
fn request_and_byte_counts_are_exact() {
    for model in [Model::Async, Model::Threads] {
        let srv = server(model);
        for (path, size) in [("/static/2048", 2048), ("/static/307200", 300 * 1024)] {
            let one = fetch(srv.addr(), path);
            assert_eq!(one.last(), Some(&(b'a' + ((size - 1) % 26) as u8)));
            let mut c = config(&[srv.url(path)], 7);
            c.threads = 2;
            c.requests = Some(1001);
            let r = http::run(&c, &CancelToken::new()).unwrap();
            assert_eq!((r.sent, r.responses), (1001, 1001), "{model:?} {path}");
            assert_eq!(r.bytes, 1001 * (one.len() - CLOSE_HEADER) as u64);
            assert_eq!(r.errors.total(), 0);
            assert_eq!(r.connect.count, 7);
            assert_eq!(r.tally.latency.len(), 1001);
        }
    }
}

#[test]
fn without_keep_alive_every_request_connects() {
    let srv = server(Model::Async);
    let one = fetch(srv.addr(), "/static/1");
    let mut c = config(&[srv.url("/static/1"), srv.url("/nothing")], 3);
    c.keep_alive = false;
    c.requests = Some(200);
    let r = http::run(&c, &CancelToken::new()).unwrap();
    assert_eq!(r.responses, 200);
    assert_eq!(r.connect.count, 200);
    // Half the requests went to a path that does not exist.
    assert_eq!(r.errors.status_4xx, 100);
    let not_found = fetch(srv.addr(), "/nothing");
    assert_eq!(r.bytes, 100 * (one.len() + not_found.len()) as u64);
}

#[test]
fn the_dynamic_page_returns_the_row() {
    let srv = server(Model::Async);
    let page = String::from_utf8(fetch(srv.addr(), "/dynamic")).unwrap();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains(&row_text()), "{page}");
    let mut c = config(&[srv.url("/dynamic")], 4);
    c.requests = Some(100);
    let r = http::run(&c, &CancelToken::new()).unwrap();
    assert_eq!((r.responses, r.errors.total()), (100, 0));
}

#[test]
fn stopping_does_not_wait_for_a_client_that_stops_reading() {
    let mut srv = server(Model::Threads);
    let mut s = TcpStream::connect(srv.addr()).unwrap();
    // 60 responses of 300 KiB (18 MiB) fill both sides' socket buffers,
    // and this client reads none of them.
    for _ in 0..60 {
        write!(s, "GET /static/307200 HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    srv.stop().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "stop took {:?}",
        started.elapsed()
    );
    drop(s);
}

/// A server that answers `requests` requests on each connection with a
/// tiny response, first sleeping `stall` before answer number `stall_at`.
fn scripted_server(
    stall_at: usize,
    stall: Duration,
    behaviour: Behaviour,
) -> (SocketAddr, Arc<AtomicBool>, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        let deadline = Instant::now() + SERVER_LIFETIME;
        let mut answered = 0;
        let mut conns = Vec::new();
        while !flag.load(Ordering::Relaxed) && Instant::now() < deadline {
            match listener.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(false).unwrap();
                    s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
                    conns.push((s, Vec::new()));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(1)),
            }
            let mut buf = [0u8; 4096];
            conns.retain_mut(|(s, pending)| {
                let n = match s.read(&mut buf) {
                    Ok(0) => return false,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
                    Err(_) => return false,
                };
                pending.extend_from_slice(&buf[..n]);
                while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                    pending.drain(..end + 4);
                    match behaviour {
                        Behaviour::Reset => {
                            let sock = socket2::SockRef::from(&*s);
                            sock.set_linger(Some(Duration::ZERO)).unwrap();
                            return false;
                        }
                        Behaviour::Silent => return true,
                        Behaviour::Answer | Behaviour::Interim(_) => {}
                    }
                    answered += 1;
                    if answered == stall_at {
                        std::thread::sleep(stall);
                    }
                    let answer: &[u8] = match behaviour {
                        Behaviour::Interim(interim) => interim,
                        _ => b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                    };
                    if s.write_all(answer).is_err() {
                        return false;
                    }
                }
                true
            });
        }
    });
    (addr, stop, handle)
}

#[derive(Clone, Copy)]
enum Behaviour {
    Answer,
    Reset,
    Silent,
    /// Answers with these bytes instead (interim responses).
    Interim(&'static [u8]),
}

#[test]
fn a_stall_shows_in_corrected_latency_only() {
    let (addr, stop, handle) = scripted_server(10, Duration::from_millis(300), Behaviour::Answer);
    let mut c = config(&[format!("http://{addr}/")], 1);
    c.rate = Some(Rate::Total(200.0));
    c.requests = Some(100);
    c.duration = Some(Duration::from_secs(10));
    let r = http::run(&c, &CancelToken::new()).unwrap();
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    assert_eq!(r.responses, 100);
    let sent = r.latency_from_send.unwrap();
    assert!(sent.max_ms >= 290.0, "the stalled request itself: {sent:?}");
    // On one connection nothing can be sent during the 300 ms stall, so
    // the ~60 requests due then wait for it: more than 10 % of the 100 are
    // at least 250 ms late, whatever the machine's load. Counted from when
    // they were sent, only the stalled one is slow; relative, not absolute,
    // so that a loaded machine's slower responses do not fail the test.
    assert!(
        r.latency.p90_ms >= 250.0,
        "corrected latency shows the stall: {:?}",
        r.latency
    );
    assert!(
        r.latency.p90_ms >= 3.0 * sent.p90_ms,
        "uncorrected latency hides the stall: corrected {:?}, from send {sent:?}",
        r.latency
    );
    assert!(r.late > 10, "{}", r.late);
    assert_eq!(r.requested_rate, Some(200.0));
}

/// A server with a thread per connection that answers at once, except
/// that the connection that gets its fifth request sleeps `stall` before
/// answering it; the others go on answering meanwhile.
fn one_slow_connection_server(stall: Duration) -> (SocketAddr, Arc<AtomicBool>, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        let deadline = Instant::now() + SERVER_LIFETIME;
        let mut workers = Vec::new();
        let requests = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        while !flag.load(Ordering::Relaxed) && Instant::now() < deadline {
            let Ok((mut s, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            };
            let (flag, requests) = (flag.clone(), requests.clone());
            workers.push(std::thread::spawn(move || {
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
                let (mut pending, mut buf) = (Vec::new(), [0u8; 4096]);
                while !flag.load(Ordering::Relaxed) && Instant::now() < deadline {
                    match s.read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => pending.extend_from_slice(&buf[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                        Err(_) => return,
                    }
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        if requests.fetch_add(1, Ordering::Relaxed) + 1 == 5 {
                            std::thread::sleep(stall);
                        }
                        if s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                            .is_err()
                        {
                            return;
                        }
                    }
                }
            }));
        }
        for worker in workers {
            let _ = worker.join();
        }
    });
    (addr, stop, handle)
}

#[test]
fn an_open_loop_sends_on_a_free_connection_while_another_is_slow() {
    // 100 requests/s over 4 connections: 40 ms between one connection's
    // requests. One connection's response takes 400 ms; with a schedule
    // per connection, the ten requests due on it meanwhile would go out
    // late, each up to 400 ms. Any free connection takes the next request
    // due instead, so only the slow request itself is slow.
    let (addr, stop, handle) = one_slow_connection_server(Duration::from_millis(400));
    let mut c = config(&[format!("http://{addr}/")], 4);
    c.rate = Some(Rate::Total(100.0));
    c.requests = Some(100);
    c.duration = Some(Duration::from_secs(10));
    let r = http::run(&c, &CancelToken::new()).unwrap();
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    assert_eq!((r.sent, r.responses), (100, 100), "{:?}", r.errors);
    assert_eq!(r.late, 0, "no request waited for the slow connection");
    let slow = r.tally.latency.count_between(300_000_000, u64::MAX);
    assert_eq!(slow, 1, "only the stalled request is slow: {:?}", r.latency);
}

#[test]
fn a_resetting_server_gives_counted_errors_and_a_finished_run() {
    let (addr, stop, handle) = scripted_server(0, Duration::ZERO, Behaviour::Reset);
    let mut c = config(&[format!("http://{addr}/")], 2);
    c.requests = Some(50);
    c.duration = Some(Duration::from_secs(10));
    let r = http::run(&c, &CancelToken::new()).unwrap();
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    assert_eq!(r.sent, 50);
    assert_eq!(r.responses, 0);
    assert_eq!(r.errors.reset, 50, "{:?}", r.errors);
}

#[test]
fn interim_responses_are_skipped_and_never_counted_as_answers() {
    let run = |answer: &'static [u8]| {
        let (addr, stop, handle) = scripted_server(0, Duration::ZERO, Behaviour::Interim(answer));
        let mut c = config(&[format!("http://{addr}/")], 2);
        c.timeout = Some(Duration::from_millis(200));
        c.requests = Some(6);
        c.duration = Some(Duration::from_secs(10));
        let r = http::run(&c, &CancelToken::new()).unwrap();
        stop.store(true, Ordering::Relaxed);
        handle.join().unwrap();
        r
    };
    // Interim responses before each answer: each answer counts once.
    let r = run(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    );
    assert_eq!((r.sent, r.responses), (6, 6), "{:?}", r.errors);
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    // Only interim responses: no request was answered.
    let r = run(b"HTTP/1.1 100 Continue\r\n\r\n");
    assert_eq!(r.responses, 0, "{:?}", r.errors);
    assert_eq!(r.errors.timeout, 6, "{:?}", r.errors);
    // A switch to another protocol cannot be followed.
    let r = run(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n");
    assert_eq!(r.responses, 0, "{:?}", r.errors);
    assert_eq!(r.errors.protocol, 6, "{:?}", r.errors);
}

#[test]
fn a_silent_server_gives_timeouts() {
    let (addr, stop, handle) = scripted_server(0, Duration::ZERO, Behaviour::Silent);
    let mut c = config(&[format!("http://{addr}/")], 2);
    c.timeout = Some(Duration::from_millis(100));
    c.requests = Some(6);
    c.duration = Some(Duration::from_secs(10));
    let started = Instant::now();
    let r = http::run(&c, &CancelToken::new()).unwrap();
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    assert_eq!(r.errors.timeout, 6, "{:?}", r.errors);
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// What an interim server answers each request with.
#[derive(Clone, Copy)]
enum Hints {
    /// This many `103 Early Hints`, then a `200`.
    ThenFinal(usize),
    /// `103 Early Hints` every `gap`, and nothing else, until the
    /// connection closes.
    Forever { gap: Duration },
}

const EARLY_HINTS: &[u8] = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n";

/// A server with a thread per connection that answers every request with
/// `hints`.
fn early_hints_server(hints: Hints) -> (SocketAddr, Arc<AtomicBool>, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        let deadline = Instant::now() + SERVER_LIFETIME;
        let mut workers = Vec::new();
        while !flag.load(Ordering::Relaxed) && Instant::now() < deadline {
            let Ok((mut s, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            };
            let flag = flag.clone();
            workers.push(std::thread::spawn(move || {
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
                let (mut pending, mut buf) = (Vec::new(), [0u8; 4096]);
                let live = || !flag.load(Ordering::Relaxed) && Instant::now() < deadline;
                while live() {
                    match s.read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => pending.extend_from_slice(&buf[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                        Err(_) => return,
                    }
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        match hints {
                            Hints::ThenFinal(n) => {
                                let mut answer = EARLY_HINTS.repeat(n);
                                answer.extend_from_slice(
                                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                                );
                                if s.write_all(&answer).is_err() {
                                    return;
                                }
                            }
                            Hints::Forever { gap } => {
                                // Until the client gives up on the
                                // connection (the write fails).
                                while live() && s.write_all(EARLY_HINTS).is_ok() {
                                    std::thread::sleep(gap);
                                }
                                return;
                            }
                        }
                    }
                }
            }));
        }
        for worker in workers {
            let _ = worker.join();
        }
    });
    (addr, stop, handle)
}

/// Every request sent ends in exactly one place: a complete response, an
/// error without one, or still waiting when the run ended.
fn assert_every_request_counted_once(r: &http::LoadReport) {
    assert_eq!(
        r.sent,
        r.responses + r.errors.without_response() + r.unanswered,
        "sent {}, responses {}, unanswered {}, errors {:?}",
        r.sent,
        r.responses,
        r.unanswered,
        r.errors
    );
}

#[test]
fn early_hints_before_the_answer_are_skipped_and_every_request_is_counted() {
    let (addr, stop, handle) = early_hints_server(Hints::ThenFinal(3));
    let mut c = config(&[format!("http://{addr}/")], 2);
    c.timeout = Some(Duration::from_secs(5));
    c.requests = Some(40);
    let r = http::run(&c, &CancelToken::new()).unwrap();
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    assert_eq!((r.sent, r.responses), (40, 40), "{:?}", r.errors);
    assert_eq!((r.errors.total(), r.unanswered), (0, 0), "{:?}", r.errors);
    assert_every_request_counted_once(&r);
}

#[test]
fn endless_early_hints_are_an_error_or_still_waiting_never_lost() {
    let run = |gap: Duration, timeout: Duration, duration: Duration| {
        let (addr, stop, handle) = early_hints_server(Hints::Forever { gap });
        let mut c = config(&[format!("http://{addr}/")], 2);
        c.timeout = Some(timeout);
        c.duration = Some(duration);
        let r = http::run(&c, &CancelToken::new()).unwrap();
        stop.store(true, Ordering::Relaxed);
        handle.join().unwrap();
        assert_eq!(r.responses, 0, "{:?}", r.errors);
        assert_every_request_counted_once(&r);
        r
    };
    // A flood: past the bound on interim responses each request is a
    // protocol error, and the next goes out on a new connection.
    let r = run(
        Duration::ZERO,
        Duration::from_secs(10),
        Duration::from_secs(1),
    );
    assert!(r.errors.protocol > 2, "{:?}", r.errors);
    assert_eq!(r.errors.timeout, 0, "{:?}", r.errors);
    // A trickle (one a second) within the timeout: when the run ends the
    // requests are still waiting, and counted so.
    let second = Duration::from_secs(1);
    let r = run(second, Duration::from_secs(10), Duration::from_millis(1500));
    assert_eq!((r.sent, r.unanswered), (2, 2), "{:?}", r.errors);
    assert_eq!(r.errors.without_response(), 0, "{:?}", r.errors);
    // The same trickle with a timeout shorter than the run: timeouts.
    let r = run(
        second,
        Duration::from_millis(300),
        Duration::from_millis(1500),
    );
    assert!(r.errors.timeout >= 4, "{:?}", r.errors);
    assert_eq!(r.errors.protocol, 0, "{:?}", r.errors);

    // `sledge http` says where the requests went.
    let (addr, stop, handle) = early_hints_server(Hints::Forever { gap: second });
    let out = sledge_http(&["-c", "2", "-d", "1500ms", &format!("http://{addr}/")]);
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("0 responses in 1.5"),
        "{out:?}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains(" s (2 sent, 2 still waiting when the run ended), "),
        "{out:?}"
    );
    assert_eq!(
        stderr.trim_end(),
        "error: no request succeeded: 2 sent, 0 complete responses (0 4xx, 0 5xx), \
         2 without a response (refused 0, reset 0, timeout 0, protocol 0, other 0, \
         still waiting when the run ended 2)"
    );
}

#[test]
fn open_loop_drops_requests_older_than_the_timeout() {
    let (addr, stop, handle) = scripted_server(2, Duration::from_millis(400), Behaviour::Answer);
    let mut c = config(&[format!("http://{addr}/")], 1);
    c.rate = Some(Rate::PerConnection(100.0));
    c.timeout = Some(Duration::from_millis(1000));
    c.duration = Some(Duration::from_millis(1500));
    let r = http::run(&c, &CancelToken::new()).unwrap();
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    assert_eq!(r.errors.total(), 0, "{:?}", r.errors);
    assert_eq!(r.dropped, 0);
    assert!(r.responses > 50, "{}", r.responses);
    // The same stall with a 100 ms timeout: requests time out while the
    // server sleeps, and those that fell due meanwhile are dropped, not
    // sent late.
    let (addr, stop, handle) = scripted_server(2, Duration::from_millis(400), Behaviour::Answer);
    let mut c = config(&[format!("http://{addr}/")], 1);
    c.rate = Some(Rate::PerConnection(100.0));
    c.timeout = Some(Duration::from_millis(100));
    c.duration = Some(Duration::from_millis(1500));
    let r = http::run(&c, &CancelToken::new()).unwrap();
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    assert!(r.errors.timeout >= 1, "{:?}", r.errors);
    assert!(r.dropped > 0, "{}", r.dropped);
}

#[test]
fn an_unreachable_server_fails_fast() {
    let (held, port) = refusing_port();
    let mut c = config(&[format!("http://127.0.0.1:{port}/")], 1);
    c.duration = Some(Duration::from_secs(30));
    let started = Instant::now();
    let err = http::run(&c, &CancelToken::new()).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    let text = format!("{err:#}");
    assert!(
        text.contains("cannot connect to http://127.0.0.1"),
        "{text}"
    );
    assert!(text.to_lowercase().contains("refused"), "{text}");
    drop(held);
}

#[test]
fn every_run_is_bounded_in_time_and_rates_are_checked() {
    let srv = server(Model::Async);
    let mut c = config(&[srv.url("/static/1")], 2);
    c.duration = None;
    c.requests = Some(10);
    let err = http::run(&c, &CancelToken::new()).unwrap_err().to_string();
    assert!(err.contains("duration or a per-request timeout"), "{err}");
    // A timeout bounds every request, so a count is then enough.
    c.timeout = Some(Duration::from_secs(5));
    assert_eq!(http::run(&c, &CancelToken::new()).unwrap().responses, 10);
    c.timeout = Some(Duration::ZERO);
    let err = http::run(&c, &CancelToken::new()).unwrap_err().to_string();
    assert!(err.contains("timeout must be more than 0"), "{err}");

    let mut c = config(&[srv.url("/static/1")], 2);
    for rate in [
        Rate::Total(1e-30),
        Rate::PerConnection(1e-30),
        Rate::Total(1e300),
    ] {
        c.rate = Some(rate);
        let err = http::run(&c, &CancelToken::new()).unwrap_err().to_string();
        assert!(err.contains("one request per hour"), "{rate:?}: {err}");
    }
}

#[test]
fn a_thread_that_cannot_be_pinned_fails_the_run_without_a_hang() {
    let srv = server(Model::Async);
    // CPU 1023 is not on this machine: sched_setaffinity refuses it in
    // the second thread, after the first has pinned itself.
    let mut c = config(&[srv.url("/static/1")], 4);
    c.threads = 2;
    c.cpus = Some(vec![0, 1023]);
    let started = Instant::now();
    let err = http::run(&c, &CancelToken::new()).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    let text = format!("{err:#}");
    assert!(text.contains("pinning generator thread 1"), "{text}");
    // A CPU beyond any CPU set is refused before a thread starts.
    c.cpus = Some(vec![0, 1 << 20]);
    let text = format!("{:#}", http::run(&c, &CancelToken::new()).unwrap_err());
    assert!(text.contains("CPUs are numbered 0 to"), "{text}");
}

#[test]
fn the_cli_prints_metrics_and_refuses_bad_urls() {
    let srv = server(Model::Async);
    let dir = tempfile::tempdir().unwrap();
    let sledge = || {
        let mut cmd = assert_cmd::Command::cargo_bin("sledge").unwrap();
        cmd.current_dir(dir.path())
            .env("SLEDGE_STORE", dir.path().join("results.db"));
        cmd
    };
    // `sledge http ARGS --json URL`, which must succeed; its JSON.
    let http_json = |args: &[&str]| -> serde_json::Value {
        let out = sledge()
            .arg("http")
            .args(args)
            .args(["--json", &srv.url("/static/1")])
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let json = http_json(&["-c", "3", "-n", "300"]);
    assert_eq!(json["responses"], 300);
    assert!(json["latency"]["p99_ms"].as_f64().unwrap() > 0.0);
    assert!(json["peak_rss_bytes"].as_u64().unwrap() > 0);

    let out = sledge()
        .args(["http", "-n", "10", "-c", "2", &srv.url("/static/1")])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("requests/s") && text.contains("p99.9"),
        "{text}"
    );

    // --timeout 0 is no timeout, as in the workloads.
    let json = http_json(&["-n", "20", "-c", "2", "--timeout", "0"]);
    assert_eq!(json["responses"], 20, "{json}");
    assert_eq!(json["errors"]["timeout"], 0, "{json}");

    for (args, message) in [
        (&["--rate", "1e-30"][..], "one request per hour"),
        (&["--rate-per-client", "1e-30"][..], "one request per hour"),
        (&["-d", "1e300"][..], "expected from 0 to"),
    ] {
        let out = sledge()
            .args(["http", "-n", "1"])
            .args(args)
            .arg(srv.url("/static/1"))
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }

    for (url, message) in [
        ("ftp://127.0.0.1/", "only http://"),
        ("not a url", "is not a URL"),
    ] {
        let out = sledge()
            .args(["http", "-n", "1", url])
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{err}");
    }
}

#[test]
fn ctrl_c_prints_what_was_measured_and_exits_130() {
    let srv = server(Model::Async);
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("sledge"))
        .current_dir(dir.path())
        .env("SLEDGE_STORE", dir.path().join("results.db"))
        .args([
            "http",
            "-c",
            "4",
            "-d",
            "60",
            "--json",
            &srv.url("/static/1"),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Interrupt only once sledge handles SIGINT (SigCgt in its status),
    // and after some traffic.
    let catches_sigint = || {
        let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()));
        status
            .ok()
            .and_then(|s| {
                let mask = s
                    .lines()
                    .find_map(|l| l.strip_prefix("SigCgt:"))?
                    .trim()
                    .to_string();
                u64::from_str_radix(&mask, 16).ok()
            })
            .is_some_and(|mask| mask & (1 << (libc::SIGINT - 1)) != 0)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !catches_sigint() {
        assert!(
            Instant::now() < deadline,
            "sledge never installed its Ctrl-C handler"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = crate::common::wait_bounded(&mut child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(130));
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["interrupted"], true, "{json}");
    assert!(json["responses"].as_u64().unwrap() > 0, "{json}");
    let seconds = json["seconds"].as_f64().unwrap();
    assert!(
        seconds > 0.0 && seconds < 30.0,
        "the figures cover the run until the interrupt: {json}"
    );
}

/// A server that answers every request with `response` and closes the
/// connection, the data and the FIN in one segment (corked, then shut
/// down: the kernel tacks the FIN onto the held data), so that the client
/// sees the body and the close in one wake-up. Serves `connections`
/// connections, then ends (and at most [`SERVER_LIFETIME`]).
fn closing_server(response: &'static [u8], connections: usize) -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = std::thread::spawn(move || {
        let deadline = Instant::now() + SERVER_LIFETIME;
        let mut served = 0;
        while served < connections && Instant::now() < deadline {
            let mut s = match listener.accept() {
                Ok((s, _)) => s,
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                }
            };
            s.set_nonblocking(false).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            if head.is_empty() {
                continue;
            }
            served += 1;
            let cork = |on: libc::c_int| {
                // SAFETY: setsockopt with a valid int option on an open socket.
                let rc = unsafe {
                    libc::setsockopt(
                        std::os::fd::AsRawFd::as_raw_fd(&s),
                        libc::IPPROTO_TCP,
                        libc::TCP_CORK,
                        (&on as *const libc::c_int).cast(),
                        std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                    )
                };
                assert_eq!(rc, 0, "TCP_CORK");
            };
            cork(1);
            if s.write_all(response).is_ok() {
                let _ = s.shutdown(std::net::Shutdown::Write);
            }
            // Wait for the client's close, so that no reset overtakes the FIN.
            let _ = s.read(&mut buf);
        }
    });
    (addr, handle)
}

#[test]
fn responses_delimited_by_the_close_are_complete_at_the_close() {
    for (response, what) in [
        (&b"HTTP/1.0 200 OK\r\n\r\nhello"[..], "HTTP/1.0"),
        (
            &b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello"[..],
            "HTTP/1.1 without a length",
        ),
    ] {
        let (r, took) = run_against_closing_server(response, 10);
        assert_eq!(
            (r.sent, r.responses, r.errors.total()),
            (10, 10, 0),
            "{what}: {:?}",
            r.errors
        );
        assert_eq!(r.bytes, 10 * response.len() as u64, "{what}");
        assert_eq!(r.connect.count, 10, "{what}: a connection per response");
        assert!(took < Duration::from_secs(8), "{what}: took {took:?}");
    }
    // A body cut short by the close is a reset, at once, not a hang.
    let (r, took) =
        run_against_closing_server(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", 3);
    assert_eq!((r.responses, r.errors.reset), (0, 3), "{:?}", r.errors);
    assert!(took < Duration::from_secs(8), "took {took:?}");
}

/// `requests` requests on one connection at a time against a
/// [`closing_server`] answering `response`; the report and how long it took.
fn run_against_closing_server(
    response: &'static [u8],
    requests: usize,
) -> (http::LoadReport, Duration) {
    let (addr, handle) = closing_server(response, requests);
    let mut c = config(&[format!("http://{addr}/")], 1);
    c.requests = Some(requests as u64);
    c.duration = Some(Duration::from_secs(10));
    let started = Instant::now();
    let r = http::run(&c, &CancelToken::new()).unwrap();
    let took = started.elapsed();
    handle.join().unwrap();
    (r, took)
}

/// `sledge http ARGS` with a sandboxed store, bounded to 60 s.
fn sledge_http(args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    assert_cmd::Command::cargo_bin("sledge")
        .unwrap()
        .current_dir(dir.path())
        .env("SLEDGE_STORE", dir.path().join("results.db"))
        .arg("http")
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

#[test]
fn a_silent_server_times_out_by_default_and_fails_the_run() {
    let (addr, stop, handle) = scripted_server(0, Duration::ZERO, Behaviour::Silent);
    let url = format!("http://{addr}/");
    let started = Instant::now();
    // No --timeout: the default (2 s) ends each request; -n alone would
    // otherwise wait for the 600 s cap.
    let out = sledge_http(&["-c", "2", "-t", "1", "-n", "4", "--json", &url]);
    let took = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["errors"]["timeout"], 4, "{json}");
    assert_eq!(json["responses"], 0, "{json}");
    // Two rounds of 2 s on two connections, with room for a busy host.
    assert!(took >= Duration::from_millis(3900), "{took:?}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert!(
        stderr.contains("error: no request succeeded: 4 sent, 0 complete responses"),
        "{stderr}"
    );
}

#[test]
fn a_run_where_every_response_is_an_error_status_fails() {
    let srv = server(Model::Async);
    let out = sledge_http(&["-c", "1", "-n", "5", &srv.url("/nothing")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // The figures are printed all the same.
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("5 responses"),
        "{out:?}"
    );
    assert_eq!(
        stderr.trim_end(),
        "error: no request succeeded: 5 sent, 5 complete responses (5 4xx, 0 5xx), \
         0 without a response (refused 0, reset 0, timeout 0, protocol 0, other 0, \
         still waiting when the run ended 0)"
    );
    // One success among the errors is a run that worked.
    let out = sledge_http(&[
        "-c",
        "1",
        "-n",
        "4",
        &srv.url("/nothing"),
        &srv.url("/static/1"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn serve_failures_print_only_the_true_error() {
    // A port in use: no warning about threads or a database left behind.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let out = sledge_http(&["--serve", &addr.to_string()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("error: cannot listen on {addr}: Address already in use (os error 98)\n")
    );
    drop(taken);
    // A database server that cannot be reached: no warning about dropping
    // a table that was never made.
    let (held, port) = refusing_port();
    for (model, db, reason) in [
        (
            "async",
            format!("postgres://u:secret@127.0.0.1:{port}/db"),
            "cannot connect: error connecting to server: Connection refused (os error 111)",
        ),
        (
            "threads",
            format!("mysql://u:secret@127.0.0.1:{port}/db"),
            "cannot connect to MySQL/MariaDB: DriverError { Could not connect to address `127.0.0.1:PORT': Connection refused (os error 111) }",
        ),
    ] {
        let out = sledge_http(&["--serve", "127.0.0.1:0", "--model", model, "--db", &db]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let shown = db.replace(":secret@", ":***@");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "error: db={shown}: {}\n",
                reason.replace("PORT", &port.to_string())
            )
        );
    }
    drop(held);
}

/// Every file under `dir`, concatenated (a store and its journal).
fn bytes_under(dir: &std::path::Path) -> Vec<u8> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            all.extend(std::fs::read(&path).unwrap());
        }
    }
    all
}

#[test]
fn database_passwords_are_masked_in_every_form_everywhere() {
    let (held, port) = refusing_port();
    // A sweep over the forms PostgreSQL and MySQL accept a password in:
    // libpq's keyword form (quoted, with a space), a URL's user part, a
    // query parameter. Nothing listens, so every case fails in its set-up.
    let db = format!(
        "db=host=127.0.0.1 port={port} user=u password='secretpw 1' dbname=x,\
         postgres://u:secretpw2@127.0.0.1:{port}/x,\
         mysql://u@127.0.0.1:{port}/x?password=secretpw3"
    );
    let sandbox = crate::common::Sandbox::new();
    let out = sandbox
        .sledge()
        .args(["run", "http.dynamic", "-p", &db, "-p", "requests=10"])
        .args(crate::common::FAST)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(!stdout.contains("secretpw"), "{stdout}");
    assert!(!stderr.contains("secretpw"), "{stderr}");
    assert!(stdout.contains("password=***"), "{stdout}");
    assert!(stdout.contains("postgres://u:***@127.0.0.1"), "{stdout}");
    assert!(stdout.contains("?password=***"), "{stdout}");
    let stored = bytes_under(sandbox.path());
    assert!(
        !stored.windows(8).any(|w| w == b"secretpw"),
        "a password reached the store"
    );
    let run = sandbox.show_last();
    let command_line = run["command_line"].as_str().unwrap();
    assert!(
        command_line.contains(&format!(
            "-p db=host=127.0.0.1 port={port} user=u password=*** dbname=x,postgres://u:***@"
        )),
        "{command_line}"
    );
    let cases = run["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 3, "{run}");
    for case in cases {
        let shown = case["params"]["db"].as_str().unwrap();
        assert!(shown.contains("***"), "{shown}");
        let error = case["error"].as_str().unwrap();
        assert!(error.contains("db=") && error.contains("***"), "{error}");
    }
    drop(held);
}

/// A built-in server with short limits, so that abuse is cut off fast.
fn limited_server(model: Model, limits: http::server::Limits) -> Server {
    Server::start(&ServerConfig {
        model,
        sizes: vec![1, 10 << 20],
        limits,
        ..ServerConfig::loopback()
    })
    .expect("server starts")
}

fn short_limits() -> http::server::Limits {
    http::server::Limits {
        header_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_millis(300),
        send_timeout: Duration::from_millis(300),
        ..Default::default()
    }
}

/// Reads until the server closes (`true`), or 10 s pass (`false`);
/// returns what was read.
pub(crate) fn read_until_closed(s: &mut TcpStream) -> (Vec<u8>, bool) {
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut out = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    while Instant::now() < deadline {
        match s.read(&mut buf) {
            Ok(0) => return (out, true),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return (out, true),
        }
    }
    (out, false)
}

#[test]
fn stalled_and_idle_clients_are_closed_after_their_timeout() {
    for model in [Model::Async, Model::Threads] {
        let srv = limited_server(model, short_limits());
        let connect = || TcpStream::connect(srv.addr()).unwrap();
        // Nothing sent after the accept.
        let mut silent = connect();
        // A head sent a byte every 50 ms (slowloris): the header timeout
        // counts from the accept, not from the last byte.
        let mut trickle = connect();
        // One request answered, then nothing: the idle timeout.
        let mut idle = connect();
        write!(idle, "GET /static/1 HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
        // Responses asked for and never read, 1 GiB, more than the
        // kernel's socket buffers hold: the send timeout.
        let mut deaf = connect();
        for _ in 0..100 {
            write!(deaf, "GET /static/10485760 HTTP/1.1\r\nHost: t\r\n\r\n").unwrap();
        }
        let started = Instant::now();
        let head = b"GET /static/1 HTTP/1.1\r\nHost: t\r\nX-Slow: ";
        for (i, byte) in head.iter().chain(b"a".repeat(40).iter()).enumerate() {
            if trickle.write_all(std::slice::from_ref(byte)).is_err() {
                break;
            }
            if i > 10 && started.elapsed() > Duration::from_secs(3) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        for (name, s) in [("silent", &mut silent), ("trickle", &mut trickle)] {
            let (got, closed) = read_until_closed(s);
            assert!(
                closed,
                "{model:?} {name}: still open after {:?}",
                started.elapsed()
            );
            assert!(got.is_empty(), "{model:?} {name}: {got:?}");
        }
        let (got, closed) = read_until_closed(&mut idle);
        assert!(closed, "{model:?} idle: still open");
        assert!(got.starts_with(b"HTTP/1.1 200"), "{model:?} idle");
        // Read only well after the send timeout: reading is progress.
        std::thread::sleep(Duration::from_millis(1500).saturating_sub(started.elapsed()));
        let (got, closed) = read_until_closed(&mut deaf);
        assert!(closed, "{model:?} deaf: still open");
        assert!(
            got.len() < 100 * (10 << 20),
            "{model:?} deaf: all {} bytes were kept for it",
            got.len()
        );
        // Clients that keep up are served as before.
        assert!(fetch(srv.addr(), "/static/1").starts_with(b"HTTP/1.1 200"));
    }
}

#[test]
fn the_threads_model_caps_its_connection_threads() {
    let srv = limited_server(
        Model::Threads,
        http::server::Limits {
            max_threads: 3,
            ..Default::default()
        },
    );
    // Three connections hold the three threads.
    let mut held: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(srv.addr()).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // A fourth is accepted by the kernel but waits for a thread.
    let mut fourth = TcpStream::connect(srv.addr()).unwrap();
    write!(
        fourth,
        "GET /static/1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    fourth
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = [0u8; 1024];
    match fourth.read(&mut buf) {
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) => {}
        other => panic!("a fourth thread answered: {other:?}"),
    }
    // One of the three leaves: the fourth gets its thread and its answer.
    drop(held.pop());
    let (got, closed) = read_until_closed(&mut fourth);
    assert!(closed && got.starts_with(b"HTTP/1.1 200"), "{got:?}");
    drop(held);
}

/// Sends `request` on a fresh connection; what came back until the close.
pub(crate) fn exchange(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(request).unwrap();
    let (got, closed) = read_until_closed(&mut s);
    assert!(
        closed,
        "still open after {:?}",
        String::from_utf8_lossy(request)
    );
    got
}

#[test]
fn malformed_requests_get_a_4xx_and_a_close() {
    let refused: &[(&[u8], &str)] = &[
        (
            b"GET /static/1 HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n",
            "400",
        ),
        (
            b"GET /static/1 HTTP/1.1\r\nHost: t\r\nContent-Length: 12345678901234567890123\r\n\r\n",
            "400",
        ),
        (
            b"GET /static/1 HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
            "400",
        ),
        (
            b"GET /static/1 HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
            "400",
        ),
        (
            b"GET /static/1 HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n",
            "411",
        ),
        (
            b"GET /static/1 HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\n",
            "413",
        ),
        (b"GET /static/1 HTTP/1.1\r\nHost: t\r\nno colon\r\n\r\n", "400"),
        (b"GET /static/1 HTTP/9.9\r\nHost: t\r\n\r\n", "400"),
        // Binary garbage, with no line end at all: a TLS hello, NULs.
        (b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", "400"),
        (b"\x00\x00\x00\x00", "400"),
    ];
    for model in [Model::Async, Model::Threads] {
        let srv = server(model);
        for (request, status) in refused {
            let got = exchange(srv.addr(), request);
            let text = String::from_utf8_lossy(&got);
            assert!(
                text.starts_with(&format!("HTTP/1.1 {status} ")),
                "{model:?} {}: {text}",
                String::from_utf8_lossy(request)
            );
            assert!(text.contains("Connection: close\r\n"), "{model:?}: {text}");
        }
        // Bare LF line ends are accepted (the documented policy).
        let got = exchange(srv.addr(), b"GET /static/1 HTTP/1.0\n\n");
        assert!(got.starts_with(b"HTTP/1.1 200"), "{model:?}: {got:?}");
        // A body is skipped, so the next request on the connection is
        // read where it starts; also when the body comes in pieces.
        let mut s = TcpStream::connect(srv.addr()).unwrap();
        s.write_all(b"GET /static/1 HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n01234")
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        s.write_all(b"56789GET /static/1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .unwrap();
        let (got, closed) = read_until_closed(&mut s);
        let text = String::from_utf8_lossy(&got);
        assert!(closed, "{model:?}: {text}");
        assert_eq!(
            text.matches("HTTP/1.1 200 OK").count(),
            2,
            "{model:?}: {text}"
        );
    }
}

#[test]
fn a_client_that_pipelines_without_reading_gets_every_answer_later() {
    for model in [Model::Async, Model::Threads] {
        let srv = server(model);
        let one_close = fetch(srv.addr(), "/static/307200").len() as u64;
        let one_keep = one_close - CLOSE_HEADER as u64;
        let mut s = TcpStream::connect(srv.addr()).unwrap();
        // 1,000 requests (150 KB) for 300 KiB each (300 MiB, more than
        // the socket buffers hold) written before any answer is read: the
        // server reads ahead only so far, then on as answers are taken.
        let requests = 1000;
        let pad = "a".repeat(100);
        let writer = {
            let mut s = s.try_clone().unwrap();
            std::thread::spawn(move || {
                for i in 0..requests {
                    let connection = if i == requests - 1 {
                        "close"
                    } else {
                        "keep-alive"
                    };
                    write!(
                        s,
                        "GET /static/307200 HTTP/1.1\r\nHost: t\r\nX-Pad: {pad}\r\nConnection: {connection}\r\n\r\n"
                    )
                    .unwrap();
                }
            })
        };
        std::thread::sleep(Duration::from_millis(300));
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0u64;
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => total += n as u64,
                Err(e) => panic!("{model:?}: {e} after {total} bytes"),
            }
        }
        writer.join().unwrap();
        assert_eq!(
            total,
            (requests as u64 - 1) * one_keep + one_close,
            "{model:?}"
        );
    }
}
