//! The `net.*` workloads over loopback with tiny parameters: what one end
//! sent the other received, every transaction was answered, dropped
//! datagrams count as lost, and faults give clear errors.

use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use super::peer::{Peer, PeerSide, Target};
use super::proto::{Hello, Mode};
use super::rr::run_rr;
use super::server::Server;
use super::sock::SockOpts;
use super::stream::run_stream;
use super::udp::{UdpCase, run_udp};
use crate::engine::CancelToken;

const SHORT: Duration = Duration::from_millis(200);

fn local() -> Server {
    Server::start(SocketAddr::from(([127, 0, 0, 1], 0))).expect("a loopback server starts")
}

fn stream_hello(up: u32, down: u32, msg_size: u32) -> Hello {
    Hello {
        mode: Mode::Stream,
        up,
        down,
        msg_size,
        req_size: 0,
        resp_size: 0,
        sock_buf: 0,
        drop_every: 0,
        congestion: String::new(),
    }
}

#[test]
fn every_byte_sent_is_received_in_both_directions() {
    let server = local();
    let cancel = CancelToken::new();
    let opts = SockOpts::default();
    let totals = run_stream(
        server.addr(),
        &stream_hello(2, 1, 4096),
        &opts,
        SHORT,
        &cancel,
    )
    .expect("a loopback stream runs");
    assert!(totals.bytes_sent_up > 0);
    assert_eq!(totals.bytes_sent_up, totals.bytes_received_up);
    assert!(totals.bytes_received_down > 0);
    assert!(totals.bits_per_sec > 0.0);
    assert!(totals.sender_cpu_ns > 0 && totals.receiver_cpu_ns > 0);
    // The server is free for the next test on the same listener.
    let again = run_stream(
        server.addr(),
        &stream_hello(0, 2, 1000),
        &opts,
        SHORT,
        &cancel,
    )
    .expect("a second test runs");
    assert!(again.bytes_received_down > 0);
    server.stop();
}

#[test]
fn a_socket_buffer_and_the_default_congestion_control_apply() {
    let server = local();
    let opts = SockOpts {
        sock_buf: 256 * 1024,
        congestion: String::new(),
        nagle: true,
    };
    let mut hello = stream_hello(1, 0, 128 * 1024);
    hello.sock_buf = opts.sock_buf;
    let totals = run_stream(server.addr(), &hello, &opts, SHORT, &CancelToken::new())
        .expect("a stream with set buffers runs");
    assert_eq!(totals.bytes_sent_up, totals.bytes_received_up);
}

#[test]
fn every_transaction_is_answered_once() {
    let server = local();
    let cancel = CancelToken::new();
    let rr = run_rr(server.addr(), 2, 1, 3, false, SHORT, &cancel).expect("rr runs");
    assert!(rr.transactions > 0);
    assert_eq!(rr.transactions, rr.answered);
    assert_eq!(rr.latency_ns.len(), rr.transactions);
    let crr = run_rr(server.addr(), 1, 5, 2, true, SHORT, &cancel).expect("crr runs");
    assert!(crr.transactions > 0);
    assert_eq!(crr.transactions, crr.answered);
    server.stop();
}

fn udp_case(drop_every: u32) -> UdpCase {
    UdpCase {
        peer: PeerSide::parse("net.udp", "local", 0).expect("a local peer"),
        rate_bps: 20e6,
        msg_size: 500,
        streams: 1,
        time: SHORT,
        drop_every,
    }
}

#[test]
fn datagrams_the_server_drops_count_as_lost() {
    let server = local();
    let cancel = CancelToken::new();
    let dropped = run_udp(server.addr(), &udp_case(4), &cancel).expect("udp runs");
    // 20 Mbit/s of 500-byte datagrams for 0.2 s: about 1000.
    assert!(dropped.sent > 100, "{dropped:?}");
    // Every fourth is dropped; the kernel may drop more on a busy host.
    assert!(dropped.lost() >= dropped.sent / 4, "{dropped:?}");
    let clean = run_udp(server.addr(), &udp_case(0), &cancel).expect("udp runs");
    assert!(
        clean.received > 0 && clean.received <= clean.sent,
        "{clean:?}"
    );
    server.stop();
}

