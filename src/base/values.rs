//! What values mean, wherever they are read: how two order and when they
//! are the same, a value as text, JSON's number syntax, and numbers as
//! exact decimals (never through `f64`: chat IDs of 18 and 19 digits
//! differ in their last digit).

use std::cmp::Ordering;
use std::fmt::Write as _;

use serde_json::Value as Json;

/// JSON's number syntax, exactly.
pub fn is_json_number(value: &str) -> bool {
    let b = value.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(c) if c.is_ascii_digit() => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// A value as text: text as it is, numbers as written, JSON otherwise.
pub fn push_value(out: &mut String, v: &Json) {
    match v {
        Json::String(s) => out.push_str(s),
        Json::Number(n) => out.push_str(n.as_str()),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Null => out.push_str("null"),
        Json::Array(_) | Json::Object(_) => {
            // Serializing into a String cannot fail.
            let _ = write!(out, "{v}");
        }
    }
}

/// How two values order: exactly as numbers when both are numbers (or
/// numeric text), otherwise as text (by comparisons and a loop's `by`).
pub fn order(left: &Json, right: &Json) -> Ordering {
    match (as_number(left), as_number(right)) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => as_text(left).cmp(&as_text(right)),
    }
}

/// Whether a list's element is the value looked for (by `contains` and by
/// a list's `remove`): equal as JSON, or written the same as text, so the
/// text `"42"` finds the number `42`.
pub fn same(element: &Json, value: &Json) -> bool {
    element == value || as_text(element) == as_text(value)
}

fn as_number(v: &Json) -> Option<Decimal> {
    match v {
        Json::Number(n) => Decimal::parse(n.as_str()),
        Json::String(s) => Decimal::parse(s.trim()),
        _ => None,
    }
}

/// The place at `path` in `value` (`save settings[mode] = …`), made where
/// a field is missing: `null` becomes an object, an object gets the key.
/// An element must exist (`-1` is the last); a field of text, a number or
/// a list (by a key that is no index) cannot be made: why not, in words.
pub fn field_mut<'v>(value: &'v mut Json, path: &[String]) -> Result<&'v mut Json, String> {
    let mut here = value;
    for (at, seg) in path.iter().enumerate() {
        if here.is_null() {
            *here = Json::Object(serde_json::Map::new());
        }
        let shown = || if at == 0 { "the value".to_string() } else { format!("`{}`", path[..at].join(".")) };
        here = match here {
            Json::Object(map) => map.entry(seg.clone()).or_insert(Json::Null),
            Json::Array(items) => {
                let len = items.len();
                let index = match seg.strip_prefix('-') {
                    Some(back) => back.parse::<usize>().ok().filter(|b| *b > 0).and_then(|b| len.checked_sub(b)),
                    None => seg.parse::<usize>().ok(),
                };
                match index.filter(|i| *i < len) {
                    Some(i) => &mut items[i],
                    None => return Err(format!("{} is a list of {len} without an element `{seg}`", shown())),
                }
            }
            other => return Err(format!("{} holds {}, which has no field `{seg}`", shown(), kind_words(other))),
        };
    }
    Ok(here)
}

fn kind_words(v: &Json) -> &'static str {
    match v {
        Json::String(_) => "text",
        Json::Number(_) => "a number",
        Json::Bool(_) => "true or false",
        _ => "a value",
    }
}

pub fn as_text(v: &Json) -> String {
    let mut s = String::new();
    push_value(&mut s, v);
    s
}

/// A decimal number, exactly: `0.digits × 10^exponent`, with the digits
/// stripped of leading and trailing zeros (none at all for zero).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

impl Decimal {
    /// JSON's number syntax (a leading `+` allowed): `-12.50e3`.
    pub fn parse(text: &str) -> Option<Decimal> {
        let (negative, rest) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() || !all_digits(int) || !all_digits(frac) || (mantissa.contains('.') && frac.is_empty()) {
            return None;
        }
        let exp: i64 = match exp {
            None => 0,
            Some(e) => {
                let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
                if digits.is_empty() || !all_digits(digits) {
                    return None;
                }
                // Saturate: beyond this, every number compares the same way.
                let magnitude = digits.trim_start_matches('0');
                let value = if magnitude.len() > 15 { 1_000_000_000_000_000 } else { magnitude.parse().unwrap_or(0) };
                if e.starts_with('-') {
                    -value
                } else {
                    value
                }
            }
        };
        let all: Vec<u8> = int.bytes().chain(frac.bytes()).map(|b| b - b'0').collect();
        let leading = all.iter().take_while(|d| **d == 0).count();
        let mut digits = all[leading..].to_vec();
        while digits.last() == Some(&0) {
            digits.pop();
        }
        let exponent = int.len() as i64 - leading as i64 + exp;
        Some(Decimal { negative: negative && !digits.is_empty(), digits, exponent })
    }

    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    fn cmp_magnitude(&self, other: &Decimal) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => self.exponent.cmp(&other.exponent).then_with(|| self.digits.cmp(&other.digits)),
        }
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
