//! The mistakes people make first, recognised where pest stops: habits from
//! JSON, YAML, `.http` and `.hurl` files, curl and JavaScript, and the slips
//! of a first hour (quotes, braces, capitals). Each gives one diagnostic with
//! its label on the token at fault, a help line in this language's syntax
//! and, where the fix is obvious, the edit that makes it.
//!
//! A recogniser sees the [`Failure`] (where reading stopped, what pest tried
//! there, what stands there) and the text around it; the first that matches
//! wins. None matching, the caller words pest's failure itself.

use super::failure::{innermost_open_brace, Expected, Failure};
use super::lexer::{Kind, Lexer};
use crate::base::diagnostics::{did_you_mean, Code, Confidence, Diagnostic, Edit};
use crate::base::source::Span;
use crate::language::vocab::Keyword;

type Recogniser = fn(&Failure<'_>) -> Option<Diagnostic>;

/// Every recogniser, by name, in order: a string left open explains
/// everything after it, so it comes first; the rest look only at the token
/// where reading stopped. Each has a file in `tests/fixtures/mistakes/` that
/// the tests prove it recognises.
pub const RECOGNISERS: &[(&str, Recogniser)] = &[
    ("unclosed_string", unclosed_string),
    ("foreign_quotes", foreign_quotes),
    ("slash_comment", slash_comment),
    ("braces_around_variable", braces_around_variable),
    ("colon", colon),
    ("equals", equals),
    ("stray_punctuation", stray_punctuation),
    ("unclosed_array", unclosed_array),
    ("missing_close_brace", missing_close_brace),
    ("extra_close_brace", extra_close_brace),
    ("condition_habits", condition_habits),
    ("missing_open_brace", missing_open_brace),
    ("header_in_one_string", header_in_one_string),
    ("call_parens", call_parens),
    ("top_level_node", top_level_node),
    ("description_after_type", description_after_type),
    ("quoted_name", quoted_name),
    ("quoted_command_name", quoted_command_name),
    ("name_with_hyphen", name_with_hyphen),
    ("name_in_pieces", name_in_pieces),
    ("slash_in_name", slash_in_name),
    ("arithmetic", arithmetic),
    ("unquoted_string", unquoted_string),
    ("concatenation", concatenation),
    ("foreign_literal", foreign_literal),
    ("lost_close_brace", lost_close_brace),
    ("part_in_form", part_in_form),
    ("field_without_value", field_without_value),
    ("foreign_word", foreign_word),
];

/// The first recogniser that explains the failure: its name and diagnostic.
pub(super) fn recognize(f: &Failure<'_>) -> Option<(&'static str, Diagnostic)> {
    // A bare word where a value goes reads as the start of a calculation,
    // so pest stops after it, wanting an operator: the mistake is the word.
    if let Some(shifted) = at_bare_word(f) {
        if let Some(found) = RECOGNISERS.iter().find_map(|(name, r)| r(&shifted).map(|d| (*name, d))) {
            return Some(found);
        }
    }
    RECOGNISERS.iter().find_map(|(name, r)| r(f).map(|d| (*name, d)))
}

/// The failure as it was before calculations: at a lone word where a value
/// goes (`save last = visits`, `if status == 200`), wanting a value.
fn at_bare_word<'t>(f: &Failure<'t>) -> Option<Failure<'t>> {
    if !f.expects_punct("*") {
        return None;
    }
    let before = before_comments(f.text, f.at);
    // The word is ASCII, so counting its bytes back keeps `start` on a
    // character boundary whatever stands before it (`# café`).
    let start = before.len() - before.bytes().rev().take_while(|b| is_name_char(*b)).count();
    let word = &before[start..];
    if !word.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_') {
        return None;
    }
    let head = before[..start].trim_end();
    let value_goes_here =
        head.ends_with('=') || head.ends_with("if") || ["!=", "<", ">", "contains"].iter().any(|op| head.ends_with(op));
    if !value_goes_here {
        return None;
    }
    Some(Failure {
        text: f.text,
        item: f.item,
        at: start,
        expected: vec!["a string", "a number", "a response reference", "`true`", "`false`", "`null`"],
        keywords: vec!["true", "false", "null"],
        tokens: vec![
            Expected::Str,
            Expected::Number,
            Expected::Reference,
            Expected::Keyword(Keyword::True),
            Expected::Keyword(Keyword::False),
            Expected::Keyword(Keyword::Null),
            Expected::Trivia,
        ],
        found: format!("`{word}`"),
        found_span: Span::new(start, start + word.len()),
    })
}

/// The text before `at`, without the blanks and the comments that end it
/// (`save total = visits  # café` ends at `visits`).
fn before_comments(text: &str, at: usize) -> &str {
    let mut before = text[..at].trim_end();
    loop {
        let end = before.len();
        let comment =
            Lexer::from(text, line_start(text, end)).take_while(|t| t.start() < end).find(|t| t.kind == Kind::Comment);
        match comment {
            Some(t) => before = text[..t.start()].trim_end(),
            None => return before,
        }
    }
}

fn syntax(message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Code::Syntax, message)
}

// ── text helpers ─────────────────────────────────────────────────────────

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The start of the line holding `at`.
fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The end of the line holding `at` (before its `\r\n` or `\n`).
fn line_end(text: &str, at: usize) -> usize {
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    if end > at && text.as_bytes()[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}

/// Where a pasted shell command on the line from `at` ends: before a
/// trailing `# comment` (a `#` that begins a word outside quotes, as the
/// shell reads it) and the blanks before it, or at the line's end. A fix
/// replaces the command only, so a comment after it stays as written.
fn shell_command_end(text: &str, at: usize) -> usize {
    let eol = line_end(text, at);
    let bytes = text.as_bytes();
    let mut quote = None;
    let mut i = at;
    while i < eol {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(b'"') if b == b'\\' => i += 1,
            Some(_) => {}
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if b == b'\\' => i += 1,
            None if b == b'#' && (i == at || bytes[i - 1].is_ascii_whitespace()) => {
                return at + text[at..i].trim_end().len();
            }
            None => {}
        }
        i += 1;
    }
    eol
}

/// How sure a fix that replaces a pasted shell command up to `end` is: not
/// when blk reads a comment that begins inside it (a `#` in single quotes,
/// `'a # b'`, is text to the shell and a comment to blk), since applying
/// it would change that comment.
fn shell_fix_confidence(text: &str, at: usize, end: usize) -> Confidence {
    let comment_inside = Lexer::from(text, at)
        .take_while(|t| t.start() < end)
        .any(|t| t.kind == crate::language::syntax::lexer::Kind::Comment);
    if comment_inside {
        Confidence::Maybe
    } else {
        Confidence::Certain
    }
}

/// The line's leading blanks.
fn indent(text: &str, at: usize) -> &str {
    let start = line_start(text, at);
    let line = &text[start..line_end(text, start)];
    &line[..line.len() - line.trim_start().len()]
}

/// The end of the last token before `at`: `at` less the blanks (and line
/// breaks) before it.
fn end_of_previous(text: &str, at: usize) -> usize {
    text[..at].trim_end().len()
}

/// The word (letters, digits, `_`) that ends at `end`, if any.
fn word_before(text: &str, end: usize) -> Option<(&str, Span)> {
    let bytes = text.as_bytes();
    let start = (0..end).rev().take_while(|&i| is_name_char(bytes[i])).last()?;
    Some((&text[start..end], Span::new(start, end)))
}

/// The word just before `at` (across blanks).
fn previous_word(text: &str, at: usize) -> Option<(&str, Span)> {
    word_before(text, end_of_previous(text, at))
}

/// A run of characters from `at` that a person would call one word here:
/// letters, digits and `_-./:` (a URL, `application/json`, `my-block`).
fn loose_word(text: &str, at: usize) -> Span {
    let len =
        text[at..].find(|c: char| !(c.is_alphanumeric() || "_-./:?&=%+@~".contains(c))).unwrap_or(text.len() - at);
    Span::new(at, at + len)
}

