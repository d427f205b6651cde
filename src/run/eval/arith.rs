//! Arithmetic on values, exactly (the numbers themselves, their limits and
//! how they are written: [`crate::base::numbers`]).

use bigdecimal::BigDecimal;

use crate::language::ast::ArithOp;

pub use crate::base::numbers::*;

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
    crate::base::numbers::bounded(result.normalized())
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
