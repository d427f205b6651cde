//! A `.blkt` file read into its tests (grammar/conversation.pest): each a
//! list of [`Step`]s with their spans, for the checker and the runner.

use pest::iterators::Pair;
use pest::Parser;
use serde_json::Value as Json;

use crate::base::diagnostics::{Code, Diagnostic};
use crate::base::source::{SourceFile, Span};
use crate::run::eval::Answer;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/conversation.pest"]
struct TestParser;

/// A test file: the bot it talks to, when it names one, and its tests.
#[derive(Debug, Clone, Default)]
pub struct TestFile {
    pub bot: Option<(String, Span)>,
    /// `secret NAME = "value"` lines: the secrets the tests' bot is given.
    pub secrets: Vec<(Word, String)>,
    pub tests: Vec<Test>,
}

#[derive(Debug, Clone)]
pub struct Test {
    pub name: String,
    /// Where its name is written.
    pub named: Span,
    pub span: Span,
    pub steps: Vec<Step>,
}

/// A word as written, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    pub text: String,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Step {
    pub kind: StepKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum StepKind {
    As(Member),
    Command {
        path: Vec<Word>,
        args: Vec<(Word, Json)>,
    },
    /// A context-menu command (`user` or `message` its menu) and what it
    /// was chosen on.
    Menu {
        name: Word,
        menu: &'static str,
        args: Vec<(Word, Json)>,
    },
    /// Typing `typed` in option `option` of command `path`.
    Type {
        path: Vec<Word>,
        option: Word,
        typed: Word,
    },
    Click(Click),
    Choose(Vec<Word>),
    Submit(Vec<(Word, Json)>),
    Event {
        kind: Word,
        args: Vec<(Word, Json)>,
    },
    Tick(Word),
    /// `say "…"`: the member's message in the channel.
    Say(Word),
    Wait {
        seconds: u64,
        written: Word,
    },
    Respond {
        block: Word,
        response: Answer,
    },
    Expect(Expect),
}

/// Who takes the steps: the member's name and what the `as` line set.
#[derive(Debug, Clone, Default)]
pub struct Member {
    pub name: String,
    /// (`id`, `roles`, …, its values), as written.
    pub fields: Vec<(Word, Vec<Word>)>,
}

#[derive(Debug, Clone)]
pub enum Click {
    Label(Word),
    Handler(Word),
}

#[derive(Debug, Clone)]
pub enum Expect {
    NothingElse,
    /// The choices an autocomplete offered, by name (and where the list is
    /// written).
    Choices(Vec<String>, Span),
    Message {
        kind: MessageKind,
        checks: Vec<(Check, At)>,
    },
    Request {
        block: Word,
        checks: Vec<(RequestCheck, At)>,
    },
    Saved {
        name: Word,
        value: Json,
        at: Span,
    },
    /// `expect action give role "…" to "…"`: an action by its verb (and
    /// kind: `give role`), and values it was taken with, each by its word
    /// (`""`: what it acts on).
    Action {
        action: Word,
        values: Vec<(String, String, At)>,
    },
}

/// Where a check is written, and where its expected value is (what
/// `--update` rewrites).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct At {
    pub whole: Span,
    pub value: Span,
}

/// Where the value of a check written as `pair` is: its matcher's text,
/// its list, its JSON or its word; or the end of the check when it has
/// none (`buttons` alone).
fn value_span(pair: &Pair<'_, Rule>) -> Span {
    if pair.as_rule() == Rule::matcher {
        return pair.clone().into_inner().last().map_or(span(pair), |s| span(&s));
    }
    let all: Vec<_> = pair.clone().into_inner().flatten().collect();
    if let Some(m) = all.iter().rev().find(|p| p.as_rule() == Rule::matcher) {
        return m.clone().into_inner().last().map_or(span(m), |s| span(&s));
    }
    for rule in [Rule::string_list, Rule::json, Rule::ident] {
        if let Some(p) = all.iter().find(|p| p.as_rule() == rule) {
            return span(p);
        }
    }
    let end = pair.as_span().end();
    Span::new(end, end)
}

