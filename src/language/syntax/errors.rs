//! Turning pest's failures into diagnostics that read as English.

use pest::error::{ErrorVariant, InputLocation};
use pest::Parser as _;

use super::failure::{Expected, Failure};
use super::grammar::{BlkParser, Rule};
use crate::base::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::base::source::Span;
use crate::language::vocab::{Keyword, Place};

/// What an embed's part can be, in the words of [`describe`].
const EMBED_PARTS: &str =
    "an embed part (`title` `description` `url` `color` `timestamp` `footer` `footer_icon` `author` `author_url` `author_icon` `image` `thumbnail`)";

/// The rules a message never names: they are parts of others.
const SILENT: &[Rule] = &[
    Rule::WHITESPACE,
    Rule::item,
    Rule::tree_open,
    Rule::node_item,
    Rule::node,
    Rule::field,
    Rule::operand,
    Rule::ident_char,
    Rule::kw_end,
    Rule::key_char,
    Rule::name_char,
    Rule::ref_index,
    Rule::arith_atom,
    Rule::reply_item,
    Rule::fixed,
    Rule::node_word,
];

/// The words a person would use for each rule: a keyword's rule reads as
/// its keyword (`keyword`), the others as written here. Every rule says how
/// it reads, or is [`SILENT`]: a test holds each new rule to it.
fn describe(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        r if SILENT.contains(&r) => return None,
        Rule::loop_order | Rule::kw_by | Rule::kw_desc => "`by`",
        Rule::list_op | Rule::kw_append | Rule::kw_remove | Rule::kw_at => "`append`, `remove` or `remove at`",
        Rule::schedule | Rule::kw_every | Rule::kw_cron => "a schedule (`every`, `at` or `cron`)",
        Rule::webhook | Rule::kw_webhook => "a webhook (`webhook \"/path\" signed … secret …`)",
        Rule::webhook_word => "a webhook's setting (`signed github`, `secret \"<NAME>\"`, `sample \"file.json\"`)",
        Rule::option_type => "an option type",
        Rule::var_scope | Rule::kw_per => "`per user`, `per server` or `per channel`",
        Rule::arith | Rule::arith_group => "a calculation",
        Rule::later_node | Rule::later_ahead => "`after \"10m\" { … }` or `at \"TIME\" { … }`",
        Rule::later_part => "`key \"…\"`, `note \"…\"`, `per user` or `per server`",
        Rule::arith_var => "a variable's name",
        Rule::arith_op => "an operator (`+` `-` `*` `/` `%`)",
        Rule::option_bound | Rule::kw_min | Rule::kw_max => "`min N` or `max N`",
        Rule::option_in => "`in` and kinds of channel",
        Rule::option_files | Rule::kw_types => "`types \"image .pdf\"`: kinds of file",
        Rule::menu => "a context-menu command's name and menu (`\"Show Avatar\" for user`)",
        Rule::register => "`permissions`, `contexts`, `installs`, `nsfw` or `locale`",
        Rule::locale_option => "an option's name and its translation",
        Rule::locale_choice => "a choice's name and its translation",
        Rule::choice => "a choice `\"Shown\" = value`",
        Rule::branch => "`{`",
        Rule::condition => "a condition",
        Rule::op => "a comparison (`==` `!=` `<` `<=` `>` `>=` `contains` `starts with` `ends with`)",
        Rule::op_sym | Rule::op_word => "a comparison (`==` `!=` `<` `<=` `>` `>=` `contains` `starts with` `ends with`)",
        Rule::param => "a URL parameter `key = value`",
        Rule::header => "a header `Name = \"value\"`",
        Rule::value => "a value",
        Rule::object | Rule::fixed_object => "an object `{ … }`",
        Rule::entry => "a body entry `key = value`",
        Rule::array | Rule::fixed_array => "an array `[ … ]`",
        Rule::ident | Rule::name => "a name",
        Rule::key => "a key",
        Rule::string => "a string",
        Rule::number => "a number",
        Rule::reference => "a response reference `api_<block>[response…]` or a loop element's `item[…]`",
        Rule::embed_part | Rule::embed_key => EMBED_PARTS,
        Rule::action => "an action",
        Rule::action_verb => "an action (`send` `dm` `react` `give role` `take role` `timeout` `kick` `ban` `unban` `nickname` `create` `delete` `pin` `unpin` `purge` `edit`)",
        Rule::action_kind => "`role`, `message`, `channel` or `thread`",
        Rule::action_subject => "what the action acts on (a string, a number or an earlier action's name)",
        Rule::action_arg | Rule::action_word => "an action's word (`to` `from` `in` `for` `reason` `after` `reply_to` `delete_messages` `name` `topic` `category` `visible` `tags` `as`) and its value",
        Rule::action_flag => "`off` or `private`",
        Rule::action_to => "`to`, `reply_to` or `from` and a value, or an earlier action's name",
        Rule::action_message => "a message: a string, or `{ text … embed … }`",
        Rule::setting => "a setting (a word, then a string or a number if it takes one)",
        Rule::part => "a part `name = \"text\"` or `name = file \"path\"`",
        Rule::status_code => "a status like `503` or `5xx`",
        Rule::page_setting => "a setting of `pages`: `items PATH`, `cursor PATH param NAME`, `next PATH`, `next link`, `max N` or `limit N`",
        _ => return keyword(rule).map(Keyword::quoted),
    })
}

