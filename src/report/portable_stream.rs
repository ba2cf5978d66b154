//! Reading an export document as a stream: the text goes through the JSON
//! parser once, from a buffered reader, and each case becomes a record as
//! soon as it is read, so that memory holds the records (what the store
//! will get) and one case's JSON at a time, never the whole text or a
//! whole JSON tree of it. There is no size limit: a document as large as
//! any store can export reads in memory proportional to its runs.
//!
//! The document's head (`kind`, `format_version`) is checked as soon as it
//! is read; sledge writes it before the runs. Whatever is wrong is found
//! where it is, recorded as a [`Problem`] with its place in the document
//! (`runs[0].cases[2] (cpu.primes)`), and ends the parse; the parser's own
//! errors are syntax errors, a text that ends early, or a read error.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::io::{BufReader, Read};
use std::rc::Rc;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess};
use serde_json::{Map, Value};

use super::portable_records::{self, DOCUMENT_KIND, FORMAT_VERSION, ImportError};
use crate::results::{CaseRecord, RunRecord};

/// How much of the file is read at once.
const BUFFER_BYTES: usize = 1 << 20;

/// Reads and checks a whole document from `reader`; `file` names it in
/// errors.
pub fn read(reader: impl Read, file: &str) -> Result<Vec<RunRecord>, ImportError> {
    let found = RefCell::new(None);
    let content = Rc::new(Cell::new(false));
    // The parser reads byte by byte: straight from a `BufReader` it takes
    // the standard library's fast path for that.
    let text = BufReader::with_capacity(
        BUFFER_BYTES,
        Watched {
            inner: reader,
            content: Rc::clone(&content),
        },
    );
    let mut parser = serde_json::Deserializer::from_reader(text);
    let result = Typed(DocumentShape { found: &found })
        .deserialize(&mut parser)
        .and_then(|runs| parser.end().map(|()| runs));
    let file = file.to_string();
    let error = match result {
        Ok(runs) => return Ok(runs),
        Err(error) => error,
    };
    Err(match found.into_inner() {
        Some(problem) => problem.into_error(file),
        None if error.is_io() => ImportError::Read {
            file,
            reason: error.into(),
        },
        None if error.is_eof() && !content.get() => ImportError::Empty { file },
        None if error.is_eof() => ImportError::Truncated {
            file,
            line: error.line(),
            column: error.column(),
        },
        None => ImportError::NotJson {
            file,
            reason: error.to_string(),
        },
    })
}

/// What is wrong with a document, found while reading it.
#[derive(Debug)]
pub enum Problem {
    /// JSON, but not an export document.
    WrongKind(String),
    /// A newer format version.
    TooNew(u64),
    /// A run or case that is not what sledge stores: where, and why.
    Invalid {
        /// Where in the document.
        at: String,
        /// What is wrong.
        reason: String,
    },
}

impl Problem {
    fn into_error(self, file: String) -> ImportError {
        match self {
            Problem::WrongKind(reason) => ImportError::WrongKind { file, reason },
            Problem::TooNew(found) => ImportError::TooNew {
                file,
                found,
                supported: FORMAT_VERSION,
            },
            Problem::Invalid { at, reason } => ImportError::Invalid { file, at, reason },
        }
    }
}

/// Where a problem is recorded: the parser's error type carries only text,
/// so the problem itself waits here and the parser is stopped with a
/// placeholder.
type Found = RefCell<Option<Problem>>;

/// Records `problem` and returns the error that stops the parser.
fn stop<E: de::Error>(found: &Found, problem: Problem) -> E {
    found.borrow_mut().get_or_insert(problem);
    E::custom("the document is not a sledge export (see the recorded problem)")
}

/// The reader under the parser's buffer, noting whether anything but
/// whitespace came by (an empty file and a truncated one both end early).
struct Watched<R> {
    inner: R,
    content: Rc<Cell<bool>>,
}

impl<R: Read> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if !self.content.get() && buf[..n].iter().any(|b| !b.is_ascii_whitespace()) {
            self.content.set(true);
        }
        Ok(n)
    }
}

/// A value that should be an object or an array, read by [`Typed`]: any
/// other JSON type is the problem [`Shape::wrong`] names.
trait Shape<'de>: Sized {
    type Value;

    /// Where problems are recorded.
    fn found(&self) -> &Found;

    /// The problem when the value is `what` (`a string`) instead.
    fn wrong(&self, what: &str) -> Problem;

    /// The value is an object.
    fn object<A: MapAccess<'de>>(self, _map: A) -> Result<Self::Value, A::Error> {
        Err(stop(self.found(), self.wrong("an object")))
    }

    /// The value is an array.
    fn array<A: SeqAccess<'de>>(self, _seq: A) -> Result<Self::Value, A::Error> {
        Err(stop(self.found(), self.wrong("an array")))
    }
}

/// Reads a [`Shape`], whatever JSON type comes.
struct Typed<S>(S);

impl<'de, S: Shape<'de>> Typed<S> {
    fn other<E: de::Error>(self, what: &str) -> Result<S::Value, E> {
        Err(stop(self.0.found(), self.0.wrong(what)))
    }
}