/// `text` as the inside of a blk string (quotes and backslashes escaped).
fn escaped(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The line holding `at` as it reads once `edits` are made (edits inside
/// that line only), trimmed: the corrected line a help shows.
fn corrected_line(text: &str, at: usize, edits: &[Edit]) -> String {
    let (mut start, mut end) = (line_start(text, at), line_end(text, at));
    // A long line is shown around the fix, cut where it goes on (a help
    // repeats no more than a line's worth of a file of any size).
    const AROUND: usize = 60;
    let (mut before, mut after) = ("", "");
    if end - start > 3 * AROUND {
        let last = edits.iter().map(|e| e.span.end as usize).filter(|&e| e <= end).max().unwrap_or(at).max(at);
        let from = (start..=at.saturating_sub(AROUND).max(start)).rev().find(|&i| text.is_char_boundary(i));
        let to = (last.saturating_add(AROUND).min(end)..=end).find(|&i| text.is_char_boundary(i));
        if let (Some(from), Some(to)) = (from, to) {
            (before, after) = (if from > start { "…" } else { "" }, if to < end { "…" } else { "" });
            (start, end) = (from, to);
        }
    }
    let mut edits: Vec<&Edit> =
        edits.iter().filter(|e| e.span.start as usize >= start && e.span.end as usize <= end).collect();
    edits.sort_by_key(|e| e.span.start);
    let mut out = String::new();
    let mut pos = start;
    for e in edits {
        out.push_str(&text[pos..e.span.start as usize]);
        out.push_str(&e.replacement);
        pos = e.span.end as usize;
    }
    out.push_str(&text[pos..end]);
    format!("{before}{}{after}", out.trim())
}

/// A diagnostic with one certain fix, and a help that shows the line as it
/// reads once fixed.
fn with_fix(diag: Diagnostic, f: &Failure<'_>, how: &str, span: Span, replacement: String) -> Diagnostic {
    let edit = Edit { span, replacement };
    let line = corrected_line(f.text, span.start as usize, std::slice::from_ref(&edit));
    diag.help(format!("{how}: `{line}`")).suggest_edits(how, vec![edit], Confidence::Certain)
}

/// What the innermost open `{` before `at` belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    Top,
    Tree,
    Api,
    Params,
    Headers,
    Body,
}

fn context(f: &Failure<'_>) -> Context {
    let Some(open) = innermost_open_brace(f.text, f.item, f.at) else { return Context::Top };
    let head = f.text[line_start(f.text, open)..open].trim();
    let first = head.split_whitespace().next().unwrap_or("");
    match first {
        "command" | "event" | "if" | "}" | "else" => Context::Tree,
        "api" => Context::Api,
        "params" => Context::Params,
        "headers" => Context::Headers,
        "body" => Context::Body,
        _ if head.ends_with('=') || head.ends_with(',') || head.ends_with('[') || head.is_empty() => Context::Body,
        _ => Context::Tree,
    }
}

/// Whether pest was looking for a field of an `api` block here.
fn wants_field(f: &Failure<'_>) -> bool {
    f.expects_keyword(Keyword::Method) && f.expects_keyword(Keyword::Url)
}

/// Whether pest was looking for a node of a tree here.
fn wants_node(f: &Failure<'_>) -> bool {
    f.expects_keyword(Keyword::Reply) && f.expects_keyword(Keyword::Save)
}

/// Whether pest was looking for a value (of a body, `save` or parameter).
fn wants_value(f: &Failure<'_>) -> bool {
    f.expects(Expected::Str) && f.expects_keyword(Keyword::True)
}

// ── strings and quotes ───────────────────────────────────────────────────

/// A string opened before the failure whose closing quote is missing: it
/// ran on into the next lines, and reading failed somewhere after. The
/// mistake is the quote, on its own line.
fn unclosed_string(f: &Failure<'_>) -> Option<Diagnostic> {
    for t in Lexer::from(f.text, f.item) {
        if t.start() >= f.at {
            break;
        }
        if let Kind::Str { closed } = t.kind {
            let (i, close) = (t.start(), if closed { t.end() - 1 } else { f.text.len() });
            let eol = line_end(f.text, i);
            // A string over several lines is the mistake when reading
            // stopped inside it or on the line where it closed (the next
            // string's opening quote closed it). One that closed lines
            // before the failure may be meant so.
            if close > eol && (close >= f.at || line_start(f.text, close) == line_start(f.text, f.at)) {
                return Some(open_quote(f, i, eol));
            }
        }
    }
    // Reading stopped right at an opening quote whose string never closes.
    if string_at(f.text, f.at).is_some_and(|close| close >= f.text.len()) {
        return Some(open_quote(f, f.at, line_end(f.text, f.at)));
    }
    None
}

/// The start of the string that ends (with its closing quote) at `end`.
fn string_ending_at(f: &Failure<'_>, end: usize) -> Option<usize> {
    Lexer::from(f.text, f.item)
        .take_while(|t| t.start() < end)
        .find(|t| t.end() == end && t.kind == Kind::Str { closed: true })
        .map(|t| t.start())
}

/// Where the line holding `at` ends, or its comment starts.
fn comment_or_eol(text: &str, at: usize) -> usize {
    let eol = line_end(text, at);
    Lexer::from(text, at).take_while(|t| t.start() < eol).find(|t| t.kind == Kind::Comment).map_or(eol, |t| t.start())
}

/// At a string's opening quote: the offset of its closing quote, or the
/// text's length when it never closes (the lexer's reading).
fn string_at(text: &str, at: usize) -> Option<usize> {
    let t = Lexer::from(text, at).next()?;
    match t.kind {
        Kind::Str { closed: true } => Some(t.end() - 1),
        Kind::Str { closed: false } => Some(text.len()),
        _ => None,
    }
}

fn open_quote(f: &Failure<'_>, quote: usize, eol: usize) -> Diagnostic {
    let mut end = f.text[..eol].trim_end().len().max(quote + 1);
    // `name = "Ann }`: the string ends before the closers set off by a blank.
    let line = &f.text[quote + 1..end];
    let closers = line.trim_end_matches(['}', ']', ',']);
    if closers.len() < line.len() && closers.ends_with([' ', '\t']) && !closers.trim().is_empty() {
        end = quote + 1 + closers.trim_end().len();
    }
    let diag = syntax("this string is never closed")
        .label(Span::new(quote, quote + 1), "this string has no closing `\"` on its line");
    with_fix(diag, f, "end the string with `\"` on its line", Span::new(end, end), "\"".into())
        .note("a string runs until the next `\"`, so the lines after it were read as its text")
}

/// `'single'` or “curly” quotes around a string.
fn foreign_quotes(f: &Failure<'_>) -> Option<Diagnostic> {
    let open = f.text[f.at..].chars().next()?;
    let closers: &[char] = match open {
        '\'' => &['\''],
        '‘' | '’' => &['’', '‘'],
        '“' | '”' | '„' => &['”', '“'],
        '«' => &['»'],
        '`' => &['`'],
        _ => return None,
    };
    let after = f.at + open.len_utf8();
    let eol = line_end(f.text, f.at);
    let what = match open {
        '\'' => "single quotes",
        '`' => "backquotes",
        _ => "curly quotes",
    };
    let diag = syntax(format!("strings are written in double quotes, not {what}"));
    match f.text[after..eol].find(closers).map(|i| after + i) {
        Some(close) => {
            let end = close + f.text[close..].chars().next().map_or(1, char::len_utf8);
            let inner = &f.text[after..close];
            let span = Span::new(f.at, end);
            let diag = diag.label(span, format!("a string in {what}"));
            Some(with_fix(diag, f, "write it in double quotes", span, format!("\"{}\"", escaped(inner))))
        }
        None => {
            let span = Span::new(f.at, after);
            Some(diag.label(span, format!("{what} open a string only with `\"`")).help(
                "write strings in straight double quotes, like `reply \"hello\"` (a text editor may have turned them curly)",
            ))
        }
    }
}

/// `// comment` from C, JavaScript or Rust.
fn slash_comment(f: &Failure<'_>) -> Option<Diagnostic> {
    if !f.text[f.at..].starts_with("//") {
        return None;
    }
    let span = Span::new(f.at, f.at + 2);
    let diag = syntax("comments start with `#`, not `//`").label(span, "`//` does not start a comment");
    Some(with_fix(diag, f, "write `#`", span, "#".into()))
}

/// `{option_city}` or `{api_x[response.id]}` written as a bare value: braces
/// make a variable only inside a string.
fn braces_around_variable(f: &Failure<'_>) -> Option<Diagnostic> {
    // The `{` is where reading stopped (a parameter), or it was read as an
    // object whose first key is the variable's name (a body, a `save`).
    let open = if f.text[f.at..].starts_with('{') && f.expects(Expected::Str) {
        f.at
    } else if !f.expects_punct("=") {
        return None;
    } else {
        let (_, name) = previous_word(f.text, f.at)?;
        let before = end_of_previous(f.text, name.start as usize);
        (before > 0 && f.text.as_bytes()[before - 1] == b'{').then(|| before - 1)?
    };
    let eol = line_end(f.text, open);
    let inner_end = open + 1 + f.text[open + 1..eol].find('}')?;
    let inner = f.text[open + 1..inner_end].trim();
    let name_len = inner.bytes().take_while(|b| is_name_char(*b)).count();
    if name_len == 0 || inner.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let rest = &inner[name_len..];
    let is_reference = inner.starts_with("api_") && rest.starts_with('[') && rest.ends_with(']');
    if !(rest.is_empty() || is_reference) {
        return None;
    }
    let span = Span::new(open, inner_end + 1);
    let in_params = context(f) == Context::Params;
    if is_reference && !in_params {
        let diag = syntax("a response reference in a value is written without braces")
            .label(Span::new(open, open + 1), "braces make a variable only inside a string");
        return Some(with_fix(
            diag,
            f,
            "write the reference itself (it inserts the JSON value)",
            span,
            inner.to_string(),
        ));
    }
    let diag = syntax(format!("`{{{inner}}}` is a variable only inside a string"))
        .label(Span::new(open, open + 1), "braces make a variable only inside a string");
    Some(with_fix(diag, f, "put it in a string", span, format!("\"{{{inner}}}\"")))
}

// ── punctuation from other formats ───────────────────────────────────────

/// `key: value` (JSON, YAML, HTTP headers) or `method: GET`, `url: …`.
fn colon(f: &Failure<'_>) -> Option<Diagnostic> {
    if !f.text[f.at..].starts_with(':') {
        return None;
    }
    if f.expects_punct("=") {
        return Some(colon_for_equals(f));
    }
    // A colon after a keyword or a name: `method: GET`, `url: https://…`,
    // `option city: "…"`, `headers: { … }`.
    let keyword = previous_word(f.text, f.at)
        .filter(|(_, s)| s.end as usize == end_of_previous(f.text, f.at))
        .map_or("", |(w, _)| w);
    // `reply: "hi"`: a value on the line, so not a block opened the Python way.
    let rest = f.text[f.at + 1..].trim_start_matches([' ', '\t']);
    let value_follows = keyword == "reply" && !rest.starts_with(['\n', '\r', '{', '#']) && !rest.is_empty();
    if f.expects_punct("{") && !matches!(keyword, "body" | "params" | "headers") && !value_follows {
        return Some(colon_opening_block(f));
    }
    Some(colon_after_word(f, keyword))
}

/// `key: value` where blk writes `key = value` (JSON, YAML, a pasted
/// header line): every colon of the line becomes `=`.
fn colon_for_equals(f: &Failure<'_>) -> Diagnostic {
    let span = Span::new(f.at, f.at + 1);
    let (habit, form) = match context(f) {
        Context::Headers => ("an HTTP header line", "Name = \"value\""),
        Context::Body => ("JSON", "key = value"),
        _ => ("JSON or YAML", "name = value"),
    };
    let diag = syntax(format!("expected `=`, found `:` ({habit} habit)"))
        .label(span, format!("blk writes `{form}`, with `=`"));
    let pasted = (context(f) == Context::Headers).then(|| header_line(f.text, f.at)).flatten();
    let edits = pasted.unwrap_or_else(|| key_colons(f.text, f.at));
    let line = corrected_line(f.text, f.at, &edits);
    diag.help(format!("write `=`: `{line}`")).suggest_edits("write `=`", edits, Confidence::Certain)
}

/// `command weather:`, `if a == b:`, `else:`: Python and YAML open a block
/// with `:` and indentation; blk with braces.
fn colon_opening_block(f: &Failure<'_>) -> Diagnostic {
    let span = Span::new(f.at, f.at + 1);
    let diag = syntax("a block opens with `{`, not `:`").label(span, "write `{` here, and close the block with `}`");
    let edit = Span::new(end_of_previous(f.text, f.at), f.at + 1);
    let line = corrected_line(f.text, f.at, &[Edit { span: edit, replacement: " {".into() }]);
    diag.help(format!("open the block with `{{` and close it with `}}`: `{line} … }}`")).suggest_edits(
        "write `{`",
        vec![Edit { span: edit, replacement: " {".into() }],
        Confidence::Maybe,
    )
}

/// `method: GET`, `url: https://…`, `headers: {…}`: the colon goes (and an
/// unquoted value gets its quotes, a pasted object's keys their `=`).
fn colon_after_word(f: &Failure<'_>, keyword: &str) -> Diagnostic {
    let span = Span::new(f.at, f.at + 1);
    let diag = match keyword {
        "" => syntax("unexpected `:`"),
        _ => syntax(format!("no `:` after `{keyword}`")),
    }
    .label(span, "`:` is not used here");
    let after = f.at + 1;
    let value_at = after + (f.text[after..].len() - f.text[after..].trim_start_matches([' ', '\t']).len());
    let next = f.text[value_at..].chars().next();
    let wants_string = f.expects(Expected::Str) && !f.expects_keyword(Keyword::True);
    if wants_string && next.is_some_and(|c| c != '"' && c != '\n' && c != '\r') {
        // `url: https://…`: the value needs its quotes too.
        let word = loose_word(f.text, value_at);
        let value = &f.text[word.range()];
        let edit = Span::new(f.at, word.end as usize);
        let replacement = format!(" \"{}\"", escaped(value));
        return with_fix(diag, f, "leave out the `:` and quote the value", edit, replacement);
    }
    let glued_after = f.text[after..].starts_with([' ', '\t']);
    let edit = if glued_after { span } else { Span::new(f.at, after) };
    let replacement = if glued_after { "" } else { " " };
    let mut edits = vec![Edit { span: edit, replacement: replacement.into() }];
    if matches!(keyword, "headers" | "params" | "body") {
        // `headers: {"Accept": "…"}`: the keys' colons too, one mistake.
        edits.extend(key_colons(f.text, after));
    }
    if keyword == "method" {
        edits.extend(unquoted_method(f.text, value_at));
    }
    let line = corrected_line(f.text, f.at, &edits);
    diag.help(format!("leave out the `:`: `{line}`")).suggest_edits("leave out the `:`", edits, Confidence::Certain)
}

/// The edits that turn the colon at `at`, and every later `key:` colon of
/// its line (outside strings), into `=`: a JSON object pasted whole is one
/// mistake with one fix.
/// A header line pasted from HTTP, `Referer: https://example.com:8080/`:
/// the name's `:` becomes ` = ` and the rest of the line its quoted value
/// (its own colons are the value's). `None` when the value is quoted.
fn header_line(text: &str, at: usize) -> Option<Vec<Edit>> {
    let eol = line_end(text, at);
    let value = text[at + 1..eol].trim();
    if value.is_empty() || value.starts_with('"') {
        return None;
    }
    let glued = at > 0 && !text.as_bytes()[at - 1].is_ascii_whitespace();
    let replacement = format!("{}= \"{}\"", if glued { " " } else { "" }, escaped(value));
    Some(vec![Edit { span: Span::new(at, eol), replacement }])
}

fn key_colons(text: &str, at: usize) -> Vec<Edit> {
    #[derive(PartialEq)]
    enum Seen {
        /// `{` or `,`: an item begins.
        ItemStart,
        /// A key that began an item (`"b"`, `X-Foo`).
        Key,
        Other,
    }
    let bytes = text.as_bytes();
    let eol = line_end(text, at);
    let mut edits = Vec::new();
    // A later `:` on the line is a key's only when its key begins an item
    // (`{"a": 1, "b": 2}`): after `{` or `,`. One inside a value (a URL's
    // `https:`, a port) is the value's, and stays as written.
    let mut seen = Seen::Other;
    for t in Lexer::from(text, at) {
        let i = t.start();
        if i >= eol || t.kind == Kind::Comment {
            break;
        }
        if t.is_trivia() {
            continue;
        }
        let punct = (t.kind == Kind::Punct).then(|| bytes[i]);
        seen = match (punct, &t.kind) {
            (Some(b':'), _) => {
                if i == at || seen == Seen::Key {
                    let glued = i > 0 && !bytes[i - 1].is_ascii_whitespace();
                    edits.push(Edit { span: Span::new(i, i + 1), replacement: if glued { " =" } else { "=" }.into() });
                }
                Seen::Other
            }
            (Some(b'{' | b','), _) => Seen::ItemStart,
            (None, Kind::Str { .. } | Kind::Word) if seen == Seen::ItemStart => Seen::Key,
            // A key goes on through `-` and words: `X-Request-Id`.
            (Some(b'-'), _) | (None, Kind::Word | Kind::Number) if seen == Seen::Key => Seen::Key,
            _ => Seen::Other,
        };
    }
    edits
}

/// `=` where `==` compares, `===`, `body = { … }`, `var n = 0`.
fn equals(f: &Failure<'_>) -> Option<Diagnostic> {
    let rest = &f.text[f.at..];
    if f.expects_punct("==") {
        let (wrong, right) = if rest.starts_with("===") {
            ("===", "==")
        } else if rest.starts_with("!==") {
            ("!==", "!=")
        } else if rest.starts_with('=') && !rest.starts_with("==") {
            ("=", "==")
        } else {
            return None;
        };
        let span = Span::new(f.at, f.at + wrong.len());
        let diag = syntax(format!("`{wrong}` does not compare; write `{right}`"))
            .label(span, format!("a condition compares with `{right}`"));
        return Some(with_fix(diag, f, &format!("write `{right}`"), span, right.into()));
    }
    // `===` whose first `==` was read: reading stops at the third `=`.
    if rest.starts_with('=') && f.text[..f.at].ends_with("==") && f.expects(Expected::Str) {
        let span = Span::new(f.at - 2, f.at + 1);
        let diag = syntax("`===` is JavaScript; blk compares with `==`").label(span, "write `==`");
        return Some(with_fix(diag, f, "write `==`", span, "==".into()));
    }
    if !rest.starts_with('=') {
        return None;
    }
    let span = Span::new(f.at, f.at + 1);
    let keyword = previous_word(f.text, f.at).map_or("", |(w, _)| w);
    if TAKES_A_VALUE.contains(&keyword) && !f.expects_punct("{") {
        let value_at = f.at + 1 + (f.text[f.at + 1..].len() - f.text[f.at + 1..].trim_start_matches([' ', '\t']).len());
        let mut edits =
            vec![Edit { span: Span::new(end_of_previous(f.text, f.at), value_at), replacement: " ".into() }];
        if keyword == "method" {
            edits.extend(unquoted_method(f.text, value_at));
        }
        let line = corrected_line(f.text, f.at, &edits);
        return Some(
            syntax(format!("no `=` after `{keyword}`"))
                .label(span, "fields are written `keyword value`")
                .help(format!("leave out the `=`: `{line}`"))
                .suggest_edits("leave out the `=`", edits, Confidence::Certain),
        );
    }
    if f.expects_punct("{") {
        let keyword = previous_word(f.text, f.at).map_or("", |(w, _)| w);
        let diag = syntax(format!("no `=` after `{keyword}`")).label(span, "`=` is not used here");
        let edit = if f.text[f.at + 1..].starts_with(' ') { Span::new(f.at, f.at + 2) } else { span };
        let edit = Span::new(end_of_previous(f.text, f.at), edit.end as usize);
        return Some(with_fix(diag, f, &format!("write `{keyword} {{ … }}`"), edit, " ".into()));
    }
    // `var greeting = hello`: the `var` item ended before `=` (its default
    // must be a value), and `=` cannot start an item.
    if f.at == f.item {
        // `var NAME =` or `var NAME per SCOPE =`.
        let words: Vec<&str> = f.text[line_start(f.text, f.at)..f.at].split_whitespace().collect();
        if !matches!(words.as_slice(), ["var", _] | ["var", _, "per", _]) {
            return None;
        }
        let value_at = f.at + 1 + (f.text[f.at + 1..].len() - f.text[f.at + 1..].trim_start().len());
        if f.text[f.at + 1..value_at].contains('\n') || value_at >= f.text.len() {
            // `var count =` and nothing after it on the line.
            let edit = Span::new(end_of_previous(f.text, f.at), f.at + 1);
            let diag = syntax("`=` with no default value after it").label(span, "no value follows on this line");
            return Some(
                diag.help("give the default as a value, `var count = 0` or `var name = \"none\"`, or leave out the `=` (the variable then starts empty)")
                    .suggest_edits("leave out the `=`", vec![Edit { span: edit, replacement: String::new() }], Confidence::Certain),
            );
        }
        let word = loose_word(f.text, value_at);
        if word.start == word.end {
            return None;
        }
        let value = &f.text[word.range()];
        let diag =
            syntax("a `var`'s default is a value: a string, a number, `true`, `false`, `null`, a list or an object")
                .label(word, format!("`{value}` is a bare word"));
        return Some(with_fix(diag, f, "quote it", word, format!("\"{}\"", escaped(value))));
    }
    None
}

/// `"post"` where a method goes: the edit that writes `POST`, when the
/// string closes on its line.
fn unquoted_method(text: &str, at: usize) -> Option<Edit> {
    let close = string_at(text, at)?;
    (close < line_end(text, at))
        .then(|| Edit { span: Span::new(at, close + 1), replacement: text[at + 1..close].trim().to_ascii_uppercase() })
}

/// `;` at the end of a line, or a `,` between fields or nodes.
fn stray_punctuation(f: &Failure<'_>) -> Option<Diagnostic> {
    let c = f.text[f.at..].chars().next()?;
    if c != ';' && !(c == ',' && (wants_field(f) || wants_node(f))) {
        return None;
    }
    let span = Span::new(f.at, f.at + 1);
    let diag = syntax(format!("unexpected `{c}`")).label(span, "nothing ends or separates fields and nodes here");
    let diag = with_fix(diag, f, &format!("leave out the `{c}`"), span, String::new());
    Some(
        diag.note(
            "a line break ends a field or node; commas separate entries only inside `params`, `headers` and `body`",
        ),
    )
}

/// `select …`, `button …` or another part of a message inside a `form`,
/// which holds only text inputs.
fn part_in_form(f: &Failure<'_>) -> Option<Diagnostic> {
    let line = line_start(f.text, f.at);
    let written = f.text[line..f.at].trim_start();
    let word = written.split_whitespace().next()?;
    if !matches!(word, "select" | "button" | "embed" | "choice" | "field") {
        return None;
    }
    let open = super::lexer::still_open(f.text, f.item, line, b'{', b'}').pop()?;
    let head = f.text[line_start(f.text, open)..open].trim_start();
    if head.split_whitespace().next() != Some("form") {
        return None;
    }
    let start = f.at - written.len();
    let help = match word {
        "select" | "choice" => {
            "a menu in a form is an input with choices: `input NAME { label \"…\" choice \"Label\" \"value\" }` \
             (or `users`, `roles`, `channels`; `radio` or `checkboxes` to show the choices as such)"
        }
        _ => "a form holds `input NAME { label \"…\" }`s and `text \"…\"`s, at most 5; a button goes in a message",
    };
    let diag = syntax(format!("a form holds only `input`s and `text`s, not a `{word}`"))
        .label(Span::new(start, start + word.len()), "not an input")
        .help(help);
    Some(diag)
}

/// `field "Name"` in an embed, with no value: pest wants the value's string
/// at whatever follows (often the next line's `}`); the mistake is the field.
fn field_without_value(f: &Failure<'_>) -> Option<Diagnostic> {
    if !f.expects(Expected::Str) {
        return None;
    }
    let before = before_comments(f.text, f.at);
    let line = line_start(before, before.len());
    let written = before[line..].trim_start();
    let name = written.strip_prefix("field")?.trim_start();
    // The line is `field "Name"` alone: one whole string after the word.
    if !(name.len() >= 2 && name.starts_with('"') && name.ends_with('"') && !name[1..name.len() - 1].contains('"')) {
        return None;
    }
    let start = before.len() - written.len();
    let diag = syntax("this embed `field` has a name and no value".to_string())
        .label(Span::new(start, before.len()), "no value after its name")
        .help("an embed field is written `field \"Name\" \"Value\"`, with `inline` after it to stand beside the next");
    Some(diag)
}

// ── brackets ─────────────────────────────────────────────────────────────

/// The innermost `[` still open at `at` (outside strings, comments and
/// response references).
fn innermost_open_bracket(text: &str, from: usize, at: usize) -> Option<usize> {
    super::lexer::still_open(text, from, at, b'[', b']').pop()
}

/// `tags = ["a", "b"` with the `]` missing.
fn unclosed_array(f: &Failure<'_>) -> Option<Diagnostic> {
    if !(f.expects_punct("]") && f.expects_punct(",")) || f.text[f.at..].starts_with(']') {
        return None;
    }
    let open = innermost_open_bracket(f.text, f.item, f.at)?;
    let end = end_of_previous(f.text, f.at);
    let diag = syntax("this `[` is never closed")
        .label(Span::new(open, open + 1), "this array has no `]`")
        .related(f.found_span, format!("the array should have ended before {}", f.found));
    Some(with_fix(diag, f, "close the array with `]`", Span::new(end, end), "]".into()))
}

/// The file ends inside a tree or block.
fn missing_close_brace(f: &Failure<'_>) -> Option<Diagnostic> {
    if f.at < f.text.trim_end().len() || !f.expects_punct("}") {
        return None;
    }
    let (open, mismatch) = lost_brace(f.text, f.item, f.text.len());
    if let Some((o, close)) = mismatch {
        // The `}` at the end closed an inner block: that block lost its own.
        return Some(lost_brace_diagnostic(f, o, close));
    }
    let innermost = *open.last()?;
    let head = f.text[line_start(f.text, innermost)..innermost].trim();
    let mut closing = String::new();
    if !f.text.ends_with('\n') {
        closing.push('\n');
    }
    for &brace in open.iter().rev() {
        closing.push_str(indent(f.text, brace));
        closing.push_str("}\n");
    }
    let end = f.text.len();
    let s = if open.len() == 1 { "" } else { "s" };
    let diag = syntax(format!("`{head} {{` is never closed"))
        .label(Span::new(innermost, innermost + 1), "this `{` has no `}`")
        .related(Span::new(f.at, f.at), "the file ends here")
        .help(format!("add the closing `}}`{s} at the end of the file (or where the block should end)"))
        .suggest_edits(
            format!("add the missing `}}`{s}"),
            vec![Edit { span: Span::new(end, end), replacement: closing }],
            Confidence::Certain,
        );
    Some(diag)
}

/// A `}` that closes nothing.
fn extra_close_brace(f: &Failure<'_>) -> Option<Diagnostic> {
    if !f.text[f.at..].starts_with('}') || f.at != f.item || !f.expects_keyword(Keyword::Command) {
        return None;
    }
    let span = Span::new(f.at, f.at + 1);
    let diag = syntax("this `}` closes nothing").label(span, "no `{` is open here");
    Some(diag.help("delete it (the `}` before it already closed the command or event)").suggest_edits(
        "delete the `}`",
        vec![Edit { span, replacement: String::new() }],
        Confidence::Certain,
    ))
}

/// `api forecast` with its `{` missing: reading stops at the next line.
fn missing_open_brace(f: &Failure<'_>) -> Option<Diagnostic> {
    if !(f.tokens.iter().filter(|t| **t != Expected::Trivia).all(|t| *t == Expected::Punct("{"))
        && f.expects_punct("{"))
    {
        return None;
    }
    if f.text[f.at..].starts_with(['=', ':']) {
        return None;
    }
    let end = end_of_previous(f.text, f.at);
    let head = f.text[line_start(f.text, end)..end].trim();
    let diag = syntax(format!("expected `{{` after `{head}`, found {}", f.found))
        .label(f.found_span, format!("expected `{{` before {}", f.found));
    let edit = Edit { span: Span::new(end, end), replacement: " {".into() };
    let line = corrected_line(f.text, end, std::slice::from_ref(&edit));
    Some(diag.help(format!("open the block: `{line}`")).suggest_edits("add `{`", vec![edit], Confidence::Certain))
}

/// `headers { "Accept: application/json" }`: a whole header line quoted.
fn header_in_one_string(f: &Failure<'_>) -> Option<Diagnostic> {
    if context(f) != Context::Headers || !f.expects_punct("=") {
        return None;
    }
    let end = end_of_previous(f.text, f.at);
    let start = string_ending_at(f, end)?;
    let inner = &f.text[start + 1..end - 1];
    let (name, value) = inner.split_once(':')?;
    let name = name.trim();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        return None;
    }
    let span = Span::new(start, end);
    let diag = syntax("a header is written `Name = \"value\"`, not as one string")
        .label(span, "a whole header line in one string");
    Some(with_fix(diag, f, "split it into name and value", span, format!("{name} = \"{}\"", value.trim())))
}

