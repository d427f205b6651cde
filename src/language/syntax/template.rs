//! The hand-written scanner for string literals: escapes, `{…}` variables,
//! `<SLOT>` secret slots and unquoted response references.
//!
//! pest hands over each string literal as one token; splitting it here is
//! the measured fast path (docs/architecture.md, "What makes the parser fast").

use crate::base::diagnostics::{Code, Diagnostic};
use crate::base::source::Span;
use crate::language::ast::{ElementRef, Helped, Ident, Part, Reference, Segment, Str, Template, Text, Var};

/// Scans a string literal token (quotes included) starting at byte `base`.
pub fn scan_template(token: &str, base: usize, diags: &mut Vec<Diagnostic>) -> Template {
    let first = diags.len();
    let mut dropped = 0;
    let template = scan_template_parts(token, base, diags, &mut dropped);
    references_as_text(token, base, &template, diags, &mut dropped);
    cap_per_string(diags, first, template.span, dropped);
    template
}

/// Keeps at most one more than [`MAX_PER_STRING`] problems of a string
/// (the string's first problem is at `first`) and counts the rest, as they
/// are found: a string of a million stray braces costs no more memory than
/// one of eleven.
fn keep_few(diags: &mut Vec<Diagnostic>, first: usize, dropped: &mut usize) {
    while diags.len() > first + MAX_PER_STRING + 1 {
        diags.pop();
        *dropped += 1;
    }
}

/// B135: `api_x[response.a]` in a string's text, outside braces: it is sent
/// as those characters, not as the response's value (`$api_x[…]` and bare
/// paths are habits from shells and JavaScript).
fn references_as_text(token: &str, base: usize, t: &Template, diags: &mut Vec<Diagnostic>, dropped: &mut usize) {
    let first = diags.len();
    for part in &t.parts {
        let Part::Lit(lit, span) = part else { continue };
        let (start, end) = (span.start as usize - base, span.end as usize - base);
        // Only where the text is written as is (no escapes to map offsets).
        if token.get(start..end) != Some(lit.as_str()) {
            continue;
        }
        let mut from = 0;
        // Where the next `]` is, once looked for: every `api_x[` before it
        // closes there, so the text is searched once, not once per name.
        let mut next_close: Option<Option<usize>> = None;
        while let Some(i) = memchr::memmem::find(&lit.as_bytes()[from..], b"api_").map(|i| from + i) {
            from = i + 4;
            let bytes = lit.as_bytes();
            if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
                continue;
            }
            let name_end = i + 4 + lit[i + 4..].bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
            let rest = &lit[name_end..];
            if !rest.starts_with('[') {
                continue;
            }
            let found = match next_close {
                Some(Some(at)) if at > name_end => Some(at),
                Some(None) => None,
                _ => memchr::memchr(b']', &lit.as_bytes()[name_end..]).map(|j| name_end + j),
            };
            next_close = Some(found);
            // No `]` after this one: none after any later name either.
            let Some(close) = found.map(|at| at - name_end - 1) else { break };
            let path = &rest[1..1 + close];
            if !(path == "status" || path == "response" || path.starts_with("response.")) {
                continue;
            }
            let reference = &lit[i..name_end + close + 2];
            let dollar = i > 0 && bytes[i - 1] == b'$';
            let at = base + start + i - usize::from(dollar);
            let whole = Span::new(at, base + start + name_end + close + 2);
            let fixed = format!("{{{reference}}}");
            diags.push(
                Diagnostic::new(
                    Code::ReferenceAsText,
                    format!("`{reference}` is sent as text, not as the response's value"),
                )
                .label(whole, "not in braces")
                .help(format!("inside a string a response is read in braces: `{fixed}`"))
                .fix(format!("write `{fixed}`"), whole, fixed),
            );
            keep_few(diags, first, dropped);
            from = name_end + close + 2;
        }
    }
}

/// The most problems one string literal reports; the rest are counted in
/// one more diagnostic (a string full of braces is one mistake, not
/// thousands).
const MAX_PER_STRING: usize = 10;

fn cap_per_string(diags: &mut Vec<Diagnostic>, first: usize, span: Span, dropped: usize) {
    let found = diags.len() - first + dropped;
    if found <= MAX_PER_STRING {
        return;
    }
    let code = diags[first].code;
    diags.truncate(first + MAX_PER_STRING);
    diags.push(
        Diagnostic::new(code, format!("{} more problems in this string", found - MAX_PER_STRING))
            .label(span, "this string")
            .help("fix the ones above first; a literal brace is written `\\{` or `\\}`"),
    );
}