fn at(pair: &Pair<'_, Rule>) -> At {
    At { whole: span(pair), value: value_span(pair) }
}

/// Which of the bot's messages an expectation is about.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageKind {
    /// A new message in the conversation (the answer or a follow-up).
    Reply,
    /// The message a click was on, edited in place.
    Update,
    /// A form shown.
    Form,
    /// A message sent to a channel (by its id as written).
    In(Word),
}

impl MessageKind {
    pub fn describe(&self) -> String {
        match self {
            MessageKind::Reply => "a reply".to_string(),
            MessageKind::Update => "the message updated".to_string(),
            MessageKind::Form => "a form".to_string(),
            MessageKind::In(channel) => format!("a message in {}", channel.text),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Match {
    Equals(String),
    Contains(String),
    Matches(regex::Regex),
}

impl Match {
    pub fn holds(&self, text: &str) -> bool {
        match self {
            Match::Equals(want) => text == want,
            Match::Contains(want) => text.contains(want.as_str()),
            Match::Matches(re) => re.is_match(text),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Match::Equals(want) => format!("{want:?}"),
            Match::Contains(want) => format!("contains {want:?}"),
            Match::Matches(re) => format!("matches {:?}", re.as_str()),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Check {
    Text(Match),
    Private,
    Public,
    Buttons(Vec<String>),
    Disabled(Vec<String>),
    Choices(Vec<String>),
    EmbedTitle(Match),
    EmbedDescription(Match),
    EmbedField(String, Match),
    Title(Match),
    Fields(Vec<String>),
    /// The message's poll, by its question.
    Poll(Match),
    /// The names of the message's files, in order.
    Files(Vec<String>),
}

#[derive(Debug, Clone)]
pub enum RequestCheck {
    Method(String),
    Url(Match),
    Body(String, Json),
}

/// Reads a test file: its tests, and the problems of values in them (B004,
/// B502); a file that does not read at all gets its diagnostic (B001).
pub fn parse(source: &SourceFile) -> Result<(TestFile, Vec<Diagnostic>), Vec<Diagnostic>> {
    // Nesting is bounded before pest reads it (it reads nesting by
    // recursion): the same scan and limit as a `.blk` file's (B003).
    let most = crate::language::syntax::MAX_DEPTH;
    if let Err((at, depth)) = crate::language::syntax::lexer::structure(&source.text, most) {
        return Err(vec![Diagnostic::new(Code::TooDeep, format!("nesting deeper than {most} levels"))
            .label(Span::new(at, at + 1), format!("level {depth} opens here"))
            .help(format!(
                "a test file reads at most {most} levels of `{{…}}` and `[…]`: a body that deep is a sample's to hold"
            ))]);
    }
    let pairs = match TestParser::parse(Rule::file, &source.text) {
        Ok(p) => p,
        Err(e) => return Err(vec![syntax_error(&e, source.text.len())]),
    };
    let mut reader = Reader { problems: Vec::new() };
    let mut file = TestFile::default();
    let top = pairs.flatten().filter(|p| matches!(p.as_rule(), Rule::bot_line | Rule::secret_line | Rule::test));
    for pair in top {
        match pair.as_rule() {
            Rule::secret_line => {
                let parts: Vec<_> = pair.into_inner().filter(|p| !p.as_rule().is_keyword()).collect();
                if let [name, value] = parts.as_slice() {
                    let name = reader.word(name);
                    let written = span(value);
                    let value = reader.string(value);
                    reader.secret_long_enough(&name, &value, written);
                    file.secrets.push((name, value));
                }
            }
            Rule::bot_line => {
                let s = pair.into_inner().find(|p| p.as_rule() == Rule::string);
                file.bot = s.map(|s| (reader.string(&s), span(&s)));
            }
            _ => file.tests.push(reader.test(pair)),
        }
    }
    Ok((file, reader.problems))
}

/// Where `pair` is written, without the blanks pest read after it (a
/// repetition that found nothing more keeps the blanks it skipped).
fn span(pair: &Pair<'_, Rule>) -> Span {
    let start = pair.as_span().start();
    Span::new(start, start + pair.as_str().trim_end().len())
}

/// B001 at the place pest stopped, with what it expected in words.
fn syntax_error(e: &pest::error::Error<Rule>, len: usize) -> Diagnostic {
    let at = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    let expected = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => {
            let mut words: Vec<String> = positives.iter().filter_map(|r| rule_words(*r)).collect();
            words.sort();
            words.dedup();
            words
        }
        pest::error::ErrorVariant::CustomError { .. } => Vec::new(),
    };
    let help = match expected.as_slice() {
        [] => "each test is `test \"name\" { … }`, its steps one a line (docs/test.md)".to_string(),
        [one] => format!("expected {one} here"),
        many => format!("expected one of {} here", many.join(", ")),
    };
    let end = (at + 1).min(len).max(at);
    Diagnostic::new(Code::Syntax, "this test file does not read as tests")
        .label(Span::new(at, end), "unexpected here")
        .help(help)
}

/// What a rule pest expected is, in words, when it is worth saying.
fn rule_words(rule: Rule) -> Option<String> {
    let name = format!("{rule:?}");
    if let Some(kw) = name.strip_prefix("kw_") {
        return Some(format!("`{kw}`"));
    }
    Some(
        match rule {
            Rule::test => "`test \"name\" { … }`",
            Rule::string => "a string",
            Rule::number => "a number",
            Rule::ident | Rule::name => "a name",
            Rule::json => "a JSON value",
            Rule::type_step => "`type COMMAND OPTION \"text\"`",
            Rule::member_word => "`id`, `roles`, `permissions`, `server`, `channel` or `locale`",
            Rule::message_check => {
                "`text`, `private`, `public`, `buttons`, `disabled`, `choices`, `embed`, `title` or `fields`"
            }
            Rule::request_check => "`method`, `url` or `body`",
            Rule::EOI => "the end of the file",
            _ => return None,
        }
        .to_string(),
    )
}

struct Reader {
    problems: Vec<Diagnostic>,
}

impl Reader {
    fn test(&mut self, pair: Pair<'_, Rule>) -> Test {
        let span = span(&pair);
        let mut inner = pair.into_inner().filter(|p| !p.as_rule().is_keyword());
        let named = inner.next();
        let name = named.as_ref().map(|n| self.string(n)).unwrap_or_default();
        let named = named.as_ref().map_or(span, |n| self::span(n));
        let steps = inner.map(|p| self.step(p)).collect();
        Test { name, named, span, steps }
    }

    fn string(&mut self, pair: &Pair<'_, Rule>) -> String {
        match serde_json::from_str::<String>(pair.as_str()) {
            Ok(s) => s,
            Err(_) => {
                self.problems.push(
                    Diagnostic::new(Code::InvalidEscape, "this string's escapes do not read")
                        .label(span(pair), "here")
                        .help(
                            "a string takes `\\\"`, `\\\\`, `\\n`, `\\t` and `\\u{…}` as JSON writes them (`\\u00e9`)",
                        ),
                );
                pair.as_str().trim_matches('"').to_string()
            }
        }
    }

    fn word(&mut self, pair: &Pair<'_, Rule>) -> Word {
        let text = match pair.as_rule() {
            Rule::string => self.string(pair),
            _ => pair.as_str().to_string(),
        };
        Word { text, span: span(pair) }
    }

    fn step(&mut self, pair: Pair<'_, Rule>) -> Step {
        let at = span(&pair);
        let rule = pair.as_rule();
        let mut inner: Vec<Pair<'_, Rule>> = pair.into_inner().filter(|p| !p.as_rule().is_keyword()).collect();
        let kind = match rule {
            Rule::as_step => self.member(inner),
            Rule::command_step => {
                let args = match inner.last().map(Pair::as_rule) {
                    Some(Rule::args) => self.args(inner.pop()),
                    _ => Vec::new(),
                };
                if let Some(target) = inner.first().filter(|p| p.as_rule() == Rule::menu_target) {
                    let parts: Vec<_> = target.clone().into_inner().collect();
                    let name = self.first_word(&parts, at);
                    let user = parts.iter().any(|p| p.as_rule() == Rule::kw_user);
                    return Step {
                        kind: StepKind::Menu { name, menu: if user { "user" } else { "message" }, args },
                        span: at,
                    };
                }
                StepKind::Command { path: inner.iter().map(|p| self.word(p)).collect(), args }
            }
            Rule::click_step => match inner.as_slice() {
                [w] if w.as_rule() == Rule::string => StepKind::Click(Click::Label(self.word(w))),
                [.., w] => StepKind::Click(Click::Handler(self.word(w))),
                [] => StepKind::Click(Click::Label(Word { text: String::new(), span: at })),
            },
            Rule::type_step => {
                let typed = inner.pop().map(|p| self.word(&p)).unwrap_or(Word { text: String::new(), span: at });
                let option = inner.pop().map(|p| self.word(&p)).unwrap_or(Word { text: String::new(), span: at });
                StepKind::Type { path: inner.iter().map(|p| self.word(p)).collect(), option, typed }
            }
            Rule::choose_step => StepKind::Choose(inner.iter().map(|p| self.word(p)).collect()),
            Rule::submit_step => StepKind::Submit(self.args(inner.pop())),
            Rule::event_step => {
                let args = self.args(inner.get(1).cloned());
                StepKind::Event { kind: self.first_word(&inner, at), args }
            }
            Rule::tick_step => StepKind::Tick(self.first_word(&inner, at)),
            Rule::say_step => StepKind::Say(self.first_word(&inner, at)),
            Rule::wait_step => {
                let written = self.first_word(&inner, at);
                self.wait(written)
            }
            Rule::respond_step => {
                let block = self.first_word(&inner, at);
                StepKind::Respond { block, response: self.response(inner.pop()) }
            }
            _ => match inner.into_iter().next() {
                Some(expect) => StepKind::Expect(self.expect(expect)),
                None => StepKind::Expect(Expect::NothingElse),
            },
        };
        Step { kind, span: at }
    }

    fn member(&mut self, inner: Vec<Pair<'_, Rule>>) -> StepKind {
        let mut member = Member::default();
        for p in inner {
            match p.as_rule() {
                Rule::string => member.name = self.string(&p),
                _ => {
                    let mut parts = p.into_inner();
                    let Some(word) = parts.next() else { continue };
                    let word = self.word(&word);
                    let values = parts.map(|v| self.word(&v)).collect();
                    member.fields.push((word, values));
                }
            }
        }
        StepKind::As(member)
    }

    /// B502 for a test's secret too short to be kept out of output (as
    /// a run refuses one, B306): every output would have its text masked
    /// wherever it appears, and expectations would read `<NAME>` for it.
    fn secret_long_enough(&mut self, name: &Word, value: &str, written: Span) {
        let least = crate::run::eval::MIN_SECRET_LEN;
        if value.chars().count() < least {
            self.problems.push(
                Diagnostic::new(Code::BadTestStep, format!("the secret `<{}>` is shorter than {least} characters", name.text))
                    .label(written, "its value")
                    .help(format!("give the tests a value of {least} characters or more, as `\"test-{}-value\"`: a secret's value is masked wherever it appears in what the tests read", name.text.to_lowercase())),
            );
        }
    }

    /// The first word of a step (the grammar gives every step one).
    fn first_word(&mut self, inner: &[Pair<'_, Rule>], at: Span) -> Word {
        match inner.first() {
            Some(p) => self.word(p),
            None => Word { text: String::new(), span: at },
        }
    }

    fn wait(&mut self, written: Word) -> StepKind {
        let seconds = match crate::language::vocab::parse_duration(&written.text) {
            Ok(s) => s,
            Err(why) => {
                self.problems.push(
                    Diagnostic::new(Code::BadTestStep, format!("`{}` is not a length of time: {why}", written.text))
                        .label(written.span, "how long to wait")
                        .help("write it as a cooldown is written: `\"10s\"`, `\"2m\"`, `\"1h30m\"`, `\"1d\"`"),
                );
                0
            }
        };
        StepKind::Wait { seconds, written }
    }

    fn args(&mut self, pair: Option<Pair<'_, Rule>>) -> Vec<(Word, Json)> {
        let Some(pair) = pair else { return Vec::new() };
        pair.into_inner()
            .map(|arg| {
                let mut parts = arg.into_inner();
                let (key, value) = (parts.next(), parts.next());
                let key = key.map(|k| self.word(&k)).unwrap_or(Word { text: String::new(), span: Span::default() });
                (key, value.map(|v| self.json(v)).unwrap_or(Json::Null))
            })
            .collect()
    }

    fn response(&mut self, pair: Option<Pair<'_, Rule>>) -> Answer {
        let (mut status, mut headers, mut body) = (200, Vec::new(), None);
        for part in pair.into_iter().flat_map(Pair::into_inner) {
            match part.as_rule() {
                Rule::kw_timeout => return Answer::Timeout,
                Rule::kw_refused => return Answer::Refused,
                Rule::status_field => {
                    let Some(n) = part.into_inner().find(|p| p.as_rule() == Rule::number) else { continue };
                    match n.as_str().parse::<u16>().ok().filter(|s| (100..=599).contains(s)) {
                        Some(s) => status = s,
                        None => self.problems.push(
                            Diagnostic::new(Code::BadTestStep, format!("`{}` is not an HTTP status", n.as_str()))
                                .label(span(&n), "the status")
                                .help("a status is a whole number from 100 to 599"),
                        ),
                    }
                }
                Rule::headers_field => {
                    for h in part.into_inner().filter(|p| p.as_rule() == Rule::header) {
                        let mut kv = h.into_inner();
                        if let (Some(k), Some(v)) = (kv.next(), kv.next()) {
                            headers.push((self.word(&k).text, self.string(&v)));
                        }
                    }
                }
                Rule::body_field => body = part.into_inner().find(|p| p.as_rule() == Rule::json).map(|j| self.json(j)),
                _ => {}
            }
        }
        Answer::Response { status, headers, body }
    }

    fn expect(&mut self, pair: Pair<'_, Rule>) -> Expect {
        match pair.as_rule() {
            Rule::nothing_else => Expect::NothingElse,
            Rule::choices_expect => {
                let value = value_span(&pair);
                let list = pair.into_inner().find(|p| p.as_rule() == Rule::string_list);
                let names = list.map(|l| l.into_inner().map(|s| self.string(&s)).collect()).unwrap_or_default();
                Expect::Choices(names, value)
            }
            Rule::saved_expect => {
                let value = value_span(&pair);
                let mut parts = pair.into_inner().filter(|p| !p.as_rule().is_keyword());
                let name =
                    parts.next().map(|p| self.word(&p)).unwrap_or(Word { text: String::new(), span: Span::default() });
                Expect::Saved { name, value: parts.next().map(|j| self.json(j)).unwrap_or(Json::Null), at: value }
            }
            Rule::action_expect => self.action_expect(pair),
            Rule::request_expect => {
                let mut parts = pair.into_inner().filter(|p| !p.as_rule().is_keyword());
                let block =
                    parts.next().map(|p| self.word(&p)).unwrap_or(Word { text: String::new(), span: Span::default() });
                let checks = parts.map(|c| (self.request_check(c.clone()), at(&c))).collect();
                Expect::Request { block, checks }
            }
            _ => self.message_expect(pair),
        }
    }

    /// `action VERB [KIND] ["SUBJECT"] [WORD "VALUE"]…`.
    fn action_expect(&mut self, pair: Pair<'_, Rule>) -> Expect {
        let mut action = Word { text: String::new(), span: Span::default() };
        let mut values = Vec::new();
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::ident => action = self.word(&part),
                Rule::action_kind => {
                    let kind = self.word(&part);
                    action.text = format!("{} {}", action.text, kind.text);
                    action.span = action.span.to(kind.span);
                }
                Rule::string => {
                    let value = self.word(&part);
                    values.push((String::new(), value.text, At { whole: value.span, value: value.span }));
                }
                Rule::action_value => {
                    let whole = at(&part);
                    let mut inner = part.into_inner();
                    let (word, value) = (inner.next(), inner.next());
                    if let (Some(word), Some(value)) = (word, value) {
                        let (word, value) = (self.word(&word), self.word(&value));
                        values.push((word.text, value.text, At { whole: whole.whole, value: value.span }));
                    }
                }
                _ => {}
            }
        }
        Expect::Action { action, values }
    }

    fn message_expect(&mut self, pair: Pair<'_, Rule>) -> Expect {
        let mut kind = MessageKind::Reply;
        let mut checks = Vec::new();
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::message_kind => {
                    let inner: Vec<_> = part.into_inner().collect();
                    kind = match inner.first().map(Pair::as_rule) {
                        Some(Rule::kw_update) => MessageKind::Update,
                        Some(Rule::kw_form) => MessageKind::Form,
                        Some(Rule::kw_message) => MessageKind::In(self.word(&inner[inner.len() - 1])),
                        _ => MessageKind::Reply,
                    };
                }
                // `expect reply "…"`: its text; `expect form "…"`: its title.
                Rule::matcher => {
                    let at = at(&part);
                    let m = self.matcher(part);
                    checks.push((if kind == MessageKind::Form { Check::Title(m) } else { Check::Text(m) }, at));
                }
                Rule::message_check => {
                    let at = at(&part);
                    if let Some(c) = part.into_inner().next().map(|c| self.check(c)) {
                        checks.push((c, at));
                    }
                }
                _ => {
                    for check in part.into_inner() {
                        let at = at(&check);
                        if let Some(c) = check.into_inner().next().map(|c| self.check(c)) {
                            checks.push((c, at));
                        }
                    }
                }
            }
        }
        Expect::Message { kind, checks }
    }

    fn check(&mut self, pair: Pair<'_, Rule>) -> Check {
        let rule = pair.as_rule();
        if rule == Rule::embed_check {
            return self.embed_check(pair.into_inner().collect());
        }
        let parts: Vec<_> = pair.into_inner().filter(|p| !p.as_rule().is_keyword()).collect();
        let list = |r: &mut Reader, i: usize| -> Vec<String> {
            parts.get(i).map(|l| l.clone().into_inner().map(|s| r.string(&s)).collect()).unwrap_or_default()
        };
        match rule {
            Rule::text_check => Check::Text(self.matcher_of(parts.first())),
            Rule::private_check => Check::Private,
            Rule::public_check => Check::Public,
            Rule::buttons_check => Check::Buttons(list(self, 0)),
            Rule::disabled_check => Check::Disabled(list(self, 0)),
            Rule::choices_check => Check::Choices(list(self, 0)),
            Rule::title_check => Check::Title(self.matcher_of(parts.first())),
            Rule::poll_check => Check::Poll(self.matcher_of(parts.first())),
            Rule::files_check => Check::Files(list(self, 0)),
            _ => Check::Fields(list(self, 0)),
        }
    }

    /// `embed title …`, `embed description …`, `embed field "Name" …`.
    fn embed_check(&mut self, parts: Vec<Pair<'_, Rule>>) -> Check {
        match parts.as_slice() {
            [_, word, field, matcher] if word.as_rule() == Rule::kw_field => {
                let name = self.string(field);
                Check::EmbedField(name, self.matcher(matcher.clone()))
            }
            [_, word, matcher] if word.as_rule() == Rule::kw_description => {
                Check::EmbedDescription(self.matcher(matcher.clone()))
            }
            [_, _, matcher] => Check::EmbedTitle(self.matcher(matcher.clone())),
            _ => Check::EmbedTitle(Match::Equals(String::new())),
        }
    }

    fn matcher_of(&mut self, pair: Option<&Pair<'_, Rule>>) -> Match {
        match pair {
            Some(p) => self.matcher(p.clone()),
            None => Match::Equals(String::new()),
        }
    }

    fn matcher(&mut self, pair: Pair<'_, Rule>) -> Match {
        let parts: Vec<_> = pair.into_inner().collect();
        let Some(text) = parts.last() else { return Match::Equals(String::new()) };
        let want = self.string(text);
        match parts.first().map(Pair::as_rule) {
            Some(Rule::kw_contains) => Match::Contains(want),
            Some(Rule::kw_matches) => match regex::RegexBuilder::new(&want).size_limit(1 << 20).build() {
                Ok(re) => Match::Matches(re),
                Err(e) => {
                    self.problems.push(
                        Diagnostic::new(Code::BadTestStep, "this pattern is not a regular expression")
                            .label(span(text), "the pattern")
                            .help(format!("the pattern is Rust's `regex` syntax: {e}")),
                    );
                    Match::Contains(want)
                }
            },
            _ => Match::Equals(want),
        }
    }

    fn request_check(&mut self, pair: Pair<'_, Rule>) -> RequestCheck {
        let mut parts = pair.into_inner();
        let first = parts.next();
        let rest: Vec<_> = parts.collect();
        match first.map(|p| p.as_rule()) {
            Some(Rule::kw_method) => {
                RequestCheck::Method(rest.first().map(|p| p.as_str().to_string()).unwrap_or_default())
            }
            Some(Rule::kw_url) => RequestCheck::Url(self.matcher_of(rest.first())),
            _ => match rest.as_slice() {
                [key, value] => {
                    let key = self.word(key).text;
                    RequestCheck::Body(key, self.json(value.clone()))
                }
                _ => RequestCheck::Method(String::new()),
            },
        }
    }

    fn json(&mut self, pair: Pair<'_, Rule>) -> Json {
        let pair = match pair.as_rule() {
            Rule::json => match pair.into_inner().next() {
                Some(p) => p,
                None => return Json::Null,
            },
            _ => pair,
        };
        match pair.as_rule() {
            Rule::string => Json::String(self.string(&pair)),
            Rule::number => serde_json::from_str(pair.as_str()).unwrap_or(Json::Null),
            Rule::kw_true => Json::Bool(true),
            Rule::kw_false => Json::Bool(false),
            Rule::object => {
                let mut map = serde_json::Map::new();
                for kv in pair.into_inner() {
                    let mut kv = kv.into_inner();
                    if let (Some(k), Some(v)) = (kv.next(), kv.next()) {
                        let k = self.string(&k);
                        map.insert(k, self.json(v));
                    }
                }
                Json::Object(map)
            }
            Rule::array => Json::Array(pair.into_inner().map(|j| self.json(j)).collect()),
            _ => Json::Null,
        }
    }
}

impl Rule {
    /// A keyword's pair, which steps read past.
    fn is_keyword(self) -> bool {
        format!("{self:?}").starts_with("kw_") && !matches!(self, Rule::kw_true | Rule::kw_false | Rule::kw_null)
    }
}