// ── names ────────────────────────────────────────────────────────────────

/// `option sides integer "How many"`: the description after the type.
fn description_after_type(f: &Failure<'_>) -> Option<Diagnostic> {
    let close = string_at(f.text, f.at)?;
    if close >= line_end(f.text, f.at) {
        return None;
    }
    let before = &f.text[line_start(f.text, f.at)..f.at];
    let ["option", _, kind] = before.split_whitespace().collect::<Vec<_>>()[..] else {
        return None;
    };
    let kind_at = line_start(f.text, f.at) + before.rfind(kind)?;
    let description = &f.text[f.at..=close];
    let span = Span::new(kind_at, close + 1);
    let diag = syntax("an option's description comes before its type")
        .label(Span::new(f.at, close + 1), "the description")
        .label(Span::new(kind_at, kind_at + kind.len()), "the type");
    Some(with_fix(diag, f, "write the description first", span, format!("{description} {kind}")))
}

/// `method "GET"`, `api "my block" {`.
fn quoted_name(f: &Failure<'_>) -> Option<Diagnostic> {
    if !f.expects(Expected::Name) || f.expects(Expected::Str) {
        return None;
    }
    let close = string_at(f.text, f.at)?;
    if close >= line_end(f.text, f.at) {
        return None;
    }
    let span = Span::new(f.at, close + 1);
    let inner = &f.text[f.at + 1..close];
    let keyword = previous_word(f.text, f.at).map_or("", |(w, _)| w);
    if keyword == "method" {
        let method = inner.trim().to_ascii_uppercase();
        let diag = syntax("the method is a word, not a string").label(span, "write it without quotes");
        return Some(with_fix(diag, f, "write the method without quotes", span, method));
    }
    let name = if matches!(keyword, "command" | "option") { to_platform_name(inner) } else { to_name(inner) };
    let what = match keyword {
        "api" => "a block name",
        "command" => "a command name",
        "event" => "an event name",
        "option" => "an option name",
        "save" | "var" => "a variable name",
        _ => "a name",
    };
    let label = if matches!(keyword, "command" | "option") {
        "names are letters and digits of any script, `-`, `_` and `'`, without quotes"
    } else {
        "names are letters, digits and `_`, without quotes"
    };
    let diag = syntax(format!("{what} is a word, not a string")).label(span, label);
    Some(with_fix(diag, f, "write the name without quotes", span, name))
}

