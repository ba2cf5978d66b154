//! Target URLs and the request bytes sent to them.
//!
//! The generator formats each request once, before the run, so that the
//! hot path only copies bytes into the socket (as wrk does). Only plain
//! `http://` is supported; a URL the generator cannot use is refused
//! before any connection is made, with the reason.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use thiserror::Error;

use super::request_bytes::RequestSpec;

/// A URL the generator cannot use.
#[derive(Debug, Error, PartialEq)]
pub enum UrlError {
    #[error("`{0}` is not a URL of the form http://host[:port]/path")]
    Malformed(String),
    #[error("`{0}`: only http:// is supported (no TLS)")]
    Scheme(String),
    #[error("`{url}`: cannot resolve host `{host}`")]
    Resolve { url: String, host: String },
    #[error("all URLs must name the same host and port; `{0}` differs from the first")]
    MixedHosts(String),
    #[error("no URL given")]
    Empty,
    #[error("`{}`: a URL cannot hold whitespace or control characters", .0.escape_debug())]
    Unprintable(String),
    #[error(
        "`{0}`: a user name or password in a URL is not sent; give the credential as a header (`header=Authorization: Basic ...`)"
    )]
    UserInfo(String),
}

/// One URL to request, with its request bytes pre-formatted.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL as the user gave it.
    pub url: String,
    /// Where to connect.
    pub addr: SocketAddr,
    /// The request for a connection that stays open.
    pub request_keep_alive: Box<[u8]>,
    /// The request that asks the server to close afterwards.
    pub request_close: Box<[u8]>,
    /// The responses carry no body whatever their head says (the request
    /// is a `HEAD`).
    pub bodiless_responses: bool,
}

impl Target {
    /// The request bytes for this connection mode.
    pub fn request(&self, keep_alive: bool) -> &[u8] {
        if keep_alive {
            &self.request_keep_alive
        } else {
            &self.request_close
        }
    }
}

/// Whether a connection to `ip` reaches the very host that makes it,
/// wherever that host is: a loopback address (all of 127.0.0.0/8, and
/// `::1`), the unspecified address (`0.0.0.0`, `::`, which Linux connects
/// to the host itself), or one of them in IPv4-mapped IPv6 form
/// (`::ffff:127.0.0.1`, also written `::ffff:7f00:1`; `::ffff:0.0.0.0`).
/// Load sent to such an address from other hosts would never leave them.
pub fn reaches_itself(ip: IpAddr) -> bool {
    let ip = ip.to_canonical();
    ip.is_loopback() || ip.is_unspecified()
}

/// Parses and resolves `urls`, which must share one host and port (the
/// connections are spread over the paths, not over hosts), for `GET`s.
pub fn parse_targets(urls: &[String]) -> Result<Vec<Target>, UrlError> {
    parse_targets_for(urls, &RequestSpec::default())
}

/// [`parse_targets`] for the requests `request` describes.
pub fn parse_targets_for(urls: &[String], request: &RequestSpec) -> Result<Vec<Target>, UrlError> {
    if urls.is_empty() {
        return Err(UrlError::Empty);
    }
    let targets = urls
        .iter()
        .map(|u| parse_target_for(u, request))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(other) = targets.iter().find(|t| t.addr != targets[0].addr) {
        return Err(UrlError::MixedHosts(shown_url(&other.url)));
    }
    Ok(targets)
}

/// Parses one `http://host[:port][/path]` URL and resolves its host, for
/// `GET`s.
pub fn parse_target(url: &str) -> Result<Target, UrlError> {
    parse_target_for(url, &RequestSpec::default())
}

/// [`parse_target`] for the requests `request` describes.
pub fn parse_target_for(url: &str, request: &RequestSpec) -> Result<Target, UrlError> {
    parse_target_requesting(url, request, |host, port| {
        (host, port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut addrs| addrs.next())
    })
}

/// `url` as errors show it: passwords masked ([`crate::secrets::redact`]),
/// and, in text with no `scheme://` (where `redact` finds no user part),
/// everything before its last `@` outside the query, which may end one
/// (masking too much in an error is harmless; too little is not).
fn shown_url(url: &str) -> String {
    let masked = crate::secrets::redact(url);
    if masked.contains("://") {
        return masked;
    }
    let query = masked.find('?').unwrap_or(masked.len());
    match masked[..query].rfind('@') {
        Some(at) => format!("{}{}", crate::secrets::MASK, &masked[at..]),
        None => masked,
    }
}

/// [`parse_target`] with the name lookup given, so that tests (and the
/// fuzz target of URLs) need not send a DNS query.
#[doc(hidden)]
pub fn parse_target_with(
    url: &str,
    resolve: impl FnOnce(&str, u16) -> Option<SocketAddr>,
) -> Result<Target, UrlError> {
    parse_target_requesting(url, &RequestSpec::default(), resolve)
}

