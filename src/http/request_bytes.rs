//! What the generator asks a server: the method, the headers a user adds
//! and a body, formatted into the request bytes once, before the run, so
//! that the hot path stays a buffer write whatever the request holds.
//!
//! sledge owns the headers that frame a request (`Host` from the URL,
//! `Connection` from keep-alive, `Content-Length` from the body) and
//! refuses them from the user: a second `Content-Length` or a
//! `Transfer-Encoding` would make the server read the body differently
//! from how it was sent, and every later request on the connection with
//! it. Bodies go with `Content-Length` only (no chunked encoding).

use std::path::Path;

use thiserror::Error;

/// The largest body a request may carry: it is held in memory twice per
/// URL (the keep-alive and the closing form of the request).
pub const MAX_BODY: u64 = 64 << 20;

/// A request the generator cannot send as asked.
#[derive(Debug, Error, PartialEq)]
pub enum RequestError {
    #[error("`{0}` is not a method sledge sends; allowed: {allowed}", allowed = Method::NAMES.join(", "))]
    Method(String),
    #[error(
        "header `{}` has no `:`; a header is `Name: value` (several are separated by `|`, and `||` is a `|` inside one)",
        .0.escape_debug()
    )]
    NoColon(String),
    #[error(
        "header `{}`: a name is letters, digits and !#$%&'*+-.^_`|~, without spaces",
        .0.escape_debug()
    )]
    Name(String),
    #[error(
        "header `{}`: a value cannot hold a line break or another control character",
        .0.escape_debug()
    )]
    Value(String),
    #[error("header `{name}` is set by sledge ({why}); leave it out")]
    Framing { name: String, why: &'static str },
    #[error("the header list `{}` has an empty entry (a doubled or trailing `|`?)", .0.escape_debug())]
    EmptyEntry(String),
    #[error("the body file {path}: {why}")]
    Body { path: String, why: String },
}

/// The methods the generator sends (RFC 9110's, less `CONNECT` and
/// `TRACE`, which no server under load is measured by).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Method {
    #[default]
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
    Options,
}

impl Method {
    /// Every method's name, as it goes on the request line.
    pub const NAMES: &'static [&'static str] =
        &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

    const ALL: [Method; 7] = [
        Method::Get,
        Method::Head,
        Method::Post,
        Method::Put,
        Method::Patch,
        Method::Delete,
        Method::Options,
    ];

    /// The method named `name`, in any case (`post` is `POST`).
    pub fn parse(name: &str) -> Result<Method, RequestError> {
        Method::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| RequestError::Method(name.to_string()))
    }

    /// The name on the request line.
    pub fn name(self) -> &'static str {
        Method::NAMES[self as usize]
    }

    /// Whether the method defines a meaning for a body, so that a request
    /// without one still says `Content-Length: 0` (RFC 9110 §8.6: some
    /// servers answer such a request without it with 411).
    fn expects_body(self) -> bool {
        matches!(self, Method::Post | Method::Put | Method::Patch)
    }
}

/// One header a user adds, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The name as given.
    pub name: String,
    /// The value, without the whitespace around it.
    pub value: String,
}

impl Header {
    /// Parses `Name: value`, refusing what would break the request's
    /// framing or the lines around it.
    pub fn parse(text: &str) -> Result<Header, RequestError> {
        let (name, value) = text
            .split_once(':')
            .ok_or_else(|| RequestError::NoColon(text.to_string()))?;
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(RequestError::Name(text.to_string()));
        }
        let value = value.trim_matches([' ', '\t']);
        if value.chars().any(|c| c.is_control() && c != '\t') {
            return Err(RequestError::Value(text.to_string()));
        }
        if let Some(why) = framing(name) {
            return Err(RequestError::Framing {
                name: name.to_string(),
                why,
            });
        }
        Ok(Header {
            name: name.to_string(),
            value: value.to_string(),
        })
    }

    /// Parses a list of headers separated by `|`, where `||` stands for a
    /// `|` inside one: one parameter value that a sweep's commas do not
    /// split (a value holding a comma goes in double quotes, as any
    /// parameter value). An empty list is no header.
    pub fn parse_list(text: &str) -> Result<Vec<Header>, RequestError> {
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        let mut entries = vec![String::new()];
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '|' if chars.next_if_eq(&'|').is_some() => {
                    entries.last_mut().expect("never empty").push('|')
                }
                '|' => entries.push(String::new()),
                c => entries.last_mut().expect("never empty").push(c),
            }
        }
        entries
            .iter()
            .map(|entry| {
                let entry = entry.trim();
                if entry.is_empty() {
                    return Err(RequestError::EmptyEntry(text.to_string()));
                }
                Header::parse(entry)
            })
            .collect()
    }
}

