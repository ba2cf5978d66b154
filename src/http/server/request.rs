//! The server's request parser: what routing, connection reuse and framing
//! need (the path, whether to keep the connection open, the length of a
//! body to skip), and the checks that turn a malformed request into a
//! 4xx and a close instead of a guess.
//!
//! Policy, as nginx's where it has one:
//! - Lines may end in CRLF or a bare LF (RFC 9112 §2.2 allows a recipient
//!   to accept a bare LF; nginx does, and so do `printf ... | nc` users).
//! - The request line is `METHOD SP TARGET SP HTTP/1.x`: a method of
//!   token characters, no control bytes anywhere; anything else is 400.
//!   Bytes that cannot begin a request line (binary garbage) get the 400
//!   at once, without waiting for a line end.
//! - A header line needs a non-empty name without whitespace before its
//!   colon (RFC 9112 §5.1: 400 otherwise).
//! - `Content-Length` must be decimal digits, the same in every copy, and
//!   at most [`MAX_BODY`] (nginx's `client_max_body_size`, 1 MiB: 413
//!   beyond); the body is read and dropped. Anything else (negative, signs,
//!   20 digits and more) is 400. `Transfer-Encoding` is not supported: 411
//!   Length Required (RFC 9112 §6.3), or 400 together with a
//!   `Content-Length` (a request-smuggling shape).
//! - The head, request line included, is at most [`MAX_REQUEST_HEAD`].

use memchr::memchr;

use crate::http::header_value::{contains_ignore_case, parse_length, trim};

/// Longest request head accepted.
pub const MAX_REQUEST_HEAD: usize = 16 * 1024;
/// Longest request body accepted (and skipped), bytes: nginx's default
/// `client_max_body_size`.
pub const MAX_BODY: u64 = 1 << 20;

/// One parsed request head.
#[derive(Debug, PartialEq, Eq)]
pub struct RequestHead<'a> {
    /// The request target, query included.
    pub path: &'a [u8],
    /// Whether the client wants the connection kept open.
    pub keep_alive: bool,
    /// Bytes the head took, its empty line included.
    pub len: usize,
    /// Bytes of body that follow the head (to be skipped).
    pub body: u64,
}

/// A request the server refuses, answered with this status and a close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejected {
    /// 400: not HTTP/1.x, or malformed.
    BadRequest,
    /// 411: a body framed other than by `Content-Length`.
    LengthRequired,
    /// 413: a body over [`MAX_BODY`].
    TooLarge,
}

/// Parses the request at the start of `buf`: `Ok(None)` until its head is
/// complete (and so far plausible).
pub fn parse(buf: &[u8]) -> Result<Option<RequestHead<'_>>, Rejected> {
    let Some(len) = head_end(buf) else {
        return if buf.len() > MAX_REQUEST_HEAD || !plausible_start(buf) {
            Err(Rejected::BadRequest)
        } else {
            Ok(None)
        };
    };
    if len > MAX_REQUEST_HEAD {
        return Err(Rejected::BadRequest);
    }
    let head = &buf[..len];
    let line_end = memchr(b'\n', head).ok_or(Rejected::BadRequest)?;
    let line = strip_cr(&head[..line_end]);
    let mut parts = line.split(|&b| b == b' ');
    let (Some(method), Some(path), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Rejected::BadRequest);
    };
    if method.is_empty()
        || !method.iter().copied().all(is_token)
        || path.is_empty()
        || path.iter().any(|&b| b <= b' ' || b == 0x7f)
    {
        return Err(Rejected::BadRequest);
    }
    let mut keep_alive = match version {
        b"HTTP/1.1" => true,
        b"HTTP/1.0" => false,
        _ => return Err(Rejected::BadRequest),
    };
    let mut body = None;
    let mut chunked = false;
    // The header lines, up to the empty line that ends the head.
    let headers = &head[line_end + 1..];
    for header in headers.split(|&b| b == b'\n') {
        let header = strip_cr(header);
        if header.is_empty() {
            break;
        }
        let colon = memchr(b':', header).ok_or(Rejected::BadRequest)?;
        let name = &header[..colon];
        if name.is_empty() || name.last().is_some_and(u8::is_ascii_whitespace) {
            return Err(Rejected::BadRequest);
        }
        let value = &header[colon + 1..];
        match name.len() {
            10 if name.eq_ignore_ascii_case(b"connection") => {
                if contains_ignore_case(value, b"close") {
                    keep_alive = false;
                } else if contains_ignore_case(value, b"keep-alive") {
                    keep_alive = true;
                }
            }
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                let len = parse_length(trim(value)).ok_or(Rejected::BadRequest)?;
                if body.is_some_and(|seen| seen != len) {
                    return Err(Rejected::BadRequest);
                }
                body = Some(len);
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => chunked = true,
            _ => {}
        }
    }
    match (chunked, body) {
        (true, Some(_)) => return Err(Rejected::BadRequest),
        (true, None) => return Err(Rejected::LengthRequired),
        (false, Some(len)) if len > MAX_BODY => return Err(Rejected::TooLarge),
        _ => {}
    }
    Ok(Some(RequestHead {
        path,
        keep_alive,
        len,
        body: body.unwrap_or(0),
    }))
}