/// `command "Ping Pong" "…" {`: a quoted name is a context-menu command's,
/// which `for user` or `for message` follows; a slash command's name is a
/// word.
fn quoted_command_name(f: &Failure<'_>) -> Option<Diagnostic> {
    if !f.expects_keyword(Keyword::For) {
        return None;
    }
    let end = end_of_previous(f.text, f.at);
    // (`"` is one byte: the text before it ends on a character's boundary.)
    if !f.text[..end].ends_with('"') {
        return None;
    }
    let start = f.text[..end - 1].rfind('"')?;
    if previous_word(f.text, start).map(|(w, _)| w) != Some("command") {
        return None;
    }
    let span = Span::new(start, end);
    let name = to_platform_name(&f.text[start + 1..end - 1]);
    let diag = syntax("a command's name in quotes is a context-menu command's, followed by `for user` or `for message`")
        .label(span, "a slash command's name is a word, without quotes")
        .help(format!(
            "for a slash command, write `{name}` without quotes; for a command in the menu of a user or a message, write `for user` or `for message` after the name"
        ));
    Some(diag.suggest_edits(format!("write `{name}`"), vec![Edit { span, replacement: name }], Confidence::Maybe))
}

/// The name a person meant by `text`: letters, digits and `_`, with
/// anything else turned into `_`.
fn to_name(text: &str) -> String {
    let mut name: String =
        text.trim().chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        name.insert(0, '_');
    }
    name
}

