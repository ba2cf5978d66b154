//! The server's request parser: what routing, connection reuse and framing
//! need (the method, the path, whether to keep the connection open, the
//! length of a body to skip), and the checks that turn a malformed request
//! into a 4xx and a close instead of a guess.
//!
//! Policy, as nginx's where it has one, and RFC 9110/9112's:
//! - Lines may end in CRLF or a bare LF (RFC 9112 §2.2 allows a recipient
//!   to accept a bare LF; nginx does, and so do `printf ... | nc` users).
//!   Up to [`MAX_LEADING_EMPTY_LINES`] empty lines before a request line
//!   are skipped (RFC 9112 §2.2: a client may send one after a body); more
//!   is 400.
//! - The request line is `METHOD SP TARGET SP HTTP/1.x`: a method of
//!   token characters, no control bytes anywhere; anything else is 400.
//!   Bytes that cannot begin a request line (binary garbage) get the 400
//!   at once, without waiting for a line end.
//! - The server serves `GET` and `HEAD` (the head of the `GET` response,
//!   without its body). Another method of RFC 9110 (`POST`, `PUT`,
//!   `DELETE`, `CONNECT`, `OPTIONS`, `TRACE`, and `PATCH` of RFC 5789) is
//!   405 with `Allow: GET, HEAD`; any other method is 501 (RFC 9110
//!   §9.1), as is a method longer than [`MAX_METHOD`], at once.
//! - A header line needs a name of token characters before its colon: no
//!   whitespace in it or between it and the colon (RFC 9112 §5.1, and
//!   §5.2 for a line folded onto the previous one): 400 otherwise.
//! - An HTTP/1.1 request needs exactly one `Host` header, an HTTP/1.0 one
//!   at most one (RFC 9112 §3.2): 400 otherwise.
//! - `Content-Length` must be decimal digits, the same in every copy, and
//!   at most [`MAX_BODY`] (nginx's `client_max_body_size`, 1 MiB: 413
//!   beyond); the body is read and dropped. Anything else (negative, signs,
//!   20 digits and more) is 400. `Transfer-Encoding` is not supported: 411
//!   Length Required (RFC 9112 §6.3), or 400 together with a
//!   `Content-Length` (a request-smuggling shape).
//! - The head, request line included, is at most [`MAX_REQUEST_HEAD`].
//!
//! Every check rides on a scan the parser makes anyway (the request line
//! is split once, each header name is looked at once), so a well-formed
//! request costs a table lookup per byte of its names and nothing more.

use memchr::memchr;

use crate::http::header_value::{contains_ignore_case, parse_length, trim};

/// Longest request head accepted.
pub const MAX_REQUEST_HEAD: usize = 16 * 1024;
/// Longest request body accepted (and skipped), bytes: nginx's default
/// `client_max_body_size`.
pub const MAX_BODY: u64 = 1 << 20;
/// Longest method looked at: the longest in IANA's HTTP method registry
/// (`UPDATEREDIRECTREF`) has 17 characters; a longer one is 501 as soon
/// as its first [`MAX_METHOD`] + 1 bytes are in, without waiting for the
/// rest of a line that may run to the head's limit.
pub const MAX_METHOD: usize = 32;
/// Empty lines skipped before a request line (RFC 9112 §2.2 asks for at
/// least one); a client that sends more is not speaking HTTP.
pub const MAX_LEADING_EMPTY_LINES: usize = 4;

/// What the client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The response.
    Get,
    /// The response's head only: the same status and headers, with the
    /// `Content-Length` the body would have, and no body.
    Head,
}

/// One parsed request head.
#[derive(Debug, PartialEq, Eq)]
pub struct RequestHead<'a> {
    /// `GET` or `HEAD`; other methods are refused.
    pub method: Method,
    /// The request target, query included.
    pub path: &'a [u8],
    /// Whether the client wants the connection kept open.
    pub keep_alive: bool,
    /// Bytes the head took, the empty lines skipped before it and its
    /// final empty line included.
    pub len: usize,
    /// Bytes of body that follow the head (to be skipped).
    pub body: u64,
}

