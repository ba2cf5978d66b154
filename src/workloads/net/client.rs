//! The client end of a `net.*` test: its control connection to the
//! server, and what every client shares.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};

use anyhow::{anyhow, bail};

use super::proto::{Header, Hello, Kind, READY, STOP, Welcome, WorkerStats, read_stats};
use super::sock::{SockOpts, connect, timed_out};

/// One test on the server: its control connection.
pub struct TestConn {
    control: TcpStream,
    addr: SocketAddr,
    pub id: u32,
    pub udp_port: u16,
}

impl TestConn {
    /// Asks the server at `addr` for the test `hello` describes.
    pub fn open(addr: SocketAddr, hello: &Hello) -> anyhow::Result<Self> {
        let mut control = connect(addr, &SockOpts::default())
            .map_err(|e| anyhow!("the peer {addr} is unreachable: {e:#}"))?;
        let header = Header {
            kind: Kind::Control,
            test: 0,
            index: 0,
        };
        let mut frame = header.encode().to_vec();
        frame.extend_from_slice(&hello.encode());
        control
            .write_all(&frame)
            .map_err(|e| gone(addr, "sending the test", e))?;
        let mut welcome = [0u8; Welcome::LEN];
        control
            .read_exact(&mut welcome)
            .map_err(|e| gone(addr, "waiting for the test's start", e))?;
        let welcome = Welcome::decode(&welcome).map_err(|e| anyhow!("the peer {addr}: {e:#}"))?;
        if !welcome.refusal.is_empty() {
            bail!(
                "the peer {addr} refused the test: {}",
                crate::visible::escape(&welcome.refusal)
            );
        }
        Ok(TestConn {
            control,
            addr,
            id: welcome.test,
            udp_port: welcome.udp_port,
        })
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Opens data connection `index` of the test.
    pub fn data(&self, index: u32, opts: &SockOpts) -> anyhow::Result<TcpStream> {
        let mut stream = connect(self.addr, opts)?;
        let header = Header {
            kind: Kind::Data,
            test: self.id,
            index,
        };
        stream
            .write_all(&header.encode())
            .map_err(|e| gone(self.addr, "opening a data connection", e))?;
        Ok(stream)
    }

    /// The header a crr connection of the test opens with.
    pub fn crr_header(&self) -> [u8; Header::LEN] {
        Header {
            kind: Kind::Crr,
            test: self.id,
            index: 0,
        }
        .encode()
    }

    /// Waits until the server's workers run.
    pub fn ready(&mut self) -> anyhow::Result<()> {
        let mut byte = [0u8; 1];
        self.control
            .read_exact(&mut byte)
            .map_err(|e| gone(self.addr, "waiting for the server's workers", e))?;
        if byte[0] != READY {
            bail!("the peer {} sent {} instead of ready", self.addr, byte[0]);
        }
        Ok(())
    }

    /// Ends the test and reads what the server's workers did.
    pub fn stop(&mut self) -> anyhow::Result<Vec<WorkerStats>> {
        self.control
            .write_all(&[STOP])
            .map_err(|e| gone(self.addr, "stopping the test", e))?;
        read_stats(&mut self.control)
            .map_err(|e| anyhow!("the peer {}: {e:#} (did it stop mid-trial?)", self.addr))
    }
}

/// The error of a peer that went away.
pub fn gone(addr: SocketAddr, doing: &str, e: std::io::Error) -> anyhow::Error {
    let why = match e.kind() {
        ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset | ErrorKind::BrokenPipe => {
            "it closed the connection (was it stopped or killed?)".to_string()
        }
        _ if timed_out(&e) => "it did not answer in time (is it still there?)".to_string(),
        _ => e.to_string(),
    };
    anyhow!("the peer {addr} failed mid-trial while {doing}: {why}")
}

/// Joins a client thread, turning its panic into an error.
pub fn join<T>(handle: std::thread::JoinHandle<anyhow::Result<T>>) -> anyhow::Result<T> {
    handle
        .join()
        .map_err(|_| anyhow!("a client thread panicked"))?
}

/// Sleeps until `deadline` or a cancellation, whichever comes first.
pub fn wait_until(deadline: std::time::Instant, cancel: &crate::engine::CancelToken) {
    while !cancel.is_cancelled() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(std::time::Duration::from_millis(20)));
    }
}
