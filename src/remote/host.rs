//! A host to reach over SSH, as the user writes it: `[user@]host[:port]`,
//! and lists of them (`user@h1,user@h2:2222`).
//!
//! The parser is strict on purpose: whatever it accepts goes on an `ssh`
//! command line, so a name that could read as an option (`-oProxyCommand=`)
//! or holds spaces or shell characters is refused here, with the entry
//! named, before any connection is tried.

use std::fmt;
use std::str::FromStr;

/// One host of a `--hosts` list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SshHost {
    /// The login name, when given (else ssh's configuration decides).
    pub user: Option<String>,
    /// A host name, an ssh configuration alias, an IPv4 address, or an
    /// IPv6 address (written in brackets, stored without them).
    pub host: String,
    /// The port, when given (else ssh's configuration decides, 22 by
    /// default).
    pub port: Option<u16>,
}

/// Why a host or a host list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// The list had no host at all.
    #[error("the host list is empty; expected user@host[:port],... (for example root@h1,root@h2)")]
    EmptyList,
    /// An entry between two commas (or at an end) was empty.
    #[error("host list `{list}`: entry {position} is empty; expected user@host[:port],...")]
    EmptyEntry { list: String, position: usize },
    /// The same host appeared twice.
    #[error("host list `{list}`: `{host}` appears twice; every host runs once")]
    Duplicate { list: String, host: String },
    /// One entry did not parse.
    #[error(
        "host `{entry}`: {reason}; expected [user@]host[:port], for example root@h1 or root@h1:2222"
    )]
    Malformed { entry: String, reason: String },
}

impl SshHost {
    /// The destination as ssh takes it after `-l` and `-p`: the host alone.
    pub fn destination(&self) -> &str {
        &self.host
    }

    /// A short name for prefixes and file names: the host, and the port
    /// when one was given (`h1`, `h1:2222`).
    pub fn label(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", self.host),
            None => self.host.clone(),
        }
    }
}

impl fmt::Display for SshHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(user) = &self.user {
            write!(f, "{user}@")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            write!(f, "{}", self.host)?;
        }
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

impl FromStr for SshHost {
    type Err = HostError;

    fn from_str(entry: &str) -> Result<Self, Self::Err> {
        let malformed = |reason: &str| HostError::Malformed {
            entry: entry.to_string(),
            reason: reason.to_string(),
        };
        let (user, rest) = match entry.rsplit_once('@') {
            Some((user, rest)) => {
                if !is_name(user) {
                    return Err(malformed(
                        "the user must be letters, digits, `.`, `_` or `-`, not starting with `-`",
                    ));
                }
                (Some(user.to_string()), rest)
            }
            None => (None, entry),
        };
        let (host, port) = if let Some(bracketed) = rest.strip_prefix('[') {
            let (inside, after) = bracketed
                .split_once(']')
                .ok_or_else(|| malformed("an IPv6 address needs its closing `]`"))?;
            if inside.parse::<std::net::Ipv6Addr>().is_err() {
                return Err(malformed("what is in brackets must be an IPv6 address"));
            }
            let port = match after {
                "" => None,
                _ => Some(
                    after
                        .strip_prefix(':')
                        .ok_or_else(|| malformed("only `:PORT` may follow `]`"))?,
                ),
            };
            (inside, port)
        } else {
            match rest.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (rest, None),
            }
        };
        if host.is_empty() {
            return Err(malformed("the host name is missing"));
        }
        if !host.contains(':') && !is_name(host) {
            return Err(malformed(
                "a host name must be letters, digits, `.`, `_` or `-`, not starting with `-`",
            ));
        }
        let port = match port {
            None => None,
            Some(port) => Some(port.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(|| {
                malformed(&format!("port `{port}` is not a number from 1 to 65535"))
            })?),
        };
        Ok(SshHost {
            user,
            host: host.to_string(),
            port,
        })
    }
}

/// Whether `text` is a safe user or host name: ASCII letters, digits, `.`,
/// `_` and `-`, not empty and not starting with `-` (which ssh would take
/// for an option).
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with('-')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Parses a comma-separated host list: every entry must parse, none may be
/// empty, and no host may appear twice.
pub fn parse_host_list(list: &str) -> Result<Vec<SshHost>, HostError> {
    if list.trim().is_empty() {
        return Err(HostError::EmptyList);
    }
    let mut hosts: Vec<SshHost> = Vec::new();
    for (index, entry) in list.split(',').enumerate() {
        let entry = entry.trim();
        if entry.is_empty() {
            return Err(HostError::EmptyEntry {
                list: list.to_string(),
                position: index + 1,
            });
        }
        let host: SshHost = entry.parse()?;
        if hosts.contains(&host) {
            return Err(HostError::Duplicate {
                list: list.to_string(),
                host: host.to_string(),
            });
        }
        hosts.push(host);
    }
    Ok(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(text: &str) -> SshHost {
        text.parse().unwrap()
    }

    #[test]
    fn user_host_and_port_are_read_and_printed_back() {
        let h = host("root@198.18.1.2:2222");
        assert_eq!(h.user.as_deref(), Some("root"));
        assert_eq!(h.host, "198.18.1.2");
        assert_eq!(h.port, Some(2222));
        assert_eq!(h.to_string(), "root@198.18.1.2:2222");
        assert_eq!(h.label(), "198.18.1.2:2222");
        let plain = host("bench-01.example");
        assert_eq!((plain.user.as_deref(), plain.port), (None, None));
        assert_eq!(plain.label(), "bench-01.example");
    }

    #[test]
    fn ipv6_addresses_go_in_brackets() {
        let h = host("admin@[fd00::2]:22");
        assert_eq!(h.host, "fd00::2");
        assert_eq!(h.port, Some(22));
        assert_eq!(h.to_string(), "admin@[fd00::2]:22");
        assert_eq!(host("[::1]").to_string(), "[::1]");
    }

    #[test]
    fn malformed_entries_are_refused_with_the_entry_named() {
        for (entry, reason) in [
            ("root@", "host name is missing"),
            ("@h1", "user must be"),
            ("root@h1:0", "port `0`"),
            ("root@h1:ssh", "port `ssh`"),
            ("root@h1:70000", "port `70000`"),
            ("-oProxyCommand=x", "not starting with `-`"),
            ("root@h 1", "host name must be"),
            ("root@h1;reboot", "host name must be"),
            ("[fd00::2", "closing `]`"),
            ("[h1]", "IPv6 address"),
        ] {
            let err = entry.parse::<SshHost>().unwrap_err().to_string();
            assert!(err.contains(&format!("host `{entry}`")), "{err}");
            assert!(err.contains(reason), "{entry}: {err}");
        }
    }

    #[test]
    fn lists_are_split_on_commas_and_checked_whole() {
        let hosts = parse_host_list("root@h1, root@h2:2222").unwrap();
        assert_eq!(hosts.len(), 2);
        assert_eq!(hosts[1].to_string(), "root@h2:2222");
        assert_eq!(parse_host_list(" "), Err(HostError::EmptyList));
        let err = parse_host_list("root@h1,,root@h2").unwrap_err().to_string();
        assert!(err.contains("entry 2 is empty"), "{err}");
        let err = parse_host_list("root@h1,").unwrap_err().to_string();
        assert!(err.contains("entry 2 is empty"), "{err}");
        let err = parse_host_list("root@h1,root@h1").unwrap_err().to_string();
        assert!(err.contains("`root@h1` appears twice"), "{err}");
        let err = parse_host_list("root@h1,bad host").unwrap_err().to_string();
        assert!(err.contains("host `bad host`"), "{err}");
    }
}
