//! A minimal, streaming HTTP/1.1 response parser for the generator.
//!
//! The generator only needs to know where a response ends and what its
//! status was, so this parser reads the status line and the three headers
//! that decide framing (Content-Length, Transfer-Encoding, Connection) and
//! skips bodies without copying them. A response usually arrives in one
//! read and is parsed in place; only a head split over reads is buffered.
//!
//! Interim responses (1xx, such as `100 Continue`) are not the answer to
//! a request: each is skipped, head and all, until the final response
//! (RFC 9110 §15.2). `101 Switching Protocols` would hand the connection
//! to another protocol, which a load generator cannot follow: an error.
//! So is a server that sends more than [`MAX_INTERIM_RESPONSES`] interim
//! responses to one request: one that sends nothing else would otherwise
//! keep the request from ever ending, and a flood of them would keep the
//! generator reading one connection.

use super::header_value::{contains_ignore_case, parse_length, trim};
use super::line_ends::{LineEnds, ends_head, head_end};
use thiserror::Error;

/// Longest response head accepted; more is a protocol error.
const MAX_HEAD: usize = 64 * 1024;

/// Interim responses accepted before one final response; more is a
/// protocol error. Go's HTTP client allows 5; more are allowed here, since
/// a server may send `102 Processing` now and then through a long request
/// (RFC 2518) besides a `100 Continue` and `103 Early Hints`.
pub const MAX_INTERIM_RESPONSES: u32 = 32;

/// A response the parser cannot follow.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ParseError {
    #[error("the response head is longer than {MAX_HEAD} bytes")]
    HeadTooLong,
    #[error("malformed status line")]
    StatusLine,
    #[error("malformed Content-Length")]
    ContentLength,
    #[error("malformed chunk")]
    Chunk,
    #[error("the server switched protocols (101), which a load generator cannot follow")]
    SwitchingProtocols,
    #[error(
        "more than {MAX_INTERIM_RESPONSES} interim (1xx) responses to one request, and no final one"
    )]
    TooManyInterim,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Body { remaining: u64 },
    Chunked(Chunk),
    UntilClose,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Hex digits of a chunk size.
    Size { value: u64, digits: u8 },
    /// Chunk extensions, up to the LF.
    Extension { value: u64 },
    /// Chunk data still to skip.
    Data { remaining: u64 },
    /// The CRLF after a chunk's data.
    DataEnd { seen_cr: bool },
    /// Trailer lines after the last chunk; `line_len` of the current one.
    Trailer { line_len: usize },
}

/// Parses the responses of one connection, one after another.
#[derive(Debug)]
pub struct ResponseParser {
    state: State,
    head: Vec<u8>,
    status: u16,
    close: bool,
    started: bool,
    /// Interim responses since the last final one.
    interim: u32,
    /// The request was a `HEAD`: a final response ends with its head.
    bodiless: bool,
}

impl Default for ResponseParser {
    fn default() -> Self {
        ResponseParser {
            state: State::Head,
            head: Vec::new(),
            status: 0,
            close: false,
            started: false,
            interim: 0,
            bodiless: false,
        }
    }
}

impl ResponseParser {
    /// Status code of the response parsed last (valid once its head is in).
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Whether the server will close the connection after this response.
    pub fn close_after(&self) -> bool {
        self.close
    }

    /// Whether any byte of the current response has arrived.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Whether the responses to come answer a `HEAD`, whose response has
    /// the head of the `GET` response, `Content-Length` included, and no
    /// body (RFC 9110 §9.3.2).
    pub fn expect_bodiless(&mut self, bodiless: bool) {
        self.bodiless = bodiless;
    }

    /// Forgets a partial response (after an error on the connection).
    pub fn reset(&mut self) {
        self.state = State::Head;
        self.head.clear();
        self.started = false;
        self.interim = 0;
    }

