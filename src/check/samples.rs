//! Response paths checked against recorded samples, before anything is sent.
//!
//! A block's `sample` is a JSON file holding a response it got (recorded by
//! `blkc test --save`, or written by hand). Every reference to the block is
//! walked through the sample: a key that is not there, a key on an array, an
//! index on an object, a path past a scalar, an index past the end.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use crate::ast::{ApiBlock, Reference, Text};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};

/// Where samples are read from, each file read and parsed once.
#[derive(Debug, Default)]
pub struct Samples {
    /// The folder sample paths are relative to (the `.blk` file's); `None`
    /// reads no sample at all.
    base: Option<PathBuf>,
    cache: RefCell<FxHashMap<String, Rc<Result<Shape, String>>>>,
}

/// The shape of a JSON document: its keys, types and array elements, without
/// the values (which the checker never needs). Far smaller and quicker to
/// build than a `serde_json::Value` of the same sample.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Null,
    Bool,
    Number,
    String,
    Array(Vec<Shape>),
    Object(Vec<(Box<str>, Shape)>),
}

impl Shape {
    fn get(&self, key: &str) -> Option<&Shape> {
        match self {
            Shape::Object(entries) => entries.iter().find(|(k, _)| &**k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl<'de> serde::Deserialize<'de> for Shape {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Shape, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Shape;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<Shape, E> {
                Ok(Shape::Null)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
                Ok(Shape::Bool)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
                Ok(Shape::Number)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
                Ok(Shape::Number)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
                Ok(Shape::Number)
            }
            fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
                Ok(Shape::String)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Shape::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
                // serde_json hands numbers over as a one-entry map when
                // numbers are kept exactly (arbitrary_precision).
                let mut entries: Vec<(Box<str>, Shape)> = Vec::new();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "$serde_json::private::Number" {
                        let _: serde::de::IgnoredAny = map.next_value()?;
                        return Ok(Shape::Number);
                    }
                    let value = map.next_value()?;
                    entries.push((key.into(), value));
                }
                Ok(Shape::Object(entries))
            }
        }
        d.deserialize_any(V)
    }
}

impl Samples {
    pub fn in_folder(base: PathBuf) -> Samples {
        Samples { base: Some(base), cache: RefCell::default() }
    }

    pub fn none() -> Samples {
        Samples::default()
    }

    pub fn enabled(&self) -> bool {
        self.base.is_some()
    }

    /// The parsed sample at `path`, or why it cannot be had.
    pub fn load(&self, path: &str) -> Option<Rc<Result<Shape, String>>> {
        let base = self.base.as_ref()?;
        if let Some(hit) = self.cache.borrow().get(path) {
            return Some(hit.clone());
        }
        let full = base.join(path);
        let loaded = match std::fs::read(&full) {
            Err(e) => Err(format!("cannot be read: {e}")),
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| format!("is not valid JSON: {e}")),
        };
        let loaded = Rc::new(loaded);
        self.cache.borrow_mut().insert(path.to_string(), loaded.clone());
        Some(loaded)
    }
}

/// The sample of a block, reporting (once per block) a sample that cannot
/// be read.
pub fn sample_of(samples: &Samples, block: &ApiBlock) -> Option<Rc<Result<Shape, String>>> {
    let field = block.sample()?;
    samples.load(&field.value)
}

pub fn unreadable(block: &ApiBlock, field: &Text, why: &str) -> Diagnostic {
    Diagnostic::new(Code::SampleUnreadable, format!("sample `{}` of block `{}` {why}", field.value, block.name.name))
        .label(field.span, "this sample")
        .help(format!(
            "a sample is a JSON file, relative to the .blk file; record one with `blkc test FILE {} --save`",
            block.name.name
        ))
}

fn kind(v: &Shape) -> &'static str {
    match v {
        Shape::Null => "null",
        Shape::Bool => "a boolean",
        Shape::Number => "a number",
        Shape::String => "a string",
        Shape::Array(_) => "an array",
        Shape::Object(_) => "an object",
    }
}

/// `response.a.b` for the first `n` segments of a reference.
fn prefix(r: &Reference, n: usize) -> String {
    let mut s = String::from("response");
    for seg in &r.segments[..n] {
        s.push('.');
        s.push_str(&seg.text);
    }
    s
}

