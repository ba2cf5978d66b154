//! When a response really arrived: the kernel's receive timestamp.
//!
//! A generator that times a response by reading the clock after `read`
//! returns also counts its own delays: the other responses it handled
//! first, a scheduler that ran something else, a wake-up from idle. With
//! `SO_TIMESTAMPNS` the kernel stamps every incoming packet (on loopback,
//! when the server's `write` hands it over) and `recvmsg` reports the stamp
//! of the last packet it read, so the latency of a response ends when its
//! last byte reached this host, whatever the generator was doing then.
//!
//! The stamp is on the realtime clock, so the send time that it is compared
//! with is read from the same clock, just before the request is written.
//! The kernel turns stamping on for the host a moment after the first
//! socket asks; until then reads carry no stamp and the generator's clock
//! is used, as it is wherever the kernel refuses.

use std::io;
use std::mem;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Nanoseconds on the realtime clock (`CLOCK_REALTIME`), the clock of the
/// kernel's receive timestamps.
pub(crate) fn realtime_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the live `ts`; the
    // realtime clock always exists. Read directly, not through
    // `SystemTime`, whose checked conversions cost as much as the read.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    timespec_ns(&ts)
}

/// A `timespec` in nanoseconds. Its fields are `i64` on 64-bit targets
/// and `i32` on i686, where multiplying the seconds first would overflow:
/// both are widened before.
// `as i64` is a no-op on 64-bit targets.
#[allow(clippy::unnecessary_cast)]
fn timespec_ns(ts: &libc::timespec) -> i64 {
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

/// A request's send time on both clocks, from one clock read per request.
///
/// The send time is needed on the realtime clock, to compare with the
/// kernel's receive stamps, and on the monotonic clock, for the
/// generator's own arithmetic (latency without a stamp, an open-loop
/// request's delay after its due time). Reading both clocks for every
/// request cost two clock reads where one does: the two clocks advance
/// together (NTP slews both alike; only a step of the realtime clock moves
/// one against the other), so the monotonic time is derived from the
/// realtime one and a pair of readings taken once per wake-up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SendClock {
    at: Instant,
    at_realtime_ns: i64,
}

impl SendClock {
    /// A clock whose pair of readings is taken now.
    pub(crate) fn new() -> Self {
        SendClock {
            at: Instant::now(),
            at_realtime_ns: realtime_ns(),
        }
    }

    /// Takes the pair of readings again: `now` (just read) and the
    /// realtime clock.
    pub(crate) fn anchor(&mut self, now: Instant) {
        self.at = now;
        self.at_realtime_ns = realtime_ns();
    }

    /// The time now on both clocks, from one read of the realtime clock.
    /// A realtime clock stepped back since the anchor reads as the anchor.
    #[inline]
    pub(crate) fn now(&self) -> (Instant, i64) {
        let realtime = realtime_ns();
        let since = realtime.saturating_sub(self.at_realtime_ns).max(0) as u64;
        (self.at + Duration::from_nanos(since), realtime)
    }
}

/// Asks the kernel to stamp what this socket receives. Returns false where
/// the kernel refuses; reads then carry no stamp and latency falls back to
/// the generator's own clock.
pub(crate) fn enable(fd: RawFd) -> bool {
    let on: libc::c_int = 1;
    // SAFETY: a plain setsockopt with a pointer to a live c_int and its size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    rc == 0
}

/// Room for one `SCM_TIMESTAMPNS` control message (a header and a
/// timespec: 32 bytes on 64-bit Linux), aligned for `cmsghdr`.
#[repr(C, align(8))]
struct ControlBuffer([u8; 64]);

