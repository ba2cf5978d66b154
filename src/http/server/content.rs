//! What the server answers: pre-built responses for the static sizes, the
//! dynamic page, 404, and the refusals (400, 405, 411, 413, 501).
//!
//! Static responses are formatted once at start-up, head and body
//! together, so that a small response is one `write`. Large bodies live in
//! a memfd and go out with `sendfile`, as nginx sends files: the kernel
//! hands page references to the socket instead of copying the body. A
//! `HEAD` request gets the same bytes up to the end of the head: the
//! status and headers, with the `Content-Length` of the body it does not
//! get (RFC 9110 §9.3.2).

use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::dynamic::Database;
use super::request_parser::{Method, Rejected, RequestHead};

/// Bodies at least this large are sent from a memfd with `sendfile`.
const FILE_BODY_MIN: u64 = 64 * 1024;

/// A body kept in memory-backed file.
#[derive(Debug)]
struct BodyFile {
    fd: OwnedFd,
    len: u64,
}

/// One pre-built response.
#[derive(Debug)]
pub struct Response {
    /// The head (and the body, when it is inline) for keep-alive.
    keep: Box<[u8]>,
    /// The same with `Connection: close`.
    close: Box<[u8]>,
    /// How many bytes of `keep` are the head (all of them with a body in
    /// a file): what a `HEAD` request gets.
    keep_head: usize,
    /// The same for `close`.
    close_head: usize,
    file: Option<BodyFile>,
}

impl Response {
    /// A response with `headers` (whole lines, CRLF included) besides
    /// the ones every response has.
    fn new(status: &str, content_type: &str, headers: &str, body: &[u8]) -> io::Result<Response> {
        let len = body.len() as u64;
        let file = if len >= FILE_BODY_MIN {
            Some(memfd_with(body)?)
        } else {
            None
        };
        let build = |connection: &str| {
            let mut bytes = format!(
                "HTTP/1.1 {status}\r\nServer: sledge\r\nContent-Type: {content_type}\r\nContent-Length: {len}\r\n{headers}{connection}\r\n"
            )
            .into_bytes();
            let head = bytes.len();
            if file.is_none() {
                bytes.extend_from_slice(body);
            }
            (bytes.into_boxed_slice(), head)
        };
        let (keep, keep_head) = build("");
        let (close, close_head) = build("Connection: close\r\n");
        Ok(Response {
            keep,
            close,
            keep_head,
            close_head,
            file,
        })
    }

    /// Total bytes on the wire.
    #[cfg(test)]
    pub fn wire_len(&self, keep_alive: bool) -> u64 {
        let head = if keep_alive {
            self.keep.len()
        } else {
            self.close.len()
        };
        head as u64 + self.file.as_ref().map_or(0, |f| f.len)
    }
}

/// A response being written, with how far it got.
#[derive(Debug)]
pub enum Reply {
    /// A pre-built response (index into the static table); with
    /// `head_only`, its head alone (the answer to a `HEAD`).
    Static {
        index: usize,
        keep_alive: bool,
        head_only: bool,
        written: u64,
    },
    /// A response built for this request.
    Owned { bytes: Vec<u8>, written: usize },
}

impl Reply {
    /// Bytes written so far, to tell a slow client from a stalled one.
    pub fn written(&self) -> u64 {
        match self {
            Reply::Static { written, .. } => *written,
            Reply::Owned { written, .. } => *written as u64,
        }
    }
}

/// Everything the server can answer.
#[derive(Debug)]
pub struct Content {
    /// `(path, response)`; the not-found and refusal responses first,
    /// with no path.
    table: Vec<(Vec<u8>, Response)>,
    database: Option<Database>,
}

const NOT_FOUND: usize = 0;
const BAD_REQUEST: usize = 1;
const LENGTH_REQUIRED: usize = 2;
const TOO_LARGE: usize = 3;
const METHOD_NOT_ALLOWED: usize = 4;
const NOT_IMPLEMENTED: usize = 5;

/// The path of the static response of `size` bytes.
pub fn static_path(size: u64) -> String {
    format!("/static/{size}")
}

