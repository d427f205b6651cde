//! What starts a run: a trigger, built from an interaction or a Gateway
//! dispatch, that says which tree runs, with which variables, where its
//! replies go, whom they may ping, and how it is known across processes.
//! The run path (`pipeline.rs`) takes any trigger the same way: a new kind
//! (a button click, a timer) is a new constructor here, not a new path.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::oneshot;

use super::events::EventRun;
use super::loaded::Loaded;
use crate::discord::model::{Interaction, InteractionType, OptionValue};
use crate::discord::outgoing::Outgoing;
use crate::language::plan::{Tree, TreeKind};

/// One run to make.
pub struct Trigger {
    /// The tree that runs: its index in the plan of `loaded`, looked up once.
    pub tree: usize,
    pub loaded: Arc<Loaded>,
    /// Its trigger variables (and options), or why the trigger does not fit
    /// the tree (the run then fails, and says so where it replies).
    pub vars: Result<Vec<(String, String)>, Unfit>,
    /// Whom its messages may ping.
    pub mentions: Vec<String>,
    pub target: Target,
    /// What identifies it across processes sharing the store, when it was
    /// received (ms since the epoch) and how long it counts: runs that the
    /// front door did not already know are new (events).
    pub dedupe: Option<(String, i64, std::time::Duration)>,
    pub received: Instant,
    /// Who and what it is, for its log line.
    pub about: About,
    /// Cooldowns and click counts it must pass before it runs.
    pub gates: super::gate::Gates,
    /// Who used it and where, for its tree's `require` lines (an
    /// interaction's; an event has none).
    pub standing: Option<crate::run::guards::Standing>,
    /// The `require` lines it must hold: its tree's, and for a click or a
    /// form those of the tree that showed it.
    pub guards: Vec<crate::language::plan::Guard>,
    /// A timed event's claim of its tick, kept once the run is over.
    pub tick: Option<super::claim::TickHold>,
    /// Waiting work's claim, removed once the run is over.
    pub later: Option<super::claim::LaterHold>,
    /// A webhook event's request, read as its block `webhook`.
    pub request: Option<Arc<crate::run::eval::Received>>,
}

/// Where a run's messages go.
pub enum Target {
    /// An interaction: its answer, an edit of a deferred answer, follow-ups.
    Interaction(Arc<Answer>),
    /// A channel (none: a reply has nowhere to go, and is logged).
    Channel(Option<String>),
}

/// What a log line says of a run.
pub enum About {
    Interaction {
        id: String,
        command: String,
        user: String,
        server: String,
        token: String,
    },
    Event {
        kind: &'static str,
        server: String,
        /// The dispatch it came from (numbered in this process) and how
        /// many runs that dispatch started, this one among them.
        dispatch: (u64, usize),
    },
    /// A timed event's tick.
    Timer {
        name: String,
        tick: String,
    },
    /// A webhook event: its name, and the delivery's id if the sender gave one.
    Webhook {
        name: String,
        delivery: String,
    },
    /// Work that waited (`after … { … }`): its tree and key.
    Later {
        tree: String,
        key: String,
    },
}

impl About {
    /// Tick `at` (seconds since the epoch) of the timed event `name`.
    pub fn tick(name: &str, at: i64) -> About {
        About::Timer { name: name.to_string(), tick: crate::language::schedule::rfc3339(at) }
    }

    /// A command's interaction, logged with its name; a click's or a
    /// form's, with the name of the handler it runs.
    pub fn interaction(interaction: &Interaction) -> About {
        let command = match crate::discord::custom_id::parse_custom_id(interaction.custom_id()) {
            Some((handler, _, _)) if interaction.kind() != Ok(InteractionType::ApplicationCommand) => {
                handler.to_string()
            }
            _ => interaction.command(),
        };
        About::Interaction {
            id: interaction.id().to_string(),
            command,
            user: interaction.user_id().to_string(),
            server: interaction.guild_id.clone().unwrap_or_default(),
            token: interaction.token().to_string(),
        }
    }

    /// The interaction's id, when it is one.
    pub fn id(&self) -> Option<&str> {
        match self {
            About::Interaction { id, .. } => Some(id),
            About::Event { .. } | About::Timer { .. } | About::Webhook { .. } | About::Later { .. } => None,
        }
    }

    /// The event's kind, when it is one.
    pub fn kind(&self) -> Option<&'static str> {
        match self {
            About::Interaction { .. } => None,
            About::Event { kind, .. } => Some(kind),
            About::Timer { .. } => Some("timer"),
            About::Later { .. } => Some("later"),
            About::Webhook { .. } => Some("webhook"),
        }
    }

    /// The credential a line about it must never show.
    pub fn token(&self) -> Option<&str> {
        match self {
            About::Interaction { token, .. } => Some(token),
            About::Event { .. } | About::Timer { .. } | About::Webhook { .. } | About::Later { .. } => None,
        }
    }

    /// What its metrics and log line call it: a webhook event by its name.
    pub fn metric_kind(&self) -> String {
        match self {
            About::Webhook { name, .. } => format!("webhook:{name}"),
            other => other.kind().unwrap_or("interaction").to_string(),
        }
    }
}