    /// Feeds bytes read from the connection. Returns `Some(n)` when the
    /// response ended after `n` bytes of `buf`, `None` when all of `buf`
    /// was consumed and more is needed.
    pub fn feed(&mut self, buf: &[u8]) -> Result<Option<usize>, ParseError> {
        if !buf.is_empty() {
            self.started = true;
        }
        let mut pos = 0;
        // An interim response leaves the state at `Head`: the final
        // response's head comes next, maybe in the same bytes.
        while self.state == State::Head {
            match self.feed_head(&buf[pos..])? {
                Some(used) => pos += used,
                None => return Ok(None),
            }
        }
        match self.feed_body(&buf[pos..])? {
            Some(used) => {
                self.state = State::Head;
                self.started = false;
                Ok(Some(pos + used))
            }
            None => Ok(None),
        }
    }

    /// Body bytes that come next and need not be looked at: the rest of a
    /// `Content-Length` body or of a chunk's data. A reader may take up to
    /// this many bytes off the connection unread and report them with
    /// [`ResponseParser::skipped`].
    pub fn skippable(&self) -> u64 {
        match self.state {
            State::Body { remaining } | State::Chunked(Chunk::Data { remaining }) => remaining,
            _ => 0,
        }
    }

    /// `n` body bytes (at most [`ResponseParser::skippable`]) were taken
    /// off the connection unread; true when they ended the response.
    pub fn skipped(&mut self, n: u64) -> bool {
        match &mut self.state {
            State::Body { remaining } => {
                *remaining -= n.min(*remaining);
                if *remaining == 0 {
                    self.state = State::Head;
                    self.started = false;
                    return true;
                }
                false
            }
            State::Chunked(chunk) => {
                if let Chunk::Data { remaining } = chunk {
                    *remaining -= n.min(*remaining);
                    if *remaining == 0 {
                        *chunk = Chunk::DataEnd { seen_cr: false };
                    }
                }
                false
            }
            State::Head | State::UntilClose => false,
        }
    }

    /// The connection was closed by the server: true when that ended the
    /// current response (a body delimited by the close).
    pub fn finish_on_close(&mut self) -> bool {
        if self.state == State::UntilClose {
            self.state = State::Head;
            self.started = false;
            true
        } else {
            false
        }
    }

    /// Consumes head bytes; returns how many of `buf` belonged to the head
    /// once it is complete.
    fn feed_head(&mut self, buf: &[u8]) -> Result<Option<usize>, ParseError> {
        if self.head.is_empty() {
            if let Some(end) = self.parse_head(buf)? {
                return Ok(Some(end));
            }
            if buf.len() > MAX_HEAD {
                return Err(ParseError::HeadTooLong);
            }
            self.head.extend_from_slice(buf);
            return Ok(None);
        }
        let old = self.head.len();
        self.head.extend_from_slice(buf);
        // Only an end that the new bytes complete is new: the head is
        // parsed again only once it is whole, not after every piece.
        if head_end(&self.head, old.saturating_sub(3)).is_none() {
            return if self.head.len() > MAX_HEAD {
                Err(ParseError::HeadTooLong)
            } else {
                Ok(None)
            };
        }
        let head = std::mem::take(&mut self.head);
        let result = self.parse_head(&head);
        self.head = head;
        self.head.clear();
        let end = result?.expect("the head's end was found above");
        Ok(Some(end - old))
    }

