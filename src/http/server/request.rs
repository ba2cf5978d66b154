//! The server's request parser: only what routing and connection reuse
//! need (the path and whether to keep the connection open).

use memchr::memmem;

/// Longest request head accepted.
pub const MAX_REQUEST_HEAD: usize = 16 * 1024;

/// One parsed request head.
#[derive(Debug, PartialEq, Eq)]
pub struct RequestHead<'a> {
    /// The request target, query included.
    pub path: &'a [u8],
    /// Whether the client wants the connection kept open.
    pub keep_alive: bool,
    /// Bytes the head took, CRLF CRLF included.
    pub len: usize,
}

/// A request the server refuses (answered with 400 and a close).
#[derive(Debug, PartialEq, Eq)]
pub struct BadRequest;

/// Parses the request at the start of `buf`: `Ok(None)` until its head is
/// complete.
pub fn parse(buf: &[u8]) -> Result<Option<RequestHead<'_>>, BadRequest> {
    let Some(end) = memmem::find(buf, b"\r\n\r\n") else {
        return if buf.len() > MAX_REQUEST_HEAD {
            Err(BadRequest)
        } else {
            Ok(None)
        };
    };
    let head = &buf[..end + 2];
    let line_end = memchr::memchr(b'\n', head).ok_or(BadRequest)?;
    let line = head[..line_end]
        .strip_suffix(b"\r")
        .unwrap_or(&head[..line_end]);
    let mut parts = line.split(|&b| b == b' ');
    let (Some(_method), Some(path), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(BadRequest);
    };
    let mut keep_alive = match version {
        b"HTTP/1.1" => true,
        b"HTTP/1.0" => false,
        _ => return Err(BadRequest),
    };
    for header in head[line_end + 1..].split(|&b| b == b'\n') {
        let Some(colon) = memchr::memchr(b':', header) else {
            continue;
        };
        if header[..colon].eq_ignore_ascii_case(b"connection") {
            let value = &header[colon + 1..];
            if value.windows(5).any(|w| w.eq_ignore_ascii_case(b"close")) {
                keep_alive = false;
            } else if value
                .windows(10)
                .any(|w| w.eq_ignore_ascii_case(b"keep-alive"))
            {
                keep_alive = true;
            }
        }
    }
    Ok(Some(RequestHead {
        path,
        keep_alive,
        len: end + 4,
    }))
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
    fn partial_and_bad_requests() {
        assert_eq!(parse(b"GET / HTTP/1.1\r\nHost"), Ok(None));
        assert_eq!(parse(b"HELLO\r\n\r\n"), Err(BadRequest));
        assert_eq!(parse(&[b'a'; MAX_REQUEST_HEAD + 1]), Err(BadRequest));
    }
}
