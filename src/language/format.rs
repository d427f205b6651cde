//! `blkc fmt`: one canonical layout for `.blk` files, comments kept.
//!
//! Comments are not in the syntax tree: the parser never sees them (its
//! speed is measured, and trivia on every node would cost every check). The
//! formatter reads them in one scan of its own ([`comments`]) and lays them
//! out by position against the tree's spans, as gofmt does: before each
//! item, node, field, entry or closing brace it prints the comments that
//! come before it in the source, and a comment on the same line as the end
//! of what was just printed stays at the end of that line. Every comment is
//! printed once, in source order. The layout is documented in
//! docs/language.md ("Layout").

use crate::base::diagnostics::Diagnostic;
use crate::base::source::{SourceFile, Span};
use crate::language::ast::*;
use crate::language::syntax;
use crate::language::syntax::lexer::{self, Kind, Lexer};

/// Indentation: four spaces a level.
const INDENT: &str = "    ";
/// `params`, `headers`, objects and arrays stay on one line when it fits in
/// this many characters, holds no comment, and (but for arrays) has at most
/// [`MAX_INLINE`] entries; otherwise one entry a line. A `body` is always
/// one entry a line.
pub const MAX_WIDTH: usize = 100;
pub const MAX_INLINE: usize = 3;

/// A component's, a file's or an input's settings stay on one line when
/// they fit and are at most this many (`button vote { label "Coffee" emoji
/// "☕" value "coffee" expires "1d" }`).
pub const MAX_INLINE_SETTINGS: usize = 4;

/// A `#` comment: where it is, and its text (from `#` to the end of its
/// line, trailing blanks dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    pub span: Span,
    pub text: String,
}

/// Every comment of a file, in order: `#` to the end of the line, outside
/// strings and outside unquoted response references (where `#` is a
/// character of the path), as the grammar reads them.
pub fn comments(text: &str) -> Vec<Comment> {
    Lexer::new(text)
        .filter(|t| t.kind == Kind::Comment)
        .map(|t| {
            let body = t.text(text).trim_end();
            Comment { span: Span::new(t.start(), t.start() + body.len()), text: body.to_string() }
        })
        .collect()
}

/// Formats source text: the canonical text, or the errors that stop it (a
/// file that cannot be read as syntax is never rewritten).
pub fn format_text(name: &str, text: &str) -> Result<String, Vec<Diagnostic>> {
    let source = SourceFile::new(name, text.to_string());
    let parsed = syntax::parse(&source);
    if !parsed.complete || parsed.diagnostics.iter().any(Diagnostic::is_error) {
        return Err(parsed.diagnostics.finish());
    }
    Ok(format_file(&source.text, &parsed.ast))
}

/// Prints a parsed file in the canonical layout, with the comments of its
/// source text.
pub fn format_file(text: &str, file: &File) -> String {
    let mut p =
        Printer { text, comments: comments(text), next: 0, out: String::with_capacity(text.len() + 64), depth: 0 };
    let mut previous: Option<&Item> = None;
    for item in &file.items {
        let start = item_span(item).start as usize;
        if let Some(prev) = previous {
            // Trees stand apart; `var`, `platform` and `include` lines may
            // be grouped.
            let grouped = !matches!(prev, Item::Tree(_)) && !matches!(item, Item::Tree(_));
            if !grouped || p.blank_between(p.token_end(item_span(prev).end as usize), p.first_before(start)) {
                p.out.push('\n');
            }
        }
        p.comments_before(start);
        p.item(item);
        previous = Some(item);
    }
    if previous.is_some() && p.next < p.comments.len() {
        let end = file.items.last().map_or(0, |i| p.token_end(item_span(i).end as usize));
        if p.blank_between(end, p.comments[p.next].span.start as usize) {
            p.out.push('\n');
        }
    }
    p.comments_before(text.len() + 1);
    p.out
}

fn item_span(item: &Item) -> Span {
    match item {
        Item::Tree(t) => t.span,
        Item::Var(v) => v.span,
        Item::Platform(p) => p.span,
        Item::Include(i) => i.span,
        Item::Failed(_, span) => *span,
    }
}

struct Printer<'t> {
    text: &'t str,
    comments: Vec<Comment>,
    /// The first comment not printed yet.
    next: usize,
    out: String,
    depth: usize,
}