/// How a trigger ended, for its metric and log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A command's run answered (its first answer in time).
    Answered,
    /// A command's run answered after "thinking".
    Deferred,
    /// An event's run ended well.
    Ran,
    Failed,
    /// The run queue was full.
    Busy,
    /// Another process sharing the store took it.
    Duplicate,
    UnknownCommand,
    /// A component or form whose handler the file does not have.
    UnknownHandler,
    /// A click that matches no component the file has now, or chose what
    /// its message did not offer.
    Stale,
    /// A cooldown had not passed: the user was told how long is left.
    Cooldown,
    /// A button clicked its `max_clicks` times already.
    UsedUp,
    /// A component clicked past its `expires`.
    Expired,
    /// A `require` line did not hold: the member was told why.
    Guarded,
    /// An autocomplete keystroke past the user's rate: no choices offered.
    Limited,
    /// A timed event's tick noticed too late to run (the server was not
    /// running then).
    Late,
    /// A timed event's tick not run: the store could not say whether
    /// another process had it.
    Unclaimed,
    Replayed,
    Unauthorized,
    Malformed,
    Unsupported,
    TooLarge,
    BodiesFull,
    Ping,
}

impl Outcome {
    /// Its label in metrics and logs.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Answered => "answered",
            Outcome::Deferred => "deferred",
            Outcome::Ran => "ran",
            Outcome::Failed => "failed",
            Outcome::Busy => "busy",
            Outcome::Duplicate => "duplicate",
            Outcome::UnknownCommand => "unknown_command",
            Outcome::UnknownHandler => "unknown_handler",
            Outcome::Stale => "stale",
            Outcome::Cooldown => "cooldown",
            Outcome::UsedUp => "used_up",
            Outcome::Expired => "expired",
            Outcome::Guarded => "guarded",
            Outcome::Limited => "limited",
            Outcome::Late => "late",
            Outcome::Unclaimed => "unclaimed",
            Outcome::Replayed => "replayed",
            Outcome::Unauthorized => "unauthorized",
            Outcome::Malformed => "malformed",
            Outcome::Unsupported => "unsupported",
            Outcome::TooLarge => "too_large",
            Outcome::BodiesFull => "bodies_full",
            Outcome::Ping => "ping",
        }
    }
}

/// Where an interaction's answer stands; the run and the HTTP exchange
/// both move it on, under its lock.
pub struct Answer {
    pub application_id: String,
    pub token: String,
    /// The channel and id of the message a component is on.
    pub message: Option<(String, String)>,
    pub phase: Mutex<Phase>,
}

pub enum Phase {
    /// The platform still waits on the HTTP exchange for the first answer.
    Waiting(Option<oneshot::Sender<Outgoing>>),
    /// The first answer was given; more messages go as follow-ups. The
    /// interaction's own message (`@original`) is the component's when the
    /// first answer updated it (or acknowledged it unchanged).
    Answered { original_is_component: bool },
    /// The first answer was "thinking" (seen by the user only when
    /// `private`): the first message edits it. Or, `update`, the
    /// component's message is left as it is for now: an `update` edits it
    /// later, and a new message follows up.
    Deferred { edited: bool, private: bool, update: bool },
}

/// What to do with a message, decided under the lock and done after it.
pub enum Delivery {
    /// Given to the HTTP exchange as the answer.
    Sent,
    Edit,
    FollowUp,
    /// A private message after a public deferral: the platform keeps an
    /// answer's privacy from its deferral (an edit cannot change it, and
    /// the first follow-up to a deferral takes the deferral's), so the
    /// "thinking…" answer is taken back and the message follows up.
    Replace,
    /// An `update` of the component's message when the interaction's own
    /// message is another: edited in its channel, with the bot token.
    EditMessage,
    /// Nothing to send: the component's message stays as it is.
    Nothing,
    /// It cannot be sent (a form that is not the first answer).
    Refused(&'static str),
}

impl Answer {
    pub fn new(interaction: &Interaction, first: oneshot::Sender<Outgoing>) -> Answer {
        let channel = interaction.channel_id.clone().unwrap_or_default();
        Answer {
            application_id: interaction.application_id().to_string(),
            token: interaction.token().to_string(),
            message: interaction.message_id().map(|m| (channel, m.to_string())),
            phase: Mutex::new(Phase::Waiting(Some(first))),
        }
    }

    /// Where what a run says goes: the answer when the exchange still
    /// waits for one (then it has been handed over), else an edit or a
    /// follow-up. [`Outgoing::Nothing`] settles a component's answer
    /// without a message.
    pub fn deliver(&self, said: &Outgoing) -> Delivery {
        let mut phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        // Nothing said, past a "thinking…" deferral, becomes a private "Done.".
        let (update, ephemeral) = match said {
            Outgoing::Message(m) => (m.update, m.ephemeral),
            Outgoing::Form(_) | Outgoing::Choices(_) => (false, false),
            Outgoing::Nothing => (false, true),
        };
        match &mut *phase {
            Phase::Waiting(tx) => {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(said.clone());
                }
                // A message with files is uploaded as an edit: the exchange
                // answers "thinking" (`message::first_answer`), in private
                // when the message is.
                if let Outgoing::Message(m) = said {
                    if !m.files.is_empty() && !m.update {
                        *phase = Phase::Deferred { edited: true, private: m.ephemeral, update: false };
                        return Delivery::Edit;
                    }
                }
                let original_is_component = update || matches!(said, Outgoing::Nothing);
                *phase = Phase::Answered { original_is_component };
                Delivery::Sent
            }
            _ if matches!(said, Outgoing::Choices(_)) => Delivery::Refused(
                "an autocomplete's choices came after the platform's 3 seconds, and none were offered",
            ),
            _ if matches!(said, Outgoing::Form(_)) => {
                Delivery::Refused("a form can only be the first answer, and something answered before it")
            }
            Phase::Deferred { update: true, .. } | Phase::Answered { original_is_component: true } if update => {
                Delivery::Edit
            }
            _ if update => Delivery::EditMessage,
            Phase::Deferred { update: true, .. } if matches!(said, Outgoing::Nothing) => Delivery::Nothing,
            Phase::Deferred { edited, private, update: false } if !*edited => {
                *edited = true;
                if ephemeral && !*private {
                    Delivery::Replace
                } else {
                    Delivery::Edit
                }
            }
            _ if matches!(said, Outgoing::Nothing) => Delivery::Nothing,
            _ => Delivery::FollowUp,
        }
    }
}