/// Where the head ends: just past its first empty line (`\n\n` or
/// `\n\r\n`), if it has one yet.
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = memchr(b'\n', &buf[from..]) {
        let nl = from + i;
        match buf.get(nl + 1) {
            Some(b'\n') => return Some(nl + 2),
            Some(b'\r') if buf.get(nl + 2) == Some(&b'\n') => return Some(nl + 3),
            _ => from = nl + 1,
        }
    }
    None
}

/// Whether an unfinished head can still become a request: its first line
/// so far is a method of token characters, then a target and a version
/// without control bytes. Garbage fails this at its first bytes.
fn plausible_start(buf: &[u8]) -> bool {
    let line = &buf[..memchr(b'\n', buf).unwrap_or(buf.len())];
    let line = strip_cr(line);
    let method_end = memchr(b' ', line).unwrap_or(line.len());
    line[..method_end].iter().copied().all(is_token)
        && line[method_end..].iter().all(|&b| b >= b' ' && b != 0x7f)
}

/// RFC 9110 `tchar`: the characters of a method or header name.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http11_keeps_alive_unless_told() {
        let r = parse(b"GET /static/1 HTTP/1.1\r\nHost: x\r\n\r\nGET")
            .unwrap()
            .unwrap();
        assert_eq!(r.path, b"/static/1");
        assert!(r.keep_alive);
        assert_eq!(r.len, 35);
        assert_eq!(r.body, 0);
        let r = parse(b"GET / HTTP/1.1\r\nConnection: Close\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(!r.keep_alive);
    }

    #[test]
    fn http10_closes_unless_told() {
        let r = parse(b"GET / HTTP/1.0\r\n\r\n").unwrap().unwrap();
        assert!(!r.keep_alive);
        let r = parse(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(r.keep_alive);
    }

    #[test]
    fn bare_lf_lines_are_accepted() {
        let r = parse(b"GET /static/1 HTTP/1.1\nHost: x\nConnection: close\n\nGET")
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.path, r.keep_alive, r.len),
            (&b"/static/1"[..], false, 50)
        );
        // Mixed endings: the first empty line ends the head.
        let r = parse(b"GET / HTTP/1.1\nHost: x\r\n\r\n").unwrap().unwrap();
        assert_eq!(r.len, 26);
        // An empty line of a later request does not end this one.
        assert_eq!(parse(b"GET / HTTP/1.1\nHost: x"), Ok(None));
    }

    #[test]
    fn bodies_are_framed_by_content_length() {
        let r = parse(b"POST /static/1 HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
            .unwrap()
            .unwrap();
        assert_eq!((r.len, r.body), (46, 5));
        let same_twice = b"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length:5\r\n\r\n";
        assert_eq!(parse(same_twice).unwrap().unwrap().body, 5);
        let at_limit = format!("POST / HTTP/1.1\r\nContent-Length: {MAX_BODY}\r\n\r\n");
        assert_eq!(parse(at_limit.as_bytes()).unwrap().unwrap().body, MAX_BODY);
    }

    #[test]
    fn malformed_requests_are_refused_with_the_right_status() {
        let bad: &[(&[u8], Rejected)] = &[
            (b"HELLO\r\n\r\n", Rejected::BadRequest),
            (b"GET / HTTP/2.0\r\n\r\n", Rejected::BadRequest),
            (b"GET  / HTTP/1.1\r\n\r\n", Rejected::BadRequest),
            (b"G(T / HTTP/1.1\r\n\r\n", Rejected::BadRequest),
            (b"GET /a\x01b HTTP/1.1\r\n\r\n", Rejected::BadRequest),
            (
                b"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
                Rejected::BadRequest,
            ),
            (b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", Rejected::BadRequest),
            (b"GET / HTTP/1.1\r\n: x\r\n\r\n", Rejected::BadRequest),
            (
                b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
                Rejected::BadRequest,
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
                Rejected::BadRequest,
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length: 12345678901234567890123\r\n\r\n",
                Rejected::BadRequest,
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n",
                Rejected::BadRequest,
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
                Rejected::BadRequest,
            ),
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
                Rejected::BadRequest,
            ),
            (
                b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                Rejected::LengthRequired,
            ),
            (
                b"POST / HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n",
                Rejected::TooLarge,
            ),
        ];
        for (request, status) in bad {
            assert_eq!(
                parse(request),
                Err(*status),
                "{}",
                String::from_utf8_lossy(request)
            );
        }
    }

    #[test]
    fn unfinished_heads_wait_unless_they_cannot_be_requests() {
        assert_eq!(parse(b"GET / HTTP/1.1\r\nHost"), Ok(None));
        assert_eq!(parse(b"GE"), Ok(None));
        assert_eq!(parse(b""), Ok(None));
        // Binary garbage is refused at once, not held until a line end.
        assert_eq!(parse(b"\x16\x03\x01\x02\x00"), Err(Rejected::BadRequest));
        assert_eq!(parse(b"\x00\xff\xfe"), Err(Rejected::BadRequest));
        assert_eq!(parse(b"GET /\x00"), Err(Rejected::BadRequest));
        assert_eq!(
            parse(&[b'a'; MAX_REQUEST_HEAD + 1]),
            Err(Rejected::BadRequest)
        );
    }
}