fn scan_template_parts(token: &str, base: usize, diags: &mut Vec<Diagnostic>, dropped: &mut usize) -> Template {
    let first = diags.len();
    let span = Span::new(base, base + token.len());
    let bytes = token.as_bytes();
    let end = bytes.len() - 1; // the closing quote
    let mut parts = Vec::with_capacity(1 + memchr::memchr_iter(b'{', bytes).count() * 2);
    let mut lit = Str::default();
    let mut lit_start = 1;
    let mut i = 1;
    while i < end {
        keep_few(diags, first, dropped);
        match bytes[i] {
            b'\\' => {
                let (consumed, ch) = scan_escape(token, base, i, diags);
                if let Some(ch) = ch {
                    lit.push(ch);
                }
                i += consumed;
            }
            b'{' => {
                if let Some(skip) = double_braces(token, base, i, diags) {
                    i = skip;
                    continue;
                }
                let Some(close) = closing(bytes, i, end) else {
                    diags.push(unclosed_brace(token, base, i));
                    lit.push_str(&token[i..end]);
                    i = end;
                    continue;
                };
                if bytes[i - 1] == b'$' && bytes[..i - 1].iter().rev().take_while(|b| **b == b'\\').count() % 2 == 0 {
                    diags.push(dollar_brace(token, base, i, close));
                }
                flush(&mut parts, &mut lit, base + lit_start, base + i);
                let inner = &token[i + 1..close];
                if let Some(var) = scan_variable(inner, base + i, base + i + 1, diags) {
                    parts.push(var);
                }
                i = close + 1;
                lit_start = i;
            }
            b'}' => {
                diags.push(
                    Diagnostic::new(Code::MalformedVariable, "unmatched `}` in a string")
                        .label(Span::new(base + i, base + i + 1), "no `{` opens this")
                        .help("write `\\}` for a literal brace"),
                );
                lit.push('}');
                i += 1;
            }
            b'<' => {
                let name_len = slot_name_len(&bytes[i + 1..end]);
                if name_len > 0 && bytes.get(i + 1 + name_len) == Some(&b'>') && i + 1 + name_len < end {
                    flush(&mut parts, &mut lit, base + lit_start, base + i);
                    let name = &token[i + 1..i + 1 + name_len];
                    parts.push(Part::Secret(Ident {
                        name: name.into(),
                        span: Span::new(base + i, base + i + name_len + 2),
                    }));
                    i += name_len + 2;
                    lit_start = i;
                } else {
                    lit.push('<');
                    i += 1;
                }
            }
            _ => {
                // Copy the run up to the next special byte in one go.
                let run_end =
                    bytes[i..end].iter().position(|b| matches!(b, b'\\' | b'{' | b'}' | b'<')).map_or(end, |j| i + j);
                lit.push_str(&token[i..run_end]);
                i = run_end;
            }
        }
    }
    flush(&mut parts, &mut lit, base + lit_start, base + end);
    Template { parts, span }
}

/// The `}` that closes the `{` at `open`, before `end`: the first, unless a
/// path segment inside `[…]` is itself `{name}` (`{votes[{user_id}]}`),
/// whose `}` is the segment's.
fn closing(bytes: &[u8], open: usize, end: usize) -> Option<usize> {
    let first = memchr::memchr(b'}', &bytes[open + 1..end]).map(|j| open + 1 + j)?;
    // The common case: no `[{` or `.{` before the first `}`.
    let nested = |at: usize| bytes[at] == b'{' && matches!(bytes[at - 1], b'[' | b'.');
    if !(open + 2..first).any(nested) {
        return Some(first);
    }
    let (mut brackets, mut segment) = (0usize, false);
    for (at, byte) in bytes.iter().enumerate().take(end).skip(open + 1) {
        match byte {
            b'[' => brackets += 1,
            b']' => brackets = brackets.saturating_sub(1),
            b'{' if brackets > 0 && !segment && nested(at) => segment = true,
            b'}' if segment => segment = false,
            b'}' => return Some(at),
            _ => {}
        }
    }
    None
}

/// Scans a string literal whose braces are plain text (descriptions, paths).
pub fn scan_text(token: &str, base: usize, diags: &mut Vec<Diagnostic>) -> Text {
    let span = Span::new(base, base + token.len());
    let bytes = token.as_bytes();
    let end = bytes.len() - 1;
    let mut value = Str::with_capacity(end);
    let mut i = 1;
    while i < end {
        if bytes[i] == b'\\' {
            let (consumed, ch) = scan_escape(token, base, i, diags);
            if let Some(ch) = ch {
                value.push(ch);
            }
            i += consumed;
        } else {
            let run_end = memchr::memchr(b'\\', &bytes[i..end]).map_or(end, |j| i + j);
            value.push_str(&token[i..run_end]);
            i = run_end;
        }
    }
    Text { value, span }
}