/// The keyword a rule starts with, for did-you-mean.
fn keyword(rule: Rule) -> Option<Keyword> {
    Some(match rule {
        Rule::command | Rule::kw_command => Keyword::Command,
        Rule::event | Rule::kw_event => Keyword::Event,
        Rule::var_decl | Rule::kw_var => Keyword::Var,
        Rule::platform | Rule::kw_platform => Keyword::Platform,
        Rule::include | Rule::kw_include => Keyword::Include,
        Rule::option_decl | Rule::kw_option => Keyword::Option,
        Rule::api_block | Rule::kw_api => Keyword::Api,
        Rule::reply | Rule::kw_reply => Keyword::Reply,
        Rule::save | Rule::save_field | Rule::kw_save => Keyword::Save,
        Rule::if_node | Rule::kw_if => Keyword::If,
        Rule::kw_else => Keyword::Else,
        Rule::for_node | Rule::menu_loop | Rule::kw_for => Keyword::For,
        Rule::stop | Rule::kw_stop => Keyword::Stop,
        Rule::kw_in => Keyword::In,
        Rule::loop_limit | Rule::kw_limit => Keyword::Limit,
        Rule::loop_join | Rule::kw_join => Keyword::Join,
        Rule::kw_into => Keyword::Into,
        Rule::loop_order | Rule::kw_by => Keyword::By,
        Rule::kw_desc => Keyword::Desc,
        Rule::kw_append => Keyword::Append,
        Rule::kw_remove => Keyword::Remove,
        Rule::kw_at => Keyword::At,
        Rule::kw_clear => Keyword::Clear,
        Rule::kw_every => Keyword::Every,
        Rule::kw_webhook => Keyword::Webhook,
        Rule::kw_cron => Keyword::Cron,
        Rule::kw_channel => Keyword::Channel,
        Rule::text_node => Keyword::Text,
        Rule::kw_required => Keyword::Required,
        Rule::var_scope | Rule::kw_per => Keyword::Per,
        Rule::choices | Rule::kw_choices => Keyword::Choices,
        Rule::kw_min => Keyword::Min,
        Rule::kw_types => Keyword::Types,
        Rule::option_bound | Rule::kw_max => Keyword::Max,
        Rule::locale | Rule::kw_locale => Keyword::Locale,
        Rule::kw_permissions => Keyword::Permissions,
        Rule::kw_contexts => Keyword::Contexts,
        Rule::kw_installs => Keyword::Installs,
        Rule::kw_nsfw => Keyword::Nsfw,
        Rule::guard | Rule::kw_require => Keyword::Require,
        Rule::subcommand | Rule::kw_subcommand => Keyword::Subcommand,
        Rule::kw_group => Keyword::Group,
        Rule::autocomplete | Rule::kw_autocomplete => Keyword::Autocomplete,
        Rule::choice_node => Keyword::Choice,
        Rule::reply_text | Rule::kw_text => Keyword::Text,
        Rule::kw_ephemeral => Keyword::Ephemeral,
        Rule::embed | Rule::kw_embed => Keyword::Embed,
        Rule::embed_field | Rule::kw_field => Keyword::Field,
        Rule::kw_inline => Keyword::Inline,
        Rule::container | Rule::kw_container => Keyword::Container,
        Rule::section | Rule::kw_section => Keyword::Section,
        Rule::separator | Rule::kw_separator => Keyword::Separator,
        Rule::gallery | Rule::kw_gallery => Keyword::Gallery,
        Rule::media | Rule::kw_media => Keyword::Media,
        Rule::thumbnail | Rule::kw_thumbnail => Keyword::Thumbnail,
        Rule::poll | Rule::kw_poll => Keyword::Poll,
        Rule::poll_answer | Rule::kw_answer => Keyword::Answer,
        Rule::handler | Rule::kw_handler => Keyword::Handler,
        Rule::update | Rule::kw_update => Keyword::Update,
        Rule::cooldown | Rule::kw_cooldown => Keyword::Cooldown,
        Rule::button | Rule::kw_button => Keyword::Button,
        Rule::select | Rule::kw_select => Keyword::Select,
        Rule::menu_choice | Rule::kw_choice => Keyword::Choice,
        Rule::form | Rule::kw_form => Keyword::Form,
        Rule::form_input | Rule::kw_input => Keyword::Input,
        Rule::kw_true => Keyword::True,
        Rule::kw_false => Keyword::False,
        Rule::kw_null => Keyword::Null,
        Rule::kw_as => Keyword::As,
        _ => return block_keyword(rule),
    })
}

