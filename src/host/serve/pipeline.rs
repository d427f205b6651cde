//! The one run path: a trigger, whatever made it, is queued, deduplicated
//! across processes when it needs to be, run on a pool thread by the
//! runner of `blkc run`, and its replies delivered to its target; then it
//! is counted and logged, once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::ending::{ended, Ended, Ending, RunReport, Trail};
use super::gate::{Button, Passage};
use super::log;
use super::shared::{Shared, Work};
use super::trigger::{About, Delivery, Outcome, Target, Trigger};
use crate::discord::outgoing;
use crate::discord::outgoing::{pieces, Message, Outgoing};
use crate::discord::rest::{Answer as Sent, PlatformError, Route};
use crate::language::message;
use crate::run::eval::{self, Event};
use twilight_model::http::interaction::InteractionResponseData;

/// How long an interaction token lasts: answers after this cannot be sent.
const TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// How long an event's messages may take, rate limits included.
const EVENT_DEADLINE: Duration = Duration::from_secs(60);

/// Runs one trigger on a pool thread, delivers what it says, and counts
/// and logs how it went.
pub fn run(shared: &Arc<Shared>, work: Work) {
    let Work { _queued, mut trigger } = work;
    if !first_time(shared, &trigger) || refused_by_guards(shared, &trigger) {
        return;
    }
    if let Some(tick) = trigger.tick.as_mut() {
        tick.started();
    }
    if let Some(later) = trigger.later.as_mut() {
        let until = shared.clock.now_ms() + super::later::LEASE_MS;
        if !later.start(until) {
            return ended(shared, Ended::Trigger(&trigger), Ending::of(Outcome::Duplicate));
        }
    }
    // A keystroke whose answer time has passed while it waited for a
    // thread was offered no choices already: it does not run.
    let autocomplete = trigger.tree().kind == crate::language::plan::TreeKind::Autocomplete;
    if autocomplete && trigger.received.elapsed() > shared.front.answer_within {
        return ended(shared, Ended::Trigger(&trigger), Ending::of(Outcome::Limited));
    }
    let started = Instant::now();
    let mut report = RunReport::default();
    let mut store = shared.bot.store.run_store();
    let now = u64::try_from(shared.clock.now_ms()).unwrap_or(0);
    let passage = trigger.gates.pass(store.as_mut(), now);
    super::gate::sweep(&trigger.gates, store.as_mut(), now);
    let last_click = match passage {
        Ok(Passage::Open { last_click }) => last_click,
        Ok(refused) => return refuse(shared, &trigger, refused),
        // A store that cannot say cannot count: the run fails, and says so.
        Err(e) => {
            let mut out = Outbox { shared, trigger: &trigger, replies: 0, disable: None };
            report.failure = Some(format!("the cooldowns and clicks could not be read: {e}"));
            if matches!(trigger.target, Target::Interaction(_)) {
                out.send(&mut report, &failed(&trigger));
            }
            let ending = Ending { outcome: Outcome::Failed, report: Some(&report), trail: None, refused: None };
            return ended(shared, Ended::Trigger(&trigger), ending);
        }
    };
    let disable = trigger.gates.button.as_ref().filter(|_| last_click).map(|b| (b, false));
    let mut out = Outbox { shared, trigger: &trigger, replies: 0, disable };
    let autocomplete = trigger.tree().kind == crate::language::plan::TreeKind::Autocomplete;
    let mut offered = Vec::new();
    let mut trail = Trail::new(shared);
    let failed = match &trigger.vars {
        Err(why) => Some(why.to_string()),
        Ok(vars) => {
            let mut inputs = shared.bot.inputs.clone();
            inputs.vars.extend(vars.iter().cloned());
            inputs.mentions.clone_from(&trigger.mentions);
            inputs.received.clone_from(&trigger.request);
            let mut options = shared.bot.options.clone();
            options.samples = trigger.loaded.checked.model.samples.clone();
            // `{now}` is the bot's time, as its timers and cooldowns read it.
            let ms = i128::from(shared.clock.now_ms()) * 1_000_000;
            options.now = options.now.or_else(|| time::OffsetDateTime::from_unix_timestamp_nanos(ms).ok());
            if autocomplete {
                options.deadline = Some(trigger.received + shared.front.answer_within);
            }
            let mut sink = |event: Event| {
                if let Some(trail) = trail.as_mut() {
                    trail.push(&event);
                }
                deliver(&mut out, &mut report, &mut offered, event)
            };
            let plan = &trigger.loaded.plan;
            failure(caught(|| eval::run(plan, trigger.tree(), &inputs, &options, store.as_mut(), &mut sink)))
        }
    };
    let outcome = out.finish(&mut report, failed, offered);
    out.disable_left_button();
    let outcome = report.settle(outcome);
    shared.metrics.run_time(started.elapsed());
    let counted = if report.deferred && outcome == Outcome::Answered { Outcome::Deferred } else { outcome };
    // Waiting work that ran is removed before its end is told: a run that
    // follows it (`{waiting}`) no longer sees it.
    drop(trigger.later.take());
    ended(shared, Ended::Trigger(&trigger), Ending { outcome: counted, report: Some(&report), trail, refused: None });
}