/// The length of a secret slot's name at the start of `bytes`: an upper-case
/// letter, then upper-case letters, digits and `_`.
fn slot_name_len(bytes: &[u8]) -> usize {
    match bytes.first() {
        Some(b) if b.is_ascii_uppercase() => {
            bytes.iter().take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b'_').count()
        }
        _ => 0,
    }
}

fn flush(parts: &mut Vec<Part>, lit: &mut Str, start: usize, end: usize) {
    if !lit.is_empty() {
        parts.push(Part::Lit(std::mem::take(lit), Span::new(start, end)));
    }
}

/// Scans the escape at `token[i]` (a backslash); returns the bytes consumed
/// and the character it stands for.
fn scan_escape(token: &str, base: usize, i: usize, diags: &mut Vec<Diagnostic>) -> (usize, Option<char>) {
    let rest = &token[i + 1..token.len() - 1];
    let Some(next) = rest.chars().next() else {
        // A backslash right before the closing quote cannot occur: the
        // grammar reads `\"` as an escaped quote.
        return (1, None);
    };
    let simple = match next {
        '"' => Some('"'),
        '\\' => Some('\\'),
        'n' => Some('\n'),
        't' => Some('\t'),
        'r' => Some('\r'),
        '{' => Some('{'),
        '}' => Some('}'),
        '<' => Some('<'),
        '>' => Some('>'),
        '$' => Some('$'),
        _ => None,
    };
    if let Some(ch) = simple {
        return (2, Some(ch));
    }
    if next == 'u' {
        if let Some(body) = rest.strip_prefix("u{") {
            if let Some(close) = body.find('}') {
                let hex = &body[..close];
                let consumed = 1 + 2 + close + 1;
                let ch = (!hex.is_empty() && hex.len() <= 6)
                    .then(|| u32::from_str_radix(hex, 16).ok())
                    .flatten()
                    .and_then(char::from_u32);
                if ch.is_none() {
                    diags.push(
                        Diagnostic::new(Code::InvalidEscape, format!("`\\u{{{hex}}}` is not a unicode character"))
                            .label(Span::new(base + i, base + i + consumed), "invalid unicode escape")
                            .help("write 1 to 6 hex digits of a unicode scalar value, like `\\u{e9}`"),
                    );
                }
                return (consumed, ch);
            }
        }
    }
    let width = 1 + next.len_utf8();
    diags.push(
        Diagnostic::new(Code::InvalidEscape, format!("unknown escape `\\{next}`"))
            .label(Span::new(base + i, base + i + width), "unknown escape")
            .help("the escapes are `\\\"` `\\\\` `\\n` `\\t` `\\r` `\\{` `\\}` `\\<` `\\>` `\\$` and `\\u{…}`"),
    );
    (width, None)
}

/// Scans the inside of `{…}`; `brace` is the offset of `{`, `start` of the
/// text after it.
fn scan_variable(inner: &str, brace: usize, start: usize, diags: &mut Vec<Diagnostic>) -> Option<Part> {
    let whole = Span::new(brace, start + inner.len() + 1);
    if inner.is_empty() {
        diags.push(
            Diagnostic::new(Code::MalformedVariable, "empty variable `{}`")
                .label(whole, "no variable named here")
                .help("name a variable, like `{user_name}`, or write `\\{\\}` for literal braces"),
        );
        return None;
    }
    if let Some(at) = crate::language::helpers::split(inner) {
        return scan_helped(inner, at, brace, start, diags);
    }
    if inner.starts_with("api_") && inner.contains('[') {
        let reference = scan_reference(inner, start, diags)?;
        return Some(Part::Var(Var::Ref(Box::new(Reference { span: whole, ..reference }))));
    }
    if inner.ends_with(']') && inner.split_once('[').is_some_and(|(name, _)| is_ident(name)) {
        let element = scan_element(inner, start, diags)?;
        return Some(Part::Var(Var::Element(Box::new(ElementRef { span: whole, ..element }))));
    }
    if crate::language::helpers::is_draw(inner) {
        let (draw, variables) = crate::language::helpers::scan_draw(inner, start, diags)?;
        let variables = variables.into_iter().map(|(name, span)| Ident { name: name.into(), span }).collect();
        return Some(Part::Var(Var::Draw(Box::new(crate::language::ast::Drawn { draw, variables, span: whole }))));
    }
    if inner == "bot_token" {
        return Some(Part::Var(Var::BotToken(whole)));
    }
    // `{option_my-opt}`, `{option_année}`: an option's name is the
    // platform's, in any script.
    if is_ident(inner) || crate::discord::names::is_option_variable(inner) {
        return Some(Part::Var(Var::Named(Ident { name: inner.into(), span: Span::new(start, start + inner.len()) })));
    }
    diags.push(not_a_variable(inner, whole));
    None
}