impl Trigger {
    /// A command's run, from an interaction whose signature held, whose
    /// tree is `tree` of `loaded`. `names` gives the server's and channel's
    /// names the Gateway knows (the interaction carries neither reliably).
    pub fn from_interaction(
        interaction: &Interaction,
        (loaded, tree): (Arc<Loaded>, usize),
        answer: Arc<Answer>,
        names: (Option<String>, Option<String>),
        received: Instant,
    ) -> Trigger {
        let plan_tree = &loaded.plan.trees[tree];
        let vars = variables(interaction, plan_tree).and_then(|mut vars| {
            if plan_tree.kind == TreeKind::Handler {
                vars.extend(handler_variables(interaction, &loaded.plan, &plan_tree.name)?);
            }
            let (server_name, channel_name) = names;
            vars.push(("server_name".into(), server_name.unwrap_or_default()));
            if vars.iter().find(|(k, _)| k == "channel_name").is_none_or(|(_, v)| v.is_empty()) {
                vars.retain(|(k, _)| k != "channel_name");
                vars.push(("channel_name".into(), channel_name.unwrap_or_default()));
            }
            Ok(vars)
        });
        let mentions = match &vars {
            Ok(vars) => mentionable_users(interaction, plan_tree, vars),
            Err(_) => Vec::new(),
        };
        let about = About::interaction(interaction);
        let gates = match &vars {
            Ok(vars) => super::gate::Gates::of(&loaded.plan, plan_tree, vars, Some(interaction)),
            Err(_) => super::gate::Gates::default(),
        };
        let target = Target::Interaction(answer);
        let standing = Some(crate::run::guards::Standing::of(interaction));
        let mut guards = plan_tree.guards.clone();
        guards.extend(held_by_click(&loaded.plan, interaction));
        Trigger {
            tree,
            loaded,
            vars,
            mentions,
            target,
            dedupe: None,
            received,
            about,
            gates,
            standing,
            guards,
            tick: None,
            later: None,
            request: None,
        }
    }

    /// An event's run, from a dispatch the cache made into `run`, whose
    /// tree is `tree` of `loaded`.
    pub fn from_event(
        run: EventRun,
        (loaded, tree): (Arc<Loaded>, usize),
        dedupe: Option<(String, i64, std::time::Duration)>,
        dispatch: (u64, usize),
    ) -> Trigger {
        let about = About::Event { kind: run.kind, server: run.var("server_id").to_string(), dispatch };
        let gates = super::gate::Gates::of(&loaded.plan, &loaded.plan.trees[tree], &run.vars, None);
        Trigger {
            tree,
            gates,
            loaded,
            mentions: run.mention.into_iter().collect(),
            vars: Ok(run.vars),
            target: Target::Channel(run.channel),
            dedupe,
            received: Instant::now(),
            about,
            standing: None,
            guards: Vec::new(),
            tick: None,
            later: None,
            request: None,
        }
    }

    /// A webhook event's run: tree `tree` of `loaded`, its request
    /// verified, known across processes by its delivery (`dedupe`).
    pub fn from_webhook(
        (loaded, tree): (Arc<Loaded>, usize),
        request: crate::run::eval::Received,
        delivery: Option<String>,
        dedupe: Option<(String, i64, std::time::Duration)>,
    ) -> Trigger {
        let name = loaded.plan.trees[tree].name.clone();
        let about = About::Webhook { name, delivery: delivery.unwrap_or_default() };
        let gates = super::gate::Gates::of(&loaded.plan, &loaded.plan.trees[tree], &[], None);
        Trigger {
            tree,
            gates,
            loaded,
            mentions: Vec::new(),
            vars: Ok(Vec::new()),
            target: Target::Channel(None),
            dedupe,
            received: Instant::now(),
            about,
            standing: None,
            guards: Vec::new(),
            tick: None,
            later: None,
            request: Some(Arc::new(request)),
        }
    }

    /// A timed event's run for its tick `at` (Unix seconds), posting to
    /// `channel`; `tick` is its claim in the store, already taken.
    pub fn from_timer(
        loaded: Arc<Loaded>,
        tree: usize,
        channel: String,
        at: i64,
        hold: super::claim::TickHold,
    ) -> Trigger {
        let tick = crate::language::schedule::rfc3339(at);
        let vars = vec![("channel_id".to_string(), channel.clone()), ("tick_time".to_string(), tick.clone())];
        let about = About::Timer { name: loaded.plan.trees[tree].name.clone(), tick };
        let mut trigger = Trigger::own((loaded, tree), vars, Some(channel), about);
        trigger.tick = Some(hold);
        trigger
    }

