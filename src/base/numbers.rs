//! Numbers, exactly: integers of any size JSON carries and
//! decimals without binary rounding (`0.1 + 0.2` is `0.3`), on `bigdecimal`.
//! A quotient that does not end is rounded to 34 significant digits, as
//! IEEE 754's decimal128 does. Operands come from chat users, servers and
//! the store, so each is held to a size before anything is computed with it.

use std::str::FromStr as _;

use bigdecimal::BigDecimal;
use serde_json::Value as Json;

use crate::base::diagnostics::{Code, Diagnostic};
use crate::base::source::Span;

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

/// `left + right`, held to the limits as every result is.
pub fn add(left: &BigDecimal, right: &BigDecimal) -> Result<BigDecimal, CalcError> {
    bounded((left + right).normalized())
}

/// A result within the limits: results grow (a product has the digits of
/// both).
pub fn bounded(result: BigDecimal) -> Result<BigDecimal, CalcError> {
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
