//! Rules on a layout message (the platform's "components v2"; B433, with
//! B410, B413, B415 and B419 for its lengths, forms and counts): its parts
//! where the platform takes them, nothing beside them that such a message
//! cannot show, and every count within the platform's limits. A message is
//! a layout one when it has a container, a section, a separator or a
//! gallery ([`Reply::is_layout`]); its texts are then parts of the layout.
//! As elsewhere, only what is written is held here; what a `{…}` fills in
//! is kept to the limits at run time (`message::layout`).

use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::base::source::Span;
use crate::discord::limits;
use crate::language::ast::{Layout, LayoutKind, Media, Reply, ReplyItem, Template};
use crate::language::vocab;

pub fn check(r: &Reply, out: &mut Findings) {
    if !r.is_layout() {
        return;
    }
    let mut weights = Vec::new();
    parts(&r.items, true, &mut weights, out);
    // A file an image of the message shows is no part of its own.
    let shown = super::files::shown(r);
    for f in r.files().filter(|f| f.literal_name().is_some_and(|n| shown.contains(&n))) {
        weights.iter_mut().filter(|(span, _)| *span == f.keyword).for_each(|(_, w)| *w = 0);
    }
    // The 41st component, where the count passes the platform's 40.
    let mut total = 0;
    for (span, weight) in weights {
        total += weight;
        if total > limits::LAYOUT_COMPONENTS {
            out.push(
                Diagnostic::new(
                    Code::TooManyComponents,
                    format!("a layout message holds at most {} components", limits::LAYOUT_COMPONENTS),
                )
                .label(span, format!("this makes {total}"))
                .help("every part counts: each container, section, text, thumbnail, gallery, separator, row of buttons, button and menu; send the rest in another reply"),
            );
            break;
        }
    }
}

/// The parts of a message (`top`) or of a container: each one's rules,
/// and what it counts toward the 40, in order (a row where its first
/// component is).
fn parts(items: &[ReplyItem], top: bool, weights: &mut Vec<(Span, usize)>, out: &mut Findings) {
    let kinds: Vec<(usize, bool)> = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| match item {
            ReplyItem::Component(c) => Some((i, c.kind == crate::language::ast::ComponentKind::Button)),
            _ => None,
        })
        .collect();
    let rows = row_starts(&kinds);
    for (i, item) in items.iter().enumerate() {
        match item {
            ReplyItem::Text { value, span } => {
                text(value, out);
                weights.push((*span, 1));
            }
            ReplyItem::Component(c) => weights.push((c.span, 1 + usize::from(rows.contains(&i)))),
            ReplyItem::File(f) => weights.push((f.keyword, 1)),
            ReplyItem::Layout(l) => layout(l, weights, out),
            ReplyItem::Embed(e) => out.push(
                Diagnostic::new(Code::BadLayout, "a layout message shows no embeds")
                    .label(e.span, "this embed")
                    .help("a message with a container, a section, a separator or a gallery is laid out by them: put the embed's text in `container { text \"…\" }` (its colour is the container's `accent \"#…\"`), or send the embed in a reply of its own"),
            ),
            ReplyItem::Poll(p) => out.push(
                Diagnostic::new(Code::BadLayout, "a layout message carries no poll")
                    .label(p.keyword, "this poll")
                    .help("the platform disables polls in a message laid out by its parts: send the poll in a reply of its own"),
            ),
            ReplyItem::Translation(t) => out.push(
                Diagnostic::new(Code::BadLayout, "a layout message's texts have no translations")
                    .label(t.span, "this translation")
                    .help("a translation replaces a reply's one text; in a layout message each text is a part of its own: send translated text in a reply without layout parts"),
            ),
            // (`ephemeral` is the message's; B414 says it twice.)
            ReplyItem::Ephemeral(_) if top => {}
            ReplyItem::Ephemeral(span) => weights.push((*span, 0)),
        }
    }
}

/// The places of `items` where a row of components starts: buttons that
/// stand together share rows of 5, a menu takes one of its own
/// (`limits::rows`, the wire's rule too).
fn row_starts(kinds: &[(usize, bool)]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut run: Vec<(usize, bool)> = Vec::new();
    let mut flush = |run: &mut Vec<(usize, bool)>| {
        let rows = limits::rows(&run.iter().map(|(_, b)| *b).collect::<Vec<_>>());
        for (k, (place, _)) in run.iter().enumerate() {
            if k == 0 || rows[k] != rows[k - 1] {
                starts.push(*place);
            }
        }
        run.clear();
    };
    for &(place, button) in kinds {
        // Components stand together when nothing else is written between.
        if run.last().is_some_and(|(last, _)| *last + 1 != place) {
            flush(&mut run);
        }
        run.push((place, button));
    }
    flush(&mut run);
    starts
}

