//! Arithmetic on values, exactly: integers of any size JSON carries and
//! decimals without binary rounding (`0.1 + 0.2` is `0.3`), on `bigdecimal`.
//! A quotient that does not end is rounded to 34 significant digits, as
//! IEEE 754's decimal128 does. Operands come from chat users, servers and
//! the store, so each is held to a size before anything is computed with it.

use std::str::FromStr as _;

use bigdecimal::BigDecimal;
use serde_json::Value as Json;

use crate::base::diagnostics::{Code, Diagnostic};
use crate::base::source::Span;
use crate::language::ast::ArithOp;

/// The longest number, in characters, blkc computes with.
pub const MAX_DIGITS: usize = 4096;
/// The largest exponent (`1e1000`) blkc computes with: past it, one
/// addition would write out a million digits.
pub const MAX_EXPONENT: i64 = 1000;
/// Significant digits of a quotient that does not end.
pub const QUOTIENT_DIGITS: u64 = 34;

/// Why a calculation could not be made.
#[derive(Debug, Clone, PartialEq)]
pub enum CalcError {
    /// The operand is not a number: what it is, as shown to the operator.
    NotANumber(String),
    DivisionByZero,
    TooLarge,
}

/// A value as a number: a JSON number, or a string holding one (blanks
/// around it allowed).
pub fn number(value: &Json) -> Result<BigDecimal, CalcError> {
    let text = match value {
        Json::Number(n) => n.as_str().to_string(),
        Json::String(s) => s.trim().to_string(),
        Json::Null => return Err(CalcError::NotANumber("null".into())),
        Json::Bool(b) => return Err(CalcError::NotANumber(b.to_string())),
        Json::Array(_) => return Err(CalcError::NotANumber("an array".into())),
        Json::Object(_) => return Err(CalcError::NotANumber("an object".into())),
    };
    parse(&text)
}

/// Text in JSON's number syntax, within the size limits.
pub fn parse(text: &str) -> Result<BigDecimal, CalcError> {
    if !crate::base::values::is_json_number(text) {
        let shown: String = text.chars().take(40).collect();
        let shown = if shown.len() < text.len() { format!("\"{shown}…\"") } else { format!("\"{shown}\"") };
        return Err(CalcError::NotANumber(if text.is_empty() { "empty".into() } else { shown }));
    }
    if text.len() > MAX_DIGITS {
        return Err(CalcError::TooLarge);
    }
    if let Some(i) = text.find(['e', 'E']) {
        let exponent: i64 = text[i + 1..].trim_start_matches('+').parse().unwrap_or(i64::MAX);
        if exponent.abs() > MAX_EXPONENT {
            return Err(CalcError::TooLarge);
        }
    }
    BigDecimal::from_str(text).map_err(|_| CalcError::NotANumber(format!("\"{text}\"")))
}

/// `left op right`.
pub fn apply(op: ArithOp, left: &BigDecimal, right: &BigDecimal) -> Result<BigDecimal, CalcError> {
    use bigdecimal::Zero as _;
    if matches!(op, ArithOp::Div | ArithOp::Rem) && right.is_zero() {
        return Err(CalcError::DivisionByZero);
    }
    let result = match op {
        ArithOp::Add => left + right,
        ArithOp::Sub => left - right,
        ArithOp::Mul => left * right,
        ArithOp::Div => (left / right).with_prec(QUOTIENT_DIGITS),
        ArithOp::Rem => left % right,
    };
    let result = result.normalized();
    // Results grow (a product has the digits of both): held to the limits too.
    let (digits, scale) = result.as_bigint_and_exponent();
    if digits.bits() > (MAX_DIGITS as u64) * 4 || scale.abs() > MAX_EXPONENT * 2 {
        return Err(CalcError::TooLarge);
    }
    Ok(result)
}

/// A number as JSON: plain digits, no exponent, no trailing zeros.
pub fn to_json(n: &BigDecimal) -> Json {
    let text = plain(n);
    serde_json::from_str(&text).unwrap_or(Json::String(text))
}