/// Where each event of a run goes: a reply or form to its target, a
/// choice to the answer, the rest to the run's report.
fn deliver(out: &mut Outbox, report: &mut RunReport, offered: &mut Vec<(String, String)>, event: Event) {
    match event {
        Event::Reply { text, ephemeral, embeds, components, layout, poll, files, update } => {
            let said = Said { text, ephemeral, embeds, components, layout, poll, files, update };
            out.reply(report, said)
        }
        Event::Form(form) => {
            out.replies += 1;
            out.send(report, &Outgoing::Form(form));
        }
        Event::Choice { name, value } => offered.push((name, value)),
        other => report.note(out.shared, &out.trigger.about, &other),
    }
}

/// What an interaction is answered when its run fails: a notice, or for
/// an autocomplete no choices.
fn failed(trigger: &Trigger) -> Outgoing {
    match trigger.tree().kind {
        crate::language::plan::TreeKind::Autocomplete => Outgoing::Choices(Vec::new()),
        _ => Outgoing::Message(Message::notice(outgoing::FAILED)),
    }
}

/// The type of the option an autocomplete completes (the last word of its
/// tree's name).
fn focused_kind(tree: &crate::language::plan::Tree) -> crate::discord::options::OptionType {
    let option = tree.name.rsplit(' ').next().unwrap_or_default();
    tree.options.iter().find(|o| o.name == option).map_or(crate::discord::options::OptionType::String, |o| o.kind)
}

/// Who may run it, and where (its tree's `require` lines), decided before
/// anything is counted: whether they refused it (the member is told).
fn refused_by_guards(shared: &Arc<Shared>, trigger: &Trigger) -> bool {
    let guards = &trigger.guards;
    let Some(standing) = trigger.standing.as_ref().filter(|_| !guards.is_empty()) else { return false };
    let Some((guard, why)) = crate::run::guards::refused_by(guards, standing, &shared.bot.inputs.secrets) else {
        return false;
    };
    let about = &trigger.about;
    tracing::info!(id = about.id(), kind = about.kind(), guard, "a `require` line refused the member");
    refuse_with(shared, trigger, Outcome::Guarded, Some(why));
    true
}

/// A trigger a cooldown or a used-up button keeps from running: the user
/// is told privately (an event's run is only logged).
fn refuse(shared: &Arc<Shared>, trigger: &Trigger, passage: Passage) {
    let outcome = match passage {
        Passage::UsedUp { .. } => Outcome::UsedUp,
        Passage::Expired => Outcome::Expired,
        _ => Outcome::Cooldown,
    };
    refuse_with(shared, trigger, outcome, passage.refusal());
}

/// A trigger kept from running: the user told `text` privately (with no
/// ping: a role or a channel is named, never notified), counted and logged.
fn refuse_with(shared: &Arc<Shared>, trigger: &Trigger, outcome: Outcome, text: Option<String>) {
    if let (Target::Interaction(_), Some(text)) = (&trigger.target, &text) {
        let mut message = Message::notice(text);
        message.ephemeral = true;
        // (An autocomplete can answer only with choices: it offers none.)
        let said = match trigger.tree().kind {
            crate::language::plan::TreeKind::Autocomplete => Outgoing::Choices(Vec::new()),
            _ => Outgoing::Message(message),
        };
        let mut out = Outbox { shared, trigger, replies: 0, disable: None };
        out.send(&mut RunReport::default(), &said);
    }
    ended(shared, Ended::Trigger(trigger), Ending { outcome, report: None, trail: None, refused: text.as_deref() });
}

/// Whether the trigger is new to the processes sharing the store (an
/// event two sessions hold, during a hand-over); a store that cannot say
/// lets it run: the process's own shards are its own.
fn first_time(shared: &Shared, trigger: &Trigger) -> bool {
    let Some((key, at, keep)) = &trigger.dedupe else { return true };
    match shared.bot.store.first_time(key, *at, keep.as_millis() as i64) {
        Ok(true) => true,
        Ok(false) => {
            let about = &trigger.about;
            tracing::info!(id = about.id(), kind = about.kind(), "event already taken by another process");
            ended(shared, Ended::Trigger(trigger), Ending::of(Outcome::Duplicate));
            false
        }
        Err(e) => {
            let about = &trigger.about;
            tracing::warn!(id = about.id(), kind = about.kind(), error = %e, "the store could not say whether the event is new");
            true
        }
    }
}