/// Why sledge sets the header `name` itself, when it does.
fn framing(name: &str) -> Option<&'static str> {
    const OWN: [(&str, &str); 4] = [
        ("host", "from the URL"),
        ("connection", "from keepalive"),
        ("content-length", "from the body"),
        (
            "transfer-encoding",
            "bodies are sent with Content-Length only",
        ),
    ];
    OWN.iter()
        .find(|(own, _)| own.eq_ignore_ascii_case(name))
        .map(|(_, why)| *why)
}

/// RFC 9110's `tchar`: what a header name is made of.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The method, added headers and body of every request of a load; the
/// default is a plain `GET`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestSpec {
    /// The method.
    pub method: Method,
    /// Headers after `Host` (and `User-Agent`, unless one of these is it).
    pub headers: Vec<Header>,
    /// The body, sent with `Content-Length`.
    pub body: Vec<u8>,
}

impl RequestSpec {
    /// The request for `path` on `authority`, asking the server to close
    /// the connection after its response when `close`. A plain `GET`
    /// comes out byte for byte as it always has: `Host`, `User-Agent`,
    /// then `Connection: close` if asked.
    pub fn format(&self, path: &str, authority: &str, close: bool) -> Box<[u8]> {
        let mut head = format!(
            "{} {path} HTTP/1.1\r\nHost: {authority}\r\n",
            self.method.name()
        );
        let own_agent = self
            .headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("user-agent"));
        if !own_agent {
            head.push_str("User-Agent: sledge\r\n");
        }
        for header in &self.headers {
            head.push_str(&format!("{}: {}\r\n", header.name, header.value));
        }
        if !self.body.is_empty() || self.method.expects_body() {
            head.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        if close {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes.into_boxed_slice()
    }

    /// Whether the responses carry no body whatever their head says: the
    /// answer to a `HEAD` has the `GET` response's `Content-Length` and
    /// nothing after its head (RFC 9110 §9.3.2).
    pub fn bodiless_responses(&self) -> bool {
        self.method == Method::Head
    }
}

/// The size of the body file at `path`, checked without reading it: a
/// regular file (a pipe or a device could block or never end) of at most
/// [`MAX_BODY`] bytes.
pub fn check_body(path: &Path) -> Result<u64, RequestError> {
    let meta = std::fs::metadata(path).map_err(|e| body_error(path, e.to_string()))?;
    if !meta.is_file() {
        return Err(body_error(path, "not a regular file".to_string()));
    }
    within_limit(path, meta.len())
}

/// Reads a request body from `path` (see [`check_body`]).
pub fn read_body(path: &Path) -> Result<Vec<u8>, RequestError> {
    check_body(path)?;
    let body = std::fs::read(path).map_err(|e| body_error(path, e.to_string()))?;
    // It may have grown since its size was looked at.
    within_limit(path, body.len() as u64)?;
    Ok(body)
}

fn within_limit(path: &Path, size: u64) -> Result<u64, RequestError> {
    if size > MAX_BODY {
        return Err(body_error(
            path,
            format!("{size} bytes, more than the {MAX_BODY} (64 MiB) a request body may have"),
        ));
    }
    Ok(size)
}

fn body_error(path: &Path, why: String) -> RequestError {
    RequestError::Body {
        path: path.display().to_string(),
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> &str {
        std::str::from_utf8(bytes).unwrap()
    }

    #[test]
    fn a_plain_get_is_the_request_it_always_was() {
        let get = RequestSpec::default();
        assert_eq!(
            text(&get.format("/a?b", "h:8", false)),
            "GET /a?b HTTP/1.1\r\nHost: h:8\r\nUser-Agent: sledge\r\n\r\n"
        );
        assert_eq!(
            text(&get.format("/", "h", true)),
            "GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: sledge\r\nConnection: close\r\n\r\n"
        );
        assert!(!get.bodiless_responses());
    }

    #[test]
    fn a_post_carries_its_headers_its_length_and_its_body() {
        let post = RequestSpec {
            method: Method::parse("post").unwrap(),
            headers: Header::parse_list("Accept: */*|X-Pipe: a||b|User-Agent: me").unwrap(),
            body: b"{\"k\": 1}".to_vec(),
        };
        assert_eq!(
            text(&post.format("/api", "h", true)),
            "POST /api HTTP/1.1\r\nHost: h\r\nAccept: */*\r\nX-Pipe: a|b\r\nUser-Agent: me\r\n\
             Content-Length: 8\r\nConnection: close\r\n\r\n{\"k\": 1}"
        );
        // Without a body, a method that takes one still says its length;
        // one that does not, says nothing.
        let empty_put = RequestSpec {
            method: Method::Put,
            ..RequestSpec::default()
        };
        assert!(text(&empty_put.format("/", "h", false)).ends_with("Content-Length: 0\r\n\r\n"));
        let delete = RequestSpec {
            method: Method::Delete,
            ..RequestSpec::default()
        };
        assert!(!text(&delete.format("/", "h", false)).contains("Content-Length"));
    }

    #[test]
    fn only_head_has_bodiless_responses() {
        for name in Method::NAMES {
            let spec = RequestSpec {
                method: Method::parse(name).unwrap(),
                ..RequestSpec::default()
            };
            assert_eq!(spec.bodiless_responses(), *name == "HEAD", "{name}");
            assert!(text(&spec.format("/", "h", false)).starts_with(&format!("{name} / ")));
        }
        assert_eq!(
            Method::parse("TRACE").unwrap_err().to_string(),
            "`TRACE` is not a method sledge sends; allowed: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"
        );
    }

    #[test]
    fn headers_that_frame_the_request_are_refused_with_the_reason() {
        for (header, why) in [
            ("content-length: 5", "from the body"),
            ("Transfer-Encoding: chunked", "Content-Length only"),
            ("HOST: other", "from the URL"),
            ("Connection: close", "from keepalive"),
        ] {
            let err = Header::parse(header).unwrap_err().to_string();
            assert!(
                err.contains("is set by sledge") && err.contains(why),
                "{err}"
            );
        }
    }

    #[test]
    fn malformed_headers_say_what_is_wrong() {
        let err = |text: &str| Header::parse_list(text).unwrap_err();
        assert_eq!(err("Accept"), RequestError::NoColon("Accept".into()));
        assert_eq!(err("Bad Name: x"), RequestError::Name("Bad Name: x".into()));
        assert_eq!(err(": x"), RequestError::Name(": x".into()));
        // A line break would add header lines of its own.
        assert_eq!(
            err("X-A: a\r\nX-B: b"),
            RequestError::Value("X-A: a\r\nX-B: b".into())
        );
        assert_eq!(err("X-A: a|"), RequestError::EmptyEntry("X-A: a|".into()));
        // A doubled bar is a bar in the value, not an empty entry.
        assert_eq!(
            Header::parse_list("X-A: a||").unwrap(),
            [Header {
                name: "X-A".into(),
                value: "a|".into()
            }]
        );
        assert!(Header::parse_list(" ").unwrap().is_empty());
    }

    #[test]
    fn a_body_file_is_read_whole_and_checked_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("body.json");
        std::fs::write(&path, b"{\"a\": [1, 2]}").unwrap();
        assert_eq!(check_body(&path).unwrap(), 13);
        assert_eq!(read_body(&path).unwrap(), b"{\"a\": [1, 2]}");
        let err = read_body(dir.path()).unwrap_err().to_string();
        assert!(err.ends_with(": not a regular file"), "{err}");
        let missing = dir.path().join("missing");
        let err = check_body(&missing).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("the body file {}: ", missing.display())),
            "{err}"
        );
        // A sparse file over the limit is refused by its size, unread.
        let big = dir.path().join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_BODY + 1)
            .unwrap();
        let err = check_body(&big).unwrap_err().to_string();
        assert!(
            err.contains("67108865 bytes, more than the 67108864 (64 MiB)"),
            "{err}"
        );
    }
}