    /// A run the server starts on its own (a tick, waiting work): tree
    /// `tree` of `loaded` with `vars`, its replies posted to `channel`.
    fn own(
        (loaded, tree): (Arc<Loaded>, usize),
        vars: Vec<(String, String)>,
        channel: Option<String>,
        about: About,
    ) -> Trigger {
        let gates = super::gate::Gates::of(&loaded.plan, &loaded.plan.trees[tree], &vars, None);
        Trigger {
            tree,
            gates,
            loaded,
            mentions: Vec::new(),
            vars: Ok(vars),
            target: Target::Channel(channel),
            dedupe: None,
            received: Instant::now(),
            about,
            standing: None,
            guards: Vec::new(),
            tick: None,
            later: None,
            request: None,
        }
    }

    /// Waiting work's run: tree `tree` of `loaded` with the variables of
    /// the run that kept it; its replies go to that run's channel.
    pub fn from_later(
        loaded: Arc<Loaded>,
        tree: usize,
        piece: &crate::run::store::later::Later,
        hold: super::claim::LaterHold,
    ) -> Trigger {
        use crate::run::store::later::{ANSWER_NAME, ANSWER_TEXT, RESERVED};
        let kept = piece.vars.as_object();
        let text = |k: &str| kept.and_then(|o| o.get(k)).and_then(|v| v.as_str()).map(str::to_string);
        let mut vars: Vec<(String, String)> = kept
            .into_iter()
            .flatten()
            .filter(|(k, _)| !k.starts_with(RESERVED))
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect();
        // An `await`'s answer: the member's text, under the name it gave.
        if let (Some(name), Some(said)) = (text(ANSWER_NAME), text(ANSWER_TEXT)) {
            vars.retain(|(k, _)| *k != name);
            vars.push((name, said));
        }
        let channel = vars.iter().find(|(k, _)| k == "channel_id").map(|(_, v)| v.clone()).filter(|c| !c.is_empty());
        // The member who asked for it may be pinged by it ("⏰ <@…>"), as
        // their own command's reply could; no one else.
        let asker = vars.iter().find(|(k, _)| k == "user_id").map(|(_, v)| v.clone());
        let asker = asker.filter(|u| !u.is_empty() && u.bytes().all(|b| b.is_ascii_digit()));
        let about = About::Later { tree: piece.tree.clone(), key: piece.key.clone() };
        let mut trigger = Trigger::own((loaded, tree), vars, channel, about);
        trigger.mentions = asker.into_iter().collect();
        trigger.later = Some(hold);
        trigger
    }

    pub fn tree(&self) -> &Tree {
        &self.loaded.plan.trees[self.tree]
    }
}

/// The index of the tree of `kind` named `name` in the plan, if it has one.
pub fn find_tree(loaded: &Loaded, kind: TreeKind, name: &str) -> Option<usize> {
    // (A timed event is not the Gateway's: its name is no event kind.)
    loaded.plan.trees.iter().position(|t| t.kind == kind && t.name == name && t.timer.is_none())
}

/// The trigger variables and options of a command's run, or why the
/// interaction does not fit the command (said to the operator's log only).
pub fn variables(interaction: &Interaction, tree: &Tree) -> Result<Vec<(String, String)>, Unfit> {
    let mut vars = Vec::new();
    if let Some(user) = interaction.user() {
        let id = user.id.clone().unwrap_or_default();
        vars.push(("user_id".into(), id.clone()));
        vars.push(("user_name".into(), interaction.user_name()));
        vars.push(("user_mention".into(), crate::discord::user_mention(&id)));
    }
    vars.push(("server_id".into(), interaction.guild_id.clone().unwrap_or_default()));
    vars.push(("channel_id".into(), interaction.channel_id.clone().unwrap_or_default()));
    let channel_name = interaction.channel.as_ref().and_then(|c| c.name.clone()).unwrap_or_default();
    vars.push(("channel_name".into(), channel_name));
    vars.push(("user_locale".into(), interaction.locale.clone().unwrap_or_default()));
    vars.push(("server_locale".into(), interaction.guild_locale.clone().unwrap_or_default()));
    if let Some(menu) = &tree.menu {
        vars.extend(target_variables(interaction, menu)?);
    }
    let given = interaction.options();
    if tree.kind == TreeKind::Autocomplete {
        return Ok(typed(given, tree, vars));
    }
    for option in &tree.options {
        let variable = format!("option_{}", option.name);
        let value = match given.iter().find(|o| o.name == option.name).and_then(|o| o.value()) {
            Some(OptionValue::Text(s)) => s,
            Some(OptionValue::Number(n)) => n,
            Some(OptionValue::Bool(b)) => b.to_string(),
            Some(OptionValue::Other) => return Err(Unfit::OptionKind { option: option.name.clone() }),
            None => Tree::left_out(option).map_err(Unfit::Option)?,
        };
        if !value.is_empty() || option.required {
            tree.check_option_value(&variable, &value).map_err(Unfit::Option)?;
        }
        if option.kind == crate::discord::options::OptionType::Attachment {
            let file = interaction.attachment(&value);
            if let Some(described) = file.and_then(|a| serde_json::to_string(a).ok()) {
                vars.push((crate::run::eval::inputs::attachment_key(&option.name), described));
            }
            // Where the file is, its name, media type and size, as variables.
            let file = file.cloned().unwrap_or_default();
            let size = file.size.map(|s| s.to_string());
            for (part, text) in
                [("url", file.url), ("name", file.filename), ("type", file.content_type), ("size", size)]
            {
                vars.push((format!("option_{}_{part}", option.name), text.unwrap_or_default()));
            }
        }
        vars.push((variable, value));
    }
    Ok(vars)
}