/// The keyword an `api` block's rule starts with.
fn block_keyword(rule: Rule) -> Option<Keyword> {
    Some(match rule {
        Rule::method_field | Rule::kw_method => Keyword::Method,
        Rule::url_field | Rule::kw_url => Keyword::Url,
        Rule::params_field | Rule::kw_params => Keyword::Params,
        Rule::headers_field | Rule::kw_headers => Keyword::Headers,
        Rule::body_field | Rule::kw_body => Keyword::Body,
        Rule::sample_field | Rule::kw_sample => Keyword::Sample,
        Rule::allow_field | Rule::kw_allow => Keyword::Allow,
        Rule::auth_field | Rule::kw_auth => Keyword::Auth,
        Rule::timeout_field | Rule::kw_timeout => Keyword::Timeout,
        Rule::retry_field | Rule::kw_retry => Keyword::Retry,
        Rule::failed_field | Rule::failed_node | Rule::kw_failed => Keyword::Failed,
        Rule::with_node | Rule::kw_with => Keyword::With,
        Rule::together_node | Rule::kw_together => Keyword::Together,
        Rule::cancel_node | Rule::kw_cancel => Keyword::Cancel,
        Rule::await_node | Rule::kw_await => Keyword::Await,
        Rule::kw_message => Keyword::Message,
        Rule::var_expires | Rule::kw_expires => Keyword::Expires,
        Rule::kw_after => Keyword::After,
        Rule::kw_key => Keyword::Key,
        Rule::kw_note => Keyword::Note,
        Rule::kw_on => Keyword::On,
        Rule::kw_backoff => Keyword::Backoff,
        Rule::body_json | Rule::kw_json => Keyword::Json,
        Rule::body_multipart | Rule::kw_multipart => Keyword::Multipart,
        Rule::file_part | Rule::reply_file | Rule::kw_file => Keyword::File,
        Rule::file_text => Keyword::Text,
        Rule::kw_type => Keyword::Type,
        Rule::kw_filename => Keyword::Filename,
        Rule::body_form => Keyword::Form,
        Rule::body_text => Keyword::Text,
        Rule::pages_field | Rule::kw_pages => Keyword::Pages,
        Rule::cache_field | Rule::kw_cache => Keyword::Cache,
        Rule::kw_items => Keyword::Items,
        Rule::kw_cursor => Keyword::Cursor,
        Rule::kw_param => Keyword::Param,
        Rule::kw_next => Keyword::Next,
        Rule::kw_link => Keyword::Link,
        _ => return None,
    })
}

/// pest's process-wide error-detail switch, on while any of these lives.
/// It is switched off again however the last re-parse ends, so a file with
/// a syntax error never slows the files parsed after it; and a re-parse
/// that ends never switches it off under another that is still running on
/// another thread (which then read its error without the detail, and
/// described it differently: a test failed so under load).
struct ErrorDetail;

/// How many [`ErrorDetail`]s live.
static DETAILED: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

impl ErrorDetail {
    fn on() -> ErrorDetail {
        let mut live = DETAILED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *live += 1;
        pest::set_error_detail(true);
        ErrorDetail
    }
}