    /// Parses the head at the start of `buf` when `buf` holds all of it (up
    /// to the first CRLF CRLF), sets the status and the body state, and
    /// returns the head's length; `None` when the head goes on beyond
    /// `buf` (then nothing is set, and a malformed line is not yet an
    /// error: the head is parsed again when it is whole).
    fn parse_head(&mut self, buf: &[u8]) -> Result<Option<usize>, ParseError> {
        let mut content_length = None;
        let mut header_error = None;
        let mut chunked = false;
        // The last `Connection` header that said close or keep-alive.
        let mut connection_close = None;
        let mut line_start = None;
        let mut end = None;
        // One pass finds the line ends and the head's end together; a line
        // is looked at further only when its first letter could start one
        // of the three names that decide framing (most of a server's
        // headers do not), so most lines cost a few tens of instructions
        // whatever their length.
        for line_end in LineEnds::new(buf, 0) {
            let Some(start) = line_start else {
                // The status line: read once the head is known to be whole.
                line_start = Some(line_end + 1);
                continue;
            };
            line_start = Some(line_end + 1);
            if ends_head(buf, line_end) {
                end = Some(line_end + 1);
                break;
            }
            let line = &buf[start..line_end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            match line.first().map(|b| b | 0x20) {
                Some(b'c') => {
                    if let Some(value) = header_value(line, b"content-length") {
                        match parse_length(value) {
                            Some(length) => content_length = Some(length),
                            None => {
                                header_error.get_or_insert(ParseError::ContentLength);
                            }
                        }
                    } else if let Some(value) = header_value(line, b"connection")
                        && let Some(close) = connection_says_close(value)
                    {
                        connection_close = Some(close);
                    }
                }
                Some(b't') => {
                    if let Some(value) = header_value(line, b"transfer-encoding") {
                        chunked = contains_ignore_case(value, b"chunked");
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            return Ok(None);
        };
        let head = &buf[..end];
        if head.len() < 12 || !head.starts_with(b"HTTP/1.") || head[8] != b' ' {
            return Err(ParseError::StatusLine);
        }
        let digits = &head[9..12];
        if !digits.iter().all(u8::is_ascii_digit) {
            return Err(ParseError::StatusLine);
        }
        self.status = digits
            .iter()
            .fold(0u16, |acc, d| acc * 10 + u16::from(d - b'0'));
        if let Some(error) = header_error {
            return Err(error);
        }
        let http10 = head[7] == b'0';
        let mut close = connection_close.unwrap_or(http10);
        match self.status {
            101 => return Err(ParseError::SwitchingProtocols),
            // Interim: skipped, the final response is still to come.
            100..=199 => {
                self.interim += 1;
                if self.interim > MAX_INTERIM_RESPONSES {
                    return Err(ParseError::TooManyInterim);
                }
                return Ok(Some(end));
            }
            _ => self.interim = 0,
        }
        let no_body = self.bodiless || matches!(self.status, 204 | 304);
        self.state = if no_body {
            State::Body { remaining: 0 }
        } else if chunked {
            State::Chunked(Chunk::Size {
                value: 0,
                digits: 0,
            })
        } else if let Some(len) = content_length {
            State::Body { remaining: len }
        } else {
            close = true;
            State::UntilClose
        };
        self.close = close;
        Ok(Some(end))
    }

    /// Consumes body bytes; returns how many of `buf` ended the body.
    fn feed_body(&mut self, buf: &[u8]) -> Result<Option<usize>, ParseError> {
        match &mut self.state {
            State::Head => unreachable!("feed_body runs after the head"),
            State::Body { remaining } => {
                let take = (*remaining).min(buf.len() as u64);
                *remaining -= take;
                Ok((*remaining == 0).then_some(take as usize))
            }
            State::UntilClose => Ok(None),
            State::Chunked(chunk) => feed_chunked(chunk, buf),
        }
    }
}

/// The trimmed value of header `line` when its name is `name` (given in
/// lower case; matched ignoring case, the colon right after the name).
fn header_value<'a>(line: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    (line.len() > name.len()
        && line[name.len()] == b':'
        && line[..name.len()].eq_ignore_ascii_case(name))
    .then(|| trim(&line[name.len() + 1..]))
}

/// What a `Connection` header's value says: `Some(true)` when it asks
/// for the close, `Some(false)` for keep-alive, `None` for neither.
fn connection_says_close(value: &[u8]) -> Option<bool> {
    // The two values servers send, compared whole before searching lists.
    if value.eq_ignore_ascii_case(b"keep-alive") {
        Some(false)
    } else if value.eq_ignore_ascii_case(b"close") || contains_ignore_case(value, b"close") {
        Some(true)
    } else if contains_ignore_case(value, b"keep-alive") {
        Some(false)
    } else {
        None
    }
}

/// Steps the chunked-body state machine over `buf`.
fn feed_chunked(chunk: &mut Chunk, buf: &[u8]) -> Result<Option<usize>, ParseError> {
    let mut i = 0;
    while i < buf.len() {
        match chunk {
            Chunk::Data { remaining } => {
                let take = (*remaining).min((buf.len() - i) as u64);
                *remaining -= take;
                i += take as usize;
                if *remaining == 0 {
                    *chunk = Chunk::DataEnd { seen_cr: false };
                }
                continue;
            }
            Chunk::Size { value, digits } => {
                let b = buf[i];
                match (b as char).to_digit(16) {
                    Some(d) if *digits < 15 => {
                        *value = *value * 16 + u64::from(d);
                        *digits += 1;
                    }
                    Some(_) => return Err(ParseError::Chunk),
                    None if *digits == 0 => return Err(ParseError::Chunk),
                    None => {
                        let value = *value;
                        *chunk = Chunk::Extension { value };
                        continue;
                    }
                }
            }
            Chunk::Extension { value } => {
                if buf[i] == b'\n' {
                    *chunk = if *value == 0 {
                        Chunk::Trailer { line_len: 0 }
                    } else {
                        Chunk::Data { remaining: *value }
                    };
                }
            }
            Chunk::DataEnd { seen_cr } => match buf[i] {
                b'\r' if !*seen_cr => *seen_cr = true,
                b'\n' => {
                    *chunk = Chunk::Size {
                        value: 0,
                        digits: 0,
                    }
                }
                _ => return Err(ParseError::Chunk),
            },
            Chunk::Trailer { line_len } => match buf[i] {
                b'\n' if *line_len == 0 => return Ok(Some(i + 1)),
                b'\n' => *line_len = 0,
                b'\r' => {}
                _ => *line_len += 1,
            },
        }
        i += 1;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(parts: &[&[u8]]) -> (Option<usize>, ResponseParser) {
        let mut p = ResponseParser::default();
        let mut result = None;
        for part in parts {
            result = p.feed(part).unwrap();
        }
        (result, p)
    }

    #[test]
    fn the_answer_to_a_head_ends_with_its_head_whatever_its_length_says() {
        let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n";
        let mut p = ResponseParser::default();
        p.expect_bodiless(true);
        assert_eq!(p.feed(answer).unwrap(), Some(answer.len()));
        assert_eq!(p.skippable(), 0);
        // Chunked or delimited by the close, it still has no body.
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert_eq!(p.feed(chunked).unwrap(), Some(chunked.len()));
        let until_close = b"HTTP/1.1 200 OK\r\n\r\n";
        assert_eq!(p.feed(until_close).unwrap(), Some(until_close.len()));
        // The same head after a GET announces ten body bytes.
        p.expect_bodiless(false);
        assert_eq!(p.feed(answer).unwrap(), None);
        assert_eq!(p.skippable(), 10);
    }

    #[test]
    fn a_content_length_body_can_be_skipped_unread() {
        let mut p = ResponseParser::default();
        assert_eq!(p.skippable(), 0, "nothing before the head");
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab")
                .unwrap(),
            None
        );
        assert_eq!(p.skippable(), 8);
        assert!(!p.skipped(5));
        assert_eq!(p.skippable(), 3);
        assert!(p.skipped(3), "the last body byte ends the response");
        assert_eq!(p.status(), 200);
        assert_eq!(p.skippable(), 0);
        // The next response parses from its head as usual.
        assert_eq!(
            p.feed(b"HTTP/1.1 404 No\r\nContent-Length: 0\r\n\r\n")
                .unwrap(),
            Some(38)
        );
        assert_eq!(p.status(), 404);
    }

    #[test]
    fn chunk_data_can_be_skipped_and_the_framing_is_still_parsed() {
        let mut p = ResponseParser::default();
        let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab";
        assert_eq!(p.feed(head).unwrap(), None);
        assert_eq!(p.skippable(), 3);
        assert!(!p.skipped(3), "a chunk's end is not the body's end");
        assert_eq!(p.skippable(), 0, "the CRLF and the next size are framing");
        assert_eq!(p.feed(b"\r\n0\r\n\r\n").unwrap(), Some(7));
    }

    #[test]
    fn content_length_in_one_piece() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP";
        let mut p = ResponseParser::default();
        assert_eq!(p.feed(r).unwrap(), Some(r.len() - 4));
        assert_eq!(p.status(), 200);
        assert!(!p.close_after());
    }

    #[test]
    fn a_head_split_over_reads() {
        let (n, p) = parse_all(&[
            b"HTTP/1.1 404 Not",
            b" Found\r\nconnection: close\r\ncontent-length: 3\r",
            b"\n\r",
            b"\nabc",
        ]);
        assert_eq!(n, Some(4));
        assert_eq!(p.status(), 404);
        assert!(p.close_after());
    }

    /// What feeding `response` in two pieces, split at `at`, yields: the
    /// end of the response in the second piece (or the error), the status
    /// and whether the connection closes after it.
    fn split_at(response: &[u8], at: usize) -> (Result<Option<usize>, ParseError>, u16, bool) {
        let mut p = ResponseParser::default();
        let (first, second) = response.split_at(at);
        let result = match p.feed(first) {
            Ok(Some(end)) => Ok(Some(end)),
            Ok(None) => p.feed(second).map(|end| end.map(|end| at + end)),
            Err(e) => Err(e),
        };
        (result, p.status(), p.close_after())
    }

    #[test]
    fn a_head_split_anywhere_parses_as_in_one_piece() {
        let responses: [&[u8]; 5] = [
            b"HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Fri, 27 Nov 2026 13:35:30 GMT\r\n\
              Content-Type: application/octet-stream\r\nContent-Length: 1\r\n\
              Last-Modified: Fri, 27 Nov 2026 13:29:19 GMT\r\nConnection: keep-alive\r\n\
              ETag: \"6b0985af-1\"\r\nAccept-Ranges: bytes\r\n\r\na",
            b"HTTP/1.0 200 OK\r\nconnection: Keep-Alive, Upgrade\r\ncontent-length: 2\r\n\r\nab",
            b"HTTP/1.1 200 OK\r\nConnection: TE, close\r\nContent-Length: 0\r\n\r\n",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\na",
        ];
        for response in responses {
            let whole = split_at(response, response.len());
            for at in 0..response.len() {
                assert_eq!(
                    split_at(response, at),
                    whole,
                    "{} split at {at}",
                    String::from_utf8_lossy(response)
                );
            }
        }
        assert_eq!(
            split_at(responses[0], responses[0].len()),
            (Ok(Some(responses[0].len())), 200, false)
        );
        assert!(!split_at(responses[1], responses[1].len()).2);
        assert!(split_at(responses[2], responses[2].len()).2);
        assert_eq!(
            split_at(responses[3], responses[3].len()),
            (Ok(Some(responses[3].len())), 204, false)
        );
        assert_eq!(
            split_at(responses[4], responses[4].len()).0,
            Err(ParseError::ContentLength)
        );
    }

    #[test]
    fn a_body_split_over_reads() {
        let mut p = ResponseParser::default();
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345")
                .unwrap(),
            None
        );
        assert_eq!(p.feed(b"6789").unwrap(), None);
        assert_eq!(p.feed(b"0").unwrap(), Some(1));
    }