impl Printer<'_> {
    fn indent(&mut self) {
        for _ in 0..self.depth {
            self.out.push_str(INDENT);
        }
    }

    /// Where the next thing at `start` really begins: the first comment
    /// before it, if any.
    fn first_before(&self, start: usize) -> usize {
        match self.comments.get(self.next) {
            Some(c) if (c.span.start as usize) < start => c.span.start as usize,
            _ => start,
        }
    }

    /// Whether the source has an empty line between `from` and `to`.
    fn blank_between(&self, from: usize, to: usize) -> bool {
        let (from, to) = (from.min(self.text.len()), to.min(self.text.len()));
        if from >= to {
            return false;
        }
        let mut lines = self.text[from..to].split('\n');
        lines.next();
        let mut interior = lines.collect::<Vec<_>>();
        interior.pop();
        interior.iter().any(|l| l.trim().is_empty())
    }

    /// Prints, each on its own line, the comments that start before
    /// `start`, keeping one empty line where the source had one between
    /// them and between the last and `start`.
    fn comments_before(&mut self, start: usize) {
        let mut last_end: Option<usize> = None;
        while let Some(c) = self.comments.get(self.next) {
            if c.span.start as usize >= start {
                break;
            }
            let (c_start, c_end) = (c.span.start as usize, c.span.end as usize);
            let text = c.text.clone();
            if let Some(end) = last_end {
                if self.blank_between(end, c_start) {
                    self.out.push('\n');
                }
            }
            self.indent();
            self.out.push_str(&text);
            self.out.push('\n');
            self.next += 1;
            last_end = Some(c_end);
        }
        if let Some(end) = last_end {
            if start <= self.text.len() && self.blank_between(end, start) {
                self.out.push('\n');
            }
        }
    }

    /// Where the last token of a span ends. pest's span of a rule that ends
    /// in an optional part (`option a` without its description, an `if`
    /// without `else`) runs on over the blanks and comments after it.
    fn token_end(&self, end: usize) -> usize {
        let mut end = end.min(self.text.len());
        loop {
            end = self.text[..end].trim_end().len();
            match self.comments.binary_search_by_key(&end, |c| c.span.end as usize) {
                Ok(k) => end = self.comments[k].span.start as usize,
                Err(_) => return end,
            }
        }
    }

    /// After a line that ends at source offset `end`: the comment on the
    /// same source line, if any, goes at the end of the output line; not
    /// one that more of the file written on that line stands before (it
    /// goes with what it follows: `reply { select m { … # c`).
    fn trailing(&mut self, end: usize) {
        let end = self.token_end(end);
        if let Some(c) = self.comments.get(self.next) {
            let start = c.span.start as usize;
            let between = &self.text[end.min(start)..start];
            let closes_only = between.chars().all(|c| c.is_whitespace() || matches!(c, ',' | '}' | ']' | ')'));
            if start >= end && !between.contains('\n') && closes_only {
                let text = c.text.clone();
                self.out.push_str("  ");
                self.out.push_str(&text);
                self.next += 1;
            }
        }
        self.out.push('\n');
    }

    /// Whether a comment starts inside `span` (then it cannot be laid out
    /// on one line).
    fn has_comment_in(&self, span: Span) -> bool {
        self.comments[self.next..].iter().take_while(|c| c.span.start < span.end).any(|c| c.span.start >= span.start)
    }

    /// The `}` that closes a list whose last entry ends at `from`: only
    /// blanks, commas and comments can stand between.
    fn close_brace(&self, from: usize) -> usize {
        lexer::next_punct(self.text, from, b'}').unwrap_or(self.text.len().saturating_sub(1))
    }

    /// The offset of the first `{` at or after `from`, outside comments and
    /// strings.
    fn open_brace(&self, from: usize) -> usize {
        lexer::next_punct(self.text, from, b'{').unwrap_or(from)
    }

    /// Lays out a `{ … }` body whose items are printed by `each`: comments
    /// before each item and before the closing `}`, and blank lines kept
    /// (one at most) where the source had them between items.
    fn block<T>(
        &mut self,
        open: usize,
        close: usize,
        items: &[T],
        span_of: impl Fn(&T) -> Span,
        mut each: impl FnMut(&mut Self, &T),
    ) {
        self.trailing(open + 1);
        self.depth += 1;
        let mut previous_end: Option<usize> = None;
        for item in items {
            let span = span_of(item);
            let start = span.start as usize;
            if let Some(end) = previous_end {
                if self.blank_between(end, self.first_before(start)) {
                    self.out.push('\n');
                }
            }
            self.comments_before(start);
            each(self, item);
            previous_end = Some(self.token_end(span.end as usize));
        }
        if let (Some(end), Some(c)) = (previous_end, self.comments.get(self.next)) {
            if (c.span.start as usize) < close && self.blank_between(end, c.span.start as usize) {
                self.out.push('\n');
            }
        }
        self.comments_before(close);
        self.depth -= 1;
        self.indent();
        self.out.push('}');
    }

    /// A tree's head: its kind, name, description, schedule or webhook,
    /// and cooldown.
    fn tree_head(&mut self, t: &crate::language::ast::Tree) {
        self.out.push_str(t.kind.as_str());
        self.out.push(' ');
        match &t.menu {
            Some(m) => {
                self.out.push_str(&text_literal(&t.name.name));
                self.out.push_str(" for ");
                self.out.push_str(&m.target.name);
            }
            None => self.out.push_str(&t.name.name),
        }
        if let Some(d) = &t.description {
            self.out.push(' ');
            self.out.push_str(&text_literal(&d.value));
        }
        if let Some(s) = &t.schedule {
            self.out.push(' ');
            self.out.push_str(s.written.as_str());
            self.out.push(' ');
            self.out.push_str(&text_literal(&s.when.value));
            if let Some(zone) = &s.zone {
                self.out.push_str(" in ");
                self.out.push_str(&text_literal(&zone.value));
            }
            self.out.push_str(" channel ");
            self.template(&s.channel);
        }
        if let Some(w) = &t.webhook {
            self.out.push_str(&webhook_head(w));
        }
        if let Some(c) = &t.cooldown {
            self.out.push(' ');
            self.out.push_str(&setting_line(self.text, c));
        }
    }

    fn item(&mut self, item: &Item) {
        match item {
            Item::Tree(t) => {
                self.tree_head(t);
                self.out.push_str(" {");
                let head = t.schedule.as_ref().map(|s| s.span).or(t.webhook.as_ref().map(|w| w.span));
                let after = match (&t.cooldown, head, &t.description) {
                    (Some(c), _, _) => c.span.end,
                    (None, Some(h), _) => h.end,
                    (None, None, Some(d)) => d.span.end,
                    (None, None, None) => t.menu.as_ref().map_or(t.name.span.end, |m| m.span.end),
                };
                let open = self.open_brace(after as usize);
                let close = t.span.end as usize - 1;
                self.block(open, close, &t.body, Node::span, |p, n| p.node(n));
                self.trailing(t.span.end as usize);
            }
            Item::Var(v) => {
                self.out.push_str("var ");
                self.out.push_str(&v.name.name);
                if let Some(scope) = &v.scope {
                    self.out.push_str(" per ");
                    self.out.push_str(&scope.name);
                }
                if let Some(d) = &v.default {
                    self.out.push_str(" = ");
                    let span = d.span();
                    // (A comment still to place before it keeps the one-line form:
                    // its comments then follow, none lost.)
                    let pending_before = self.comments[self.next..].first().is_some_and(|c| c.span.start < span.start);
                    if self.has_comment_in(span) && !pending_before {
                        // A default with a comment inside stays as written, comments and all.
                        self.out.push_str(self.text.get(span.range()).unwrap_or_default());
                        self.next += self.comments[self.next..].iter().take_while(|c| c.span.start < span.end).count();
                    } else {
                        self.out.push_str(&fixed_literal(d));
                    }
                }
                if let Some(e) = &v.expires {
                    self.out.push_str(" expires ");
                    self.out.push_str(&text_literal(&e.value));
                }
                self.trailing(v.span.end as usize);
            }
            Item::Platform(p) => {
                self.out.push_str("platform ");
                self.out.push_str(&text_literal(&p.url.value));
                self.trailing(p.span.end as usize);
            }
            Item::Include(i) => {
                self.out.push_str("include ");
                self.out.push_str(&text_literal(&i.path.value));
                self.trailing(i.span.end as usize);
            }
            Item::Failed(b, span) => {
                self.out.push_str("failed {");
                self.block(b.span.start as usize, b.span.end as usize - 1, &b.body, Node::span, |p, n| p.node(n));
                self.trailing(span.end as usize);
            }
        }
    }

    /// `failed {`, `with user x {`, `together {` and the branch's nodes.
    fn headed(&mut self, head: &str, b: &crate::language::ast::Branch, span: Span) {
        self.out.push_str(head);
        self.block(b.span.start as usize, b.span.end as usize - 1, &b.body, Node::span, |p, n| p.node(n));
        self.trailing(span.end as usize);
    }

    /// `after "10m" key "…" note "…" per server {` and its body.
    fn later(&mut self, l: &crate::language::ast::LaterNode) {
        self.out.push_str(if l.at { "at " } else { "after " });
        self.template(&l.when);
        for (word, value) in [("key", &l.key), ("note", &l.note)] {
            if let Some(value) = value {
                self.out.push_str(&format!(" {word} "));
                self.template(value);
            }
        }
        if let Some(scope) = &l.scope {
            self.out.push_str(" per ");
            self.out.push_str(&scope.name);
        }
        self.headed(" {", &l.body, l.span);
    }

    /// `save NAME[path] = value` (`field`: the `[path]`, or nothing).
    fn save(&mut self, s: &crate::language::ast::Save, field: &str) {
        self.out.push_str("save ");
        self.out.push_str(&s.name.name);
        self.out.push_str(field);
        self.out.push(' ');
        self.out.push_str(s.op.as_str());
        if s.op != SaveOp::Clear {
            self.out.push(' ');
            self.value(&s.value);
        }
        self.trailing(s.span().end as usize);
    }

    fn node(&mut self, node: &Node) {
        self.indent();
        match node {
            Node::Option(o) => self.option(o),
            Node::Register(r) => self.register(r),
            Node::Guard(g) => self.guard(g),
            Node::Reply(r) => self.reply(r),
            Node::Save(s) => self.save(s, ""),
            Node::SaveField(f) => {
                let path = crate::base::path::display_from("", f.path.iter().map(|s| s.text.as_str()));
                self.save(&f.save, &format!("[{}]", path.trim_start_matches('.')))
            }
            Node::Api(b) => {
                self.out.push_str("api ");
                self.out.push_str(&b.name.name);
                self.out.push_str(" {");
                let open = self.open_brace(b.name.span.end as usize);
                self.block(open, b.span.end as usize - 1, &b.fields, |f| f.span, |p, f| p.field(f));
                self.trailing(b.span.end as usize);
            }
            Node::If(i) => self.if_node(i),
            Node::For(f) => self.for_node(f),
            Node::Text(t, span) => {
                self.out.push_str("text ");
                self.template(t);
                self.trailing(span.end as usize);
            }
            Node::Stop(span) => self.headless("stop", *span),
            Node::Failed(b, span) => self.headed("failed {", b, *span),
            Node::With(w) => self.headed(&format!("with {} {} {{", w.scope.name, w.whose.name), &w.body, w.span),
            Node::Together(b, span) => self.headed("together {", b, *span),
            Node::Later(l) => self.later(l),
            Node::Await(a) => self.await_node(a),
            Node::Cancel(c) => {
                self.out.push_str("cancel ");
                self.template(&c.key);
                if let Some(scope) = &c.scope {
                    self.out.push_str(" per ");
                    self.out.push_str(&scope.name);
                }
                self.trailing(c.span.end as usize);
            }
            Node::Sub(s) => self.sub(s),
            Node::Action(a) => self.action(a),
            Node::Choice(c) => {
                self.out.push_str("choice ");
                self.template(&c.name);
                self.out.push(' ');
                self.template(&c.value);
                self.trailing(c.span.end as usize);
            }
            Node::Form(f) => {
                self.out.push_str("form ");
                self.out.push_str(&f.handler.name);
                self.out.push_str(" {");
                let open = self.open_brace(f.handler.span.end as usize);
                let mut inner: Vec<Inner<'_>> = f.settings.iter().map(Inner::Setting).collect();
                inner.extend(f.inputs.iter().map(Inner::Input));
                inner.extend(f.texts.iter().map(Inner::Item));
                inner.sort_by_key(|i| i.span().start);
                self.block(open, f.span.end as usize - 1, &inner, Inner::span, |p, i| p.inner(i));
                self.trailing(f.span.end as usize);
            }
        }
    }

    /// `reply "…"`, or `reply { … }` (on one line when it is short).
    fn reply(&mut self, r: &crate::language::ast::Reply) {
        match r.text().filter(|_| !r.block) {
            Some(text) => {
                self.out.push_str(r.keyword());
                self.out.push(' ');
                self.template(text);
                self.trailing(r.span.end as usize);
            }
            None => {
                self.out.push_str(r.keyword());
                self.out.push(' ');
                let open = self.open_brace(r.span.start as usize);
                let close = r.span.end as usize - 1;
                match self.inline_reply(&r.items, Span::new(open, close + 1)) {
                    Some(line) => self.out.push_str(&line),
                    None => {
                        self.out.push('{');
                        self.block(open, close, &r.items, ReplyItem::span, |p, i| p.reply_item(i));
                    }
                }
                self.trailing(r.span.end as usize);
            }
        }
    }

    /// `VERB [KIND] [SUBJECT] [WORD VALUE, …]… [MESSAGE]`, on one line but
    /// for a message's block.
    fn action(&mut self, a: &Action) {
        self.out.push_str(&a.verb.name);
        if let Some(kind) = &a.kind {
            self.out.push(' ');
            self.out.push_str(&kind.name);
        }
        if let Some(subject) = &a.subject {
            self.out.push(' ');
            self.action_value(subject);
        }
        for arg in &a.args {
            self.out.push(' ');
            self.out.push_str(&arg.word.name);
            for (i, value) in arg.values.iter().enumerate() {
                self.out.push_str(if i == 0 { " " } else { ", " });
                self.action_value(value);
            }
        }
        if let Some(m) = &a.message {
            match m.text().filter(|_| !m.block) {
                Some(text) => {
                    self.out.push(' ');
                    self.template(text);
                }
                None => {
                    self.out.push_str(" {");
                    let open = self.open_brace(m.span.start as usize);
                    self.block(open, m.span.end as usize - 1, &m.items, ReplyItem::span, |p, i| p.reply_item(i));
                }
            }
        }
        self.trailing(a.span.end as usize);
    }

    fn action_value(&mut self, value: &ActionValue) {
        match value {
            ActionValue::Text(t) => self.template(t),
            ActionValue::Number(n, _) => self.out.push_str(n),
            ActionValue::Name(n) => self.out.push_str(&n.name),
        }
    }

    /// `option NAME "…" TYPE [min N] [max N] [required] [choices { … }]`.
    fn option(&mut self, o: &OptionDecl) {
        self.out.push_str("option ");
        self.out.push_str(&o.name.name);
        if let Some(d) = &o.description {
            self.out.push(' ');
            self.out.push_str(&text_literal(&d.value));
        }
        if let Some(kind) = &o.kind {
            self.out.push(' ');
            self.out.push_str(&kind.name);
        }
        for b in &o.bounds {
            self.out.push_str(if b.max { " max " } else { " min " });
            self.out.push_str(&b.value);
        }
        if o.required.is_some() {
            self.out.push_str(" required");
        }
        if let Some(channels) = &o.channels {
            self.out.push_str(" in ");
            self.out.push_str(&words(channels));
        }
        if let Some((_, types)) = &o.file_types {
            self.out.push_str(" types ");
            self.out.push_str(&text_literal(&types.value));
        }
        // (Both is B432; neither is lost.)
        if let Some(choices) = &o.choices {
            self.out.push_str(" choices ");
            self.choices(choices, o.autocomplete.is_none());
        }
        match &o.autocomplete {
            Some(a) => {
                self.out.push_str(" autocomplete {");
                let open = self.open_brace(a.keyword.end as usize);
                self.block(open, a.tree.span.end as usize - 1, &a.tree.body, Node::span, |p, n| p.node(n));
                self.trailing(a.tree.span.end as usize);
            }
            None if o.choices.is_none() => self.trailing(o.span.end as usize),
            None => {}
        }
    }

    /// `require WORD value, …`.
    fn guard(&mut self, g: &Guard) {
        self.out.push_str("require ");
        self.out.push_str(&g.what.name);
        for (i, value) in g.values.iter().enumerate() {
            self.out.push_str(if i == 0 { " " } else { ", " });
            match value {
                GuardValue::Text(t) => self.template(t),
                GuardValue::Word(w) => self.out.push_str(&w.name),
            }
        }
        self.trailing(g.span.end as usize);
    }

    /// `subcommand NAME "…" [cooldown …] { … }`, `group NAME "…" { … }`.
    fn sub(&mut self, s: &Sub) {
        let t = &s.tree;
        self.out.push_str(s.keyword());
        self.out.push(' ');
        self.out.push_str(&s.word.name);
        if let Some(d) = &t.description {
            self.out.push(' ');
            self.out.push_str(&text_literal(&d.value));
        }
        if let Some(c) = &t.cooldown {
            self.out.push(' ');
            self.out.push_str(&setting_line(self.text, c));
        }
        self.out.push_str(" {");
        let after = match (&t.cooldown, &t.description) {
            (Some(c), _) => c.span.end,
            (None, Some(d)) => d.span.end,
            (None, None) => s.word.span.end,
        };
        let open = self.open_brace(after as usize);
        self.block(open, t.span.end as usize - 1, &t.body, Node::span, |p, n| p.node(n));
        self.trailing(t.span.end as usize);
    }

    /// `permissions a, b`, `nsfw`, `locale fr "…" "…" { … }`: a line each,
    /// a locale's options a line each inside its braces.
    fn register(&mut self, r: &Register) {
        self.out.push_str(r.keyword());
        let l = match r {
            Register::Permissions(w) | Register::Contexts(w) | Register::Installs(w) => {
                self.out.push(' ');
                self.out.push_str(&words(w));
                return self.trailing(w.span.end as usize);
            }
            Register::Nsfw(span) => return self.trailing(span.end as usize),
            Register::Locale(l) => l,
        };
        self.out.push(' ');
        self.out.push_str(&l.locale.name);
        let mut after = self.texts(&l.name, l.description.as_ref());
        // Braces when they hold an option or a comment.
        let braces = Span::new(after, l.span.end as usize);
        let written = self.text.as_bytes().get(l.span.end as usize - 1) == Some(&b'}');
        if written && (!l.options.is_empty() || !l.choices.is_empty() || self.has_comment_in(braces)) {
            self.out.push(' ');
            let open = self.open_brace(after);
            self.out.push('{');
            // Options and choices, in the order written.
            let mut lines: Vec<LocaleLine<'_>> = l.options.iter().map(|o| (o.span, Some(o), None)).collect();
            lines.extend(
                l.choices.iter().map(|c| (Span::new(c.0.span.start as usize, c.1.span.end as usize), None, Some(c))),
            );
            lines.sort_by_key(|(span, ..)| span.start);
            self.block(
                open,
                l.span.end as usize - 1,
                &lines,
                |(span, ..)| *span,
                |p, line| {
                    p.indent();
                    let end = match line {
                        (_, Some(o), _) => {
                            p.out.push_str(&o.option.name);
                            p.texts(&o.name, o.description.as_ref())
                        }
                        (_, _, Some((written, translated))) => {
                            p.out.push_str(&text_literal(&written.value));
                            p.texts(translated, None)
                        }
                        _ => return,
                    };
                    p.trailing(end);
                },
            );
            after = l.span.end as usize;
        }
        self.trailing(after);
    }

    /// ` "name" ["description"]`; where they end.
    fn texts(&mut self, name: &Text, description: Option<&Text>) -> usize {
        let mut end = name.span.end;
        for t in std::iter::once(name).chain(description) {
            self.out.push(' ');
            self.out.push_str(&text_literal(&t.value));
            end = t.span.end;
        }
        end as usize
    }

    /// A component: `button [handler] { … }` on one line when its settings
    /// fit, a select menu's settings and choices a line each.
    fn component(&mut self, c: &Component) {
        self.out.push_str(c.kind.as_str());
        let after = match &c.handler {
            Some(h) => {
                self.out.push(' ');
                self.out.push_str(&h.name);
                h.span.end
            }
            None => c.keyword.end,
        };
        self.out.push(' ');
        let open = self.open_brace(after as usize);
        let close = c.span.end as usize - 1;
        if c.choices.is_empty() {
            self.settings(open, close, &c.settings);
        } else {
            self.out.push('{');
            let mut inner: Vec<Inner<'_>> = c.settings.iter().map(Inner::Setting).collect();
            inner.extend(c.choices.iter().map(Inner::Choice));
            inner.sort_by_key(|i| i.span().start);
            self.block(open, close, &inner, Inner::span, |p, i| p.inner(i));
        }
        self.trailing(c.span.end as usize);
    }

    /// `reply { ephemeral text "…" }` on one line, as rustfmt keeps a short
    /// struct literal: a reply of a text, private or not, that fits and
    /// holds no comment. Anything more (an embed, a component, a file) is
    /// a part a line.
    fn inline_reply(&self, items: &[ReplyItem], whole: Span) -> Option<String> {
        if items.is_empty() || items.len() > 2 || self.has_comment_in(whole) {
            return None;
        }
        let parts: Option<Vec<String>> = items
            .iter()
            .map(|item| match item {
                ReplyItem::Ephemeral(_) => Some("ephemeral".to_string()),
                ReplyItem::Text { value, .. } => Some(format!("text {}", template_literal(self.text, value))),
                _ => None,
            })
            .collect();
        let line = format!("{{ {} }}", parts?.join(" "));
        (!line.contains('\n') && self.column() + line.chars().count() <= MAX_WIDTH).then_some(line)
    }

    /// `{ label "Yes" success }` on one line when it fits and holds no
    /// comment, else a setting a line.
    fn settings(&mut self, open: usize, close: usize, settings: &[Setting]) {
        let whole = Span::new(open, close + 1);
        let column = self.column();
        let inline = (!self.has_comment_in(whole) && settings.len() <= MAX_INLINE_SETTINGS).then(|| {
            let items: Vec<String> = settings.iter().map(|s| setting_line(self.text, s)).collect();
            if items.is_empty() {
                "{}".to_string()
            } else {
                format!("{{ {} }}", items.join(" "))
            }
        });
        match inline.filter(|s| column + s.chars().count() <= MAX_WIDTH) {
            Some(line) => {
                self.out.push_str(&line);
                // Comments inside are none; the next ones come after `}`.
            }
            None => {
                self.out.push('{');
                self.block(open, close, settings, |s| s.span, |p, s| p.inner(&Inner::Setting(s)));
            }
        }
    }

    /// One line of a select menu's or a form's body.
    fn inner(&mut self, item: &Inner<'_>) {
        if let Inner::Item(i) = item {
            // (It indents itself.)
            return self.reply_item(i);
        }
        self.indent();
        match item {
            Inner::Item(_) => {}
            Inner::Media(m) => self.media(m),
            Inner::Answer(a) => {
                self.out.push_str("answer ");
                self.template(&a.text);
                if !a.settings.is_empty() {
                    self.out.push(' ');
                    let open = self.open_brace(a.text.span.end as usize);
                    self.settings(open, a.span.end as usize - 1, &a.settings);
                }
                self.trailing(a.span.end as usize);
            }
            Inner::Setting(s) => {
                self.out.push_str(&setting_line(self.text, s));
                self.trailing(s.span.end as usize);
            }
            Inner::Choice(c) => {
                if let Some(l) = &c.each {
                    // `for r in SOURCE [limit N] { choice … }` on one line.
                    self.out.push_str("for ");
                    self.out.push_str(&l.item.name);
                    self.out.push_str(" in ");
                    self.out.push_str(self.text.get(l.source.span().range()).unwrap_or_default());
                    if let Some(limit) = &l.limit {
                        self.out.push_str(" limit ");
                        self.value(limit);
                    }
                    self.out.push_str(" { ");
                }
                self.out.push_str("choice ");
                self.template(&c.label);
                self.out.push(' ');
                self.template(&c.value);
                if !c.settings.is_empty() {
                    self.out.push(' ');
                    let open = self.open_brace(c.value.span.end as usize);
                    self.settings(open, c.span.end as usize - 1, &c.settings);
                }
                if c.each.is_some() {
                    self.out.push_str(" }");
                }
                self.trailing(Inner::Choice(c).span().end as usize);
            }
            Inner::Input(i) => {
                self.out.push_str("input ");
                self.out.push_str(&i.name.name);
                self.out.push(' ');
                let open = self.open_brace(i.name.span.end as usize);
                let close = i.span.end as usize - 1;
                if i.choices.is_empty() {
                    self.settings(open, close, &i.settings);
                } else {
                    // Choices a line each, as a menu's.
                    self.out.push('{');
                    let mut inner: Vec<Inner<'_>> = i.settings.iter().map(Inner::Setting).collect();
                    inner.extend(i.choices.iter().map(Inner::Choice));
                    inner.sort_by_key(|i| i.span().start);
                    self.block(open, close, &inner, Inner::span, |p, i| p.inner(i));
                }
                self.trailing(i.span.end as usize);
            }
        }
    }

    fn reply_item(&mut self, item: &ReplyItem) {
        self.indent();
        match item {
            ReplyItem::Text { value, span } => {
                self.out.push_str("text ");
                self.template(value);
                self.trailing(span.end as usize);
            }
            ReplyItem::Translation(t) => {
                self.out.push_str("text ");
                self.out.push_str(&t.locale.name);
                self.out.push(' ');
                self.template(&t.value);
                self.trailing(t.span.end as usize);
            }
            ReplyItem::Ephemeral(span) => {
                self.out.push_str("ephemeral");
                self.trailing(span.end as usize);
            }
            ReplyItem::Embed(e) => {
                self.out.push_str("embed {");
                let open = self.open_brace(e.span.start as usize);
                self.block(open, e.span.end as usize - 1, &e.items, EmbedItem::span, |p, i| p.embed_item(i));
                self.trailing(e.span.end as usize);
            }
            ReplyItem::Component(c) => self.component(c),
            ReplyItem::Layout(l) => self.layout(l),
            ReplyItem::Poll(p) => {
                self.out.push_str("poll {");
                let open = self.open_brace(p.keyword.end as usize);
                let mut inner: Vec<Inner<'_>> = p.settings.iter().map(Inner::Setting).collect();
                inner.extend(p.answers.iter().map(Inner::Answer));
                inner.sort_by_key(|i| i.span().start);
                self.block(open, p.span.end as usize - 1, &inner, Inner::span, |f, i| f.inner(i));
                self.trailing(p.span.end as usize);
            }
            ReplyItem::File(f) => {
                self.out.push_str("file ");
                let end = self.file_source(&f.source);
                if !f.settings.is_empty() {
                    self.out.push(' ');
                    let open = self.open_brace(end as usize);
                    self.settings(open, f.span.end as usize - 1, &f.settings);
                }
                self.trailing(f.span.end as usize);
            }
        }
    }

    /// A file's source as written (`"chart.png"`, `api_chart`, `text "…"`);
    /// where it ends in the source.
    fn file_source(&mut self, source: &FileSource) -> u32 {
        match source {
            FileSource::Path(path) => {
                self.out.push_str(&text_literal(&path.value));
                path.span.end
            }
            FileSource::Name(name) => {
                self.out.push_str(&name.name);
                name.span.end
            }
            FileSource::Text(t) => {
                self.out.push_str("text ");
                self.template(t);
                t.span.end
            }
        }
    }

    /// `container { … }`, `section { … }`, `gallery { … }`: their
    /// settings and parts in the order written, a part a line;
    /// `separator` and `separator { large }`.
    fn layout(&mut self, l: &crate::language::ast::Layout) {
        self.out.push_str(l.kind.as_str());
        let close = l.span.end as usize - 1;
        if l.kind == crate::language::ast::LayoutKind::Separator {
            if !l.settings.is_empty() {
                self.out.push(' ');
                let open = self.open_brace(l.keyword.end as usize);
                self.settings(open, close, &l.settings);
            }
        } else {
            self.out.push_str(" {");
            let open = self.open_brace(l.keyword.end as usize);
            let mut inner: Vec<Inner<'_>> = l.settings.iter().map(Inner::Setting).collect();
            inner.extend(l.media.iter().map(Inner::Media));
            inner.extend(l.items.iter().map(Inner::Item));
            inner.sort_by_key(|i| i.span().start);
            self.block(open, close, &inner, Inner::span, |p, i| p.inner(i));
        }
        self.trailing(l.span.end as usize);
    }

    /// `thumbnail "…"` or `media "…"`, with `{ settings }` if it has any.
    fn media(&mut self, m: &crate::language::ast::Media) {
        let word = self.text.get(m.keyword.range()).unwrap_or("media").to_string();
        self.out.push_str(&word);
        self.out.push(' ');
        self.template(&m.url);
        if !m.settings.is_empty() {
            self.out.push(' ');
            let open = self.open_brace(m.url.span.end as usize);
            self.settings(open, m.span.end as usize - 1, &m.settings);
        }
        self.trailing(m.span.end as usize);
    }

    fn embed_item(&mut self, item: &EmbedItem) {
        self.indent();
        match item {
            EmbedItem::Part { part, value, span, .. } => {
                self.out.push_str(part.as_str());
                self.out.push(' ');
                self.template(value);
                self.trailing(span.end as usize);
            }
            EmbedItem::Field { name, value, inline, span } => {
                self.out.push_str("field ");
                self.template(name);
                self.out.push(' ');
                self.template(value);
                if inline.is_some() {
                    self.out.push_str(" inline");
                }
                self.trailing(span.end as usize);
            }
        }
    }

    fn if_node(&mut self, node: &IfNode) {
        for (k, link) in node.links.iter().enumerate() {
            self.out.push_str(if k == 0 { "if " } else { " else if " });
            self.condition(&link.condition);
            self.out.push_str(" {");
            let branch = &link.then;
            self.block(branch.span.start as usize, branch.span.end as usize - 1, &branch.body, Node::span, |p, n| {
                p.node(n)
            });
        }
        if let Some(otherwise) = &node.otherwise {
            self.out.push_str(" else {");
            self.block(
                otherwise.span.start as usize,
                otherwise.span.end as usize - 1,
                &otherwise.body,
                Node::span,
                |p, n| p.node(n),
            );
        }
        self.trailing(node.span.end as usize);
    }

    /// A node of one word.
    fn headless(&mut self, word: &str, span: Span) {
        self.out.push_str(word);
        self.trailing(span.end as usize);
    }

    /// `await message "30s" as NAME { … } timeout { … }`.
    fn await_node(&mut self, a: &crate::language::ast::AwaitNode) {
        self.out.push_str("await message ");
        self.template(&a.wait);
        self.out.push_str(" as ");
        self.out.push_str(&a.name.name);
        self.out.push_str(" {");
        for (k, b) in std::iter::once(&a.body).chain(&a.timeout).enumerate() {
            if k == 1 {
                self.out.push_str(" timeout {");
            }
            self.block(b.span.start as usize, b.span.end as usize - 1, &b.body, Node::span, |p, n| p.node(n));
        }
        self.trailing(a.span.end as usize);
    }

    /// `for item in SOURCE [limit N] [join "SEP" into NAME] { … }`.
    fn for_node(&mut self, node: &ForNode) {
        self.out.push_str("for ");
        self.out.push_str(&node.item.name);
        self.out.push_str(" in ");
        // A source is printed as written: its path is the author's.
        self.out.push_str(self.text.get(node.source.span().range()).unwrap_or_default());
        if let Some(order) = &node.order {
            self.out.push_str(" by ");
            self.out.push_str(self.text.get(order.key.span().range()).unwrap_or_default());
            if order.descending {
                self.out.push_str(" desc");
            }
        }
        if let Some(limit) = &node.limit {
            self.out.push_str(" limit ");
            self.value(limit);
        }
        if let Some(join) = &node.join {
            self.out.push_str(" join ");
            self.template(&join.separator);
            self.out.push_str(" into ");
            self.out.push_str(&join.into.name);
        }
        self.out.push_str(" {");
        let body = &node.body;
        self.block(body.span.start as usize, body.span.end as usize - 1, &body.body, Node::span, |p, n| p.node(n));
        self.trailing(node.span.end as usize);
    }

    fn condition(&mut self, c: &Condition) {
        self.value(&c.left);
        if let Some((op, _, right)) = &c.test {
            self.out.push(' ');
            self.out.push_str(op.as_str());
            self.out.push(' ');
            self.value(right);
        }
    }

    fn field(&mut self, field: &Field) {
        self.indent();
        self.out.push_str(field.kind.keyword());
        self.out.push(' ');
        match &field.kind {
            FieldKind::Method(m) | FieldKind::Allow(m) => self.out.push_str(&m.name),
            FieldKind::Url(t) => self.template(t),
            FieldKind::Sample(samples) => {
                let texts: Vec<String> = samples.iter().map(|s| text_literal(&s.value)).collect();
                self.out.push_str(&texts.join(", "));
            }
            FieldKind::Pages(pages) => {
                self.pages(pages, field);
                return;
            }
            FieldKind::Params(pairs) | FieldKind::Headers(pairs) => {
                let open = self.open_brace(field.keyword.end as usize);
                // The field's span ends at its last pair: find its `}`.
                let close = self.close_brace(pairs.last().map_or(open + 1, |p| p.span.end as usize));
                let column = self.column();
                let whole = Span::new(open, close + 1);
                let inline = (!self.has_comment_in(whole) && pairs.len() <= MAX_INLINE)
                    .then(|| inline_pairs(self.text, pairs))
                    .flatten();
                match inline.filter(|s| column + s.chars().count() <= MAX_WIDTH) {
                    Some(line) => self.out.push_str(&line),
                    None => {
                        self.out.push('{');
                        self.block(
                            open,
                            close,
                            pairs,
                            |p| p.span,
                            |p, pair| {
                                p.key_line(&pair.key.name, pair.span, |p| {
                                    p.out.push_str(&pair_value(p.text, &pair.value))
                                })
                            },
                        );
                    }
                }
                self.trailing(close + 1);
                return;
            }
            FieldKind::Body(body) => self.body(body, field),
            FieldKind::Auth(auth) => {
                self.out.push_str(&auth.scheme.name);
                for t in &auth.values {
                    self.out.push(' ');
                    self.template(t);
                }
            }
            FieldKind::Timeout(t) => self.out.push_str(&text_literal(&t.value)),
            FieldKind::Cache(c) => match &**c {
                Cache::For(t) => self.out.push_str(&text_literal(&t.value)),
                Cache::From(k) => self.out.push_str(&key_literal(&k.name)),
            },
            FieldKind::Retry(r) => {
                self.out.push_str(&r.times.value);
                statuses(&mut self.out, &r.on);
                if let Some(b) = &r.backoff {
                    self.out.push_str(" backoff ");
                    self.out.push_str(&text_literal(&b.value));
                }
            }
            FieldKind::Failed(f) => {
                // `failed` and a blank are written: the statuses, then the branch.
                self.out.pop();
                statuses(&mut self.out, &f.on);
                self.out.push_str(" {");
                let b = &f.branch;
                self.block(b.span.start as usize, b.span.end as usize - 1, &b.body, Node::span, |p, n| p.node(n));
            }
        }
        self.trailing(field.span.end as usize);
    }

    /// `pages { … }`: a setting a line.
    fn pages(&mut self, pages: &Pages, field: &Field) {
        self.out.push('{');
        let open = self.open_brace(field.keyword.end as usize);
        let close = field.span.end as usize - 1;
        self.block(
            open,
            close,
            &pages.settings,
            |s| s.span(),
            |p, setting| {
                p.indent();
                p.out.push_str(setting.word());
                match setting {
                    PageSetting::Items(_, k) | PageSetting::Next(_, k) => {
                        p.out.push(' ');
                        p.out.push_str(&key_literal(&k.name));
                    }
                    PageSetting::Cursor(_, k, param) => {
                        p.out.push(' ');
                        p.out.push_str(&key_literal(&k.name));
                        p.out.push_str(" param ");
                        p.out.push_str(&key_literal(&param.name));
                    }
                    PageSetting::NextLink(_) => p.out.push_str(" link"),
                    PageSetting::Max(_, n) | PageSetting::Limit(_, n) => {
                        p.out.push(' ');
                        p.out.push_str(&n.value);
                    }
                }
                p.trailing(setting.span().end as usize);
            },
        );
        self.trailing(close + 1);
    }

    /// A body of its kind: `{ … }`, `[ … ]`, `json …`, `form { … }`,
    /// `text "…" type "…"`, `multipart { … }`.
    fn body(&mut self, body: &Body, field: &Field) {
        match body {
            Body::Json(Value::Object(entries, span)) => {
                self.object(entries, span.start as usize, span.end as usize - 1, *span, false)
            }
            Body::Json(v @ Value::Array(..)) => self.value(v),
            Body::Json(v) => {
                self.out.push_str("json ");
                self.value(v);
            }
            Body::Form(entries) => {
                self.out.push_str("form ");
                let open = self.open_brace(field.keyword.end as usize);
                self.object(entries, open, field.span.end as usize - 1, field.span, false);
            }
            Body::Text { text, media_type } => {
                self.out.push_str("text ");
                self.template(text);
                if let Some(t) = media_type {
                    self.out.push_str(" type ");
                    self.out.push_str(&text_literal(&t.value));
                }
            }
            Body::Multipart(parts) => {
                self.out.push_str("multipart {");
                let open = self.open_brace(field.keyword.end as usize);
                let close = field.span.end as usize - 1;
                self.block(
                    open,
                    close,
                    parts,
                    |p| p.span,
                    |p, part| {
                        p.key_line(&part.key.name, part.span, |p| match &part.value {
                            PartValue::Field(t) => p.out.push_str(&pair_value(p.text, t)),
                            PartValue::File(file) => {
                                p.out.push_str("file ");
                                p.file_source(&file.source);
                                for (word, value) in &file.settings {
                                    p.out.push(' ');
                                    p.out.push_str(&word.name);
                                    p.out.push(' ');
                                    p.template(value);
                                }
                            }
                        })
                    },
                );
            }
        }
    }

    /// An option's `choices { … }`: on one line when it fits and holds no
    /// comment, one choice a line otherwise.
    /// An option's `choices { … }`; `last` when the option ends with it
    /// (its line's comment follows).
    fn choices(&mut self, choices: &Choices, last: bool) {
        let open = self.open_brace(choices.keyword.end as usize);
        let close = choices.span.end as usize - 1;
        let column = self.column();
        let whole = Span::new(open, close + 1);
        let inline = (!self.has_comment_in(whole) && choices.entries.len() <= MAX_INLINE).then(|| {
            let items: Vec<String> = choices.entries.iter().map(|c| choice_line(self.text, c)).collect();
            if items.is_empty() {
                "{}".to_string()
            } else {
                format!("{{ {} }}", items.join(", "))
            }
        });
        match inline.filter(|s| column + s.chars().count() <= MAX_WIDTH) {
            Some(line) => self.out.push_str(&line),
            None => {
                self.out.push('{');
                self.block(
                    open,
                    close,
                    &choices.entries,
                    |c| c.span,
                    |p, c| {
                        p.indent();
                        p.out.push_str(&choice_line(p.text, c));
                        p.trailing(c.span.end as usize);
                    },
                );
            }
        }
        if last {
            self.trailing(close + 1);
        }
    }

    /// `key = value` on a line of its own, with its trailing comment.
    fn key_line(&mut self, key: &str, span: Span, value: impl FnOnce(&mut Self)) {
        self.indent();
        self.out.push_str(&key_literal(key));
        self.out.push_str(" = ");
        value(self);
        self.trailing(span.end as usize);
    }

    /// The output column the next character goes in.
    fn column(&self) -> usize {
        self.out[self.out.rfind('\n').map_or(0, |i| i + 1)..].chars().count()
    }

    fn object(&mut self, entries: &[Entry], open: usize, close: usize, span: Span, may_inline: bool) {
        let column = self.column();
        let inline = ((may_inline || entries.is_empty()) && !self.has_comment_in(span))
            .then(|| inline_entries(self.text, entries))
            .flatten();
        match inline.filter(|s| column + s.chars().count() <= MAX_WIDTH) {
            Some(line) => self.out.push_str(&line),
            None => {
                self.out.push('{');
                self.block(
                    open,
                    close,
                    entries,
                    |e| e.span,
                    |p, e| p.key_line(&e.key.name, e.span, |p| p.value(&e.value)),
                );
            }
        }
    }

    fn value(&mut self, value: &Value) {
        match value {
            // A calculation with a comment inside stays as written, comments and all.
            Value::Arith(e) if self.has_comment_in(e.span()) => {
                let span = e.span();
                self.out.push_str(self.text.get(span.range()).unwrap_or_default());
                self.next += self.comments[self.next..].iter().take_while(|c| c.span.start < span.end).count();
            }
            Value::Object(entries, span) => {
                let close = span.end as usize - 1;
                self.object(entries, span.start as usize, close, *span, true);
            }
            Value::Array(items, span) => {
                let column = self.column();
                let inline = (!self.has_comment_in(*span)).then(|| inline_array(self.text, items)).flatten();
                match inline.filter(|s| column + s.chars().count() <= MAX_WIDTH) {
                    Some(line) => self.out.push_str(&line),
                    None => {
                        self.out.push('[');
                        self.trailing(span.start as usize + 1);
                        self.depth += 1;
                        let mut previous_end: Option<usize> = None;
                        for item in items.iter() {
                            let start = item.span().start as usize;
                            if let Some(end) = previous_end {
                                if self.blank_between(end, self.first_before(start)) {
                                    self.out.push('\n');
                                }
                            }
                            self.comments_before(start);
                            self.indent();
                            self.value(item);
                            self.trailing(item.span().end as usize);
                            previous_end = Some(self.token_end(item.span().end as usize));
                        }
                        self.comments_before(span.end as usize - 1);
                        self.depth -= 1;
                        self.indent();
                        self.out.push(']');
                    }
                }
            }
            _ => self.out.push_str(&inline_value(self.text, value).unwrap_or_default()),
        }
    }

    fn template(&mut self, t: &Template) {
        self.out.push_str(&template_literal(self.text, t));
    }
}

