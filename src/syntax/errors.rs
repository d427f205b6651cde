//! Turning pest's failures into diagnostics that read as English.

use pest::error::{ErrorVariant, InputLocation};
use pest::Parser as _;

use super::{skip_literal, BlkParser, Rule};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::source::Span;

/// The words a person would use for each rule. Exhaustive on purpose: a new
/// rule cannot be added without saying how it reads.
fn describe(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::WHITESPACE
        | Rule::item
        | Rule::tree_open
        | Rule::node_item
        | Rule::node
        | Rule::field
        | Rule::operand
        | Rule::ident_char
        | Rule::ref_index => return None,
        Rule::command | Rule::kw_command => "`command`",
        Rule::event | Rule::kw_event => "`event`",
        Rule::var_decl | Rule::kw_var => "`var`",
        Rule::platform | Rule::kw_platform => "`platform`",
        Rule::option_decl | Rule::kw_option => "`option`",
        Rule::api_block | Rule::kw_api => "`api`",
        Rule::reply | Rule::kw_reply => "`reply`",
        Rule::save | Rule::kw_save => "`save`",
        Rule::if_node | Rule::kw_if => "`if`",
        Rule::kw_else => "`else`",
        Rule::branch => "`{`",
        Rule::condition => "a condition",
        Rule::op => "a comparison (`==` `!=` `<` `<=` `>` `>=` `contains`)",
        Rule::method_field | Rule::kw_method => "`method`",
        Rule::url_field | Rule::kw_url => "`url`",
        Rule::params_field | Rule::kw_params => "`params`",
        Rule::headers_field | Rule::kw_headers => "`headers`",
        Rule::body_field | Rule::kw_body => "`body`",
        Rule::sample_field | Rule::kw_sample => "`sample`",
        Rule::allow_field | Rule::kw_allow => "`allow`",
        Rule::param => "a URL parameter `key = value`",
        Rule::header => "a header `Name = \"value\"`",
        Rule::value => "a value",
        Rule::object => "an object `{ … }`",
        Rule::entry => "a body entry `key = value`",
        Rule::array => "an array `[ … ]`",
        Rule::ident => "a name",
        Rule::key => "a key",
        Rule::string => "a string",
        Rule::number => "a number",
        Rule::reference => "a response reference `api_<block>[response…]`",
        Rule::kw_true => "`true`",
        Rule::kw_false => "`false`",
        Rule::kw_null => "`null`",
    })
}

/// The keyword a rule starts with, for did-you-mean.
fn keyword(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::command | Rule::kw_command => "command",
        Rule::event | Rule::kw_event => "event",
        Rule::var_decl | Rule::kw_var => "var",
        Rule::platform | Rule::kw_platform => "platform",
        Rule::option_decl | Rule::kw_option => "option",
        Rule::api_block | Rule::kw_api => "api",
        Rule::reply | Rule::kw_reply => "reply",
        Rule::save | Rule::kw_save => "save",
        Rule::if_node | Rule::kw_if => "if",
        Rule::kw_else => "else",
        Rule::method_field | Rule::kw_method => "method",
        Rule::url_field | Rule::kw_url => "url",
        Rule::params_field | Rule::kw_params => "params",
        Rule::headers_field | Rule::kw_headers => "headers",
        Rule::body_field | Rule::kw_body => "body",
        Rule::sample_field | Rule::kw_sample => "sample",
        Rule::allow_field | Rule::kw_allow => "allow",
        Rule::kw_true => "true",
        Rule::kw_false => "false",
        Rule::kw_null => "null",
        _ => return None,
    })
}

/// pest's process-wide error-detail switch, on while it lives. It is
/// switched off again however the re-parse ends, so a file with a syntax
/// error never slows the files parsed after it.
struct ErrorDetail;

impl ErrorDetail {
    fn on() -> ErrorDetail {
        pest::set_error_detail(true);
        ErrorDetail
    }
}

impl Drop for ErrorDetail {
    fn drop(&mut self) {
        pest::set_error_detail(false);
    }
}