    #[test]
    fn chunked_bodies_end_after_the_last_chunk_and_trailers() {
        let body: &[u8] =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n";
        let mut p = ResponseParser::default();
        assert_eq!(p.feed(body).unwrap(), Some(body.len()));
        // The same, one byte at a time.
        let mut p = ResponseParser::default();
        for (i, b) in body.iter().enumerate() {
            let r = p.feed(std::slice::from_ref(b)).unwrap();
            assert_eq!(r.is_some(), i == body.len() - 1, "byte {i}");
        }
    }

    #[test]
    fn no_length_means_until_close() {
        let mut p = ResponseParser::default();
        assert_eq!(p.feed(b"HTTP/1.0 200 OK\r\n\r\nabc").unwrap(), None);
        assert!(p.close_after());
        assert!(p.finish_on_close());
    }

    #[test]
    fn empty_statuses_have_no_body() {
        let head = b"HTTP/1.1 204 No Content\r\n\r\n";
        let (n, _) = parse_all(&[head]);
        assert_eq!(n, Some(head.len()));
    }

    #[test]
    fn interim_responses_are_skipped_until_the_final_one() {
        let interim =
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n";
        let fin = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        let both = [&interim[..], &fin[..]].concat();
        // In one piece.
        let mut p = ResponseParser::default();
        assert_eq!(p.feed(&both).unwrap(), Some(both.len()));
        assert_eq!(p.status(), 200);
        // Interim responses alone are no response.
        let mut p = ResponseParser::default();
        assert_eq!(p.feed(interim).unwrap(), None);
        assert_eq!(p.feed(interim).unwrap(), None);
        assert!(p.started());
        assert_eq!(p.feed(fin).unwrap(), Some(fin.len()));
        assert_eq!(p.status(), 200);
        // Byte by byte: only the last byte of the final response ends it.
        let mut p = ResponseParser::default();
        for (i, b) in both.iter().enumerate() {
            let r = p.feed(std::slice::from_ref(b)).unwrap();
            assert_eq!(r.is_some(), i == both.len() - 1, "byte {i}");
        }
    }

