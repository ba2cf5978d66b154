//! A run's notes (`--note`): free text stored with the run, checked
//! before anything runs, and the price a `price=` note gives (which
//! `compare` turns into performance per unit of price).

use serde::Serialize;

use crate::visible;

/// The longest note accepted, in characters.
pub const MAX_NOTE_CHARS: usize = 500;

/// The notes, trimmed, each checked: plain text on one line (no control
/// character or bidi control, the first one found named with its place),
/// at most [`MAX_NOTE_CHARS`] long, and a `price=` note that reads as a
/// price. A refusal says what is wrong with which note.
pub fn check_notes(notes: &[String]) -> Result<Vec<String>, String> {
    notes
        .iter()
        .map(|note| {
            let note = note.trim();
            if note.is_empty() {
                return Err("--note needs some text, for example --note \"rack 3\"".to_string());
            }
            if let Some((at, c)) = note.chars().enumerate().find(|&(_, c)| visible::is_hidden(c)) {
                return Err(format!(
                    "--note \"{}\": character {} is {} ({}); a note is plain text on one line, without control characters (tabs, line breaks, escape sequences) or bidi controls",
                    visible::escape(note),
                    at + 1,
                    hidden_char_name(c),
                    visible::escape(c.encode_utf8(&mut [0; 4]))
                ));
            }
            let length = note.chars().count();
            if length > MAX_NOTE_CHARS {
                return Err(format!(
                    "--note: the note is {length} characters long; a note may have at most {MAX_NOTE_CHARS}"
                ));
            }
            if let Some(price) = price_note(note)
                && parse_price(price).is_none()
            {
                return Err(format!(
                    "--note {note}: a price note needs an amount above 0 and its currency, \
                     for example price=2400EUR or \"price=1999.90 USD\""
                ));
            }
            Ok(note.to_string())
        })
        .collect()
}

/// What a [hidden](visible::is_hidden) character is, in words.
fn hidden_char_name(c: char) -> &'static str {
    match c {
        '\t' => "a tab",
        '\n' => "a line break",
        '\r' => "a carriage return",
        '\x1b' => "an escape (the start of a terminal escape sequence)",
        '\u{2028}' | '\u{2029}' => "a line or paragraph separator",
        c if c.is_control() => "a control character",
        _ => "a bidi control (it reorders the text shown after it)",
    }
}

/// The note key that holds a price.
pub const PRICE_KEY: &str = "price=";

/// An amount of money.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Price {
    /// The amount, above 0.
    pub amount: f64,
    /// The currency as written (`EUR`, `€`, `USD`); empty when none was.
    pub currency: String,
}

impl std::fmt::Display for Price {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.currency.is_empty() {
            write!(f, "{}", self.amount)
        } else {
            write!(f, "{} {}", self.amount, self.currency)
        }
    }
}

/// Parses a price such as `2400EUR`, `2400 EUR`, `€2400`, `USD 1,999.90`
/// or `1999,90 CZK`: an amount with the currency before or after it. A
/// comma is a decimal comma when it is the only separator and one or two
/// digits follow it, else a thousands separator.
pub fn parse_price(text: &str) -> Option<Price> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let is_numeric = |c: char| c.is_ascii_digit() || c == '.' || c == ',';
    let start = compact.find(|c: char| c.is_ascii_digit())?;
    let end = compact[start..]
        .find(|c: char| !is_numeric(c))
        .map_or(compact.len(), |i| start + i);
    let (prefix, number, suffix) = (&compact[..start], &compact[start..end], &compact[end..]);
    let currency = match (prefix.is_empty(), suffix.is_empty()) {
        (_, true) => prefix,
        (true, false) => suffix,
        (false, false) => return None,
    };
    if currency
        .chars()
        .any(|c| c.is_ascii_digit() || c == '=' || c.is_control())
    {
        return None;
    }
    let decimal_comma = !number.contains('.')
        && number.matches(',').count() == 1
        && number
            .rsplit(',')
            .next()
            .is_some_and(|d| (1..=2).contains(&d.len()));
    let normalized = if decimal_comma {
        number.replace(',', ".")
    } else {
        number.replace(',', "")
    };
    let amount: f64 = normalized.parse().ok()?;
    (amount.is_finite() && amount > 0.0).then(|| Price {
        amount,
        currency: currency.to_string(),
    })
}

/// The value of a `price=` note, if `note` is one (the key in any case).
pub fn price_note(note: &str) -> Option<&str> {
    let key = note.get(..PRICE_KEY.len())?;
    key.eq_ignore_ascii_case(PRICE_KEY)
        .then(|| note[PRICE_KEY.len()..].trim())
}