/// A request the server refuses, answered with this status and a close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejected {
    /// 400: not HTTP/1.x, or malformed.
    BadRequest,
    /// 405: a method of RFC 9110 other than GET and HEAD, which the server
    /// knows and does not serve (answered with `Allow: GET, HEAD`).
    MethodNotAllowed,
    /// 501: a method the server does not know.
    NotImplemented,
    /// 411: a body framed other than by `Content-Length`.
    LengthRequired,
    /// 413: a body over [`MAX_BODY`].
    TooLarge,
}

/// Methods of RFC 9110 §9 (and PATCH, RFC 5789) that are not served.
const NOT_SERVED: &[&[u8]] = &[
    b"POST", b"PUT", b"DELETE", b"CONNECT", b"OPTIONS", b"TRACE", b"PATCH",
];

/// Parses the request at the start of `buf`: `Ok(None)` until its head is
/// complete (and so far plausible).
pub fn parse(buf: &[u8]) -> Result<Option<RequestHead<'_>>, Rejected> {
    let skipped = leading_empty_lines(buf)?;
    let buf = &buf[skipped..];
    let Some(len) = head_end(buf) else {
        return if buf.len() > MAX_REQUEST_HEAD {
            Err(Rejected::BadRequest)
        } else {
            unfinished_start(buf).map(|()| None)
        };
    };
    if len > MAX_REQUEST_HEAD {
        return Err(Rejected::BadRequest);
    }
    let head = &buf[..len];
    let line_end = memchr(b'\n', head).ok_or(Rejected::BadRequest)?;
    let line = strip_cr(&head[..line_end]);
    // `METHOD SP TARGET SP VERSION`: the two spaces found by memchr, not
    // by splitting byte by byte. A third space leaves a version that is
    // no HTTP version, which is the same 400.
    let method_end = memchr(b' ', line).ok_or(Rejected::BadRequest)?;
    let (method, rest) = (&line[..method_end], &line[method_end + 1..]);
    let path_end = memchr(b' ', rest).ok_or(Rejected::BadRequest)?;
    let (path, version) = (&rest[..path_end], &rest[path_end + 1..]);
    if method.is_empty()
        || !is_token(method)
        || path.is_empty()
        || path.iter().any(|&b| b <= b' ' || b == 0x7f)
    {
        return Err(Rejected::BadRequest);
    }
    let (http11, mut keep_alive) = match version {
        b"HTTP/1.1" => (true, true),
        b"HTTP/1.0" => (false, false),
        _ => return Err(Rejected::BadRequest),
    };
    let method = match method {
        b"GET" => Method::Get,
        b"HEAD" => Method::Head,
        other => return Err(refused_method(other)),
    };
    let mut body = None;
    let mut chunked = false;
    let mut hosts = 0u32;
    // The header lines, up to the empty line that ends the head (always
    // there: `head_end` found it), each line end found by memchr.
    let mut headers = &head[line_end + 1..];
    while let Some(header_end) = memchr(b'\n', headers) {
        let header = strip_cr(&headers[..header_end]);
        headers = &headers[header_end + 1..];
        if header.is_empty() {
            break;
        }
        let colon = memchr(b':', header).ok_or(Rejected::BadRequest)?;
        let name = &header[..colon];
        // Whitespace in a name, before the colon or at the start of a
        // folded line is not a token character.
        if name.is_empty() || !is_token(name) {
            return Err(Rejected::BadRequest);
        }
        let value = &header[colon + 1..];
        match name.len() {
            4 if name.eq_ignore_ascii_case(b"host") => hosts += 1,
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
    if hosts > 1 || (http11 && hosts == 0) {
        return Err(Rejected::BadRequest);
    }
    match (chunked, body) {
        (true, Some(_)) => return Err(Rejected::BadRequest),
        (true, None) => return Err(Rejected::LengthRequired),
        (false, Some(len)) if len > MAX_BODY => return Err(Rejected::TooLarge),
        _ => {}
    }
    Ok(Some(RequestHead {
        method,
        path,
        keep_alive,
        len: skipped + len,
        body: body.unwrap_or(0),
    }))
}

/// Whether the request at the start of `buf` asks for a `HEAD`, so that
/// even its refusal goes without a body (RFC 9110 §9.3.2). Only for a
/// refused request: a parsed one says so in [`RequestHead::method`].
pub fn asks_for_head(buf: &[u8]) -> bool {
    let skipped = leading_empty_lines(buf).unwrap_or(0);
    buf[skipped..].starts_with(b"HEAD ")
}

/// The bytes of the empty lines (CRLF or bare LF) at the start of `buf`,
/// which are skipped; more than [`MAX_LEADING_EMPTY_LINES`] is 400.
fn leading_empty_lines(buf: &[u8]) -> Result<usize, Rejected> {
    let mut pos = 0;
    for _ in 0..MAX_LEADING_EMPTY_LINES {
        match &buf[pos..] {
            [b'\n', ..] => pos += 1,
            [b'\r', b'\n', ..] => pos += 2,
            _ => return Ok(pos),
        }
    }
    match &buf[pos..] {
        [b'\n', ..] | [b'\r', b'\n', ..] => Err(Rejected::BadRequest),
        _ => Ok(pos),
    }
}

/// The refusal of a method other than GET and HEAD.
fn refused_method(method: &[u8]) -> Rejected {
    if NOT_SERVED.contains(&method) {
        Rejected::MethodNotAllowed
    } else {
        Rejected::NotImplemented
    }
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
/// without control bytes. Garbage fails this at its first bytes (400), a
/// method longer than any the server could know at its
/// [`MAX_METHOD`] + 1st byte (501).
fn unfinished_start(buf: &[u8]) -> Result<(), Rejected> {
    let line = &buf[..memchr(b'\n', buf).unwrap_or(buf.len())];
    let line = strip_cr(line);
    let method_end = memchr(b' ', line).unwrap_or(line.len());
    let method = &line[..method_end];
    if !is_token(method) || line[method_end..].iter().any(|&b| b < b' ' || b == 0x7f) {
        return Err(Rejected::BadRequest);
    }
    if method.len() > MAX_METHOD {
        return Err(Rejected::NotImplemented);
    }
    Ok(())
}

/// RFC 9110 `tchar`, as a table: the characters of a method or header
/// name.
const TCHAR: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'.'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'|'
                    | b'~'
            );
        b += 1;
    }
    table
};