/// Parses the item at `pos` again, this time with pest's error detail on
/// (it costs nothing on the happy path, where it stays off), and describes
/// the failure.
pub(super) fn syntax_error(text: &str, pos: usize) -> Diagnostic {
    let rest = &text[pos..];
    let detailed = {
        let _detail = ErrorDetail::on();
        BlkParser::parse(Rule::item, rest)
    };
    let err = match detailed {
        Err(err) => err,
        Ok(_) => {
            return Diagnostic::new(Code::Syntax, "could not read this item")
                .label(Span::new(pos, pos), "here")
                .help("check the item's syntax against docs/language.md")
        }
    };
    let at = pos
        + match err.location {
            InputLocation::Pos(p) => p,
            InputLocation::Span((s, _)) => s,
        };
    let mut expected: Vec<&'static str> = Vec::new();
    let mut keywords: Vec<&'static str> = Vec::new();
    if let ErrorVariant::ParsingError { positives, .. } = &err.variant {
        for rule in positives {
            if let Some(words) = describe(*rule) {
                if !expected.contains(&words) {
                    expected.push(words);
                }
            }
            if let Some(k) = keyword(*rule) {
                keywords.push(k);
            }
        }
    }
    // Punctuation that pest tracks as tokens rather than rules.
    if let Some(attempts) = err.parse_attempts() {
        if attempts.max_position + pos == at {
            for token in attempts.expected_tokens() {
                let token = token.to_string();
                let words = match token.as_str() {
                    "{" => "`{`",
                    "}" => "`}`",
                    "[" => "`[`",
                    "]" => "`]`",
                    "=" => "`=`",
                    _ => continue,
                };
                if !expected.contains(&words) {
                    expected.push(words);
                }
            }
        }
    }

    let (found, found_span) = found_at(text, at);
    if text[at..].starts_with('"') {
        return Diagnostic::new(Code::Syntax, "unterminated string")
            .label(Span::new(at, at + 1), "this string is never closed")
            .help("end the string with `\"`; write `\\\"` for a quote inside it");
    }
    let message = match expected.len() {
        0 => format!("unexpected {found}"),
        _ => format!("expected {}, found {found}", join_or(&expected)),
    };
    let mut diag = Diagnostic::new(Code::Syntax, message).label(found_span, format!("unexpected {found}"));
    let word = &text[found_span.range()];
    let unclosed = expected.contains(&"`}`").then(|| innermost_open_brace(text, pos, at)).flatten();
    if let Some(suggestion) = did_you_mean(word, keywords.iter().copied()) {
        diag = diag.help(format!("did you mean `{suggestion}`?"));
    } else if let Some(open) = unclosed.filter(|_| found == "end of file" || is_keyword(word)) {
        diag = diag
            .related(Span::new(open, open + 1), "this `{` may be missing its `}`")
            .help("close the braces that are open before this point");
    } else if expected.len() == 1 {
        diag = diag.help(format!("write {} here", expected[0]));
    } else {
        diag = diag.help("see docs/language.md for the syntax of this construct");
    }
    diag
}

fn is_keyword(word: &str) -> bool {
    matches!(word, "command" | "event" | "var" | "platform" | "option" | "api" | "reply" | "save" | "if" | "else")
}

/// The innermost `{` still open at `at`, outside strings and comments.
fn innermost_open_brace(text: &str, from: usize, at: usize) -> Option<usize> {
    let bytes = &text.as_bytes()[..at];
    let mut open = Vec::new();
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'"' | b'#' => i = skip_literal(bytes, i),
            b'{' => open.push(i),
            b'}' => {
                open.pop();
            }
            _ => {}
        }
        i += 1;
    }
    open.pop()
}

/// What stands at `at`, in words, and its span: a whole word, one character,
/// or the end of the file.
fn found_at(text: &str, at: usize) -> (String, Span) {
    let rest = &text[at..];
    let Some(first) = rest.chars().next() else {
        return ("end of file".to_string(), Span::new(at, at));
    };
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    if is_word(first) {
        let len = rest.find(|c: char| !is_word(c)).unwrap_or(rest.len());
        return (format!("`{}`", &rest[..len]), Span::new(at, at + len));
    }
    let shown = match first {
        '\n' | '\r' => "end of line".to_string(),
        c => format!("`{c}`"),
    };
    (shown, Span::new(at, at + first.len_utf8()))
}

fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_detail_is_off_again_after_a_syntax_error() {
        let diag = syntax_error("command c { reply }", 0);
        assert_eq!(diag.code, Code::Syntax);
        // With the detail on, pest records its parse attempts; off, it does not.
        let err = BlkParser::parse(Rule::item, "command c { reply }").unwrap_err();
        assert!(err.parse_attempts().is_none(), "pest's error detail was left on");
    }
}
