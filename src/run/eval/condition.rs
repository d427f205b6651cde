//! Conditions of `if`: what is true, and how two values compare. Pure.
//!
//! Numbers compare exactly, as decimals, never through `f64`: chat IDs of
//! 18 and 19 digits differ in their last digit. A value that is missing (a
//! path that does not resolve, a variable without a value) is false, equal
//! to nothing, and makes every ordering comparison false (docs/run.md).

use std::cmp::Ordering;

use serde_json::Value as Json;

use crate::base::values::{as_text, order, same, Decimal};
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
    match op {
        Op::StartsWith => return as_text(left).starts_with(&*as_text(right)),
        Op::EndsWith => return as_text(left).ends_with(&*as_text(right)),
        _ => {}
    }
    let order = order(left, right);
    match op {
        Op::Eq => order == Ordering::Equal,
        Op::Ne => order != Ordering::Equal,
        Op::Lt => order == Ordering::Less,
        Op::Le => order != Ordering::Greater,
        Op::Gt => order == Ordering::Greater,
        Op::Ge => order != Ordering::Less,
        Op::Contains | Op::StartsWith | Op::EndsWith => false,
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