impl Content {
    /// Pre-builds the static sizes; serves `/dynamic` when a database is
    /// given.
    pub fn new(sizes: &[u64], database: Option<Database>) -> io::Result<Content> {
        let plain = |status: &str, headers: &str, body: &[u8]| {
            Ok::<_, io::Error>((
                Vec::new(),
                Response::new(status, "text/plain", headers, body)?,
            ))
        };
        // In the order of the indices above.
        let mut table = vec![
            plain("404 Not Found", "", b"not found\n")?,
            plain("400 Bad Request", "", b"bad request\n")?,
            plain(
                "411 Length Required",
                "",
                b"a request body needs a Content-Length\n",
            )?,
            plain(
                "413 Content Too Large",
                "",
                b"the request body is over 1 MiB\n",
            )?,
            plain(
                "405 Method Not Allowed",
                "Allow: GET, HEAD\r\n",
                b"only GET and HEAD are served\n",
            )?,
            plain(
                "501 Not Implemented",
                "",
                b"unknown method; only GET and HEAD are served\n",
            )?,
        ];
        for &size in sizes {
            let body: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
            table.push((
                static_path(size).into_bytes(),
                Response::new("200 OK", "application/octet-stream", "", &body)?,
            ));
        }
        Ok(Content { table, database })
    }

    /// The dynamic page's SQLite file, if it has one.
    pub fn database_path(&self) -> Option<std::path::PathBuf> {
        self.database
            .as_ref()?
            .path()
            .map(std::path::Path::to_path_buf)
    }

    /// The table holding the dynamic page's row on a database server.
    pub fn database_table(&self) -> Option<String> {
        self.database.as_ref()?.table().map(str::to_string)
    }

    /// The dynamic page's database as it can be shown (no password).
    pub fn database_shown(&self) -> Option<String> {
        self.database.as_ref().map(|db| format!("{db:?}"))
    }

    /// Takes the database out, to remove it with its errors reported.
    pub fn take_database(&mut self) -> Option<Database> {
        self.database.take()
    }

    /// The reply to a request. Also says whether the connection stays open.
    pub fn reply(&self, request: &RequestHead<'_>) -> (Reply, bool) {
        let keep_alive = request.keep_alive;
        let head_only = request.method == Method::Head;
        let path = request.path;
        if path == b"/dynamic" && self.database.is_some() {
            return (self.dynamic(keep_alive, head_only), keep_alive);
        }
        let index = self
            .table
            .iter()
            .position(|(p, _)| !p.is_empty() && p == path)
            .unwrap_or(NOT_FOUND);
        (
            Reply::Static {
                index,
                keep_alive,
                head_only,
                written: 0,
            },
            keep_alive,
        )
    }

    /// The reply to a request that is refused (then close); without a
    /// body when `head_only` (the request was a `HEAD`).
    pub fn rejected(&self, why: Rejected, head_only: bool) -> Reply {
        let index = match why {
            Rejected::BadRequest => BAD_REQUEST,
            Rejected::MethodNotAllowed => METHOD_NOT_ALLOWED,
            Rejected::NotImplemented => NOT_IMPLEMENTED,
            Rejected::LengthRequired => LENGTH_REQUIRED,
            Rejected::TooLarge => TOO_LARGE,
        };
        Reply::Static {
            index,
            keep_alive: false,
            head_only,
            written: 0,
        }
    }

    /// Whether the dynamic page waits on a database server.
    pub fn dynamic_waits(&self) -> bool {
        self.database.as_ref().is_some_and(Database::waits)
    }

    /// Whether answering this request waits on a database server, so that
    /// an event loop hands it to [`Content::dynamic`] on another thread.
    pub fn waits(&self, request: &RequestHead<'_>) -> bool {
        request.path == b"/dynamic" && self.dynamic_waits()
    }

    /// The dynamic page: connect, read the row, disconnect; a database
    /// error is a 500 with the error as its body. With `head_only` (a
    /// `HEAD`), the page is made all the same, for its length, and only
    /// its head is sent.
    pub fn dynamic(&self, keep_alive: bool, head_only: bool) -> Reply {
        let db = self.database.as_ref().expect("checked by the caller");
        let (status, body) = match db.fetch_row() {
            Ok(row) => ("200 OK", format!("<p>{row}</p>\n")),
            Err(e) => ("500 Internal Server Error", format!("{e:#}\n")),
        };
        let connection = if keep_alive {
            ""
        } else {
            "Connection: close\r\n"
        };
        let mut bytes = Vec::with_capacity(160 + body.len());
        let _ = write!(
            bytes,
            "HTTP/1.1 {status}\r\nServer: sledge\r\nContent-Type: text/html\r\nContent-Length: {}\r\n{connection}\r\n",
            body.len()
        );
        if !head_only {
            bytes.extend_from_slice(body.as_bytes());
        }
        Reply::Owned { bytes, written: 0 }
    }

