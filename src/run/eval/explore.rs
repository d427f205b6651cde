//! What a test request shows: every addressable variable form of a response
//! with its value, and how a new response's shape differs from the sample.

use serde::Serialize;
use serde_json::Value as Json;

use crate::base::data::Data;
use crate::base::path;

/// How many elements of an array are listed before the rest is summed up.
pub const ARRAY_ELEMENTS_SHOWN: usize = 3;
/// The most rows a listing has.
pub const MAX_ROWS: usize = 2000;
/// Longest value shown in a row before it is cut.
const MAX_VALUE_WIDTH: usize = 72;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The variable as written in a template: `{api_b[response.a.0]}`.
    pub variable: String,
    /// The value as it renders in text (cut when long).
    pub shown: String,
    /// The JSON value itself, for `--format json` (absent on summary rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Json>,
    /// A remark: elements left out, a key that cannot be addressed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The largest object or array a row carries as its value (in memory).
const MAX_VALUE_BYTES: u64 = 64 * 1024;

fn shown(v: &Data) -> String {
    let mut s = String::new();
    super::render::push_json(&mut s, v);
    let s = one_line(&s);
    if s.chars().count() > MAX_VALUE_WIDTH {
        let cut: String = s.chars().take(MAX_VALUE_WIDTH - 1).collect();
        return format!("{cut}…");
    }
    s
}

/// A value as one line of a table cell (see [`crate::base::display::one_line`]).
pub fn one_line(s: &str) -> String {
    crate::base::display::one_line(s)
}

/// Every addressable path of `body` for block `block`, in document order.
pub fn paths(block: &str, status: u16, body: &Data) -> (Vec<Row>, bool) {
    let mut rows = vec![Row {
        variable: format!("{{api_{block}[status]}}"),
        shown: status.to_string(),
        value: Some(Json::from(status)),
        note: None,
    }];
    let mut truncated = false;
    walk(block, "response", body, &mut rows, &mut truncated);
    (rows, truncated)
}

fn walk(block: &str, at: &str, v: &Data, rows: &mut Vec<Row>, truncated: &mut bool) {
    if rows.len() >= MAX_ROWS {
        *truncated = true;
        return;
    }
    // An object or array's value is given whole only while it is small: a
    // row per level of a large response would copy it once per level.
    let value = (!v.is_structured() || v.footprint() <= MAX_VALUE_BYTES).then(|| v.to_json());
    rows.push(Row { variable: path::variable(block, at), shown: shown(v), value, note: None });
    match v {
        Data::Object(map) => {
            for (k, child) in map.iter() {
                match path::why_not_addressable(k) {
                    // Not a variable: a place a path cannot reach, named as
                    // the parent's key in JSON, so the row can't be pasted.
                    Some(why) => rows.push(Row {
                        variable: format!("{at} → {}", Json::String(k.to_string())),
                        shown: shown(child),
                        value: None,
                        note: Some(why),
                    }),
                    None => walk(block, &format!("{at}.{k}"), child, rows, truncated),
                }
            }
        }
        Data::Array(items) => {
            for (i, child) in items.iter().enumerate().take(ARRAY_ELEMENTS_SHOWN) {
                walk(block, &format!("{at}.{i}"), child, rows, truncated);
            }
            if items.len() > ARRAY_ELEMENTS_SHOWN {
                rows.push(Row {
                    variable: format!(
                        "{} … {}",
                        path::variable(block, &format!("{at}.{ARRAY_ELEMENTS_SHOWN}")),
                        path::variable(block, &format!("{at}.{}", items.len() - 1))
                    ),
                    shown: format!("… {} more elements", items.len() - ARRAY_ELEMENTS_SHOWN),
                    value: None,
                    note: Some(format!(
                        "shortened: the array has {} elements; the first {ARRAY_ELEMENTS_SHOWN} are listed",
                        items.len()
                    )),
                });
            }
        }
        _ => {}
    }
}

/// One way the new response's shape differs from the sample's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Keys from the response down, indexes as `0`.
    pub path: Vec<String>,
    pub kind: ChangeKind,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum ChangeKind {
    KeyGone,
    KeyAdded,
    TypeChanged { was: &'static str, now: &'static str },
    ArrayNowEmpty,
}

impl Change {
    pub fn path_text(&self) -> String {
        path::display(self.path.iter().map(String::as_str))
    }

    pub fn describe(&self) -> String {
        let at = self.path_text();
        match &self.kind {
            ChangeKind::KeyGone => format!("`{at}` is gone"),
            ChangeKind::KeyAdded => format!("`{at}` is new"),
            ChangeKind::TypeChanged { was, now } => format!("`{at}` was {was} and is now {now}"),
            ChangeKind::ArrayNowEmpty => format!("`{at}` is now an empty array"),
        }
    }

    /// Whether a reference with these path segments reads through or at the
    /// changed place (any index matches any index).
    pub fn affects(&self, segments: &[&str]) -> bool {
        if matches!(self.kind, ChangeKind::KeyAdded) || segments.len() < self.path.len() {
            return false;
        }
        self.path.iter().zip(segments).all(|(a, b)| a == b || (path::index(a).is_some() && path::index(b).is_some()))
    }
}

/// How `new` differs in shape from `old`. Arrays are compared through their
/// first elements; values are not compared, only types and keys.
pub fn shape_changes(old: &Data, new: &Data) -> Vec<Change> {
    let mut out = Vec::new();
    diff(old, new, &mut Vec::new(), &mut out);
    out
}

fn diff(old: &Data, new: &Data, path: &mut Vec<String>, out: &mut Vec<Change>) {
    use crate::base::path::Document as _;
    match (old, new) {
        (Data::Object(a), Data::Object(_)) => {
            for (k, va) in a.iter() {
                path.push(k.to_string());
                match new.get(k) {
                    Some(vb) => diff(va, vb, path, out),
                    None => out.push(Change { path: path.clone(), kind: ChangeKind::KeyGone }),
                }
                path.pop();
            }
            for k in new.keys().into_iter().filter(|k| old.get(k).is_none()) {
                path.push(k.to_string());
                out.push(Change { path: path.clone(), kind: ChangeKind::KeyAdded });
                path.pop();
            }
        }
        (Data::Array(a), Data::Array(b)) => match (a.first(), b.first()) {
            (Some(_), None) => out.push(Change { path: path.clone(), kind: ChangeKind::ArrayNowEmpty }),
            (Some(x), Some(y)) => {
                path.push("0".into());
                diff(x, y, path, out);
                path.pop();
            }
            _ => {}
        },
        // null is how many APIs write "no value yet": a scalar that becomes
        // null, or null that gets a value, is not a change of shape; an object
        // or array that becomes null is (paths through it stop resolving).
        (Data::Null, _) => {}
        (a, Data::Null) if !a.is_structured() => {}
        (a, b) if a.kind() != b.kind() => out.push(Change {
            path: path.clone(),
            kind: ChangeKind::TypeChanged { was: a.kind().words(), now: b.kind().words() },
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_one_line() {
        let v = Data::String("line one\nline two".into());
        assert_eq!(shown(&v), "line one\\nline two");
    }
}