/// A line of a select menu's or a form's body, in source order.
/// A line of a `locale`'s braces: an option's names, or a choice's.
type LocaleLine<'a> = (Span, Option<&'a crate::language::ast::LocaleOption>, Option<&'a (Text, Text)>);

enum Inner<'a> {
    Setting(&'a Setting),
    Choice(&'a MenuChoice),
    Input(&'a Input),
    /// A part of a container or a section.
    Item(&'a ReplyItem),
    /// A gallery's `media`, a section's `thumbnail`.
    Media(&'a crate::language::ast::Media),
    /// A poll's `answer`.
    Answer(&'a crate::language::ast::PollAnswer),
}

impl Inner<'_> {
    fn span(&self) -> Span {
        match self {
            Inner::Setting(s) => s.span,
            Inner::Choice(c) => c.each.as_ref().map_or(c.span, |l| l.span),
            Inner::Input(i) => i.span,
            Inner::Item(i) => i.span(),
            Inner::Media(m) => m.span,
            Inner::Answer(a) => a.span,
        }
    }
}

/// `label "Yes"`, `max 3`, `disabled`, `cooldown "5m" per server`.
fn setting_line(text: &str, s: &Setting) -> String {
    let line = match &s.value {
        None => s.key.name.to_string(),
        Some(SettingValue::Text(t)) => format!("{} {}", s.key.name, template_literal(text, t)),
        Some(SettingValue::Number(n, _)) => format!("{} {n}", s.key.name),
    };
    match &s.scope {
        Some(scope) => format!("{line} per {}", scope.name),
        None => line,
    }
}

/// `{ a = "x", b = 1 }` on one line, if every value fits on one.
fn inline_pairs(text: &str, pairs: &[Pair]) -> Option<String> {
    if pairs.is_empty() {
        return Some("{}".into());
    }
    let items: Vec<String> =
        pairs.iter().map(|p| format!("{} = {}", key_literal(&p.key.name), pair_value(text, &p.value))).collect();
    Some(format!("{{ {} }}", items.join(", ")))
}

fn inline_entries(text: &str, entries: &[Entry]) -> Option<String> {
    if entries.is_empty() {
        return Some("{}".into());
    }
    if entries.len() > MAX_INLINE {
        return None;
    }
    let mut items = Vec::with_capacity(entries.len());
    for e in entries {
        items.push(format!("{} = {}", key_literal(&e.key.name), inline_value(text, &e.value)?));
    }
    Some(format!("{{ {} }}", items.join(", ")))
}

fn inline_array(text: &str, items: &[Value]) -> Option<String> {
    let mut parts = Vec::with_capacity(items.len());
    for v in items {
        parts.push(inline_value(text, v)?);
    }
    Some(format!("[{}]", parts.join(", ")))
}

/// A value on one line: always for scalars, for objects and arrays when
/// their own contents fit.
fn inline_value(text: &str, value: &Value) -> Option<String> {
    Some(match value {
        Value::Str(t) => template_literal(text, t),
        Value::Number(n, _) => n.to_string(),
        Value::Bool(b, _) => b.to_string(),
        Value::Null(_) => "null".into(),
        // A reference is printed as written: its path is the author's.
        Value::Ref(r) => text.get(r.span.range()).unwrap_or_default().to_string(),
        Value::Element(e) => text.get(e.span.range()).unwrap_or_default().to_string(),
        Value::Var(name) => name.name.to_string(),
        Value::Object(entries, _) => inline_entries(text, entries)?,
        Value::Array(items, _) => inline_array(text, items)?,
        Value::Arith(e) => expr_text(text, e)?,
    })
}

/// A `var`'s default on one line: its strings are text (their braces
/// plain), its numbers as written.
fn fixed_literal(value: &Value) -> String {
    match value {
        Value::Str(t) => text_literal(&t.as_literal().unwrap_or_default()),
        Value::Number(n, _) => n.to_string(),
        Value::Bool(b, _) => b.to_string(),
        Value::Object(entries, _) if entries.is_empty() => "{}".into(),
        Value::Object(entries, _) => {
            let entries: Vec<_> =
                entries.iter().map(|e| format!("{} = {}", key_literal(&e.key.name), fixed_literal(&e.value))).collect();
            format!("{{ {} }}", entries.join(", "))
        }
        Value::Array(items, _) => format!("[{}]", items.iter().map(fixed_literal).collect::<Vec<_>>().join(", ")),
        Value::Null(_) | Value::Ref(_) | Value::Element(_) | Value::Var(_) | Value::Arith(_) => "null".into(),
    }
}

/// A calculation on one line: operators between blanks, parentheses as
/// written.
fn expr_text(text: &str, e: &Expr) -> Option<String> {
    Some(match e {
        Expr::Value(v) => inline_value(text, v)?,
        Expr::Var(name) => name.name.to_string(),
        Expr::Binary(b) => format!("{} {} {}", expr_text(text, &b.left)?, b.op.as_str(), expr_text(text, &b.right)?),
        Expr::Group(inner, _) => format!("({})", expr_text(text, inner)?),
    })
}

/// A parameter's or header's value: a string, or a number or boolean as
/// written (the grammar takes both; the value is the same text).
/// `"Shown" = value` of a choice; a number as written.
fn choice_line(text: &str, choice: &Choice) -> String {
    let value = match &choice.value {
        ChoiceValue::Text(t) => text_literal(&t.value),
        ChoiceValue::Number(_, span) => text.get(span.range()).unwrap_or_default().to_string(),
    };
    format!("{} = {value}", key_literal(&choice.name.name))
}

fn pair_value(text: &str, value: &Template) -> String {
    match text.get(value.span.range()) {
        Some(written) if !written.starts_with('"') => written.to_string(),
        _ => template_literal(text, value),
    }
}

/// ` on 429, 5xx` when there are statuses.
fn statuses(out: &mut String, on: &[Text]) {
    for (i, status) in on.iter().enumerate() {
        out.push_str(if i == 0 { " on " } else { ", " });
        out.push_str(&status.value);
    }
}

/// A key bare when the grammar reads it bare, quoted otherwise.
fn key_literal(key: &str) -> String {
    let bare = !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if bare {
        key.to_string()
    } else {
        text_literal(key)
    }
}

/// A string whose braces are plain text (descriptions, keys, paths).
fn text_literal(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        escape_char(c, &mut out);
    }
    out.push('"');
    out
}

fn escape_char(c: char, out: &mut String) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

/// A template: literal text escaped in one canonical way, variables and
/// slots as written.
fn template_literal(text: &str, t: &Template) -> String {
    let mut out = String::with_capacity(t.span.end as usize - t.span.start as usize);
    out.push('"');
    for (k, part) in t.parts.iter().enumerate() {
        match part {
            Part::Lit(lit, _) => {
                let next_is_var = matches!(t.parts.get(k + 1), Some(Part::Var(_)));
                let chars: Vec<char> = lit.chars().collect();
                for (j, &c) in chars.iter().enumerate() {
                    match c {
                        '{' => out.push_str("\\{"),
                        '}' => out.push_str("\\}"),
                        // `<NAME>` in text would read as a slot.
                        '<' if reads_as_slot(&chars[j + 1..]) => out.push_str("\\<"),
                        // `${x}` warns (B134); a dollar sign before a
                        // variable is written `\$`.
                        '$' if j + 1 == chars.len() && next_is_var => out.push_str("\\$"),
                        c => escape_char(c, &mut out),
                    }
                }
            }
            Part::Var(Var::Named(id)) => {
                out.push('{');
                out.push_str(&id.name);
                out.push('}');
            }
            Part::Var(Var::BotToken(_)) => out.push_str("{bot_token}"),
            Part::Var(Var::Draw(d)) => {
                out.push('{');
                out.push_str(&d.draw.written());
                out.push('}');
            }
            // A reference is printed as written (its span holds the braces).
            Part::Var(Var::Ref(r)) => out.push_str(text.get(r.span.range()).unwrap_or_default()),
            Part::Var(Var::Element(e)) => out.push_str(text.get(e.span.range()).unwrap_or_default()),
            // A base's path as written (its span is its own text), then the
            // helpers in their one written form.
            Part::Var(Var::Helped(h)) => {
                out.push('{');
                match &h.base {
                    Var::Named(id) => out.push_str(&id.name),
                    Var::Draw(d) => out.push_str(&d.draw.written()),
                    base => out.push_str(text.get(base.span().range()).unwrap_or_default()),
                }
                out.push_str(&crate::language::helpers::written(&h.helpers));
                out.push('}');
            }
            Part::Secret(id) => {
                out.push('<');
                out.push_str(&id.name);
                out.push('>');
            }
        }
    }
    out.push('"');
    out
}

fn reads_as_slot(rest: &[char]) -> bool {
    let name = rest.iter().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || **c == '_').count();
    name > 0 && rest[0].is_ascii_uppercase() && rest.get(name) == Some(&'>')
}

/// `a, b, c`: a list of words as written.
fn words(w: &Words) -> String {
    w.words.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// A webhook's head as written: ` webhook "/path" signed github …`.
pub fn webhook_head(w: &crate::language::ast::Webhook) -> String {
    let mut out = format!(" webhook {}", text_literal(&w.path.value));
    for (word, value) in &w.words {
        out.push(' ');
        out.push_str(&word.name);
        out.push(' ');
        match value {
            crate::language::ast::WebhookValue::Word(v) => out.push_str(&v.name),
            crate::language::ast::WebhookValue::Text(t) => out.push_str(&text_literal(&t.value)),
        }
    }
    out
}
