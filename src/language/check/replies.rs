//! Rules on what a reply sends: its parts written once, something to show,
//! and every embed within the platform's limits and forms (B410–B416).
//! Only the text written in the file is held to them here; what a `{…}`
//! fills in at run time is kept to them by `message::embed` (B326).

use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::base::source::Span;
use crate::discord::limits;
use crate::language::ast::visit::{self, Visitor};
use crate::language::ast::{Embed, EmbedItem, Reply, ReplyItem, Template, Tree, TreeKind};
use crate::language::vocab::{self, EmbedPart, PartForm};

pub fn check_tree(tree: &Tree, out: &mut Findings) {
    // An event of a kind whose replies go nowhere (a timed event's go to
    // its channel), or a webhook's: what it is, and whether it has a user.
    let kind = crate::discord::events::event(&tree.name.name)
        .filter(|e| e.reply == crate::discord::events::Reply::Nowhere)
        .map(|e| (format!("`{}` events ({})", e.kind, e.about), e.vars.contains(&"user_id")));
    let nowhere = match (tree.kind, &tree.schedule, &tree.webhook) {
        (TreeKind::Event, _, Some(_)) => Some(("webhook events (a POST from another service)".to_string(), false)),
        (TreeKind::Event, None, None) => kind,
        _ => None,
    };
    let mut walk = Walk { event: tree.kind == TreeKind::Event, nowhere, out };
    visit::walk_nodes(&mut walk, &tree.body);
}

struct Walk<'o> {
    event: bool,
    nowhere: Option<(String, bool)>,
    out: &'o mut Findings,
}

