//! Response paths checked against recorded samples, before anything is sent.
//!
//! A block's `sample` is a JSON file holding a response it got (recorded by
//! `blkc test --save`, or written by hand). Every reference to the block is
//! walked through the sample: a key that is not there, a key on an array, an
//! index on an object, a path past a scalar, an index past the end.

use std::sync::Arc;

use crate::base::data::Data;
use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::base::path::{self, Document, MissKind, Root};
use crate::language::ast::visit::Site;
use crate::language::ast::{ApiBlock, Reference, Text};
use crate::language::model::Samples;

/// The sample of a block, when paths are checked against samples.
pub fn sample_of(samples: &Samples, block: &ApiBlock) -> Option<Arc<Result<Data, String>>> {
    samples.enabled().then(|| samples.of(block)).flatten()
}

pub fn unreadable(block: &ApiBlock, field: &Text, why: &str) -> Diagnostic {
    Diagnostic::new(Code::SampleUnreadable, format!("sample `{}` of block `{}` {why}", field.value, block.name.name))
        .label(field.span, "this sample")
        .help(format!(
            "a sample is a JSON file, relative to the .blk file; record one with `blkc test FILE {} --save`",
            block.name.name
        ))
}

/// The code a miss has when a sample shows it.
pub(super) fn code(miss: &MissKind) -> Code {
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
pub fn check_path(block: &ApiBlock, sample: &Data, r: &Reference, in_text: Option<Site>, out: &mut Findings) {
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
            let at = &r.segments[miss.at];
            let suggestion = match miss.kind {
                MissKind::NoKey => {
                    crate::base::diagnostics::did_you_mean(&at.text, miss.keys.iter().map(String::as_str))
                        .filter(|k| path::addressable(k))
                }
                _ => None,
            };
            out.push(
                Diagnostic::new(code(&miss.kind), miss.message(&r.segments))
                    .label(at.span, miss.label())
                    .help(miss.help(&block.name.name, &r.segments))
                    .note(note)
                    .maybe_fixes(suggestion.map(|k| (format!("write `{k}`"), at.span, k.to_string()))),
            );
        }
        Ok(here) if in_text.is_some() && matches!(here, Data::Object(_) | Data::Array(_)) => {
            let at = path::display(r.segments.iter().map(|s| s.text.as_str()));
            let request = in_text.and_then(Site::request_place).filter(|p| *p != crate::language::policy::Place::Body);
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