#[test]
fn rates_read_as_iperf3_takes_them() {
    use super::udp::parse_rate;
    assert_eq!(parse_rate("1G"), Some(1e9));
    assert_eq!(parse_rate("250M"), Some(250e6));
    assert_eq!(parse_rate("1.5k"), Some(1500.0));
    assert_eq!(parse_rate("fast"), None);
    assert_eq!(parse_rate("1"), None);
}

#[test]
fn an_unreachable_peer_is_named() {
    // A port nothing listens on: bind one, note it, close it.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let err = run_stream(
        addr,
        &stream_hello(1, 0, 1000),
        &SockOpts::default(),
        SHORT,
        &CancelToken::new(),
    )
    .expect_err("nothing listens there");
    let text = format!("{err:#}");
    assert!(
        text.contains("unreachable") && text.contains(&addr.to_string()),
        "{text}"
    );
}

#[test]
fn a_port_in_use_is_refused_with_what_to_do() {
    let taken = TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("its address").port();
    let err = match Target::start(&Peer::Local { port }) {
        Ok(_) => panic!("the port is taken"),
        Err(e) => format!("{e:#}"),
    };
    assert!(err.contains("in use") && err.contains("port=0"), "{err}");
}

#[test]
fn a_server_stopped_mid_trial_is_a_clear_error_and_nothing_hangs() {
    let server = local();
    let addr = server.addr();
    let cancel = CancelToken::new();
    let client = std::thread::spawn(move || {
        run_stream(
            addr,
            &stream_hello(1, 1, 4096),
            &SockOpts::default(),
            Duration::from_secs(5),
            &cancel,
        )
    });
    std::thread::sleep(Duration::from_millis(300));
    // Shuts every socket down and joins every server thread.
    server.stop();
    let err = client
        .join()
        .expect("the client thread ends")
        .expect_err("the server went away");
    let text = format!("{err:#}");
    assert!(text.contains(&addr.to_string()), "{text}");
    assert!(
        text.contains("mid-trial") || text.contains("ended its stream"),
        "{text}"
    );
}

#[test]
fn peers_are_local_an_address_or_a_host_over_ssh() {
    assert_eq!(
        Peer::parse("net.rr", "local", 0).ok(),
        Some(Peer::Local { port: 0 })
    );
    assert_eq!(
        Peer::parse("net.rr", "127.0.0.1:5201", 0).ok(),
        Some(Peer::Serve(SocketAddr::from(([127, 0, 0, 1], 5201))))
    );
    match Peer::parse("net.rr", "root@db2:2222", 0) {
        Ok(Peer::Ssh(host)) => {
            assert_eq!(host.user.as_deref(), Some("root"));
            assert_eq!((host.host.as_str(), host.port), ("db2", Some(2222)));
        }
        other => panic!("not an ssh peer: {other:?}"),
    }
    let bad = Peer::parse("net.rr", "root@-oProxyCommand=x", 0).expect_err("an option");
    let bad = bad.to_string();
    assert!(
        bad.starts_with("net.rr: peer=root@-oProxyCommand=x: ") && bad.contains("USER@HOST"),
        "{bad}"
    );
    let err = Peer::parse("net.rr", "no port here", 0).expect_err("no address");
    assert!(err.to_string().contains("USER@HOST[:SSHPORT]"), "{err}");
    let err = PeerSide::parse("net.rr", "local", 70_000)
        .err()
        .expect("no port");
    assert!(err.to_string().contains("port=70000"), "{err}");
}

#[test]
fn a_stream_leaves_nagle_on_as_iperf3_does_and_request_response_turns_it_off() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    let bulk = SockOpts {
        nagle: true,
        ..SockOpts::default()
    };
    let stream = super::sock::connect(addr, &bulk).expect("connects");
    assert!(!stream.nodelay().expect("readable"), "a stream's socket");
    let (accepted, _) = listener.accept().expect("accepts");
    bulk.apply_stream(&accepted).expect("applies");
    assert!(!accepted.nodelay().expect("readable"), "its accepted end");
    let rr = super::sock::connect(addr, &SockOpts::default()).expect("connects");
    assert!(rr.nodelay().expect("readable"), "a request/response socket");
}
