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

use crate::ast::visit::Site;
use crate::ast::{ApiBlock, Reference, Text};
use crate::diagnostics::{Code, Diagnostic};
use crate::path::{self, Document, Kind, MissKind, Root};

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

impl Document for Shape {
    fn kind(&self) -> Kind {
        match self {
            Shape::Null => Kind::Null,
            Shape::Bool => Kind::Boolean,
            Shape::Number => Kind::Number,
            Shape::String => Kind::String,
            Shape::Array(_) => Kind::Array,
            Shape::Object(_) => Kind::Object,
        }
    }

    fn get(&self, key: &str) -> Option<&Shape> {
        match self {
            Shape::Object(entries) => entries.iter().find(|(k, _)| &**k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn element(&self, index: usize) -> Option<&Shape> {
        match self {
            Shape::Array(items) => items.get(index),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        match self {
            Shape::Object(entries) => entries.iter().map(|(k, _)| &**k).collect(),
            _ => Vec::new(),
        }
    }

    fn array_len(&self) -> usize {
        match self {
            Shape::Array(items) => items.len(),
            _ => 0,
        }
    }
}

/// The code a miss has when a sample shows it.
fn code(miss: &MissKind) -> Code {
    match miss {
        MissKind::NoKey => Code::SampleMissingKey,
        MissKind::IndexOnObject => Code::SampleIndexOnObject,
        MissKind::NotAnIndex { .. } => Code::SampleArrayWithoutIndex,
        MissKind::PastScalar { .. } => Code::SamplePastScalar,
        MissKind::OutOfRange { .. } => Code::SampleIndexOutOfRange,
    }
}

/// Walks `r` through `sample`; `in_text` is where the value is written into
/// a string, if it is (where an object or array renders as JSON text: a
/// hint in a reply, an error in a URL, parameter or header).
pub fn check_path(block: &ApiBlock, sample: &Shape, r: &Reference, in_text: Option<Site>, out: &mut Vec<Diagnostic>) {
    if path::root(&r.root.name) != Some(Root::Response)
        || r.segments.iter().any(|s| path::check_segment(&s.text).is_err())
    {
        return; // `status`, or a malformed path (B114 says so).
    }
    let mut note = format!("checked against the sample `{}`", block.sample().map_or("", |s| s.value.as_str()));
    match path::walk(sample, &r.segments) {
        Err(miss) => {
            if matches!(miss.kind, MissKind::OutOfRange { .. }) {
                note.push_str("; a live response may hold more elements");
            }
            out.push(
                Diagnostic::new(code(&miss.kind), miss.message(&r.segments))
                    .label(r.segments[miss.at].span, miss.label())
                    .help(miss.help(&block.name.name, &r.segments))
                    .note(note),
            );
        }
        Ok(here) if in_text.is_some() && matches!(here, Shape::Object(_) | Shape::Array(_)) => {
            let at = path::display(r.segments.iter().map(|s| s.text.as_str()));
            let request = in_text.and_then(Site::request_place).filter(|p| *p != crate::policy::Place::Body);
            let d = match request {
                Some(place) => Diagnostic::new(
                    Code::StructuredInRequest,
                    format!("`{at}` is {}: it would be sent as JSON text {}", here.kind().words(), place.words()),
                )
                .label(r.span, "an object or array")
                .help(format!(
                    "address one value inside it, like `{at}.{}`; the run refuses to send JSON text here",
                    here.keys().first().copied().unwrap_or("0")
                )),
                None => Diagnostic::new(
                    Code::SampleJsonInText,
                    format!("`{at}` is {}: it renders as JSON text", here.kind().words()),
                )
                .label(r.span, "written into text")
                .help("address a field inside it to show one value, or keep it if the JSON text is what you want"),
            };
            out.push(d.note(note));
        }
        Ok(_) => {}
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