/// An autocomplete's variables: the options as typed so far (any text: a
/// number half typed is not one yet), none left out, and the focused
/// one's text as `typed_text`.
fn typed(
    given: &[crate::discord::model::CommandOption],
    tree: &Tree,
    mut vars: Vec<(String, String)>,
) -> Vec<(String, String)> {
    let text = |o: &crate::discord::model::CommandOption| match o.value() {
        Some(OptionValue::Text(s) | OptionValue::Number(s)) => s,
        Some(OptionValue::Bool(b)) => b.to_string(),
        Some(OptionValue::Other) | None => String::new(),
    };
    for option in &tree.options {
        let value = given.iter().find(|o| o.name == option.name).map(text).unwrap_or_default();
        vars.push((format!("option_{}", option.name), value));
    }
    let focused = given.iter().find(|o| o.focused == Some(true)).map(text).unwrap_or_default();
    vars.push(("typed_text".into(), focused));
    vars
}

/// What a context-menu command's run is given: the user or the message
/// it was chosen on (`target_user_…`, `target_message_…`).
fn target_variables(interaction: &Interaction, menu: &str) -> Result<Vec<(String, String)>, Unfit> {
    use crate::discord::model::Target;
    let pairs = |list: &[(&str, String)]| list.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    match interaction.target() {
        Some(Target::User { id, name }) if menu == "user" => Ok(pairs(&[
            ("target_user_mention", crate::discord::user_mention(&id)),
            ("target_user_id", id),
            ("target_user_name", name),
        ])),
        Some(Target::Message { id, content, author_id, author_name }) if menu == "message" => Ok(pairs(&[
            ("target_message_id", id),
            ("target_message_content", content),
            ("target_message_author_id", author_id),
            ("target_message_author_name", author_name),
        ])),
        _ => Err(Unfit::NoTarget { menu: menu.to_string() }),
    }
}

/// What a handler's run is given besides a command's: the message, the
/// value and values chosen, and a form's fields (every input of the forms
/// naming the handler: one the submission left out is empty). `Err` when a
/// field is longer than its input takes (only a forged submission is).
pub fn handler_variables(
    interaction: &Interaction,
    plan: &crate::language::plan::Plan,
    handler: &str,
) -> Result<Vec<(String, String)>, Unfit> {
    let mut vars = vec![("message_id".to_string(), interaction.message_id().unwrap_or_default().to_string())];
    // A button's value is its own, from its id: never from `values`, which
    // only a menu has.
    let button = matches!(interaction.component_type(), Some(crate::discord::model::ComponentType::Button) | None);
    let values = if button { &[][..] } else { interaction.values() };
    let value = match interaction.kind() {
        Ok(InteractionType::MessageComponent) if button => {
            crate::discord::custom_id::parse_custom_id(interaction.custom_id()).map_or("", |(_, _, v)| v).to_string()
        }
        _ => values.first().cloned().unwrap_or_default(),
    };
    vars.push(("value".into(), value));
    vars.push(("values".into(), values.join(", ")));
    let given = interaction.form_fields();
    for (input, kind, max) in crate::language::plan::form_input_limits(plan, handler) {
        let value = given.iter().find(|(id, _)| *id == input).map(|(_, v)| v);
        vars.extend(field_variables(interaction, &input, kind, max, value)?);
    }
    Ok(vars)
}

/// The variables of a form's input of `kind`, from what was sent for it
/// (nothing: left empty): `field_NAME`, a list joined by `, `, a checkbox
/// `true` or `false`, an upload its files' addresses with their names,
/// types and sizes (`field_NAME_name`, `_type`, `_size`). `Err` when it
/// holds more than its input takes, or a value of another kind of input
/// (only a forged submission does).
fn field_variables(
    interaction: &Interaction,
    input: &str,
    kind: crate::discord::outgoing::InputKind,
    max: usize,
    value: Option<&crate::discord::model::FormValue>,
) -> Result<Vec<(String, String)>, Unfit> {
    use crate::discord::model::FormValue;
    use crate::discord::outgoing::InputKind;
    let too_long = |length: usize| Unfit::LongField { input: input.to_string(), length, most: max };
    let name = format!("field_{input}");
    let text = match (kind, value) {
        (_, None) if kind == InputKind::Checkbox => "false".to_string(),
        (_, None) => String::new(),
        (InputKind::Text | InputKind::Radio, Some(FormValue::Text(t))) => {
            let n = t.chars().count();
            let most = if kind == InputKind::Radio { crate::discord::limits::CHOICE_TEXT } else { max };
            if n > most {
                return Err(too_long(n));
            }
            t.clone()
        }
        (InputKind::Checkbox, Some(FormValue::Ticked(ticked))) => ticked.to_string(),
        // A menu of the server's members, roles or channels, and an upload,
        // give ids: anything else is a forged submission's.
        (
            InputKind::Users | InputKind::Roles | InputKind::Mentionables | InputKind::Channels | InputKind::Upload,
            Some(FormValue::List(ids)),
        ) if ids.iter().any(|id| !crate::discord::is_snowflake(id)) => {
            return Err(Unfit::FieldKind { input: input.to_string(), kind: kind.describe() })
        }
        (InputKind::Upload, Some(FormValue::List(ids))) if ids.len() <= max => {
            return Ok(uploaded(interaction, &name, ids))
        }
        (_, Some(FormValue::List(values)))
            if !matches!(kind, InputKind::Text | InputKind::Radio | InputKind::Checkbox) =>
        {
            let long = values.iter().map(|v| v.chars().count()).max().unwrap_or(0);
            if values.len() > max || long > crate::discord::limits::CHOICE_TEXT {
                return Err(too_long(values.len().max(long)));
            }
            values.join(", ")
        }
        _ => return Err(Unfit::FieldKind { input: input.to_string(), kind: kind.describe() }),
    };
    Ok(vec![(name, text)])
}