fn layout(l: &Layout, weights: &mut Vec<(Span, usize)>, out: &mut Findings) {
    weights.push((l.keyword, 1));
    match l.kind {
        LayoutKind::Container => {
            super::components::settings(&l.settings, vocab::CONTAINER_SETTINGS, "a container", out);
            if l.items.is_empty() {
                out.push(
                    Diagnostic::new(Code::EmptyReply, "this container has nothing to show")
                        .label(l.span, "no text, section, gallery, separator or component")
                        .help("give it a `text \"…\"`, or remove it"),
                );
            }
            parts(&l.items, false, weights, out);
        }
        LayoutKind::Separator => {
            super::components::settings(&l.settings, vocab::SEPARATOR_SETTINGS, "a separator", out)
        }
        LayoutKind::Gallery => {
            if l.media.is_empty() {
                out.push(
                    Diagnostic::new(Code::EmptyReply, "this gallery has nothing to show")
                        .label(l.span, "no `media`")
                        .help("give it a `media \"https://…\"`, or remove it"),
                );
            }
            if let Some(extra) = l.media.get(limits::GALLERY_ITEMS) {
                out.push(
                    Diagnostic::new(Code::TooManyComponents, "a gallery holds at most 10 images")
                        .label(extra.span, "the 11th")
                        .help("show the rest in a second `gallery { … }`"),
                );
            }
            l.media.iter().for_each(|m| media(m, "gallery image", out));
        }
        LayoutKind::Section => section(l, weights, out),
    }
}

/// A section: one to three texts beside one accessory, a thumbnail or a
/// button.
fn section(l: &Layout, weights: &mut Vec<(Span, usize)>, out: &mut Findings) {
    let texts: Vec<&ReplyItem> = l.items.iter().filter(|i| matches!(i, ReplyItem::Text { .. })).collect();
    for item in &l.items {
        match item {
            ReplyItem::Text { value, span } => {
                text(value, out);
                weights.push((*span, 1));
            }
            ReplyItem::Component(c) => weights.push((c.span, 1)),
            _ => parts(std::slice::from_ref(item), false, weights, out),
        }
    }
    if texts.is_empty() {
        out.push(
            Diagnostic::new(Code::TooManyComponents, "this section has no text")
                .label(l.keyword, "a section shows text beside its thumbnail or button")
                .help("give it a `text \"…\"`; an image alone is a `gallery { media \"…\" }`"),
        );
    }
    if let Some(extra) = texts.get(limits::SECTION_TEXTS) {
        out.push(
            Diagnostic::new(Code::TooManyComponents, "a section holds at most 3 texts")
                .label(extra.span(), "the 4th")
                .help("join them into one `text`, or start another section"),
        );
    }
    let mut accessories: Vec<Span> = l.media.iter().map(|m| m.span).collect();
    accessories.extend(l.items.iter().filter(|i| matches!(i, ReplyItem::Component(_))).map(ReplyItem::span));
    accessories.sort_by_key(|s| s.start);
    l.media.iter().for_each(|m| media(m, "thumbnail", out));
    weights.extend(l.media.iter().map(|m| (m.span, 1)));
    match accessories.as_slice() {
        [] => out.push(
            Diagnostic::new(Code::BadLayout, "this section has nothing beside its text")
                .label(l.keyword, "no thumbnail and no button")
                .help("a section shows text beside a `thumbnail \"https://…\"` or a `button`; text alone is a `text \"…\"` of the message or its container"),
        ),
        [_] => {}
        [first, second, ..] => out.push(
            Diagnostic::new(Code::BadLayout, "a section has one thumbnail or one button beside its text")
                .label(*second, "a second one")
                .related(*first, "the first")
                .help("keep one of them; put buttons in a row below the section, outside it"),
        ),
    }
}

/// A thumbnail's or a gallery image's address and settings.
fn media(m: &Media, word: &str, out: &mut Findings) {
    super::components::settings(&m.settings, vocab::MEDIA_SETTINGS, &format!("a {word}"), out);
    let help = "the platform takes at most 2,048 characters in an image's address: link a shorter one";
    super::text::length_with(&m.url, limits::MEDIA_URL, &format!("a {word}'s address"), help, out);
    let Some(text) = m.url.as_literal() else { return };
    if !vocab::is_image_address(text.trim()) {
        let shown = crate::base::display::one_line(&text);
        out.push(
            Diagnostic::new(
                Code::EmbedValueForm,
                format!("a {word} must be an http or https URL, or `attachment://NAME` for a file the message carries"),
            )
            .label(m.url.span, format!("`{shown}` is not one"))
            .help("write the whole address, with `https://`, or attach the file with `file \"…\"` and name it"),
        );
    }
}

/// A text of the layout: at most 4,000 characters.
fn text(value: &Template, out: &mut Findings) {
    let help = "a layout text takes at most 4,000 characters: split it into two `text`s";
    super::text::length_with(value, limits::LAYOUT_TEXT, "a layout text", help, out);
}