/// `{base|helper…}`: the base read as any `{…}` is, then its helpers. The
/// bot token has none (it is never shown).
fn scan_helped(inner: &str, at: usize, brace: usize, start: usize, diags: &mut Vec<Diagnostic>) -> Option<Part> {
    let whole = Span::new(brace, start + inner.len() + 1);
    let (base, helpers) = inner.split_at(at);
    let base = base.trim_end();
    let Part::Var(mut base) = scan_variable(base, brace, start, diags)? else { return None };
    // The base's span is its own text, without the braces.
    let own = Span::new(start, start + base_text_len(inner, at));
    match &mut base {
        Var::Ref(r) => r.span = own,
        Var::Element(e) => e.span = own,
        _ => {}
    }
    if matches!(base, Var::BotToken(_)) {
        diags.push(
            Diagnostic::new(Code::BadHelper, "`{bot_token}` takes no helper")
                .label(whole, "the bot token is never shown")
                .help("a helper works on a list: a custom variable, a response's list or a loop's element"),
        );
        return None;
    }
    let helpers = crate::language::helpers::scan(helpers, start + at, diags)?;
    Some(Part::Var(Var::Helped(Box::new(Helped { base, helpers, span: whole }))))
}

fn base_text_len(inner: &str, at: usize) -> usize {
    inner[..at].trim_end().len()
}

/// `{inner}` that names no variable: a JavaScript path (`{api_x.response.a}`),
/// a block without `api_` (`{forecast[response.a]}`), or anything else.
fn not_a_variable(inner: &str, whole: Span) -> Diagnostic {
    let diag = Diagnostic::new(Code::MalformedVariable, format!("`{{{inner}}}` is not a variable"))
        .label(whole, "not a variable name");
    if let Some((block, path)) = inner.split_once('.').filter(|(b, _)| b.starts_with("api_") && is_ident(b)) {
        let fixed = format!("{{{block}[{path}]}}");
        return diag.help(format!("a response path goes in brackets after the block: `{fixed}`")).fix(
            format!("write `{fixed}`"),
            whole,
            fixed,
        );
    }
    let joined = inner.replace(['.', '-'], "_");
    if is_ident(&joined) {
        let fixed = format!("{{{joined}}}");
        return diag.help(format!("a variable's name joins its words with `_`: `{fixed}`")).maybe_fix(
            format!("write `{fixed}`"),
            whole,
            fixed,
        );
    }
    diag.help("variables are names like `{user_name}` or `{api_block[response.key]}`; write `\\{` for a literal brace")
}

/// `{{name}}`, as Handlebars, Jinja and Mustache write a variable: one
/// diagnostic for both pairs of braces. Returns where scanning goes on.
fn double_braces(token: &str, base: usize, i: usize, diags: &mut Vec<Diagnostic>) -> Option<usize> {
    let rest = &token[i..token.len() - 1];
    let inner = rest.strip_prefix("{{")?;
    let close = inner.find("}}")?;
    let name = inner[..close].trim();
    if name.is_empty() || name.contains(['{', '}']) {
        return None;
    }
    let span = Span::new(base + i, base + i + 2 + close + 2);
    let fixed = format!("{{{name}}}");
    diags.push(
        Diagnostic::new(Code::MalformedVariable, format!("`{{{{{name}}}}}` has one pair of braces too many"))
            .label(span, "double braces")
            .help(format!("a variable takes one pair of braces: `{fixed}`"))
            .fix(format!("write `{fixed}`"), span, fixed),
    );
    Some(i + 2 + close + 2)
}