/// A run's messages on their way to its target.
struct Outbox<'a> {
    shared: &'a Arc<Shared>,
    trigger: &'a Trigger,
    replies: usize,
    /// A button clicked its last time, to disable on its message: in the
    /// run's `update` if it sends one (then `true`), else by an edit after.
    disable: Option<(&'a Button, bool)>,
}

/// A reply or an update as the run said it.
struct Said {
    text: String,
    ephemeral: bool,
    embeds: Vec<outgoing::Embed>,
    components: Vec<outgoing::Component>,
    layout: Vec<outgoing::Block>,
    poll: Option<outgoing::Poll>,
    files: Vec<outgoing::File>,
    update: bool,
}

impl Outbox<'_> {
    /// What ends a run: an autocomplete's choices, "Done." for a command
    /// that said nothing (a handler leaves its component's message as it
    /// is), or the word of a failure.
    fn finish(&mut self, report: &mut RunReport, failure: Option<String>, offered: Vec<(String, String)>) -> Outcome {
        let trigger = self.trigger;
        let interaction = matches!(trigger.target, Target::Interaction(_));
        match failure {
            None if trigger.tree().kind == crate::language::plan::TreeKind::Autocomplete => {
                let (choices, adjusted) = message::choices(offered, focused_kind(trigger.tree()));
                if adjusted > 0 {
                    report.warnings.push(crate::base::diagnostics::Code::EmbedAdjusted.as_str());
                }
                self.send(report, &Outgoing::Choices(choices));
                Outcome::Answered
            }
            None if interaction => {
                if self.replies == 0 {
                    let handler = trigger.tree().kind == crate::language::plan::TreeKind::Handler;
                    let done = Outgoing::Message(Message::notice(outgoing::DONE));
                    self.send(report, &if handler { Outgoing::Nothing } else { done });
                }
                Outcome::Answered
            }
            None => Outcome::Ran,
            Some(why) => {
                report.failure = Some(why);
                if interaction {
                    self.send(report, &failed(trigger));
                }
                Outcome::Failed
            }
        }
    }

    /// A reply, as the messages it becomes: its text split to the
    /// platform's length, its embeds and components on the last of them.
    /// An update is one message, its text cut to the length.
    fn reply(&mut self, report: &mut RunReport, said: Said) {
        let Said { text, ephemeral, embeds, components, layout, poll, files, mut update } = said;
        self.replies += 1;
        let has_message = matches!(&self.trigger.target, Target::Interaction(a) if a.message.is_some());
        if update && !has_message {
            // A form shown from a command has no message to update.
            let about = &self.trigger.about;
            log::hiding(about.token(), || {
                tracing::warn!(
                    id = about.id(),
                    "an `update` has no component's message to edit; sent as a new message"
                );
            });
            update = false;
        }
        if update {
            let mut message = Message::new(text, &self.trigger.mentions);
            if crate::discord::outgoing::fit_message(&mut message.content) {
                let about = &self.trigger.about;
                log::hiding(about.token(), || {
                    tracing::warn!(id = about.id(), "an update's text was cut to 2,000 characters")
                });
            }
            message.embeds = embeds;
            message.components = components;
            message.layout = layout;
            message.update = true;
            self.send(report, &Outgoing::Message(message));
            return;
        }
        if let Target::Channel(None) = self.trigger.target {
            let about = &self.trigger.about;
            tracing::warn!(
                id = about.id(),
                kind = about.kind(),
                "a reply in this event has no channel to go to; not sent"
            );
            return;
        }
        if !layout.is_empty() {
            // A layout message is one message: its texts are its parts.
            let mut message = Message::new(String::new(), &self.trigger.mentions);
            message.ephemeral = ephemeral && matches!(self.trigger.target, Target::Interaction(_));
            message.layout = layout;
            message.files = files;
            self.send(report, &Outgoing::Message(message));
            return;
        }
        let (parts, warning) =
            if embeds.is_empty() || !text.trim().is_empty() { pieces(&text) } else { (vec![String::new()], None) };
        if let Some(w) = warning {
            let about = &self.trigger.about;
            log::hiding(about.token(), || tracing::warn!(id = about.id(), kind = about.kind(), "{w}"));
        }
        let last = parts.len() - 1;
        let mut rich = Some(((embeds, components), (poll, files)));
        for (i, p) in parts.into_iter().enumerate() {
            let mut message = Message::new(p, &self.trigger.mentions);
            // Only an interaction's answer can be private (B416 refuses it
            // in an event before the file is served).
            message.ephemeral = ephemeral && matches!(self.trigger.target, Target::Interaction(_));
            if i == last {
                ((message.embeds, message.components), (message.poll, message.files)) = rich.take().unwrap_or_default();
            }
            self.send(report, &Outgoing::Message(message));
        }
    }

    /// One message to the target: the interaction's answer, its edit or a
    /// follow-up, or a channel message.
    fn send(&mut self, report: &mut RunReport, said: &Outgoing) {
        let disabled = self.disable_in_update(said);
        let said = disabled.as_ref().unwrap_or(said);
        let shared = self.shared;
        let done = Message::notice(outgoing::DONE);
        let message = match said {
            Outgoing::Message(m) => m,
            // Past the first answer, nothing said is "Done." (a deferral
            // must be answered); a form there is refused below.
            Outgoing::Nothing | Outgoing::Form(_) | Outgoing::Choices(_) => &done,
        };
        let mut body = crate::discord::message::body(message);
        let sent = match &self.trigger.target {
            Target::Interaction(answer) => {
                let (application, token) = (answer.application_id.as_str(), answer.token.as_str());
                let route = match answer.deliver(said) {
                    Delivery::Sent => {
                        report.messages += usize::from(!matches!(said, Outgoing::Nothing));
                        return;
                    }
                    Delivery::Nothing => return,
                    Delivery::Refused(why) => {
                        let about = &self.trigger.about;
                        log::hiding(about.token(), || tracing::warn!(id = about.id(), "{why}"));
                        report.undelivered.get_or_insert(why.to_string());
                        return;
                    }
                    Delivery::EditMessage => {
                        body.flags = crate::discord::message::edit_flags(body.flags);
                        let Some((channel, id)) = &answer.message else { return };
                        let route = Route::EditChannelMessage { channel, message: id };
                        let deadline = Instant::now() + EVENT_DEADLINE;
                        let platform = shared.bot.platform(&self.trigger.loaded);
                        let sent = send_body(platform, route, &body, message, deadline);
                        sent_message(shared, report, sent, &self.trigger.about);
                        return;
                    }
                    Delivery::Edit => {
                        report.deferred = true;
                        // An edit keeps the deferral's privacy and may
                        // carry no flag of it (but a layout's).
                        body.flags = crate::discord::message::edit_flags(body.flags);
                        Route::EditOriginal { application, token }
                    }
                    Delivery::FollowUp => {
                        shared.metrics.followup();
                        Route::FollowUp { application, token }
                    }
                    Delivery::Replace => {
                        report.deferred = true;
                        self.take_back_deferral(application, token);
                        shared.metrics.followup();
                        Route::FollowUp { application, token }
                    }
                };
                let deadline = self.trigger.received + TOKEN_LIFETIME;
                send_body(shared.bot.platform(&self.trigger.loaded), route, &body, message, deadline)
            }
            Target::Channel(Some(_))
                if matches!(said, Outgoing::Form(_) | Outgoing::Nothing | Outgoing::Choices(_)) =>
            {
                return
            }
            Target::Channel(Some(channel)) => {
                let route = Route::ChannelMessage { channel };
                let deadline = Instant::now() + EVENT_DEADLINE;
                send_body(shared.bot.platform(&self.trigger.loaded), route, &body, message, deadline)
            }
            Target::Channel(None) => return,
        };
        sent_message(shared, report, sent, &self.trigger.about);
    }
}