fn plain(n: &BigDecimal) -> String {
    let (digits, scale) = n.normalized().as_bigint_and_exponent();
    let negative = digits.sign() == bigdecimal::num_bigint::Sign::Minus;
    let mut body = digits.magnitude().to_string();
    if scale <= 0 {
        if body != "0" {
            body.push_str(&"0".repeat((-scale) as usize));
        }
    } else {
        let scale = scale as usize;
        if body.len() <= scale {
            body = format!("0.{}{body}", "0".repeat(scale - body.len()));
        } else {
            body.insert(body.len() - scale, '.');
        }
    }
    if negative {
        format!("-{body}")
    } else {
        body
    }
}

/// A calculation that cannot be made: `what` is the operand or operator.
impl CalcError {
    /// The run's diagnostic of this failure of `what` (an operand or an
    /// operation), at `span`.
    pub fn diagnostic(&self, what: &str, span: Span) -> Diagnostic {
        match self {
        CalcError::NotANumber(is) => Diagnostic::new(Code::NotANumber, format!("{what} is {is}, not a number"))
            .label(span, "used in a calculation")
            .help("a calculation takes numbers, or strings that hold one; give the variable a number as its default (`var points = 0`), or check the response path"),
        CalcError::TooLarge => Diagnostic::new(Code::NotANumber, format!("{what} is too large to compute with"))
            .label(span, "used in a calculation")
            .help(format!("blkc computes with numbers of up to {} characters and exponents up to {}", MAX_DIGITS, MAX_EXPONENT)),
        CalcError::DivisionByZero => Diagnostic::new(Code::DivisionByZero, format!("`{what}` by zero"))
            .label(span, "the divisor is zero")
            .help("check the divisor first: `if \"{count}\" != 0 { … }`"),
    }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn calc(op: ArithOp, a: &str, b: &str) -> Result<String, CalcError> {
        apply(op, &parse(a)?, &parse(b)?).map(|n| to_json(&n).to_string())
    }

    #[test]
    fn numbers_are_exact_whatever_their_size() {
        assert_eq!(calc(ArithOp::Add, "0.1", "0.2").unwrap(), "0.3");
        assert_eq!(calc(ArithOp::Add, "9007199254740993", "1").unwrap(), "9007199254740994");
        assert_eq!(
            calc(ArithOp::Mul, "123456789012345678901234567890", "10").unwrap(),
            "1234567890123456789012345678900"
        );
        assert_eq!(calc(ArithOp::Sub, "5", "7.50").unwrap(), "-2.5");
        assert_eq!(calc(ArithOp::Div, "10", "4").unwrap(), "2.5");
        assert_eq!(calc(ArithOp::Div, "1", "3").unwrap(), "0.3333333333333333333333333333333333");
        assert_eq!(calc(ArithOp::Rem, "17", "5").unwrap(), "2");
        assert_eq!(calc(ArithOp::Rem, "-7", "2").unwrap(), "-1");
        assert_eq!(calc(ArithOp::Mul, "1e3", "2").unwrap(), "2000");
        assert_eq!(calc(ArithOp::Sub, "3", "3").unwrap(), "0");
        assert_eq!(calc(ArithOp::Div, "1", "0"), Err(CalcError::DivisionByZero));
        assert_eq!(calc(ArithOp::Rem, "1", "0.0"), Err(CalcError::DivisionByZero));
    }

    #[test]
    fn what_is_not_a_number_or_too_large_is_said_so() {
        assert_eq!(number(&json!(" 42 ")).unwrap(), parse("42").unwrap());
        assert_eq!(number(&json!("forty")), Err(CalcError::NotANumber("\"forty\"".into())));
        assert_eq!(number(&json!("")), Err(CalcError::NotANumber("empty".into())));
        assert_eq!(number(&json!(null)), Err(CalcError::NotANumber("null".into())));
        assert_eq!(number(&json!([1])), Err(CalcError::NotANumber("an array".into())));
        assert_eq!(parse("1e999999999"), Err(CalcError::TooLarge));
        assert_eq!(parse(&"9".repeat(MAX_DIGITS + 1)), Err(CalcError::TooLarge));
        let big = parse(&"9".repeat(MAX_DIGITS)).unwrap();
        assert_eq!(apply(ArithOp::Mul, &big, &big), Err(CalcError::TooLarge));
    }
}
