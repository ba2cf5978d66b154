//! The little protocol between the `net.*` workloads and their server
//! side: fixed-size little-endian frames, so that either end can be
//! another build of sledge on another host.
//!
//! Every connection opens with a 16-byte [`Header`]. A **control**
//! connection follows it with a [`Hello`] describing the test; the server
//! answers with a [`Welcome`] (the test's id and, for UDP, its port). The
//! client then opens the test's **data** connections (a header naming the
//! test and the stream's index), reads one "ready" byte on the control
//! connection, runs its trial, writes one "stop" byte and reads each
//! server worker's [`WorkerStats`]. A **crr** connection names its test
//! and carries one request; the server answers and closes it.

use std::io::{Read, Write};

use anyhow::{Context, bail};

/// The first four bytes of every connection ("SLNT").
pub const MAGIC: u32 = 0x534c_4e54;
/// The byte the server writes once every data connection of a test is
/// there and its workers run.
pub const READY: u8 = 0x52;
/// The byte the client writes when its trial is over.
pub const STOP: u8 = 0x53;

/// Bytes of a datagram's sequence number and send time, at its start.
pub const DATAGRAM_HEADER: usize = 16;

/// What a connection is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Control = 1,
    Data = 2,
    Crr = 3,
}

/// The 16 bytes a connection opens with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    /// The test the connection belongs to (0 for a control connection).
    pub test: u32,
    /// The stream's index among the test's data connections.
    pub index: u32,
}

impl Header {
    pub const LEN: usize = 16;

    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4] = self.kind as u8;
        b[8..12].copy_from_slice(&self.test.to_le_bytes());
        b[12..16].copy_from_slice(&self.index.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8; Self::LEN]) -> anyhow::Result<Self> {
        if u32_at(b, 0) != MAGIC {
            bail!("not a sledge net client (wrong magic number)");
        }
        let kind = match b[4] {
            1 => Kind::Control,
            2 => Kind::Data,
            3 => Kind::Crr,
            other => bail!("unknown connection kind {other}"),
        };
        Ok(Header {
            kind,
            test: u32_at(b, 8),
            index: u32_at(b, 12),
        })
    }
}

/// What a test measures, which says what the server's workers do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Bulk TCP: the first `up` data connections bring data to the
    /// server (it reads and discards), the next `down` take data from it
    /// (it writes until stopped).
    Stream = 1,
    /// Request/response on each data connection.
    Rr = 2,
    /// A request/response per crr connection.
    Crr = 3,
    /// Datagrams to the test's UDP port.
    Udp = 4,
}

/// The test a control connection asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    pub mode: Mode,
    /// Data connections whose data goes to the server.
    pub up: u32,
    /// Data connections whose data comes from the server.
    pub down: u32,
    /// Bytes per write of a stream, or per datagram.
    pub msg_size: u32,
    pub req_size: u32,
    pub resp_size: u32,
    /// SO_SNDBUF and SO_RCVBUF of the server's sockets; 0 leaves them to
    /// the kernel's autotuning.
    pub sock_buf: u32,
    /// For tests: the server drops every n-th datagram as if the network
    /// had (0: none).
    pub drop_every: u32,
    /// TCP_CONGESTION of the server's sockets; empty: the system's.
    pub congestion: String,
}

impl Hello {
    pub const LEN: usize = 48;
    const CONGESTION_LEN: usize = 16;

    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[0] = self.mode as u8;
        for (i, v) in [
            self.up,
            self.down,
            self.msg_size,
            self.req_size,
            self.resp_size,
            self.sock_buf,
            self.drop_every,
        ]
        .iter()
        .enumerate()
        {
            b[4 + 4 * i..8 + 4 * i].copy_from_slice(&v.to_le_bytes());
        }
        let name = self.congestion.as_bytes();
        let n = name.len().min(Self::CONGESTION_LEN - 1);
        b[32..32 + n].copy_from_slice(&name[..n]);
        b
    }

    pub fn decode(b: &[u8; Self::LEN]) -> anyhow::Result<Self> {
        let mode = match b[0] {
            1 => Mode::Stream,
            2 => Mode::Rr,
            3 => Mode::Crr,
            4 => Mode::Udp,
            other => bail!("unknown test mode {other}"),
        };
        let name = &b[32..32 + Self::CONGESTION_LEN];
        let end = name.iter().position(|c| *c == 0).unwrap_or(name.len());
        Ok(Hello {
            mode,
            up: u32_at(b, 4),
            down: u32_at(b, 8),
            msg_size: u32_at(b, 12),
            req_size: u32_at(b, 16),
            resp_size: u32_at(b, 20),
            sock_buf: u32_at(b, 24),
            drop_every: u32_at(b, 28),
            congestion: String::from_utf8_lossy(&name[..end]).into_owned(),
        })
    }

    /// How many data connections the test has.
    pub fn data_connections(&self) -> u32 {
        self.up + self.down
    }
}

/// The server's answer to a [`Hello`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Welcome {
    pub test: u32,
    /// The UDP port of a [`Mode::Udp`] test (0 otherwise).
    pub udp_port: u16,
    /// Why the server refused the test; empty when it accepted it.
    pub refusal: String,
}