/// A message's body sent on `route`: as twilight's type gives it, or
/// written out where that type cannot say it (`message::wire`), with its
/// files as an upload.
fn send_body(
    platform: crate::discord::rest::Platform,
    route: Route<'_>,
    body: &InteractionResponseData,
    message: &Message,
    deadline: Instant,
) -> Result<crate::discord::rest::Answer, PlatformError> {
    match crate::discord::message::wire(body, message) {
        Some(wire) if !message.files.is_empty() => platform.send_files(route, &wire, &message.files, deadline),
        Some(wire) => platform.send(route, Some(&wire), deadline),
        None => platform.send(route, Some(body), deadline),
    }
}

impl Outbox<'_> {
    /// Deletes an interaction's deferred answer ("thinking…"); a failure is
    /// logged, and the message that was to replace it still follows.
    /// An update with components after a button's last click replaces the
    /// message's: the button is disabled among them if it is there.
    fn disable_in_update(&mut self, said: &Outgoing) -> Option<Outgoing> {
        let (Some((button, done)), Outgoing::Message(m)) = (&mut self.disable, said) else { return None };
        if !m.update || (m.components.is_empty() && m.layout.is_empty()) {
            return None;
        }
        *done = true;
        let mut m = m.clone();
        for c in m.components_mut() {
            if let outgoing::Component::Button(b) = c {
                b.disabled |= b.custom_id.as_deref() == Some(button.custom_id.as_str());
            }
        }
        Some(Outgoing::Message(m))
    }

    /// After a button's last click whose run sent no `update` with
    /// components: the button is disabled on its message, edited with the
    /// bot token (a private message cannot be). The edit is not one of the
    /// run's messages: when it cannot be made, that is a warning, and later
    /// clicks are still refused.
    fn disable_left_button(&mut self) {
        let Some((button, false)) = self.disable else { return };
        let Target::Interaction(answer) = &self.trigger.target else { return };
        let Some((channel, message)) = &answer.message else { return };
        let mut rows = button.components.clone();
        if button.ephemeral || !crate::discord::message::disable(&mut rows, &button.custom_id) {
            return;
        }
        let body = InteractionResponseData { components: Some(rows), ..InteractionResponseData::default() };
        let route = Route::EditChannelMessage { channel, message };
        let deadline = Instant::now() + EVENT_DEADLINE;
        let sent = self.shared.bot.platform(&self.trigger.loaded).send(route, Some(&body), deadline);
        let why = match sent.and_then(|a| a.refusal().map_err(PlatformError::Refused)) {
            Ok(()) => return,
            Err(e) => e.to_string(),
        };
        let about = &self.trigger.about;
        log::hiding(about.token(), || {
            tracing::warn!(
                id = about.id(),
                "a button used its last click but could not be disabled on its message: {why}"
            )
        });
    }

    fn take_back_deferral(&self, application: &str, token: &str) {
        let (shared, about) = (self.shared, &self.trigger.about);
        let deadline = self.trigger.received + TOKEN_LIFETIME;
        let route = Route::DeleteOriginal { application, token };
        let taken = shared.bot.platform(&self.trigger.loaded).send::<()>(route, None, deadline);
        let status = match &taken {
            Ok(a) => {
                shared.metrics.platform_call(a.status);
                if a.is_success() {
                    return;
                }
                a.status.to_string()
            }
            Err(e) => e.to_string(),
        };
        log::hiding(about.token(), || {
            tracing::warn!(id = about.id(), kind = about.kind(), status, "the deferred answer could not be taken back");
        });
    }
}