    #[test]
    fn interim_responses_without_end_are_an_error_after_the_bound() {
        let hint: &[u8] = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n";
        let fin: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        // As many as are allowed, then the final response: one answer.
        let mut p = ResponseParser::default();
        let allowed = hint.repeat(MAX_INTERIM_RESPONSES as usize);
        assert_eq!(p.feed(&allowed).unwrap(), None);
        assert_eq!(p.feed(fin).unwrap(), Some(fin.len()));
        assert_eq!(p.status(), 200);
        // The bound is per final response: the next one may have as many.
        let both = [&allowed[..], fin].concat();
        assert_eq!(p.feed(&both).unwrap(), Some(both.len()));
        // One more than the bound, in one read or one at a time.
        let mut p = ResponseParser::default();
        let too_many = hint.repeat(MAX_INTERIM_RESPONSES as usize + 1);
        assert_eq!(p.feed(&too_many), Err(ParseError::TooManyInterim));
        let mut p = ResponseParser::default();
        for _ in 0..MAX_INTERIM_RESPONSES {
            assert_eq!(p.feed(hint).unwrap(), None);
        }
        assert_eq!(p.feed(hint), Err(ParseError::TooManyInterim));
        // A new request starts the count again.
        p.reset();
        assert_eq!(p.feed(&both).unwrap(), Some(both.len()));
    }

    #[test]
    fn switching_protocols_is_an_error() {
        let mut p = ResponseParser::default();
        assert_eq!(
            p.feed(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"),
            Err(ParseError::SwitchingProtocols)
        );
    }

    #[test]
    fn garbage_is_an_error() {
        let mut p = ResponseParser::default();
        assert_eq!(
            p.feed(b"SSH-2.0-OpenSSH\r\n\r\n"),
            Err(ParseError::StatusLine)
        );
        let mut p = ResponseParser::default();
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"),
            Err(ParseError::ContentLength)
        );
    }
}