/// An upload's variables: the files' addresses, names, types and sizes, in
/// the order sent, as the interaction's resolved attachments give them (an
/// id it does not resolve gives nothing).
fn uploaded(interaction: &Interaction, name: &str, ids: &[String]) -> Vec<(String, String)> {
    let files: Vec<&crate::discord::model::Attachment> =
        ids.iter().filter_map(|id| interaction.attachment(id)).collect();
    let list = |f: &dyn Fn(&crate::discord::model::Attachment) -> String| {
        files.iter().map(|a| f(a)).collect::<Vec<_>>().join(", ")
    };
    // The files themselves, for `file field_NAME` (a name no template reads).
    let described = serde_json::to_string(&files).unwrap_or_default();
    vec![
        (crate::run::eval::inputs::attachment_key(name), described),
        (name.to_string(), list(&|a| a.url.clone().unwrap_or_default())),
        (format!("{name}_name"), list(&|a| a.filename.clone().unwrap_or_default())),
        (format!("{name}_type"), list(&|a| a.content_type.clone().unwrap_or_default())),
        (format!("{name}_size"), list(&|a| a.size.map(|s| s.to_string()).unwrap_or_default())),
    ]
}

/// The `require` lines a click or a form's submission holds besides its
/// handler's own: those of the tree that showed the component or form.
fn held_by_click(plan: &crate::language::plan::Plan, interaction: &Interaction) -> Vec<crate::language::plan::Guard> {
    let Some((handler, key, _)) = crate::discord::custom_id::parse_custom_id(interaction.custom_id()) else {
        return Vec::new();
    };
    match interaction.kind() {
        Ok(InteractionType::MessageComponent) => {
            crate::language::plan::component(plan, handler, key).map(|c| c.guards.clone()).unwrap_or_default()
        }
        Ok(InteractionType::ModalSubmit) => {
            crate::language::plan::form(plan, handler, key).map(|f| f.guards.clone()).unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

/// Why what the platform sent cannot be a run's variables: only a forged
/// interaction, or one the file changed under, is so.
#[derive(Debug, Clone, PartialEq)]
pub enum Unfit {
    /// An option's value is not text, a number or a boolean.
    OptionKind { option: String },
    /// An option's value is not of its type, or a required one is missing
    /// (the plan's words).
    Option(String),
    /// A context-menu command's run names no user or message of its menu.
    NoTarget { menu: String },
    /// A form's field is longer than its input takes.
    LongField { input: String, length: usize, most: usize },
    /// A form's field sent as another kind of input than its own.
    FieldKind { input: String, kind: &'static str },
}

impl std::fmt::Display for Unfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unfit::OptionKind { option } => {
                write!(f, "option `{option}` has a value that is not text, a number or a boolean")
            }
            Unfit::Option(why) => f.write_str(why),
            Unfit::NoTarget { menu } => {
                write!(f, "the interaction names no {menu} for the command in the {menu}'s menu")
            }
            Unfit::LongField { input, length, most } => {
                write!(f, "the form's field `{input}` holds {length}; its input takes {most}")
            }
            Unfit::FieldKind { input, kind } => {
                write!(f, "the form's field `{input}` was sent as another kind of input than {kind}")
            }
        }
    }
}

impl std::error::Error for Unfit {}

/// Why a click or a submission is not one the bot offered (it is answered
/// as stale, and never runs).
#[derive(Debug, Clone, PartialEq)]
pub enum Stale {
    /// An id an earlier version of blkc wrote.
    EarlierVersion,
    /// No form of the handler has the key (handler, key) in the file now.
    NoForm((String, String)),
    /// No component of the handler has the key in the file now.
    NoComponent((String, String)),
    /// The click's message shows no component with its id.
    NotOnMessage,
    /// A menu answered as another type of menu.
    MenuType { wanted: u8, answered: u8 },
    /// More values chosen than the menu allows.
    TooMany { chosen: usize, most: usize },
    /// A value the menu did not offer (its first 100 characters).
    NotOffered(String),
    /// The message shows another kind of component under the id.
    OtherKind,
}

impl std::fmt::Display for Stale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stale::EarlierVersion => f.write_str("an id of an earlier version"),
            Stale::NoForm((handler, key)) => {
                write!(f, "no form of handler `{handler}` has the key `{key}` in the file now")
            }
            Stale::NoComponent((handler, key)) => {
                write!(f, "no component of handler `{handler}` has the key `{key}` in the file now")
            }
            Stale::NotOnMessage => f.write_str("its message shows no component with its id"),
            Stale::MenuType { wanted, answered } => {
                write!(f, "a menu of type {wanted} was answered as type {answered}")
            }
            Stale::TooMany { chosen, most } => write!(f, "{chosen} values chosen in a menu that allows {most}"),
            Stale::NotOffered(value) => {
                write!(f, "a value its menu did not offer: {}", crate::base::display::one_line(value))
            }
            Stale::OtherKind => f.write_str("its message shows another kind of component under its id"),
        }
    }
}

impl std::error::Error for Stale {}