    /// Writes as much of `reply` as the socket takes. `Ok(true)` when it
    /// is all written; `Ok(false)` when a non-blocking socket is full.
    pub fn write<S: Write + AsRawFd>(&self, socket: &mut S, reply: &mut Reply) -> io::Result<bool> {
        match reply {
            Reply::Owned { bytes, written } => write_bytes(socket, bytes, written),
            Reply::Static {
                index,
                keep_alive,
                head_only,
                written,
            } => {
                let response = &self.table[*index].1;
                let (bytes, head_end) = if *keep_alive {
                    (&response.keep, response.keep_head)
                } else {
                    (&response.close, response.close_head)
                };
                // What is sent from memory: the head and an inline body,
                // or the head alone.
                let head: &[u8] = if *head_only {
                    &bytes[..head_end]
                } else {
                    bytes
                };
                let file = response.file.as_ref().filter(|_| !*head_only);
                let head_len = head.len() as u64;
                while *written < head_len {
                    let more = file.is_some();
                    match send(socket.as_raw_fd(), &head[*written as usize..], more) {
                        Ok(n) => *written += n as u64,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                        Err(e) => return Err(e),
                    }
                }
                let Some(file) = file else {
                    return Ok(true);
                };
                while *written < head_len + file.len {
                    let mut offset = (*written - head_len) as libc::off_t;
                    let count = (file.len - offset as u64) as usize;
                    // SAFETY: both descriptors are open; sendfile updates
                    // only `offset`.
                    let n = unsafe {
                        libc::sendfile(socket.as_raw_fd(), file.fd.as_raw_fd(), &mut offset, count)
                    };
                    if n < 0 {
                        let e = io::Error::last_os_error();
                        match e.kind() {
                            io::ErrorKind::Interrupted => continue,
                            io::ErrorKind::WouldBlock => return Ok(false),
                            _ => return Err(e),
                        }
                    }
                    *written += n as u64;
                }
                Ok(true)
            }
        }
    }
}

fn write_bytes<S: Write>(socket: &mut S, bytes: &[u8], written: &mut usize) -> io::Result<bool> {
    while *written < bytes.len() {
        match socket.write(&bytes[*written..]) {
            Ok(n) => *written += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// `send(2)`, with MSG_MORE when a body follows so that the head and the
/// start of the body share a segment; MSG_NOSIGNAL so that a client gone
/// away is an error, not a SIGPIPE.
fn send(fd: RawFd, bytes: &[u8], more: bool) -> io::Result<usize> {
    let flags = libc::MSG_NOSIGNAL | if more { libc::MSG_MORE } else { 0 };
    // SAFETY: the pointer and length describe `bytes`.
    let n = unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), flags) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// A memfd holding `body`.
fn memfd_with(body: &[u8]) -> io::Result<BodyFile> {
    // SAFETY: a constant, NUL-terminated name.
    let fd = unsafe { libc::memfd_create(c"sledge-body".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: memfd_create returned a fresh descriptor that we now own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(fd);
    file.write_all(body)?;
    Ok(BodyFile {
        fd: file.into(),
        len: body.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_sized_exactly() {
        let content = Content::new(&[1, 200 * 1024], None).unwrap();
        let r = &content.table[NOT_IMPLEMENTED + 1].1;
        assert_eq!(r.wire_len(true) as usize, r.keep.len());
        assert!(r.keep.ends_with(b"\r\n\r\na"));
        assert!(r.keep[..r.keep_head].ends_with(b"Content-Length: 1\r\n\r\n"));
        assert!(r.close[..r.close_head].ends_with(b"Connection: close\r\n\r\n"));
        let big = &content.table[NOT_IMPLEMENTED + 2].1;
        assert!(big.file.is_some());
        assert_eq!(big.wire_len(false), big.close.len() as u64 + 200 * 1024);
        assert_eq!(big.close_head, big.close.len());
        let not_allowed = &content.table[METHOD_NOT_ALLOWED].1;
        assert!(not_allowed.keep.starts_with(b"HTTP/1.1 405 "));
        assert!(
            not_allowed.close[..not_allowed.close_head]
                .windows(18)
                .any(|w| w == b"Allow: GET, HEAD\r\n")
        );
    }
}