/// A `{` never closed in its string: the fix closes it after the name.
fn unclosed_brace(token: &str, base: usize, i: usize) -> Diagnostic {
    let bytes = token.as_bytes();
    let end = bytes.len() - 1;
    let name_end = (i + 1..end).find(|&j| !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_')).unwrap_or(end);
    let diag = Diagnostic::new(Code::MalformedVariable, "unclosed `{` in a string")
        .label(Span::new(base + i, base + i + 1), "this `{` is never closed");
    if name_end > i + 1 && !bytes[i + 1].is_ascii_digit() {
        let name = &token[i + 1..name_end];
        return diag.help(format!("close the variable: `{{{name}}}`, or write `\\{{` for a literal brace")).fix(
            "close the variable with `}`",
            Span::new(base + name_end, base + name_end),
            "}",
        );
    }
    diag.help("close the variable with `}`, or write `\\{` for a literal brace")
}

/// `${name}`, a JavaScript template literal: the `$` is sent as text.
fn dollar_brace(token: &str, base: usize, i: usize, close: usize) -> Diagnostic {
    let dollar = Span::new(base + i - 1, base + i);
    let var = &token[i..=close];
    Diagnostic::new(Code::DollarBeforeVariable, format!("`${var}` sends a `$` before the value of `{var}`"))
        .label(dollar, "sent as text")
        .help(format!(
            "in blk `{var}` alone is the variable: leave out the `$` if it is a JavaScript habit, or write `\\${var}` to mean a dollar sign"
        ))
        .maybe_fix("leave out the `$`", dollar, "")
}

pub fn is_ident(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Scans a loop element's `item[path]` starting at byte `start` (the
/// caller has seen a name, a `[` and a closing `]`). The path is split on
/// dots; the checker judges the segments and whether a loop of that name
/// encloses it.
pub fn scan_element(text: &str, start: usize, _diags: &mut Vec<Diagnostic>) -> Option<ElementRef> {
    let open = text.find('[')?;
    let path = text.get(open + 1..text.len().checked_sub(1)?)?;
    let path_start = start + open + 1;
    // (An empty path is one empty segment, which the checker refuses.)
    let segments = crate::base::path::segments(path)
        .map(|(at, piece)| Segment {
            text: piece.into(),
            span: Span::new(path_start + at, path_start + at + piece.len()),
        })
        .collect();
    Some(ElementRef {
        item: Ident { name: text[..open].into(), span: Span::new(start, start + open) },
        segments,
        span: Span::new(start, start + text.len()),
    })
}

/// Scans `api_<block>[path]` starting at byte `start`. The path is split on
/// dots into segments ([`crate::base::path::segments`]); the checker judges their
/// form.
pub fn scan_reference(text: &str, start: usize, diags: &mut Vec<Diagnostic>) -> Option<Reference> {
    let span = Span::new(start, start + text.len());
    let open = text.find('[')?;
    let block = &text[4..open];
    if !is_ident(block) {
        diags.push(
            Diagnostic::new(Code::MalformedVariable, format!("`{block}` is not a block name"))
                .label(Span::new(start + 4, start + open), "not a block name")
                .help("a response reference is `api_<block>[response…]` with the block's name"),
        );
        return None;
    }
    if !text.ends_with(']') {
        diags.push(
            Diagnostic::new(Code::MalformedVariable, "response reference is not closed by `]`")
                .label(Span::new(start + open, start + open + 1), "this `[` is not closed")
                .help("write the path in one pair of brackets with dots between levels, like `api_block[response.items.0.name]`"),
        );
        return None;
    }
    let path = &text[open + 1..text.len() - 1];
    let path_start = start + open + 1;
    let mut pieces = crate::base::path::segments(path)
        .map(|(at, piece)| (piece, Span::new(path_start + at, path_start + at + piece.len())));
    let (root, root_span) = pieces.next().unwrap_or(("", Span::new(path_start, path_start)));
    Some(Reference {
        block: Ident { name: block.into(), span: Span::new(start + 4, start + open) },
        root: Ident { name: root.into(), span: root_span },
        segments: pieces.map(|(text, span)| Segment { text: text.into(), span }).collect(),
        span,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str) -> (Template, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let t = scan_template(&format!("\"{text}\""), 0, &mut diags);
        (t, diags)
    }

    #[test]
    fn a_path_segment_in_braces_is_read_inside_its_variable() {
        let (t, diags) = parts("a {votes[{user_id}]} b {queue[x.{n}]}");
        assert!(diags.is_empty(), "{diags:?}");
        let vars: Vec<_> = t.parts.iter().filter(|p| matches!(p, Part::Var(Var::Element(_)))).collect();
        assert_eq!(vars.len(), 2, "{t:?}");
        // Braces elsewhere keep their old meaning: two variables side by
        // side, and a brace that closes nothing.
        let (t, diags) = parts("{a}{b}");
        assert!(diags.is_empty() && t.parts.len() == 2, "{t:?} {diags:?}");
        let (_, diags) = parts("{votes[{user_id}]");
        assert!(!diags.is_empty());
        let (_, diags) = parts("{a {b}}");
        assert!(!diags.is_empty());
    }
}