/// The command's or option's name a person meant by `text`: in lower
/// case, a blank or another character the platform refuses turned into `-`.
fn to_platform_name(text: &str) -> String {
    let name: String = text
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| if crate::discord::names::is_name_char(c) { c } else { '-' })
        .collect();
    if name.is_empty() {
        "_".into()
    } else {
        name
    }
}

/// The command's or option's name (the platform's characters) that ends
/// at `end`, if any.
fn platform_name_before(text: &str, end: usize) -> Option<Span> {
    let start = text[..end]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| crate::discord::names::is_name_char(c))
        .last()
        .map(|(i, _)| i)?;
    Some(Span::new(start, end))
}

/// `command ping.pong "…"`, `command ping pong "…"`, `option a/b`: a
/// command's or option's name in pieces. `-` joins them, as the platform
/// takes it.
fn name_in_pieces(f: &Failure<'_>) -> Option<Diagnostic> {
    let (first, glue) = match f.text[f.at..].chars().next()? {
        c if c.is_whitespace() => return None,
        c if crate::discord::names::is_name_char(c) => {
            (platform_name_before(f.text, end_of_previous(f.text, f.at))?, "")
        }
        c if ".:/!?+&".contains(c) && f.at > 0 => (platform_name_before(f.text, f.at)?, &f.text[f.at..f.at + 1]),
        _ => return None,
    };
    let keyword = previous_word(f.text, first.start as usize).map_or("", |(w, _)| w);
    // `option my opt` reads `opt` as the option's type: the checker says so.
    if !(keyword == "command" || (keyword == "option" && !glue.is_empty())) {
        return None;
    }
    let from = f.at + glue.len();
    let rest = f.text[from..]
        .char_indices()
        .take_while(|&(_, c)| crate::discord::names::is_name_char(c))
        .last()
        .map(|(i, c)| from + i + c.len_utf8())?;
    let span = Span::new(first.start as usize, rest);
    let written = &f.text[span.range()];
    let name = to_platform_name(written);
    let what = if keyword == "command" { "a command's" } else { "an option's" };
    let diag = syntax(format!("`{written}` is not {what} name: a name is one word"))
        .label(span, "letters and digits of any script, `-`, `_` and `'`, without blanks");
    Some(with_fix(diag, f, &format!("write `{name}`"), span, name))
}

/// `api my-block {`: a hyphen in a name that is not a command's or an
/// option's (those take it).
fn name_with_hyphen(f: &Failure<'_>) -> Option<Diagnostic> {
    if !f.text[f.at..].starts_with('-') || f.at == 0 || !is_name_char(f.text.as_bytes()[f.at - 1]) {
        return None;
    }
    let (_, head) = word_before(f.text, f.at)?;
    let keyword = previous_word(f.text, head.start as usize).map_or("", |(w, _)| w);
    if !matches!(keyword, "api" | "event" | "save" | "var") {
        return None;
    }
    let mut end = f.at;
    let bytes = f.text.as_bytes();
    while end < bytes.len() && (is_name_char(bytes[end]) || bytes[end] == b'-') {
        end += 1;
    }
    let span = Span::new(head.start as usize, end);
    let written = &f.text[span.range()];
    let name = written.replace('-', "_");
    let diag = syntax(format!("`{written}` is not a name: names are letters, digits and `_`"))
        .label(span, "a hyphen cannot be part of a name");
    Some(with_fix(diag, f, &format!("write `{name}`"), span, name))
}

/// `command /weather`: the slash is how users type a command, not its name.
fn slash_in_name(f: &Failure<'_>) -> Option<Diagnostic> {
    if !f.text[f.at..].starts_with('/') || !f.expects(Expected::Name) {
        return None;
    }
    let span = Span::new(f.at, f.at + 1);
    let diag =
        syntax("a command's name is written without `/`").label(span, "users type the `/`; the name is the word");
    Some(with_fix(diag, f, "leave out the `/`", span, String::new()))
}

// ── values ───────────────────────────────────────────────────────────────