impl Drop for ErrorDetail {
    fn drop(&mut self) {
        let mut live = DETAILED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *live -= 1;
        if *live == 0 {
            pest::set_error_detail(false);
        }
    }
}

/// Parses the item at `pos` again, this time with pest's error detail on
/// (it costs nothing on the happy path, where it stays off), and describes
/// the failure: as one of the mistakes people make first when one is
/// recognised (src/language/syntax/mistakes.rs), in pest's terms otherwise.
pub(super) fn syntax_error(text: &str, pos: usize) -> Diagnostic {
    let err = match detailed_error(&text[pos..]) {
        Some(err) => err,
        None => {
            return Diagnostic::new(Code::Syntax, "could not read this item")
                .label(Span::new(pos, pos), "here")
                .help("check the item's syntax against docs/language.md")
        }
    };
    let failure = failure(text, pos, &err);
    super::mistakes::recognize(&failure).map_or_else(|| generic(&failure), |(_, d)| d)
}

/// The name of the mistake recogniser that explains the first syntax error
/// of `text`, if one does (for the tests of the corpus).
pub fn recognised_mistake(text: &str) -> Option<&'static str> {
    let mut pos = super::lexer::skip_trivia(text, 0);
    while pos < text.len() {
        match BlkParser::parse(Rule::item, &text[pos..]) {
            Ok(mut pairs) => pos = super::lexer::skip_trivia(text, pos + pairs.next()?.as_span().end()),
            Err(_) => {
                let err = detailed_error(&text[pos..])?;
                return super::mistakes::recognize(&failure(text, pos, &err)).map(|(name, _)| name);
            }
        }
    }
    None
}

/// pest's error for the item at the start of `rest`, with its detail.
///
/// A bare word where a value goes (`True`, a word where a `,` was missing)
/// is read by the grammar as the start of a loop element's path, `word[…]`,
/// which then wants its `[`: the furthest point reached is after the word,
/// and what was expected there is only `[`. The mistake is the word, so the
/// item is read again with the word's first letter made unreadable (one
/// byte for one, every offset the same): the failure is then at the word,
/// with everything a value could have been.
fn detailed_error(rest: &str) -> Option<pest::error::Error<Rule>> {
    let parse = |text: &str| {
        let _detail = ErrorDetail::on();
        BlkParser::parse(Rule::item, text).err()
    };
    let err = parse(rest)?;
    let Some(attempts) = err.parse_attempts() else { return Some(err) };
    let at = attempts.max_position;
    // What the word could have gone on with (its letters), or its `[`.
    let kinds: Vec<Expected> = attempts.expected_tokens().iter().filter_map(|t| Expected::of(&t.to_string())).collect();
    let only_bracket = kinds.contains(&Expected::Punct("["))
        && kinds
            .iter()
            .all(|k| matches!(k, Expected::Punct("[") | Expected::Trivia | Expected::Name | Expected::Number));
    let bytes = rest.as_bytes();
    let word =
        bytes[..at.min(bytes.len())].iter().rev().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
    if !only_bracket || word == 0 || bytes[at - word].is_ascii_digit() {
        return Some(err);
    }
    let mut patched = rest.to_string().into_bytes();
    patched[at - word] = 0x01;
    let patched = String::from_utf8(patched).ok()?;
    Some(parse(&patched).unwrap_or(err))
}