/// Whether a click is one the bot offered: its id names a component the
/// file has now (by handler and key), that component is on the click's
/// message with the same id and kind, and a menu's values are among what
/// the message offered (a menu of choices: its options' values; a menu of
/// users, roles or channels: ids), as many as it allows. `Err` says why
/// not, for the log; the click is then answered as stale and never runs.
pub fn clicked(plan: &crate::language::plan::Plan, interaction: &Interaction) -> Result<(), Stale> {
    use crate::discord::model::ComponentType;
    use twilight_model::channel::message::component::SelectMenuType;
    use twilight_model::channel::message::Component;
    let id = interaction.custom_id();
    let (handler, key, _) = crate::discord::custom_id::parse_custom_id(id).ok_or(Stale::EarlierVersion)?;
    let named = || (handler.to_string(), key.to_string());
    if interaction.kind() == Ok(InteractionType::ModalSubmit) {
        return match crate::language::plan::form(plan, handler, key) {
            Some(_) => Ok(()),
            None => Err(Stale::NoForm(named())),
        };
    }
    let component = crate::language::plan::component(plan, handler, key).ok_or_else(|| Stale::NoComponent(named()))?;
    let shown = interaction.clicked_on_message().ok_or(Stale::NotOnMessage)?;
    let kind = interaction.component_type();
    let values = interaction.values();
    match (shown, component.kind) {
        (Component::Button(_), crate::language::plan::ComponentKind::Button)
            if matches!(kind, None | Some(ComponentType::Button)) =>
        {
            Ok(())
        }
        (Component::SelectMenu(menu), crate::language::plan::ComponentKind::Select) => {
            let wanted = match menu.kind {
                SelectMenuType::Text => ComponentType::TextSelectMenu,
                SelectMenuType::User => ComponentType::UserSelectMenu,
                SelectMenuType::Role => ComponentType::RoleSelectMenu,
                SelectMenuType::Mentionable => ComponentType::MentionableSelectMenu,
                SelectMenuType::Channel => ComponentType::ChannelSelectMenu,
                _ => ComponentType::Unknown(0),
            };
            if kind != Some(wanted) {
                let answered = kind.map_or(0, u8::from);
                return Err(Stale::MenuType { wanted: u8::from(wanted), answered });
            }
            let most = usize::from(menu.max_values.unwrap_or(1)).min(25);
            if values.len() > most {
                return Err(Stale::TooMany { chosen: values.len(), most });
            }
            let offered = |v: &String| match menu.kind {
                SelectMenuType::Text => menu.options.iter().flatten().any(|o| o.value == *v),
                _ => !v.is_empty() && v.len() <= 20 && v.bytes().all(|b| b.is_ascii_digit()),
            };
            match values.iter().find(|v| !offered(v)) {
                Some(v) => Err(Stale::NotOffered(v.chars().take(100).collect())),
                None => Ok(()),
            }
        }
        _ => Err(Stale::OtherKind),
    }
}

/// Which tree an interaction runs: a command's by its name, a component's
/// or a form's by the handler its id names. `Err` with the handler's name
/// (or the id) when the file has no such handler.
pub fn tree_of(loaded: &Loaded, interaction: &Interaction) -> Result<usize, Option<String>> {
    match interaction.kind() {
        Ok(InteractionType::MessageComponent | InteractionType::ModalSubmit) => {
            let id = interaction.custom_id();
            let Some((handler, _, _)) = crate::discord::custom_id::parse_custom_id(id) else {
                // An earlier version's id names its handler; any other is logged as sent.
                if let Some(handler) = crate::discord::custom_id::named_handler(id) {
                    return Err(Some(handler.to_string()));
                }
                // Logged: on one line, and no longer than the platform's ids
                // (one blkc wrote is never longer, so its handler is short too).
                let cut: String = id.chars().take(crate::discord::limits::CUSTOM_ID).collect();
                return Err(Some(crate::base::display::one_line(&cut)));
            };
            find_tree(loaded, TreeKind::Handler, handler).ok_or_else(|| Some(handler.to_string()))
        }
        // An option's autocomplete, by its command's whole name and the
        // option being typed.
        Ok(InteractionType::ApplicationCommandAutocomplete) => {
            let focused = interaction.focused().filter(|f| crate::discord::names::is_valid(&f.name)).ok_or(None)?;
            let name = format!("{} {}", interaction.command(), focused.name);
            find_tree(loaded, TreeKind::Autocomplete, &name).ok_or(None)
        }
        // A context-menu command by its menu too (a user command and a
        // message command may share a name).
        _ => {
            let (name, menu) = (interaction.command(), interaction.menu());
            let found = loaded.plan.trees.iter().position(|t| {
                t.kind == TreeKind::Command && t.name == name && t.menu.as_deref() == menu && t.timer.is_none()
            });
            found.ok_or(None)
        }
    }
}