/// Counts and logs how a message to the platform went, and notes it in
/// the run's report: a message the platform took counts, one it refused or
/// that could not be sent makes the run fail with the reason.
fn sent_message(shared: &Shared, report: &mut RunReport, sent: Result<Sent, PlatformError>, about: &About) {
    let token = about.token();
    let why = match sent {
        Ok(a) => {
            for _ in 0..a.unknown_webhook {
                shared.metrics.platform_call(404);
            }
            shared.metrics.platform_call(a.status);
            let Err(refusal) = a.refusal() else {
                report.messages += 1;
                return;
            };
            log::hiding(token, || {
                let (id, kind, status, code, platform) =
                    (about.id(), about.kind(), refusal.status, refusal.code, refusal.message.as_str());
                tracing::warn!(id, kind, status, code, platform, "the platform refused a message");
            });
            format!("the platform refused a message {refusal}")
        }
        Err(e) => {
            log::hiding(token, || {
                tracing::warn!(id = about.id(), kind = about.kind(), error = %e, "a message could not be sent");
            });
            format!("a message could not be sent: {e}")
        }
    };
    report.undelivered.get_or_insert(why);
}

/// Runs `f`; a panic becomes its message. A bug in one run fails that run
/// only: its user is told, its worker goes on to the next run.
pub fn caught<T>(f: impl FnOnce() -> T) -> Result<T, Panicked> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        Panicked(what)
    })
}

/// A run that panicked: the panic's message.
#[derive(Debug)]
pub struct Panicked(pub String);

impl std::fmt::Display for Panicked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "internal error: the run panicked ({}); this is a bug in blkc, please report it", self.0)
    }
}

impl std::error::Error for Panicked {}

/// Why a run failed, for its log line: its diagnostic, or its panic.
fn failure(ran: Result<eval::Outcome, Panicked>) -> Option<String> {
    match ran {
        Ok(Ok(())) => None,
        Ok(Err(d)) => Some(format!("{} {}", d.code.as_str(), d.message)),
        Err(panicked) => Some(panicked.to_string()),
    }
}