fn failure<'t>(text: &'t str, pos: usize, err: &pest::error::Error<Rule>) -> Failure<'t> {
    let location = match err.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    };
    // The furthest point reached is where the mistake is: pest's own
    // location is where the last whole rule failed, often a token earlier
    // (`body { "a": 1 }` fails the object at `{`, but the `=` at `:`).
    let attempts = err.parse_attempts();
    let furthest = attempts.as_ref().map_or(location, |a| a.max_position.max(location));
    let at = pos + furthest;
    let mut expected: Vec<&'static str> = Vec::new();
    let mut keywords: Vec<&'static str> = Vec::new();
    if furthest == location {
        if let ErrorVariant::ParsingError { positives, .. } = &err.variant {
            for rule in positives {
                if let Some(words) = describe(*rule) {
                    if !expected.contains(&words) {
                        expected.push(words);
                    }
                }
                if let Some(k) = keyword(*rule) {
                    keywords.push(k.as_str());
                }
            }
        }
    }
    let mut tokens = Vec::new();
    if let Some(attempts) = &attempts {
        for token in attempts.expected_tokens() {
            let Some(kind) = Expected::of(&token.to_string()) else { continue };
            let words = match kind {
                Expected::Punct(p @ ("{" | "}" | "[" | "]" | "=")) => Some(match p {
                    "{" => "`{`",
                    "}" => "`}`",
                    "[" => "`[`",
                    "]" => "`]`",
                    _ => "`=`",
                }),
                Expected::Str if furthest > location => Some("a string"),
                Expected::Keyword(k) if furthest > location => {
                    keywords.push(k.as_str());
                    Some(k.quoted())
                }
                _ => None,
            };
            if let Some(words) = words.filter(|w| !expected.contains(w)) {
                expected.push(words);
            }
            tokens.push(kind);
        }
    }
    // Inside a word (`elseif`: `else` read, then the word went on), the
    // word is what was found.
    let mut at = at;
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    while at > pos && at < text.len() && is_word(text.as_bytes()[at]) && is_word(text.as_bytes()[at - 1]) {
        at -= 1;
    }
    let (found, found_span) = found_at(text, at);
    Failure { text, item: pos, at, expected, keywords, tokens, found, found_span }
}

/// A failure no recognised mistake explains, in pest's terms.
fn generic(f: &Failure<'_>) -> Diagnostic {
    let (text, pos, at, expected) = (f.text, f.item, f.at, &f.expected);
    let found = &f.found;
    let message = match expected.len() {
        0 => format!("unexpected {found}"),
        _ => format!("expected {}, found {found}", join_or(expected)),
    };
    let mut diag = Diagnostic::new(Code::Syntax, message).label(f.found_span, format!("unexpected {found}"));
    let word = f.found_text();
    let unclosed = expected.contains(&"`}`").then(|| super::lexer::open_braces(text, pos, at).pop()).flatten();
    // An embed's parts are words of their own (`colour` for `color`).
    let parts = expected.contains(&EMBED_PARTS).then_some(crate::language::vocab::EmbedPart::ALL).into_iter().flatten();
    let candidates: Vec<&str> = f.keywords.iter().copied().chain(parts.map(|p| p.as_str())).collect();
    if let Some(suggestion) = did_you_mean(word, candidates.iter().copied()) {
        diag = diag.help(format!("did you mean `{suggestion}`?")).fix(
            format!("write `{suggestion}`"),
            f.found_span,
            suggestion,
        );
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
    Keyword::parse(word).is_some_and(|k| matches!(k.place(), Place::Top | Place::Tree))
}

/// What stands at `at`, in words, and its span: a whole word, one character,
/// or the end of the file.
pub(super) fn found_at(text: &str, at: usize) -> (String, Span) {
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

pub(super) fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rule added to the grammar says how a message reads it: by its
    /// keyword, in `describe`'s table, or as a part of others.
    #[test]
    fn every_rule_says_how_it_reads() {
        for rule in Rule::all_rules() {
            assert!(SILENT.contains(rule) || describe(*rule).is_some(), "{rule:?} has no words in `describe`");
        }
    }

    #[test]
    fn every_literal_of_the_grammar_has_a_kind() {
        let grammar = include_str!("../../../grammar/blk.pest");
        let mut literals = Vec::new();
        for line in grammar.lines().filter(|l| !l.trim_start().starts_with("//")) {
            let mut chars = line.chars();
            while let Some(c) = chars.next() {
                if c != '"' {
                    continue;
                }
                let mut literal = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => literal.push(match chars.next() {
                            Some('n') => '\n',
                            Some('t') => '\t',
                            Some('r') => '\r',
                            Some(other) => other,
                            None => break,
                        }),
                        c => literal.push(c),
                    }
                }
                literals.push(literal);
            }
        }
        assert!(literals.len() > 40, "{literals:?}");
        for l in literals.iter().filter(|l| !l.is_empty()) {
            assert!(Expected::of(l).is_some(), "the grammar's literal {l:?} has no kind in `Expected::of`");
        }
    }

    #[test]
    fn error_detail_is_off_again_after_a_syntax_error() {
        let diag = syntax_error("command c { reply }", 0);
        assert_eq!(diag.code, Code::Syntax);
        // With the detail on, pest records its parse attempts; off, it does not.
        let err = BlkParser::parse(Rule::item, "command c { reply }").unwrap_err();
        assert!(err.parse_attempts().is_none(), "pest's error detail was left on");
    }
}