fn parse_target_requesting(
    url: &str,
    request: &RequestSpec,
    resolve: impl FnOnce(&str, u16) -> Option<SocketAddr>,
) -> Result<Target, UrlError> {
    // Every error shows the URL with any password in it masked: an error
    // reaches the terminal and the logs.
    let shown = shown_url(url);
    let malformed = || UrlError::Malformed(shown.clone());
    // Something that is no URL at all (`not a url`) is said to be so
    // before its characters are judged.
    let (scheme, rest) = url.split_once("://").ok_or_else(malformed)?;
    // The URL becomes a request line and a Host header: whitespace or a
    // control character would make requests that servers refuse, and a
    // line break would add header lines of its own.
    if url.contains(|c: char| c.is_whitespace() || c.is_control()) {
        return Err(UrlError::Unprintable(shown));
    }
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(UrlError::Scheme(shown));
    }
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], &rest[i..]),
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    if authority.contains('@') {
        return Err(UrlError::UserInfo(shown));
    }
    if authority.is_empty() {
        return Err(malformed());
    }
    let (host, port) = split_host_port(authority).ok_or_else(malformed)?;
    let addr = resolve(host, port).ok_or_else(|| UrlError::Resolve {
        url: shown.clone(),
        host: host.to_string(),
    })?;
    Ok(Target {
        url: url.to_string(),
        addr,
        request_keep_alive: request.format(&path, authority, false),
        request_close: request.format(&path, authority, true),
        bodiless_responses: request.bodiless_responses(),
    })
}

/// Splits `host`, `host:port`, `[v6]` or `[v6]:port`; port 80 by default.
fn split_host_port(authority: &str) -> Option<(&str, u16)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => 80,
            None => return None,
        };
        return Some((host, port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() => Some((host, port.parse().ok()?)),
        Some(_) => None,
        None => Some((authority, 80)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_becomes_an_address_and_a_request() {
        let t = parse_target("http://127.0.0.1:8080/static/1?x=2").unwrap();
        assert_eq!(t.addr, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(
            std::str::from_utf8(&t.request_keep_alive).unwrap(),
            "GET /static/1?x=2 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: sledge\r\n\r\n"
        );
        assert!(
            std::str::from_utf8(&t.request_close)
                .unwrap()
                .contains("Connection: close\r\n\r\n")
        );
    }

    #[test]
    fn a_user_part_is_refused_and_its_password_never_shown() {
        for url in [
            "http://user:s3cret@127.0.0.1:18080/",
            "https://user:s3cret@127.0.0.1/",
            "http://user:s3cret@127.0.0.1/a b",
        ] {
            let err = parse_target(url).unwrap_err().to_string();
            assert!(!err.contains("s3cret"), "{err}");
            assert!(err.contains("user:***@127.0.0.1"), "{err}");
        }
        // Without a scheme, where no user part is looked for.
        for url in ["user:s3cret@127.0.0.1/", "http:/user:s3cret@127.0.0.1/x"] {
            let err = parse_target(url).unwrap_err().to_string();
            assert!(!err.contains("s3cret"), "{err}");
            assert!(err.contains("***@127.0.0.1"), "{err}");
        }
        let err = parse_target("http://user:s3cret@127.0.0.1:18080/").unwrap_err();
        assert_eq!(
            err,
            UrlError::UserInfo("http://user:***@127.0.0.1:18080/".to_string())
        );
        assert!(err.to_string().contains("give the credential as a header"));
    }

    #[test]
    fn defaults_and_ipv6() {
        let t = parse_target("http://[::1]").unwrap();
        assert_eq!(t.addr, "[::1]:80".parse().unwrap());
        assert!(t.request_keep_alive.starts_with(b"GET / HTTP/1.1\r\n"));
    }

    #[test]
    fn every_form_of_loopback_and_unspecified_reaches_itself() {
        for ip in [
            "127.0.0.1",
            "127.1.2.3",
            "127.255.255.254",
            "0.0.0.0",
            "::1",
            "::",
            "::ffff:127.0.0.1",
            "::ffff:7f00:1",
            "::ffff:127.9.9.9",
            "::ffff:0.0.0.0",
        ] {
            assert!(reaches_itself(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "198.18.0.1",
            "10.0.0.1",
            "128.0.0.1",
            "::2",
            "fe80::1",
            "::ffff:198.18.0.1",
            "2001:db8::1",
        ] {
            assert!(!reaches_itself(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn control_characters_and_whitespace_are_refused_anywhere() {
        let loopback = |_: &str, port| Some(SocketAddr::from(([127, 0, 0, 1], port)));
        // Found by fuzzing (fuzz/README.md): NUL bytes in the host and
        // the path passed, and every request would have been one that
        // servers refuse (the built-in one with 400).
        assert_eq!(
            parse_target_with("http://\0/\0", loopback).unwrap_err(),
            UrlError::Unprintable("http://\0/\0".into())
        );
        // A line break in the host would have added header lines to
        // every request.
        let injected = "http://a\r\nX-Injected: 1\r\n:80/";
        assert_eq!(
            parse_target_with(injected, loopback)
                .unwrap_err()
                .to_string(),
            "`http://a\\r\\nX-Injected: 1\\r\\n:80/`: a URL cannot hold whitespace or control characters"
        );
    }

    #[test]
    fn bad_urls_say_why() {
        assert!(matches!(
            parse_target("https://127.0.0.1/"),
            Err(UrlError::Scheme(_))
        ));
        assert!(matches!(
            parse_target("127.0.0.1:80"),
            Err(UrlError::Malformed(_))
        ));
        assert!(matches!(
            parse_target("http://127.0.0.1:99999/"),
            Err(UrlError::Malformed(_))
        ));
        // A host that does not resolve, without asking any DNS server.
        let unresolved = parse_target_with("http://no-such-host.invalid/", |host, port| {
            assert_eq!((host, port), ("no-such-host.invalid", 80));
            None
        });
        assert_eq!(
            unresolved.unwrap_err(),
            UrlError::Resolve {
                url: "http://no-such-host.invalid/".into(),
                host: "no-such-host.invalid".into()
            }
        );
        let mixed = parse_targets(&["http://127.0.0.1:1/".into(), "http://127.0.0.1:2/".into()]);
        assert!(matches!(mixed, Err(UrlError::MixedHosts(_))));
    }
}