/// `reply Hello`, `url https://…`, `Accept = application/json`: text that
/// must be a string.
fn unquoted_string(f: &Failure<'_>) -> Option<Diagnostic> {
    // After `reply`, a `{` opens the block form: a word there is text all the same.
    let after_reply = previous_word(f.text, f.at).is_some_and(|(w, _)| w == "reply");
    let only_string = f.expects(Expected::Str)
        && f.tokens
            .iter()
            .filter(|t| **t != Expected::Trivia)
            .all(|t| *t == Expected::Str || (after_reply && *t == Expected::Punct("{")));
    // A value of a body or a parameter: a string, number, `true`, … .
    let value = f.expects(Expected::Str) && f.expects_keyword(Keyword::True);
    let first = f.text[f.at..].chars().next()?;
    if !(only_string || value)
        || !(first.is_alphabetic() || (only_string && (first.is_alphanumeric() || first == '/' || first == '<')))
    {
        return None;
    }
    if value
        && matches!(
            f.found_text(),
            "True" | "TRUE" | "False" | "FALSE" | "None" | "nil" | "NULL" | "Null" | "undefined" | "NaN"
        )
    {
        return None;
    }
    let keyword = previous_word(f.text, f.at).map_or("", |(w, _)| w);
    // `name = item[name]` where only a string goes: the path, in braces.
    if let Some(t) = super::lexer::token_at(f.text, f.item, f.at)
        .filter(|t| t.start() == f.at && t.kind == super::lexer::Kind::Reference { closed: true })
        .filter(|_| keyword != "reply")
    {
        let path = t.text(f.text);
        let diag = syntax(format!("`{path}` goes inside a string here"))
            .label(t.span, "only a string goes here")
            .help(format!("write `\"{{{path}}}\"`: a value in a URL, a parameter or a header is text"));
        return Some(with_fix(diag, f, "put it in a string", t.span, format!("\"{{{path}}}\"")));
    }
    let span = if keyword == "reply" {
        // The rest of the line, less an end-of-line comment.
        let text = f.text[f.at..comment_or_eol(f.text, f.at)].trim_end();
        Span::new(f.at, f.at + text.len())
    } else if context(f) == Context::Headers || context(f) == Context::Params || value {
        let line = &f.text[f.at..comment_or_eol(f.text, f.at)];
        let text = line.split([',', '}', ']']).next().unwrap_or(line).trim_end();
        Span::new(f.at, f.at + text.len())
    } else {
        loose_word(f.text, f.at)
    };
    let text = &f.text[span.range()];
    let what = match keyword {
        "reply" | "url" | "platform" | "include" => value_of(keyword),
        _ if context(f) == Context::Headers => "a header value",
        _ => "this value",
    };
    let diag = syntax(format!("{what} is a string: write it in double quotes"))
        .label(Span::new(span.start as usize, loose_word(f.text, f.at).end.min(span.end) as usize), "not a string");
    if keyword != "reply" && text.bytes().all(super::lexer::is_word_byte) && names_a_variable(f.text, text) {
        // `save last = visits` with a variable `visits`: the word, or the
        // variable's value? Either edit changes what is sent or saved, so
        // neither is made for you.
        let var = if declares_option(f.text, text) { format!("option_{text}") } else { text.to_string() };
        return Some(
            diag.help(format!(
                "write `\"{{{var}}}\"` for the value of the variable `{var}`, or `\"{text}\"` for the word itself"
            ))
            .suggest_edits(
                format!("use the value of `{{{var}}}`"),
                vec![Edit { span, replacement: format!("\"{{{var}}}\"") }],
                Confidence::Maybe,
            )
            .suggest_edits(
                "use the word",
                vec![Edit { span, replacement: format!("\"{text}\"") }],
                Confidence::Maybe,
            ),
        );
    }
    Some(with_fix(diag, f, "quote it", span, quoted(f.text, span)))
}

/// Whether `word` names a variable of the file: declared with `var`, a
/// `save` target, an option (as `city` or `option_city`), or a variable a
/// trigger provides.
fn names_a_variable(text: &str, word: &str) -> bool {
    let triggers = crate::language::vocab::COMMAND_VARIABLES
        .iter()
        .chain(crate::language::vocab::EVENTS.iter().flat_map(|e| e.vars.iter()));
    if triggers.into_iter().any(|v| *v == word) {
        return true;
    }
    let bare = word.strip_prefix("option_").unwrap_or(word);
    declared(text).any(|(keyword, name)| name == word || (keyword == "option" && name == bare))
}

/// Whether `word` is declared by an `option` (so its variable is `option_<word>`).
fn declares_option(text: &str, word: &str) -> bool {
    declared(text).any(|(keyword, name)| keyword == "option" && name == word)
}

/// The names that `var`, `option` and `save` declare in the text, with the keyword.
fn declared(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let words: Vec<&str> =
        Lexer::new(text).significant().filter(|t| t.kind == Kind::Word).map(|t| t.text(text)).collect();
    let pairs: Vec<(&str, &str)> =
        words.windows(2).filter(|w| matches!(w[0], "var" | "option" | "save")).map(|w| (w[0], w[1])).collect();
    pairs.into_iter()
}

/// The text of `span` as a string literal: escaped, with each unquoted
/// response reference in it put in braces (`api_x[response.a]` reads the
/// response; quoted bare, it would be sent as those characters).
fn quoted(text: &str, span: Span) -> String {
    let mut out = String::from("\"");
    let end = span.end as usize;
    for t in Lexer::from(text, span.start as usize).take_while(|t| t.start() < end) {
        let piece = &text[t.start()..t.end().min(end)];
        match t.kind {
            Kind::Reference { closed: true } if t.end() <= end => {
                out.push('{');
                out.push_str(piece);
                out.push('}');
            }
            _ => out.push_str(&escaped(piece)),
        }
    }
    out.push('"');
    out
}

/// `save joins += 1`: an assignment operator other languages have. The
/// calculation it means is written out: `save joins = joins + 1`.
fn arithmetic(f: &Failure<'_>) -> Option<Diagnostic> {
    let rest = &f.text[f.at..];
    let op = ["+=", "-=", "*=", "/=", "%="].into_iter().find(|op| rest.starts_with(op))?;
    let head = f.text[line_start(f.text, f.at)..f.at].trim();
    let name = head.strip_prefix("save")?.trim();
    if name.is_empty() || !name.bytes().all(super::lexer::is_word_byte) {
        return None;
    }
    let span = Span::new(f.at, f.at + 2);
    let replacement = format!("= {name} {}", &op[..1]);
    let line = corrected_line(f.text, f.at, &[Edit { span, replacement: replacement.clone() }]);
    Some(
        syntax(format!("blk has no `{op}`"))
            .label(span, "an assignment operator")
            .help(format!("write the calculation out: `{line}`"))
            .suggest_edits(format!("write `{replacement}`"), vec![Edit { span, replacement }], Confidence::Certain),
    )
}

/// `if (a == b)`, `&&`, `||`, `and`, `or` in conditions.
fn condition_habits(f: &Failure<'_>) -> Option<Diagnostic> {
    let rest = &f.text[f.at..];
    // `if (a == b)`: parentheses group a calculation, so reading stops at
    // the comparison inside them (or, before there were calculations, at
    // the `(` itself).
    let line_head = &f.text[line_start(f.text, f.at)..f.at];
    let comparison = ["==", "!=", "<", ">", "contains"].iter().any(|op| rest.starts_with(op));
    let open_at = if rest.starts_with('(') && f.expects(Expected::Reference) {
        Some(f.at)
    } else if comparison && f.expects_punct(")") && line_head.trim_start().starts_with("if") {
        line_head.find('(').map(|i| line_start(f.text, f.at) + i)
    } else {
        None
    };
    if let Some(open_at) = open_at {
        let eol = line_end(f.text, open_at);
        let close = f.text[open_at..eol].rfind(')').map(|i| open_at + i)?;
        let open = Span::new(open_at, open_at + 1);
        let edits = vec![
            Edit { span: open, replacement: String::new() },
            Edit { span: Span::new(close, close + 1), replacement: String::new() },
        ];
        let line = corrected_line(f.text, f.at, &edits);
        let diag = syntax("a condition is written without parentheses")
            .label(open, "`(` does not group here")
            .help(format!("leave out the parentheses: `{line}`"))
            .suggest_edits("leave out the parentheses", edits, Confidence::Certain);
        return Some(diag);
    }
    if !f.expects_punct("{") || !f.text[line_start(f.text, f.at)..f.at].trim_start().starts_with(['i', '}']) {
        return None;
    }
    let word = ["&&", "||", "and ", "or ", "AND ", "OR "].iter().find(|w| rest.starts_with(**w))?;
    let word = word.trim();
    let span = Span::new(f.at, f.at + word.len());
    let both = word.starts_with('&') || word.eq_ignore_ascii_case("and");
    let help = if both {
        "a condition compares one pair; for both, nest one `if` inside the other: `if a == 1 { if b == 2 { … } }`"
    } else {
        "a condition compares one pair; for either, use `else if` with the same branch: `if a == 1 { … } else if b == 2 { … }`"
    };
    Some(syntax(format!("`{word}` does not join conditions")).label(span, "one comparison per `if`").help(help))
}

