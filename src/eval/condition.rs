//! Conditions of `if`: what is true, and how two values compare. Pure.

use std::cmp::Ordering;

use serde_json::Value as Json;

use super::render;
use crate::plan::Op;

/// Not `""`, `false`, `null`, `0`, or an empty array or object.
pub fn truthy(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Json::String(s) => !s.is_empty() && s != "false" && s != "null" && s != "0",
        Json::Array(a) => !a.is_empty(),
        Json::Object(o) => !o.is_empty(),
    }
}

fn as_number(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn as_text(v: &Json) -> String {
    let mut s = String::new();
    render::push_json(&mut s, v);
    s
}

/// Compares numerically when both sides are numbers (or numeric text),
/// otherwise as text; `contains` looks into text or arrays.
pub fn compare(left: &Json, op: Op, right: &Json) -> bool {
    if op == Op::Contains {
        return match left {
            Json::Array(items) => items.iter().any(|i| i == right || as_text(i) == as_text(right)),
            _ => as_text(left).contains(&as_text(right)),
        };
    }
    let order = match (as_number(left), as_number(right)) {
        (Some(a), Some(b)) => a.partial_cmp(&b),
        _ => Some(as_text(left).cmp(&as_text(right))),
    };
    match op {
        Op::Eq => order == Some(Ordering::Equal),
        Op::Ne => order != Some(Ordering::Equal),
        Op::Lt => order == Some(Ordering::Less),
        Op::Le => matches!(order, Some(Ordering::Less | Ordering::Equal)),
        Op::Gt => order == Some(Ordering::Greater),
        Op::Ge => matches!(order, Some(Ordering::Greater | Ordering::Equal)),
        Op::Contains => false,
    }
}