impl<'a> Visitor<'a> for Walk<'_> {
    fn reply(&mut self, r: &'a Reply) {
        if let (Some((what, user)), false) = (&self.nowhere, r.update) {
            self.out.push(
                Diagnostic::new(Code::ReplyNowhere, "a reply in an event that has no channel goes nowhere")
                    .label(r.span, "no channel to answer in")
                    .help(format!(
                        "{what} have no channel of their own: post to one with `send to \"#mod-log\" …` or `send to \"<LOG_CHANNEL>\" …`{}",
                        if *user { ", or write to the user with `dm \"{user_id}\" …`" } else { "" }
                    )),
            );
        }
        reply(r, self.event, self.out);
    }
    /// An action's message goes where the action sends it.
    fn action(&mut self, a: &'a crate::language::ast::Action) {
        let nowhere = self.nowhere.take();
        visit::walk_action(self, a);
        self.nowhere = nowhere;
    }
    // Replies only: nothing inside blocks, saves or conditions is read.
    fn block(&mut self, _: &'a crate::language::ast::ApiBlock) {}
    fn save(&mut self, _: &'a crate::language::ast::Save) {}
    fn condition(&mut self, _: &'a crate::language::ast::Condition) {}
}

fn reply(r: &Reply, event: bool, out: &mut Findings) {
    let (mut text, mut ephemeral, mut poll) = (None::<Span>, None::<Span>, None::<Span>);
    let (mut embeds, mut components, mut layout, mut files) = (0, 0, false, 0);
    for item in &r.items {
        match item {
            // (A layout message's texts are parts of it: `layout`.)
            ReplyItem::Text { span, .. } if !r.is_layout() => once(&mut text, *span, "`text`", "a reply", out),
            ReplyItem::Text { span, .. } => text = text.or(Some(*span)),
            ReplyItem::Layout(_) => layout = true,
            ReplyItem::Ephemeral(span) => {
                once(&mut ephemeral, *span, "`ephemeral`", "a reply", out);
                if event {
                    out.push(
                        Diagnostic::new(Code::EphemeralInEvent, "an event's reply cannot be ephemeral")
                            .label(*span, "only an answer to a user's command can be")
                            .help("an event posts in a channel, where everyone sees it; remove `ephemeral`"),
                    );
                }
            }
            ReplyItem::Embed(e) => {
                embeds += 1;
                if embeds == limits::EMBEDS + 1 {
                    out.push(
                        Diagnostic::new(Code::TooManyEmbedParts, "a reply has more than 10 embeds")
                            .label(e.span, "the 11th")
                            .help("the platform takes at most 10 embeds on a message; send the rest in another reply"),
                    );
                }
                if !r.is_layout() {
                    embed(e, out);
                }
            }
            ReplyItem::Component(_) => components += 1,
            ReplyItem::Poll(p) => {
                once(&mut poll, p.keyword, "`poll`", "a reply", out);
                self::poll(p, r.update, out);
            }
            // (Checked with the file's other translations: `translations`.)
            ReplyItem::Translation(_) => {}
            ReplyItem::File(_) => files += 1,
        }
    }
    super::files::check(r, out);
    // An update may change the components alone; a new message needs
    // something to show besides.
    let shown = text.is_some() || embeds > 0 || layout || poll.is_some() || files > 0;
    if r.block && !shown && (!r.update || components == 0) {
        out.push(
            Diagnostic::new(Code::EmptyReply, "this reply has nothing to show")
                .label(r.span, "no `text` and no `embed`")
                .help("give it a `text \"…\"` or an `embed { … }`"),
        );
    }
    let total: usize = r
        .embeds()
        .flat_map(|e| &e.items)
        .map(|i| match i {
            EmbedItem::Part { part, value, .. } if part.counts_in_total() => super::text::written(value),
            EmbedItem::Part { .. } => 0,
            EmbedItem::Field { name, value, .. } => super::text::written(name) + super::text::written(value),
        })
        .sum();
    super::layout::check(r, out);
    if total > limits::EMBED_TOTAL {
        out.push(
            Diagnostic::new(
                Code::EmbedsTooLong,
                format!("this reply's embeds hold {total} characters; the platform takes 6,000 in all"),
            )
            .label(r.span, "these embeds")
            .help("shorten the descriptions, or send some of the embeds in another reply"),
        );
    }
}

/// A poll: its question, 1 to 10 answers, its settings; never in an edit
/// (the platform does not change a poll once sent).
fn poll(p: &crate::language::ast::Poll, update: bool, out: &mut Findings) {
    super::components::settings(&p.settings, vocab::POLL_SETTINGS, "a poll", out);
    if update {
        out.push(
            Diagnostic::new(Code::MisplacedUpdate, "an `update` cannot carry a poll")
                .label(p.keyword, "a poll cannot be edited in")
                .help("send the poll in a new message: `reply { poll { … } }`"),
        );
    }
    if crate::language::ast::setting(&p.settings, "question").is_none() {
        out.push(
            Diagnostic::new(Code::BadSetting, "this poll asks no question")
                .label(p.keyword, "the platform needs one")
                .help("give it a `question \"…\"` (at most 300 characters)"),
        );
    }
    if p.answers.is_empty() {
        out.push(
            Diagnostic::new(Code::TooManyComponents, "this poll has no answers")
                .label(p.span, "nothing to vote for")
                .help("add `answer \"…\"` lines, 1 to 10"),
        );
    }
    if let Some(extra) = p.answers.get(limits::POLL_ANSWERS) {
        out.push(
            Diagnostic::new(Code::TooManyComponents, "a poll has at most 10 answers")
                .label(extra.span, "the 11th")
                .help("offer fewer, or a select menu (25 choices)"),
        );
    }
    for a in &p.answers {
        let help = "a poll's answer takes at most 55 characters";
        super::text::length_with(&a.text, limits::POLL_ANSWER, "a poll's answer", help, out);
        super::components::settings(&a.settings, vocab::POLL_ANSWER_SETTINGS, "a poll's answer", out);
    }
}

/// B414 for a part already seen.
fn once(seen: &mut Option<Span>, span: Span, what: &str, within: &str, out: &mut Findings) {
    match seen {
        Some(first) => out.push(
            Diagnostic::new(Code::ReplyPartTwice, format!("{what} is written twice in {within}"))
                .label(span, "written again here")
                .related(*first, "first here")
                .help("keep one of them"),
        ),
        None => *seen = Some(span),
    }
}

fn embed(e: &Embed, out: &mut Findings) {
    let mut seen: Vec<(EmbedPart, Option<Span>)> = EmbedPart::ALL.iter().map(|p| (*p, None)).collect();
    let (mut fields, mut visible) = (0, false);
    for item in &e.items {
        match item {
            EmbedItem::Part { part, key, value, .. } => {
                let slot = &mut seen.iter_mut().find(|(p, _)| p == part).expect("every part has a slot").1;
                once(slot, *key, &format!("`{}`", part.as_str()), "an embed", out);
                visible |= !matches!(
                    part,
                    EmbedPart::Color
                        | EmbedPart::Url
                        | EmbedPart::AuthorUrl
                        | EmbedPart::AuthorIcon
                        | EmbedPart::FooterIcon
                );
                if let Some(max) = part.limit() {
                    length(value, max, &format!("an embed's `{}`", part.as_str()), out);
                }
                form(*part, value, out);
            }
            EmbedItem::Field { name, value, span, .. } => {
                fields += 1;
                visible = true;
                if fields == limits::EMBED_FIELDS + 1 {
                    out.push(
                        Diagnostic::new(Code::TooManyEmbedParts, "an embed has more than 25 fields")
                            .label(*span, "the 26th")
                            .help("the platform takes at most 25 fields in an embed; put the rest in another embed"),
                    );
                }
                length(name, limits::FIELD_NAME, "a field's name", out);
                length(value, limits::FIELD_VALUE, "a field's value", out);
            }
        }
    }
    let has = |p: EmbedPart| seen.iter().find(|(s, _)| *s == p).and_then(|(_, at)| *at);
    for (part, of) in [
        (EmbedPart::AuthorUrl, EmbedPart::Author),
        (EmbedPart::AuthorIcon, EmbedPart::Author),
        (EmbedPart::FooterIcon, EmbedPart::Footer),
    ] {
        if let (Some(at), None) = (has(part), has(of)) {
            out.push(
                Diagnostic::new(
                    Code::BadSetting,
                    format!("an embed's `{}` needs its `{}`", part.as_str(), of.as_str()),
                )
                .label(at, format!("no `{}` in this embed", of.as_str()))
                .help(format!(
                    "the platform shows it beside the {}: add `{} \"…\"`",
                    of.as_str(),
                    of.as_str()
                )),
            );
        }
    }
    if !visible {
        out.push(
            Diagnostic::new(Code::EmptyReply, "this embed has nothing to show")
                .label(e.span, "no title, description, field, author, footer, image or thumbnail")
                .help("give it a `title \"…\"` or a `description \"…\"`"),
        );
    }
}

/// B410 for written text of an embed over `max` characters.
fn length(t: &Template, max: usize, what: &str, out: &mut Findings) {
    let help = "shorten it, or move the text to the embed's `description` (4,096 characters)";
    super::text::length_with(t, max, what, help, out);
}

/// B413 for a written colour, URL or time that is not one (a part with a
/// `{…}` is judged at run time).
fn form(part: EmbedPart, value: &Template, out: &mut Findings) {
    if matches!(part.form(), PartForm::Url | PartForm::Image) {
        let help = "the platform takes at most 2,048 characters in an embed's URLs: link a shorter address";
        super::text::length_with(value, limits::EMBED_URL, &format!("an embed's `{}`", part.as_str()), help, out);
    }
    let Some(text) = value.as_literal() else { return };
    let (ok, want) = match part.form() {
        PartForm::Text => return,
        PartForm::Color => (vocab::parse_color(&text).is_some(), "a colour: `#RRGGBB`, or its number up to 16777215"),
        PartForm::Url => (vocab::is_web_url(text.trim()), "an http or https URL"),
        PartForm::Image => (
            vocab::is_image_address(text.trim()),
            "an http or https URL, or `attachment://NAME` for a file the message carries",
        ),
        PartForm::Timestamp => {
            (vocab::is_timestamp(text.trim()), "a time as RFC 3339 writes it: `2026-11-24T14:05:00Z`")
        }
    };
    if !ok {
        let shown = crate::base::display::one_line(&text);
        out.push(
            Diagnostic::new(Code::EmbedValueForm, format!("an embed's `{}` must be {want}", part.as_str()))
                .label(value.span, format!("`{shown}` is not one"))
                .help(match part.form() {
                    PartForm::Color => "write the colour in hex, as `#3366FF`; blkc does not guess colours from names",
                    PartForm::Url | PartForm::Image => "write the whole address, with `https://`",
                    _ => "write the date, the time and the zone: `2026-11-24T14:05:00Z`",
                }),
        );
    }
}