/// `reply "It is " + api_x[response.temp]`: JavaScript concatenation.
fn concatenation(f: &Failure<'_>) -> Option<Diagnostic> {
    if !f.text[f.at..].starts_with('+') {
        return None;
    }
    let plus = Span::new(f.at, f.at + 1);
    let diag = syntax("strings are not joined with `+`").label(plus, "`+` does not join strings");
    let end = end_of_previous(f.text, f.at);
    let eol = line_end(f.text, f.at);
    let Some(start) = string_ending_at(f, end) else {
        return Some(diag.help("put variables inside one string: `\"It is {api_x[response.temp]}\"`"));
    };
    let left = &f.text[start + 1..end - 1];
    let right = f.text[f.at + 1..eol].trim();
    let joined = if let Some(inner) = right.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        format!("\"{left}{inner}\"")
    } else if right.starts_with("api_") && right.ends_with(']') || right.bytes().all(is_name_char) && !right.is_empty()
    {
        format!("\"{left}{{{right}}}\"")
    } else {
        return Some(diag.help("put variables inside one string: `\"It is {api_x[response.temp]}\"`"));
    };
    let span = Span::new(start, f.at + 1 + (f.text[f.at + 1..eol].trim_end().len()));
    Some(with_fix(diag, f, "put the value inside the string", span, joined))
}

/// `True`, `None`, `nil`, `undefined` from other languages.
fn foreign_literal(f: &Failure<'_>) -> Option<Diagnostic> {
    if !wants_value(f) {
        return None;
    }
    let word = f.found_text();
    let right = match word {
        "True" | "TRUE" => "true",
        "False" | "FALSE" => "false",
        "None" | "nil" | "NULL" | "Null" | "undefined" | "NaN" => "null",
        _ => return None,
    };
    let diag = syntax(format!("`{word}` is not a value here; blk writes `{right}`"))
        .label(f.found_span, format!("write `{right}`"));
    Some(with_fix(diag, f, &format!("write `{right}`"), f.found_span, right.into()))
}

// ── words where a keyword belongs ────────────────────────────────────────

/// Words from other languages and tools (and keywords in other cases)
/// where a field of an `api` block or a node of a tree belongs.
fn foreign_word(f: &Failure<'_>) -> Option<Diagnostic> {
    let (field, node) = (wants_field(f), wants_node(f));
    let word = f.found_text();
    let span = f.found_span;
    let after_brace = f.text[..f.at].trim_end().ends_with('}');
    if matches!(word.to_ascii_lowercase().as_str(), "elif" | "elsif" | "elseif")
        && (after_brace || f.expects_keyword(Keyword::Else))
    {
        let diag = syntax(format!("`{word}` is written `else if`")).label(span, "write `else if`");
        return Some(with_fix(diag, f, "write `else if`", span, "else if".into()));
    }
    if !field && !node && !f.expects_keyword(Keyword::Else) {
        return None;
    }
    if word.is_empty() {
        return None;
    }
    if field {
        if let Some(d) = request_line(f, word) {
            return Some(d);
        }
        if let Some(d) = curl_option(f) {
            return Some(d);
        }
        if word == "curl" {
            return Some(curl_command(f));
        }
    }
    if node && word == "var" {
        let diag =
            syntax("`var` declares a variable at the top level, outside commands and events").label(span, "not a node");
        return Some(
            diag.help("inside a command, `save name = value` sets a custom variable; declare it with `var name = \"default\"` at the top of the file")
                .maybe_fix("write `save`", span, "save"),
        );
    }
    let lower = word.to_ascii_lowercase();
    let candidates: Vec<&str> = Keyword::ALL.iter().filter(|k| f.expects_keyword(**k)).map(|k| k.as_str()).collect();
    if candidates.contains(&lower.as_str()) {
        let diag =
            syntax(format!("keywords are lowercase: `{lower}`, not `{word}`")).label(span, format!("write `{lower}`"));
        return Some(with_fix(diag, f, &format!("write `{lower}`"), span, lower));
    }
    let synonym = match lower.as_str() {
        "query" | "querystring" | "query_params" | "qs" | "search" | "param" | "parameters" => Some("params"),
        "json" | "data" | "payload" | "form" | "content" => Some("body"),
        "header" => Some("headers"),
        "uri" | "endpoint" | "link" | "href" | "address" => Some("url"),
        "verb" | "type" => Some("method"),
        _ => None,
    };
    if let Some(right) = synonym.filter(|r| candidates.contains(r)) {
        let diag =
            syntax(format!("unknown field `{word}`; the field is `{right}`")).label(span, format!("write `{right}`"));
        return Some(with_fix(diag, f, &format!("write `{right}`"), span, right.into()));
    }
    if node && matches!(word, "let" | "const" | "set") {
        return Some(syntax(format!("`{word}` is not a node; blk keeps values with `save`"))
            .label(span, "not a keyword")
            .help("`save name = value` keeps a value in a custom variable (it outlives the run); inside one run, write the value where it is used"));
    }
    if node && matches!(word, "fetch" | "axios" | "request" | "curl" | "http" | "GET" | "POST") {
        return Some(
            syntax(format!("`{word}` is not a node; requests are `api` blocks"))
                .label(span, "not a keyword")
                .help("send a request with a block: `api name { method GET  url \"https://…\" }` (one field a line)"),
        );
    }
    if let Some(right) = did_you_mean(word, candidates.iter().copied()) {
        let diag = syntax(format!("unknown keyword `{word}`; did you mean `{right}`?"))
            .label(span, format!("write `{right}`"));
        return Some(with_fix(diag, f, &format!("write `{right}`"), span, right.into()));
    }
    None
}

const METHODS: &[&str] = &["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];

/// `GET https://…` on one line, as `.http` and `.hurl` files write it.
fn request_line(f: &Failure<'_>, word: &str) -> Option<Diagnostic> {
    if !METHODS.contains(&word.to_ascii_uppercase().as_str()) {
        return None;
    }
    let eol = line_end(f.text, f.at);
    let url = f.text[f.found_span.end as usize..eol].trim();
    let url = url.split(" HTTP/").next().unwrap_or(url).trim();
    let method = word.to_ascii_uppercase();
    let diag = syntax("a request line is written as two fields, `method` and `url`")
        .label(f.found_span, "`.http` files write `GET https://…`; blk writes `method GET`");
    if url.is_empty() {
        return Some(with_fix(diag, f, "write the method as a field", f.found_span, format!("method {method}")));
    }
    let pad = indent(f.text, f.at);
    let span = Span::new(f.at, eol);
    let replacement = format!("method {method}\n{pad}url \"{}\"", escaped(url.trim_matches('"')));
    let diag = diag.help(format!("write `method {method}` and, on the next line, `url \"{}\"`", url.trim_matches('"')));
    Some(diag.suggest_edits(
        "split the request line into fields",
        vec![Edit { span, replacement }],
        Confidence::Certain,
    ))
}

/// `-H "Name: value"`, `-d '…'`, `-X POST`: curl options.
fn curl_option(f: &Failure<'_>) -> Option<Diagnostic> {
    let rest = &f.text[f.at..];
    let flag_len = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
    let flag = &rest[..flag_len];
    let field = match flag {
        "-H" | "--header" => "headers",
        "-d" | "--data" | "--data-raw" | "--json" => "body",
        "-X" | "--request" => "method",
        "-G" | "--get" => "method",
        _ => return None,
    };
    let span = Span::new(f.at, f.at + flag_len);
    let diag = syntax(format!("`{flag}` is a curl option; blk writes `{field}`")).label(span, "a curl option");
    let eol = shell_command_end(f.text, f.at);
    let value = f.text[f.at + flag_len..eol].trim();
    let unquoted = value.trim_matches(|c| c == '"' || c == '\'');
    if field == "headers" {
        if let Some((name, v)) = unquoted.split_once(':') {
            let line = format!("headers {{ {} = \"{}\" }}", name.trim(), escaped(v.trim()));
            let diag = diag.help(format!("write the header in `headers`: `{line}`"));
            return Some(diag.suggest_edits(
                "write it as a `headers` field",
                vec![Edit { span: Span::new(f.at, eol), replacement: line }],
                shell_fix_confidence(f.text, f.at, eol),
            ));
        }
    }
    if field == "method" && !unquoted.is_empty() {
        let line = format!("method {}", unquoted.to_ascii_uppercase());
        let diag = diag.help(format!("write `{line}`"));
        return Some(diag.suggest_edits(
            "write it as a `method` field",
            vec![Edit { span: Span::new(f.at, eol), replacement: line }],
            shell_fix_confidence(f.text, f.at, eol),
        ));
    }
    Some(diag.help(format!(
        "write the {field} as a field of the block (docs/language.md), like `body {{ key = \"value\" }}`"
    )))
}

/// `curl -X POST https://… -H 'Name: value'` pasted into a block.
fn curl_command(f: &Failure<'_>) -> Diagnostic {
    let eol = shell_command_end(f.text, f.at);
    let words: Vec<&str> = f.text[f.found_span.end as usize..eol].split_whitespace().collect();
    let mut method = None;
    let mut url = None;
    let mut headers = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let unquote = |w: &str| w.trim_matches(|c| c == '"' || c == '\'').to_string();
        match words[i] {
            "-X" | "--request" => {
                method = words.get(i + 1).map(|m| unquote(m).to_ascii_uppercase());
                i += 1;
            }
            "-H" | "--header" => {
                // A header value may hold blanks: read up to the closing quote.
                let mut value = String::new();
                while let Some(w) = words.get(i + 1) {
                    i += 1;
                    if !value.is_empty() {
                        value.push(' ');
                    }
                    value.push_str(w);
                    if value.len() > 1 && (value.ends_with('\'') || value.ends_with('"')) {
                        break;
                    }
                }
                if let Some((k, v)) = unquote(&value).split_once(':') {
                    headers.push(format!("{} = \"{}\"", k.trim(), escaped(v.trim())));
                }
            }
            w if w.trim_matches(|c| c == '"' || c == '\'').starts_with("http") => url = Some(unquote(w)),
            _ => {}
        }
        i += 1;
    }
    let diag = syntax("a curl command is written as the block's fields").label(f.found_span, "curl is not a field");
    let Some(url) = url else {
        return diag
            .help("write the request as fields: `method POST`, `url \"https://…\"`, `headers { Name = \"value\" }`");
    };
    let pad = indent(f.text, f.at);
    let mut lines =
        vec![format!("method {}", method.unwrap_or_else(|| "GET".into())), format!("url \"{}\"", escaped(&url))];
    if !headers.is_empty() {
        lines.push(format!("headers {{ {} }}", headers.join(", ")));
    }
    let replacement = lines.join(&format!("\n{pad}"));
    diag.help(format!("write the request as fields: `{}`", lines.join("`, `"))).suggest_edits(
        "write the fields",
        vec![Edit { span: Span::new(f.at, eol), replacement }],
        shell_fix_confidence(f.text, f.at, eol),
    )
}