impl<'de, S: Shape<'de>> DeserializeSeed<'de> for Typed<S> {
    type Value = S::Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, S: Shape<'de>> de::Visitor<'de> for Typed<S> {
    type Value = S::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a part of a sledge export document")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<S::Value, E> {
        self.other("a boolean")
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<S::Value, E> {
        self.other("a number")
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<S::Value, E> {
        self.other("a number")
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<S::Value, E> {
        self.other("a number")
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<S::Value, E> {
        self.other("a string")
    }

    fn visit_unit<E: de::Error>(self) -> Result<S::Value, E> {
        self.other("null")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<S::Value, A::Error> {
        self.0.object(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<S::Value, A::Error> {
        self.0.array(seq)
    }
}

/// The whole document: its head, checked as it comes, and its runs.
struct DocumentShape<'a> {
    found: &'a Found,
}

impl<'de> Shape<'de> for DocumentShape<'_> {
    type Value = Vec<RunRecord>;

    fn found(&self) -> &Found {
        self.found
    }

    fn wrong(&self, what: &str) -> Problem {
        Problem::WrongKind(format!(
            "it holds {what}, not an object with `kind: \"{DOCUMENT_KIND}\"`"
        ))
    }

    fn object<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<RunRecord>, A::Error> {
        let found = self.found;
        let (mut kind, mut version, mut runs) = (false, false, None);
        // Members of a run, which tell a `sledge show --json` document.
        let (mut has_cases, mut has_started) = (false, false);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "kind" => {
                    check_kind(&map.next_value::<Value>()?).map_err(|p| stop(found, p))?;
                    kind = true;
                }
                "format_version" => {
                    check_version(Some(&map.next_value::<Value>()?)).map_err(|p| stop(found, p))?;
                    version = true;
                }
                "runs" => runs = Some(map.next_value_seed(Typed(RunsShape { found }))?),
                other => {
                    has_cases |= other == "cases";
                    has_started |= other == "started";
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !kind {
            return Err(stop(
                found,
                Problem::WrongKind(if has_cases && has_started {
                    "it is one run as `sledge show --json` prints it; export runs with `sledge export RUN -o FILE`"
                        .to_string()
                } else {
                    format!("it has no `kind` member (expected \"{DOCUMENT_KIND}\")")
                }),
            ));
        }
        if !version {
            check_version(None).map_err(|p| stop(found, p))?;
        }
        runs.ok_or_else(|| {
            stop(
                found,
                Problem::Invalid {
                    at: "runs".into(),
                    reason: "missing".into(),
                },
            )
        })
    }
}

/// The document's `kind`.
fn check_kind(kind: &Value) -> Result<(), Problem> {
    match kind {
        Value::String(kind) if kind == DOCUMENT_KIND => Ok(()),
        other => Err(Problem::WrongKind(format!(
            "its kind is {other}, expected \"{DOCUMENT_KIND}\""
        ))),
    }
}

/// The document's `format_version` (`None`: missing).
fn check_version(version: Option<&Value>) -> Result<(), Problem> {
    let number = match version {
        Some(Value::Number(n)) => n.as_u64().filter(|&v| v >= 1),
        _ => None,
    };
    match number {
        Some(v) if v > FORMAT_VERSION => Err(Problem::TooNew(v)),
        Some(_) => Ok(()),
        None => Err(Problem::WrongKind(format!(
            "its format_version is {}, expected a whole number from 1",
            version.map_or("missing".to_string(), Value::to_string)
        ))),
    }
}

/// The `runs` array.
struct RunsShape<'a> {
    found: &'a Found,
}

impl<'de> Shape<'de> for RunsShape<'_> {
    type Value = Vec<RunRecord>;

    fn found(&self) -> &Found {
        self.found
    }

    fn wrong(&self, what: &str) -> Problem {
        Problem::Invalid {
            at: "runs".into(),
            reason: format!("is {what}, expected an array of runs"),
        }
    }

    fn array<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<RunRecord>, A::Error> {
        let mut runs = Vec::new();
        while let Some(run) = seq.next_element_seed(Typed(RunShape {
            found: self.found,
            at: format!("runs[{}]", runs.len()),
        }))? {
            runs.push(run);
        }
        Ok(runs)
    }
}

/// One run: its cases read one by one, its other members kept as JSON
/// until the end of the run.
struct RunShape<'a> {
    found: &'a Found,
    at: String,
}

impl<'de> Shape<'de> for RunShape<'_> {
    type Value = RunRecord;

    fn found(&self) -> &Found {
        self.found
    }

    fn wrong(&self, what: &str) -> Problem {
        Problem::Invalid {
            at: self.at.clone(),
            reason: format!("is {what}, expected a run"),
        }
    }

    fn object<A: MapAccess<'de>>(self, mut map: A) -> Result<RunRecord, A::Error> {
        let mut fields = Map::new();
        let mut cases = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "cases" {
                cases = Some(map.next_value_seed(Typed(CasesShape {
                    found: self.found,
                    at: &self.at,
                }))?);
            } else {
                fields.insert(key, map.next_value()?);
            }
        }
        let Some(cases) = cases else {
            return Err(stop(
                self.found,
                Problem::Invalid {
                    at: self.at,
                    reason: "missing field `cases`".into(),
                },
            ));
        };
        portable_records::parse_run(fields, cases, &self.at)
            .map_err(|(at, reason)| stop(self.found, Problem::Invalid { at, reason }))
    }
}

/// A run's `cases` array: each case parsed and checked as it comes.
struct CasesShape<'a> {
    found: &'a Found,
    at: &'a str,
}

impl<'de> Shape<'de> for CasesShape<'_> {
    type Value = Vec<CaseRecord>;

    fn found(&self) -> &Found {
        self.found
    }

    fn wrong(&self, what: &str) -> Problem {
        Problem::Invalid {
            at: self.at.to_string(),
            reason: format!("cases is {what}, expected an array"),
        }
    }

    fn array<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<CaseRecord>, A::Error> {
        let mut cases = Vec::new();
        while let Some(case) = seq.next_element::<Value>()? {
            let at = format!("{}.cases[{}]", self.at, cases.len());
            let case = portable_records::parse_case(case, &at)
                .map_err(|(at, reason)| stop(self.found, Problem::Invalid { at, reason }))?;
            cases.push(case);
        }
        Ok(cases)
    }
}