/// The IDs a reply may mention: the user who triggered the command, the
/// users the command's `user` and `mentionable` options name, and those
/// chosen in a handler's menu of users. Never roles,
/// `@everyone` or `@here`, whatever the text holds.
pub fn mentionable_users(interaction: &Interaction, tree: &Tree, vars: &[(String, String)]) -> Vec<String> {
    use crate::discord::options::OptionType;
    let mut ids: Vec<String> = interaction.user().and_then(|u| u.id.clone()).into_iter().collect();
    for option in tree.options.iter().filter(|o| matches!(o.kind, OptionType::User | OptionType::Mentionable)) {
        let variable = format!("option_{}", option.name);
        if let Some((_, id)) = vars.iter().find(|(k, v)| *k == variable && !v.is_empty()) {
            ids.push(id.clone());
        }
    }
    // A menu of users is a handler's `user` option: the users chosen in it
    // may be pinged (roles never are). So may the user a user command was
    // chosen on (never a message's author: nobody chose to ping them).
    ids.extend(interaction.chosen_users());
    if let Some((_, id)) = vars.iter().find(|(k, v)| k == "target_user_id" && !v.is_empty()) {
        ids.push(id.clone());
    }
    ids.sort();
    ids.dedup();
    // The platform takes at most 100.
    ids.truncate(100);
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discord::outgoing::Message;

    fn answer(phase: Phase, on_message: bool) -> Answer {
        let body = if on_message {
            r#"{"type":3,"channel_id":"888","message":{"id":"555"},"application_id":"1","token":"t"}"#
        } else {
            r#"{"type":2,"channel_id":"888","application_id":"1","token":"t"}"#
        };
        let interaction = Interaction::from_slice(body.as_bytes()).unwrap();
        let (tx, _rx) = oneshot::channel();
        let a = Answer::new(&interaction, tx);
        *a.phase.lock().unwrap() = phase;
        a
    }

    #[test]
    fn users_chosen_in_a_menu_of_users_may_be_pinged_and_no_other_values() {
        let tree: Tree = serde_json::from_value(serde_json::json!({
            "kind": "handler", "name": "h", "options": [], "steps": []
        }))
        .unwrap();
        let click = |kind: u8| {
            let body = serde_json::json!({
                "type": 3, "application_id": "1", "token": "t", "member": { "user": { "id": "1001" } },
                "data": { "custom_id": "blk2:h:0:", "component_type": kind, "values": ["2002", "<@&3>", "3003"] }
            });
            Interaction::from_slice(body.to_string().as_bytes()).unwrap()
        };
        assert_eq!(mentionable_users(&click(5), &tree, &[]), ["1001", "2002", "3003"]);
        assert_eq!(mentionable_users(&click(3), &tree, &[]), ["1001"], "a menu of choices names no user");
    }

    fn update() -> Outgoing {
        Outgoing::Message(Message { update: true, ..Message::new("u", &[]) })
    }

    #[test]
    fn each_word_goes_where_the_platform_takes_it_after_each_first_answer() {
        let new = Outgoing::Message(Message::new("n", &[]));
        let private = Outgoing::Message(Message::notice("p"));
        let form = Outgoing::Form(crate::discord::outgoing::Form::default());
        let waiting = || Phase::Waiting(None);
        // The first word is the answer, whatever it is.
        for said in [&new, &update(), &form, &Outgoing::Nothing] {
            assert!(matches!(answer(waiting(), true).deliver(said), Delivery::Sent));
        }
        // After an update (or an acknowledgement), `@original` is the
        // component's message; after a new message, it is edited in its channel.
        let updated = answer(waiting(), true);
        updated.deliver(&update());
        assert!(matches!(updated.deliver(&update()), Delivery::Edit));
        assert!(matches!(updated.deliver(&new), Delivery::FollowUp));
        let replied = answer(waiting(), true);
        replied.deliver(&new);
        assert!(matches!(replied.deliver(&update()), Delivery::EditMessage));
        assert!(matches!(replied.deliver(&Outgoing::Nothing), Delivery::Nothing));
        // A form is only ever the first answer.
        assert!(matches!(replied.deliver(&form), Delivery::Refused(_)));
        // Deferred as an update: an update edits, a new message follows up,
        // nothing said leaves the message as it is.
        let deferred = || Phase::Deferred { edited: false, private: false, update: true };
        assert!(matches!(answer(deferred(), true).deliver(&update()), Delivery::Edit));
        assert!(matches!(answer(deferred(), true).deliver(&new), Delivery::FollowUp));
        assert!(matches!(answer(deferred(), true).deliver(&Outgoing::Nothing), Delivery::Nothing));
        // Deferred as "thinking…" in public: a private word replaces it, and
        // so does nothing said (a private "Done.").
        let thinking = || Phase::Deferred { edited: false, private: false, update: false };
        assert!(matches!(answer(thinking(), true).deliver(&new), Delivery::Edit));
        assert!(matches!(answer(thinking(), true).deliver(&private), Delivery::Replace));
        assert!(matches!(answer(thinking(), true).deliver(&Outgoing::Nothing), Delivery::Replace));
        assert!(matches!(answer(thinking(), false).deliver(&update()), Delivery::EditMessage));
    }

    #[test]
    fn a_first_message_with_files_thinks_then_edits_and_what_follows_follows_up() {
        let file = crate::discord::outgoing::File {
            name: "a.csv".into(),
            media_type: None,
            description: None,
            spoiler: false,
            bytes: std::sync::Arc::from(&b"a"[..]),
        };
        let with_file = |ephemeral: bool| {
            let mut m = Message::new("here", &[]);
            m.ephemeral = ephemeral;
            m.files = vec![file.clone()];
            Outgoing::Message(m)
        };
        for ephemeral in [false, true] {
            let a = answer(Phase::Waiting(None), true);
            // The exchange is handed the message (it answers "thinking"), and
            // the message edits that answer with its files.
            assert!(matches!(a.deliver(&with_file(ephemeral)), Delivery::Edit));
            let phase = a.phase.lock().unwrap();
            assert!(matches!(*phase, Phase::Deferred { edited: true, private, update: false } if private == ephemeral));
            drop(phase);
            assert!(matches!(a.deliver(&Outgoing::Message(Message::new("more", &[]))), Delivery::FollowUp));
        }
        // Past a public "thinking…", a private message with files replaces it.
        let thinking = Phase::Deferred { edited: false, private: false, update: false };
        assert!(matches!(answer(thinking, true).deliver(&with_file(true)), Delivery::Replace));
    }
}