/// `reply("hi")`, `command weather() {`: parentheses from function calls.
fn call_parens(f: &Failure<'_>) -> Option<Diagnostic> {
    if !f.text[f.at..].starts_with('(') || f.at == 0 {
        return None;
    }
    let glued = is_name_char(f.text.as_bytes()[f.at - 1]);
    let (keyword, _) = previous_word(f.text, f.at)?;
    let eol = line_end(f.text, f.at);
    let close = f.at + f.text[f.at..eol].find(')')?;
    let open = Span::new(f.at, f.at + 1);
    let inner = f.text[f.at + 1..close].trim();
    let (message, edits) = if inner.is_empty() {
        (
            "a name takes no parentheses".to_string(),
            vec![Edit { span: Span::new(f.at, close + 1), replacement: String::new() }],
        )
    } else {
        (
            format!("`{keyword}` is not a function: write its value after it"),
            vec![
                Edit { span: open, replacement: if glued { " ".into() } else { String::new() } },
                Edit { span: Span::new(close, close + 1), replacement: String::new() },
            ],
        )
    };
    let line = corrected_line(f.text, f.at, &edits);
    let help = if inner.is_empty() {
        format!("leave out `()` (a command's inputs are `option`s): `{line}`")
    } else {
        format!("leave out the parentheses: `{line}`")
    };
    Some(syntax(message).label(open, "parentheses are not used here").help(help).suggest_edits(
        "leave out the parentheses",
        edits,
        Confidence::Certain,
    ))
}

/// `save` at the top level of a file.
fn top_level_node(f: &Failure<'_>) -> Option<Diagnostic> {
    if f.at != f.item || !f.expects_keyword(Keyword::Command) {
        return None;
    }
    let word = f.found_text();
    let message = match word {
        "save" => "`save` runs inside a command or event; a variable is declared at the top level with `var`",
        "reply" | "api" | "if" | "option" => "this node belongs inside a command or event",
        _ => return None,
    };
    let diag = syntax(message).label(f.found_span, "outside any command or event");
    if word == "save" {
        return Some(
            diag.help("declare the variable with its default at the top level: `var name = \"default\"`, or move the `save` into a command")
                .maybe_fix("write `var`", f.found_span, "var"),
        );
    }
    Some(diag.help(format!("put it inside a command: `command name {{ {word} … }}`")))
}

/// The `{`s open at `at`, and the first `{` closed by a `}` indented less
/// than its own line: the one whose `}` was lost, so that the `}` meant for
/// the block around it closed it instead.
fn lost_brace(text: &str, from: usize, at: usize) -> (Vec<usize>, Option<(usize, usize)>) {
    let mut open: Vec<usize> = Vec::new();
    let mut mismatch = None;
    for t in Lexer::from(text, from) {
        let i = t.start();
        if i >= at {
            break;
        }
        if t.is(text, b'{') {
            open.push(i);
        } else if t.is(text, b'}') {
            if let Some(o) = open.pop() {
                if mismatch.is_none() && indent(text, i).len() < indent(text, o).len() {
                    mismatch = Some((o, i));
                }
            }
        }
    }
    (open, mismatch)
}

/// The `{` at `o` lost its `}`, and the `}` at `close` closed it instead:
/// the fix closes it after its last line indented deeper than it (on its
/// own line when the block's content is, else on the line of its `{`).
fn lost_brace_diagnostic(f: &Failure<'_>, o: usize, close: usize) -> Diagnostic {
    let depth = indent(f.text, o).len();
    let mut at = end_of_previous(f.text, line_start(f.text, close));
    let mut line = line_start(f.text, o);
    while let Some(next) = f.text[line..close].find('\n').map(|i| line + i + 1) {
        if next >= close {
            break;
        }
        let body = &f.text[next..line_end(f.text, next)];
        if !body.trim().is_empty() && indent(f.text, next).len() > depth {
            at = line_end(f.text, next);
        }
        line = next;
    }
    let at = f.text[..at].trim_end().len();
    let same_line = line_start(f.text, at) == line_start(f.text, o);
    let replacement = if same_line { " }".to_string() } else { format!("\n{}}}", indent(f.text, o)) };
    let head = f.text[line_start(f.text, o)..o].trim().to_string();
    syntax(format!("`{head} {{` is never closed"))
        .label(Span::new(o, o + 1), "this `{` has no `}`")
        .related(Span::new(close, close + 1), "so this `}` closes it, and the block around it stays open")
        .help(format!("close it with `}}` after line {}", f.text[..at].matches('\n').count() + 1))
        .suggest_edits("add the missing `}`", vec![Edit { span: Span::new(at, at), replacement }], Confidence::Certain)
}

/// A keyword that cannot stand where it is, because a `{` before it was
/// never closed (`body { name = "Ann"` then `}` closes the block instead).
/// Indentation tells which `{` lost its `}`: the first one closed by a `}`
/// indented less than its own line.
fn lost_close_brace(f: &Failure<'_>) -> Option<Diagnostic> {
    let word = f.found_text();
    let following = Keyword::parse(word).is_some_and(|k| crate::language::vocab::FOLLOWING.contains(&k));
    if !f.expects_punct("}") || Keyword::parse(word).is_none() || word == "else" || following {
        return None;
    }
    let (open, mismatch) = lost_brace(f.text, f.item, f.at);
    let head = |o: usize| f.text[line_start(f.text, o)..o].trim().to_string();
    if let Some((o, close)) = mismatch {
        return Some(lost_brace_diagnostic(f, o, close));
    }
    let o = *open.last()?;
    if indent(f.text, f.at).len() > indent(f.text, o).len() {
        // Indented inside the block on purpose: it is in the wrong place.
        let inside = head(o);
        return Some(
            syntax(format!("`{word}` cannot go inside `{inside} {{ … }}`"))
                .label(f.found_span, "not allowed here")
                .related(Span::new(o, o + 1), "inside this")
                .help(format!("move it out, after the `}}` that closes `{inside}`")),
        );
    }
    let at = end_of_previous(f.text, f.at);
    let edit = Edit { span: Span::new(at, at), replacement: format!("\n{}}}", indent(f.text, o)) };
    Some(
        syntax(format!("`{} {{` is never closed", head(o)))
            .label(Span::new(o, o + 1), "this `{` has no `}`")
            .related(f.found_span, format!("`{word}` would be inside it"))
            .help(format!("close it with `}}` before `{word}`"))
            .suggest_edits("add the missing `}`", vec![edit], Confidence::Maybe),
    )
}

/// The keywords a value follows directly, never `=` (`url = "…"` is `url "…"`).
const TAKES_A_VALUE: [&str; 7] = ["method", "url", "sample", "allow", "reply", "platform", "include"];

/// What the string after a keyword is, in words.
fn value_of(keyword: &str) -> &'static str {
    match keyword {
        "reply" => "a reply's text",
        "url" => "a URL",
        "platform" => "the platform's URL",
        _ => "an included file's path",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_shown_around_its_fix() {
        let line = format!("    reply {{ {} \"Again\" x }}", "label y ".repeat(5_000));
        let at = line.find("\"Again\"").unwrap();
        let edit = Edit { span: Span::new(at, at + 7), replacement: "Again".into() };
        let shown = corrected_line(&line, at, &[edit]);
        assert!(shown.starts_with('…') && shown.contains("y  Again x }") && shown.chars().count() < 200, "{shown}");
        let short = "    save \"x\" = 1";
        let edit = Edit { span: Span::new(9, 12), replacement: "x".into() };
        assert_eq!(corrected_line(short, 9, &[edit]), "save x = 1");
    }
}
