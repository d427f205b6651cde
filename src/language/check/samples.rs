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
    let root = path::root(&r.root.name);
    if !matches!(root, Some(Root::Response | Root::Items))
        || r.segments.iter().any(|s| path::check_segment(&s.text).is_err())
    {
        return; // `status`, `headers`, or a malformed path (B114 says so).
    }
    let mut note = format!("checked against the sample `{}`", block.sample().map_or("", |s| s.value.as_str()));
    // `items…` reads the list a page holds: the sample's, where `pages` says.
    let sample = match root {
        Some(Root::Items) => match items_of(block, sample) {
            Some(list) => {
                note.push_str(" (its items)");
                list
            }
            None => return,
        },
        _ => sample,
    };
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

/// `api_x[headers.NAME]` where the sample's recorded headers (`blkc test
/// --save` writes them beside it) have no such header: B201, with the
/// names it has.
pub fn check_header(
    block: &ApiBlock,
    recorded: &[(String, String)],
    name: &crate::language::ast::Segment,
    out: &mut Findings,
) {
    if recorded.iter().any(|(k, _)| k.eq_ignore_ascii_case(&name.text)) {
        return;
    }
    let sample = block.sample().map_or(String::new(), |s| s.value.to_string());
    let names = recorded.iter().map(|(k, _)| k.as_str());
    let meant = crate::base::diagnostics::did_you_mean(&name.text.to_ascii_lowercase(), names);
    out.push(
        Diagnostic::new(Code::SampleMissingKey, format!("the sample's response has no header `{}`", name.text))
            .label(name.span, "not among its headers")
            .meant(
                name.span,
                meant,
                format!(
                    "the server sent {} headers when it was recorded; read one of them, or record it again with `blkc test FILE {} --save`",
                    recorded.len(),
                    block.name.name
                ),
            )
            .note(format!("checked against `{}`", crate::language::model::headers_path(&sample))),
    );
}

/// The list a page of `block` holds in `sample`, where its `pages` says
/// (`items response.data`), when the sample has one there.
pub fn items_of<'s>(block: &ApiBlock, sample: &'s Data) -> Option<&'s Data> {
    let key = block.pages()?.items()?;
    let mut segments = path::segments(&key.name);
    if segments.next().map(|(_, r)| r) != Some("response") {
        return None;
    }
    let rest: Vec<&str> = segments.map(|(_, s)| s).collect();
    match path::walk(sample, &rest) {
        Ok(list @ Data::Array(_)) => Some(list),
        _ => None,
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