/// Whether every byte of `bytes` is a token character.
fn is_token(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| TCHAR[usize::from(b)])
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
        assert_eq!(r.method, Method::Get);
        assert_eq!(r.path, b"/static/1");
        assert!(r.keep_alive);
        assert_eq!(r.len, 35);
        assert_eq!(r.body, 0);
        let r = parse(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n")
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
        let r = parse(b"GET /static/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
            .unwrap()
            .unwrap();
        assert_eq!((r.len, r.body), (54, 5));
        let same_twice =
            b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length:5\r\n\r\n";
        assert_eq!(parse(same_twice).unwrap().unwrap().body, 5);
        let at_limit = format!("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY}\r\n\r\n");
        assert_eq!(parse(at_limit.as_bytes()).unwrap().unwrap().body, MAX_BODY);
    }

    #[test]
    fn head_asks_for_the_head_of_the_get_response() {
        let r = parse(b"HEAD /static/1 HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!((r.method, r.path), (Method::Head, &b"/static/1"[..]));
        assert!(asks_for_head(b"\r\nHEAD / HTTP/1.1\r\n\r\n"));
        assert!(!asks_for_head(b"GET / HTTP/1.1\r\n\r\n"));
        assert!(!asks_for_head(b"HEADER / HTTP/1.1\r\n\r\n"));
    }

    #[test]
    fn methods_other_than_get_and_head_are_refused_by_kind() {
        for method in [
            "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
        ] {
            let request = format!("{method} /static/1 HTTP/1.1\r\nHost: x\r\n\r\n");
            assert_eq!(
                parse(request.as_bytes()),
                Err(Rejected::MethodNotAllowed),
                "{method}"
            );
        }
        // Unknown methods, also ones that differ only in case (methods
        // are case-sensitive: RFC 9110 §9.1).
        for method in ["FOOBAR", "get", "Head", "M-SEARCH"] {
            let request = format!("{method} /static/1 HTTP/1.1\r\nHost: x\r\n\r\n");
            assert_eq!(
                parse(request.as_bytes()),
                Err(Rejected::NotImplemented),
                "{method}"
            );
        }
        // A 10 KB method: 501 in one piece, and at its 33rd byte when it
        // comes in pieces.
        let long = "A".repeat(10_000);
        let request = format!("{long} / HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(parse(request.as_bytes()), Err(Rejected::NotImplemented));
        assert_eq!(parse(&long.as_bytes()[..MAX_METHOD]), Ok(None));
        assert_eq!(
            parse(&long.as_bytes()[..=MAX_METHOD]),
            Err(Rejected::NotImplemented)
        );
    }

    #[test]
    fn http11_needs_exactly_one_host() {
        let no_host = b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n";
        assert_eq!(parse(no_host), Err(Rejected::BadRequest));
        let two = b"GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n";
        assert_eq!(parse(two), Err(Rejected::BadRequest));
        let two_in_10 = b"GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n";
        assert_eq!(parse(two_in_10), Err(Rejected::BadRequest));
        // HTTP/1.0 had no Host header.
        assert!(parse(b"GET / HTTP/1.0\r\n\r\n").unwrap().is_some());
        assert!(
            parse(b"GET / HTTP/1.0\r\nHost: a\r\n\r\n")
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn header_names_are_tokens() {
        for bad in [
            &b"GET / HTTP/1.1\r\nHost: x\r\nX Pad: 1\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\nHost: x\r\nX-Pad : 1\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\nX-Pad\t: 1\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\n X-Pad: 1\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: x\r\nX(Pad): 1\r\n\r\n",
            b"GET / HTTP/1.1\r\nHo st: x\r\n\r\n",
        ] {
            assert_eq!(
                parse(bad),
                Err(Rejected::BadRequest),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        // Whitespace after the colon is the value's.
        let ok = parse(b"GET / HTTP/1.1\r\nHost:\t x \r\nX-Pad:1\r\n\r\n").unwrap();
        assert!(ok.is_some());
    }

    #[test]
    fn a_few_empty_lines_before_the_request_line_are_skipped() {
        let request = b"\r\n\nGET /static/1 HTTP/1.1\r\nHost: x\r\n\r\n";
        let r = parse(request).unwrap().unwrap();
        assert_eq!((r.path, r.len), (&b"/static/1"[..], request.len()));
        // Still waiting for the request line after them.
        assert_eq!(parse(b"\r\n"), Ok(None));
        assert_eq!(parse(b"\r\n\r"), Ok(None));
        let at_limit = format!(
            "{}GET / HTTP/1.1\r\nHost: x\r\n\r\n",
            "\r\n".repeat(MAX_LEADING_EMPTY_LINES)
        );
        assert!(parse(at_limit.as_bytes()).unwrap().is_some());
        let beyond = format!(
            "{}GET / HTTP/1.1\r\nHost: x\r\n\r\n",
            "\r\n".repeat(MAX_LEADING_EMPTY_LINES + 1)
        );
        assert_eq!(parse(beyond.as_bytes()), Err(Rejected::BadRequest));
    }

    #[test]
    fn malformed_requests_are_refused_with_the_right_status() {
        let bad: &[(&[u8], Rejected)] = &[
            (b"HELLO\r\n\r\n", Rejected::BadRequest),
            (b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", Rejected::BadRequest),
            (b"GET  / HTTP/1.1\r\nHost: x\r\n\r\n", Rejected::BadRequest),
            (b"G(T / HTTP/1.1\r\nHost: x\r\n\r\n", Rejected::BadRequest),
            (b"GET /a\x01b HTTP/1.1\r\nHost: x\r\n\r\n", Rejected::BadRequest),
            (
                b"GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
                Rejected::BadRequest,
            ),
            (b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", Rejected::BadRequest),
            (b"GET / HTTP/1.1\r\nHost: x\r\n: x\r\n\r\n", Rejected::BadRequest),
            (
                b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
                Rejected::BadRequest,
            ),
            (
                b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\n",
                Rejected::BadRequest,
            ),
            (
                b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 12345678901234567890123\r\n\r\n",
                Rejected::BadRequest,
            ),
            (
                b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1 2\r\n\r\n",
                Rejected::BadRequest,
            ),
            (
                b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
                Rejected::BadRequest,
            ),
            (
                b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
                Rejected::BadRequest,
            ),
            (
                b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
                Rejected::LengthRequired,
            ),
            (
                b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n",
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
