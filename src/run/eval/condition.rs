//! Conditions of `if`: what is true, and how two values compare. Pure.
//!
//! Numbers compare exactly, as decimals, never through `f64`: chat IDs of
//! 18 and 19 digits differ in their last digit. A value that is missing (a
//! path that does not resolve, a variable without a value) is false, equal
//! to nothing, and makes every ordering comparison false (docs/run.md).

use std::cmp::Ordering;

use serde_json::Value as Json;

use super::render;
use crate::language::plan::Op;

/// One side of a condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// It had no value in this run (warned about as B307 or B313).
    Missing,
    Value(Json),
}

/// Not missing, `""`, `false`, `null`, zero, or an empty array or object.
pub fn truthy(v: &Operand) -> bool {
    let Operand::Value(v) = v else { return false };
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => Decimal::parse(n.as_str()).is_some_and(|d| !d.is_zero()),
        Json::String(s) => {
            !s.is_empty() && s != "false" && s != "null" && !Decimal::parse(s).is_some_and(|d| d.is_zero())
        }
        Json::Array(a) => !a.is_empty(),
        Json::Object(o) => !o.is_empty(),
    }
}

/// Compares exactly as numbers when both sides are numbers (or numeric
/// text), otherwise as text; `contains` looks into text or arrays. A missing
/// side makes `!=` true and everything else false.
pub fn compare(left: &Operand, op: Op, right: &Operand) -> bool {
    let (Operand::Value(left), Operand::Value(right)) = (left, right) else {
        return op == Op::Ne;
    };
    if op == Op::Contains {
        return match left {
            Json::Array(items) => items.iter().any(|i| same(i, right)),
            _ => as_text(left).contains(&as_text(right)),
        };
    }
    let order = order(left, right);
    match op {
        Op::Eq => order == Ordering::Equal,
        Op::Ne => order != Ordering::Equal,
        Op::Lt => order == Ordering::Less,
        Op::Le => order != Ordering::Greater,
        Op::Gt => order == Ordering::Greater,
        Op::Ge => order != Ordering::Less,
        Op::Contains => false,
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

fn as_text(v: &Json) -> String {
    let mut s = String::new();
    render::push_value(&mut s, v);
    s
}

/// A decimal number, exactly: `0.digits × 10^exponent`, with the digits
/// stripped of leading and trailing zeros (none at all for zero).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

impl Decimal {
    /// JSON's number syntax (a leading `+` allowed): `-12.50e3`.
    fn parse(text: &str) -> Option<Decimal> {
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

    fn is_zero(&self) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn v(j: Json) -> Operand {
        Operand::Value(j)
    }

    fn text(s: &str) -> Operand {
        Operand::Value(Json::String(s.into()))
    }

    #[test]
    fn long_ids_compare_exactly() {
        let id = text("123456789012345678");
        assert!(!compare(&id, Op::Eq, &text("123456789012345679")));
        assert!(compare(&id, Op::Lt, &text("123456789012345679")));
        let number: Json = serde_json::from_str("1215489532217262122").unwrap();
        assert!(compare(&v(number.clone()), Op::Eq, &text("1215489532217262122")));
        assert!(!compare(&v(number), Op::Eq, &text("1215489532217262123")));
    }

    #[test]
    fn decimals_compare_by_value_whatever_their_spelling() {
        for (a, op, b) in [
            ("1.0", Op::Eq, "1"),
            ("2.50", Op::Eq, "2.5"),
            ("1e3", Op::Eq, "1000"),
            ("-0", Op::Eq, "0"),
            ("0.1", Op::Lt, "0.10000000000000000001"),
            ("-2", Op::Lt, "-1"),
            ("-1", Op::Lt, "0.5"),
            ("10", Op::Gt, "9"),
            ("1e-400", Op::Gt, "0"),
            ("1e999999999999999999", Op::Gt, "1e400"),
        ] {
            assert!(compare(&text(a), op, &text(b)), "{a} {op:?} {b}");
        }
        // Not numbers: compared as text.
        assert!(compare(&text("10"), Op::Lt, &text("9a")));
        assert!(compare(&text("abc"), Op::Lt, &text("abd")));
    }

    #[test]
    fn a_missing_value_is_false_and_equal_to_nothing() {
        let missing = Operand::Missing;
        for op in [Op::Eq, Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Contains] {
            assert!(!compare(&missing, op, &text("1000")), "{op:?}");
            assert!(!compare(&text("1000"), op, &missing), "{op:?}");
            assert!(!compare(&missing, op, &v(json!(null))), "{op:?}");
        }
        assert!(compare(&missing, Op::Ne, &text("null")));
        assert!(!truthy(&missing));
        assert!(!truthy(&v(json!(0.0))) && !truthy(&text("0.00")) && truthy(&text("0.01")));
    }
}