fn is_index(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Walks `r` through `sample`; `in_text` when the value is written into a
/// string (where an object or array renders as JSON).
pub fn check_path(block: &ApiBlock, sample: &Shape, r: &Reference, in_text: bool, out: &mut Vec<Diagnostic>) {
    if r.root.name != "response" || r.segments.iter().any(|s| s.text.is_empty() || s.text.contains(['[', ']'])) {
        return; // `status`, or a malformed path (B114 says so).
    }
    let name = block.name.name.as_str();
    let sample_note = || format!("checked against the sample `{}`", block.sample().map_or("", |s| s.value.as_str()));
    let mut here = sample;
    for (i, seg) in r.segments.iter().enumerate() {
        let at = prefix(r, i);
        let key = seg.text.as_str();
        here = match here {
            Shape::Object(map) => match here.get(key) {
                Some(v) => v,
                None if is_index(key) => {
                    out.push(
                        Diagnostic::new(
                            Code::SampleIndexOnObject,
                            format!("`{at}` is an object; `{key}` is not one of its keys"),
                        )
                        .label(seg.span, "an index on an object")
                        .help(match map.first() {
                            Some((k, _)) => format!("objects are read by key, like `{at}.{k}`"),
                            None => format!("`{at}` is an empty object in the sample"),
                        })
                        .note(sample_note()),
                    );
                    return;
                }
                None => {
                    let help = match did_you_mean(key, map.iter().map(|(k, _)| &**k)) {
                        Some(k) => format!("did you mean `{k}`?"),
                        None if map.is_empty() => format!("`{at}` is an empty object in the sample"),
                        None => {
                            let keys: Vec<String> = map.iter().take(8).map(|(k, _)| format!("`{k}`")).collect();
                            let more =
                                if map.len() > 8 { format!(" and {} more", map.len() - 8) } else { String::new() };
                            format!("the keys of `{at}` are {}{more}", keys.join(", "))
                        }
                    };
                    out.push(
                        Diagnostic::new(Code::SampleMissingKey, format!("`{at}` has no key `{key}`"))
                            .label(seg.span, "not in the sample")
                            .help(help)
                            .note(sample_note()),
                    );
                    return;
                }
            },
            Shape::Array(items) => {
                if !is_index(key) {
                    let rest: Vec<&str> = r.segments[i..].iter().map(|s| s.text.as_str()).collect();
                    let fixed = format!("api_{name}[{at}.0.{}]", rest.join("."));
                    out.push(
                        Diagnostic::new(Code::SampleArrayWithoutIndex, format!("`{at}` is an array; `{key}` is not an index"))
                            .label(seg.span, "a key on an array")
                            .help(format!(
                                "an array element must be addressed by its index from 0 (the spec's rule 3), like `{fixed}`"
                            ))
                            .note(sample_note()),
                    );
                    return;
                }
                match key.parse::<usize>().ok().and_then(|i| items.get(i)) {
                    Some(v) => v,
                    None => {
                        out.push(
                            Diagnostic::new(
                                Code::SampleIndexOutOfRange,
                                format!(
                                    "`{at}` has {} elements in the sample; index {key} is past its end",
                                    items.len()
                                ),
                            )
                            .label(seg.span, "past the end of the sample's array")
                            .help("a live response may hold more elements; if not, the path will not resolve")
                            .note(sample_note()),
                        );
                        return;
                    }
                }
            }
            scalar => {
                out.push(
                    Diagnostic::new(Code::SamplePastScalar, format!("`{at}` is {}; it has no `{key}`", kind(scalar)))
                        .label(seg.span, format!("`{at}` has no fields"))
                        .help(format!("end the path at `{at}`"))
                        .note(sample_note()),
                );
                return;
            }
        };
    }
    if in_text && matches!(here, Shape::Object(_) | Shape::Array(_)) {
        out.push(
            Diagnostic::new(
                Code::SampleJsonInText,
                format!("`{}` is {}: it renders as JSON text", prefix(r, r.segments.len()), kind(here)),
            )
            .label(r.span, "written into text")
            .help("address a field inside it to show one value, or keep it if the JSON text is what you want")
            .note(sample_note()),
        );
    }
}

pub fn no_sample(block: &ApiBlock) -> Diagnostic {
    Diagnostic::new(Code::NoSampleHint, format!("paths into block `{}` are checked for form only", block.name.name))
        .label(block.name.span, "this block has no sample")
        .help(format!(
            "record its response with `blkc test FILE {} --save`, and every path will be checked against it",
            block.name.name
        ))
}