/// Reads into `buf` like `read`; also returns the receive timestamp (realtime
/// nanoseconds) of the last packet read, when the socket is stamped and the
/// kernel gave one. With `discard`, up to `buf.len()` bytes are taken off
/// the socket without being copied (`MSG_TRUNC`, which TCP sockets treat
/// as "drop the data"; tcp(7)) and `buf` is left as it was: a body that
/// nobody looks at need not cost the generator a copy.
pub(crate) fn receive(
    fd: RawFd,
    buf: &mut [u8],
    discard: bool,
) -> io::Result<(usize, Option<i64>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut control = ControlBuffer([0; 64]);
    // SAFETY: msghdr is plain data; all-zero is a valid empty header.
    let mut msg: libc::msghdr = unsafe { mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = control.0.len();
    let flags = libc::MSG_DONTWAIT | if discard { libc::MSG_TRUNC } else { 0 };
    // Through `syscall(2)`: the C library's `recvmsg` is a cancellation
    // point, two atomic operations around every call in a program with
    // threads, and the generator never cancels a thread.
    // SAFETY: `msg` points at `iov` (which covers `buf`) and at `control`,
    // all alive and exclusively borrowed for the call.
    let n = unsafe {
        libc::syscall(
            libc::SYS_recvmsg,
            fd as libc::c_long,
            &mut msg as *mut libc::msghdr,
            flags as libc::c_long,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: the kernel filled `msg_controllen` bytes of `control` with
    // well-formed control messages; the CMSG_* macros walk only those.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            let header = &*cmsg;
            if header.cmsg_level == libc::SOL_SOCKET && header.cmsg_type == libc::SO_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
                if ts.tv_sec != 0 || ts.tv_nsec != 0 {
                    stamp = Some(timespec_ns(&ts));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok((n as usize, stamp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;
    use std::time::Duration;

    #[test]
    fn the_stamp_is_when_the_bytes_arrived_not_when_they_were_read() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        assert!(enable(client.as_raw_fd()));
        // The kernel turns stamping on for the whole host a moment after
        // the first socket asks (from a work queue): wait for the first
        // stamped packet.
        let mut buf = [0u8; 64];
        let mut stamping = false;
        for _ in 0..200 {
            server.write_all(b"?").unwrap();
            std::thread::sleep(Duration::from_millis(5));
            if let Ok((_, Some(_))) = receive(client.as_raw_fd(), &mut buf, false) {
                stamping = true;
                break;
            }
        }
        assert!(stamping, "no receive timestamp within a second");

        let before_write = realtime_ns();
        server.write_all(b"hello").unwrap();
        let after_write = realtime_ns();
        // The bytes wait in the socket while the reader is busy elsewhere.
        std::thread::sleep(Duration::from_millis(30));
        let (n, stamp) = receive(client.as_raw_fd(), &mut buf, false).unwrap();
        let read_at = realtime_ns();

        assert_eq!(&buf[..n], b"hello");
        let stamp = stamp.expect("the kernel stamps loopback packets once stamping is on");
        assert!(
            stamp >= before_write && stamp <= after_write,
            "stamped {stamp}, written between {before_write} and {after_write}"
        );
        assert!(
            read_at - stamp >= 25_000_000,
            "the 30 ms wait is not in the stamp"
        );
    }

    #[test]
    fn discarded_bytes_are_counted_and_not_copied() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        server.write_all(&[b'z'; 1000]).unwrap();
        server.write_all(b"tail").unwrap();
        drop(server);
        let mut buf = [0u8; 600];
        let mut discarded = 0;
        while discarded < 1000 {
            match receive(
                client.as_raw_fd(),
                &mut buf[..(1000 - discarded).min(600)],
                true,
            ) {
                Ok((n, _)) => discarded += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(discarded, 1000);
        assert!(buf.iter().all(|&b| b == 0), "nothing was copied");
        let (n, _) = receive(client.as_raw_fd(), &mut buf, false).unwrap();
        assert_eq!(
            &buf[..n],
            b"tail",
            "the bytes after the discarded ones are intact"
        );
    }

    #[test]
    fn an_empty_socket_would_block_and_an_unstamped_one_reads_without_a_stamp() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let mut buf = [0u8; 8];
        let e = receive(client.as_raw_fd(), &mut buf, false).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);

        server.write_all(b"x").unwrap();
        let mut got = None;
        for _ in 0..100 {
            match receive(client.as_raw_fd(), &mut buf, false) {
                Ok(r) => {
                    got = Some(r);
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(got, Some((1, None)));
    }
}