impl Welcome {
    pub const LEN: usize = 72;
    /// Where the refusal's text starts (it runs to the end, NUL-padded).
    const TEXT: usize = 12;

    pub fn encode(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&self.test.to_le_bytes());
        b[8..10].copy_from_slice(&self.udp_port.to_le_bytes());
        let text = self.refusal.as_bytes();
        let n = text.len().min(Self::LEN - Self::TEXT);
        b[Self::TEXT..Self::TEXT + n].copy_from_slice(&text[..n]);
        b
    }

    /// The welcome in `b`, or an error quoting what came instead when the
    /// answer is not one (the peer is some other server: a web server
    /// answers `HTTP/1.1 400 ...`).
    pub fn decode(b: &[u8; Self::LEN]) -> anyhow::Result<Self> {
        if u32_at(b, 0) != MAGIC {
            let shown = String::from_utf8_lossy(&b[..b.len().min(24)]);
            let first_line = shown.lines().next().unwrap_or_default();
            bail!(
                "it is not sledge's net server (`sledge __net-serve`): it answered {:?}",
                first_line
            );
        }
        let text = &b[Self::TEXT..];
        let end = text.iter().position(|c| *c == 0).unwrap_or(text.len());
        Ok(Welcome {
            test: u32_at(b, 4),
            udp_port: u16::from_le_bytes([b[8], b[9]]),
            refusal: String::from_utf8_lossy(&text[..end]).into_owned(),
        })
    }
}

/// What one of the server's workers did in a test.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// Bytes read or written (stream), transactions answered (rr, crr),
    /// datagrams received (udp).
    pub count: u64,
    /// CPU time of the worker's thread, nanoseconds.
    pub cpu_ns: u64,
    /// Segments its socket retransmitted (stream), datagrams that came
    /// out of order (udp).
    pub retrans: u64,
    /// The datagrams' jitter, nanoseconds (udp).
    pub jitter_ns: u64,
}

/// Writes the stats of a test's workers: a count, then four u64 each.
pub fn write_stats(w: &mut impl Write, stats: &[WorkerStats]) -> std::io::Result<()> {
    let mut b = Vec::with_capacity(4 + 32 * stats.len());
    b.extend_from_slice(&(stats.len() as u32).to_le_bytes());
    for s in stats {
        for v in [s.count, s.cpu_ns, s.retrans, s.jitter_ns] {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    w.write_all(&b)
}

/// Most workers a test's stats may list (a bound on what a peer makes
/// this side allocate).
const MAX_WORKERS: u32 = 4096;

/// Reads what [`write_stats`] wrote.
pub fn read_stats(r: &mut impl Read) -> anyhow::Result<Vec<WorkerStats>> {
    let mut n = [0u8; 4];
    r.read_exact(&mut n)
        .context("reading the server's results")?;
    let n = u32::from_le_bytes(n);
    if n > MAX_WORKERS {
        bail!("the server's results list {n} workers (at most {MAX_WORKERS})");
    }
    let mut stats = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let mut b = [0u8; 32];
        r.read_exact(&mut b)
            .context("reading the server's results")?;
        stats.push(WorkerStats {
            count: u64_at(&b, 0),
            cpu_ns: u64_at(&b, 8),
            retrans: u64_at(&b, 16),
            jitter_ns: u64_at(&b, 24),
        });
    }
    Ok(stats)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut v = [0u8; 4];
    v.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(v)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_back_as_written() {
        let header = Header {
            kind: Kind::Data,
            test: 7,
            index: 3,
        };
        assert_eq!(Header::decode(&header.encode()).ok(), Some(header));
        let hello = Hello {
            mode: Mode::Udp,
            up: 2,
            down: 1,
            msg_size: 1460,
            req_size: 1,
            resp_size: 9,
            sock_buf: 1 << 20,
            drop_every: 10,
            congestion: "cubic".into(),
        };
        assert_eq!(Hello::decode(&hello.encode()).ok(), Some(hello));
        let welcome = Welcome {
            test: 9,
            udp_port: 5201,
            refusal: "no".into(),
        };
        assert_eq!(Welcome::decode(&welcome.encode()).ok(), Some(welcome));
        let stats = vec![WorkerStats {
            count: 1,
            cpu_ns: 2,
            retrans: 3,
            jitter_ns: 4,
        }];
        let mut bytes = Vec::new();
        write_stats(&mut bytes, &stats).expect("a Vec takes any write");
        assert_eq!(read_stats(&mut bytes.as_slice()).ok(), Some(stats));
        assert!(Header::decode(&[0u8; 16]).is_err());
    }

    #[test]
    fn a_web_servers_answer_is_no_welcome_and_is_quoted_escaped() {
        let mut answer = [0u8; Welcome::LEN];
        let http = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n";
        answer[..http.len()].copy_from_slice(http);
        let error = Welcome::decode(&answer).expect_err("not a welcome");
        let text = error.to_string();
        assert!(text.contains("\"HTTP/1.1 400 Bad Request\""), "{text}");
        assert!(!text.contains('\r') && !text.contains('\n'), "{text}");
    }
}
