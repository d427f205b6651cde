//! The checked AST lowered to a Plan: plain data the runner executes.
//!
//! Templates are compiled into literal and variable parts and response paths
//! are pre-split, so the runner never sees source syntax. `blkc build` writes
//! a Plan as versioned JSON (docs/plan.md). Secrets and the bot token appear
//! only as their slots, never as values.

use serde::{Deserialize, Serialize};

use crate::base::diagnostics::{Code, Diagnostic};
use crate::base::source::Span;
use crate::language::ast::{self, FieldKind, Item, Node, Part, Value, Var};
use crate::language::model::Checked;
pub use crate::language::vocab::Method;

/// The version of the Plan's JSON format.
pub const FORMAT: u32 = 24;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub format: u32,
    /// The source file the plan was built from, for positions in messages.
    pub source: String,
    /// The chat platform's API base URL, where `{bot_token}` may be sent.
    pub platform: String,
    /// Declared custom variables and their defaults.
    pub variables: Vec<Variable>,
    pub trees: Vec<Tree>,
    /// The Gateway intents the file's events need (their bits), computed
    /// once here for `serve`, `play` and `deploy`.
    pub intents: u64,
    /// The permissions the bot needs in a server for the file's actions
    /// (their bits), computed once here for `deploy` and `invite`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub permissions: u64,
    /// Whether a tree waits for a member's message (`await message`):
    /// `serve` reads the Gateway's messages for answers then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub awaits: bool,
    /// The registration payload of the file's commands, computed once here
    /// for `deploy` and `play`; none when a command or option has no
    /// description (which only `deploy` refuses, B409). Written in the
    /// plan's JSON; a plan read back from JSON has none (it is the
    /// platform's form, which only blkc writes).
    #[serde(default, skip_deserializing)]
    pub commands: Option<Vec<crate::discord::registration::Command>>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Plan {
    /// The permissions the bot needs in a server for the file's actions.
    pub fn permissions(&self) -> twilight_model::guild::Permissions {
        twilight_model::guild::Permissions::from_bits_truncate(self.permissions)
    }

    /// The Gateway intents the file's events need.
    pub fn intents(&self) -> crate::discord::intents::Intents {
        crate::discord::intents::Intents::from_bits_truncate(self.intents)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variable {
    pub name: String,
    /// What it reads as until first saved: any JSON value (a string reads
    /// as its text, anything else as its JSON).
    pub default: Option<serde_json::Value>,
    /// Where its value is kept (docs/language.md, "Scopes").
    #[serde(default = "global")]
    pub scope: crate::language::vocab::VarScope,
    /// `expires "1d"`: seconds a saved value lasts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<u64>,
}

fn global() -> crate::language::vocab::VarScope {
    crate::language::vocab::VarScope::Global
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TreeKind {
    Command,
    Event,
    Handler,
    /// An option's `autocomplete`: answers with choices as the user types.
    Autocomplete,
    /// The body of an `after` (or an `at`), named `TREE#N`: run when due,
    /// in a run of its own, with the variables of the run that kept it.
    Later,
}

impl TreeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TreeKind::Command => "command",
            TreeKind::Event => "event",
            TreeKind::Handler => "handler",
            TreeKind::Autocomplete => "autocomplete",
            TreeKind::Later => "later",
        }
    }
}

impl From<ast::TreeKind> for TreeKind {
    fn from(kind: ast::TreeKind) -> TreeKind {
        match kind {
            ast::TreeKind::Command => TreeKind::Command,
            ast::TreeKind::Event => TreeKind::Event,
            ast::TreeKind::Handler => TreeKind::Handler,
            ast::TreeKind::Autocomplete => TreeKind::Autocomplete,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    pub kind: TreeKind,
    pub name: String,
    /// `cooldown …` in the tree's head: the wait between two runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown: Option<Cooldown>,
    /// A timed event's schedule and channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer: Option<Timer>,
    /// A webhook event's path, signature and secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<Hook>,
    /// A context-menu command's menu: `user` or `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub menu: Option<String>,
    /// Its `require` lines: who may run it, and where.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guards: Vec<Guard>,
    pub options: Vec<OptionSpec>,
    pub steps: Vec<Step>,
    /// `failed { … }`: what runs when a step fails, in place of the host's
    /// generic answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<Vec<Step>>,
}

/// A `require` line: a member's roles (any of them), the channel (any of
/// them), or a member's permissions (all of them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Guard {
    /// Role ids: each written, or a secret's slot.
    Roles {
        ids: Vec<Template>,
    },
    Channels {
        ids: Vec<Template>,
    },
    /// The permissions' bits.
    Permissions {
        bits: u64,
    },
}

impl Guard {
    /// Whether two lines require the same, wherever they are written.
    pub fn same(&self, other: &Guard) -> bool {
        let written = |ids: &[Template]| ids.iter().map(Template::written).collect::<Vec<_>>();
        match (self, other) {
            (Guard::Roles { ids: a }, Guard::Roles { ids: b })
            | (Guard::Channels { ids: a }, Guard::Channels { ids: b }) => written(a) == written(b),
            (Guard::Permissions { bits: a }, Guard::Permissions { bits: b }) => a == b,
            _ => false,
        }
    }

    /// The word of its line: `roles`, `channels` or `permissions`.
    pub fn word(&self) -> &'static str {
        match self {
            Guard::Roles { .. } => "roles",
            Guard::Channels { .. } => "channels",
            Guard::Permissions { .. } => "permissions",
        }
    }

    /// A checked file's `require` line (`None` for one the checker refused).
    fn of(g: &ast::Guard) -> Option<Guard> {
        let ids = || {
            g.values
                .iter()
                .map(|v| match v {
                    ast::GuardValue::Text(t) => Some(template(t)),
                    ast::GuardValue::Word(_) => None,
                })
                .collect::<Option<Vec<_>>>()
        };
        Some(match g.what.name.as_str() {
            "roles" => Guard::Roles { ids: ids()? },
            "channels" => Guard::Channels { ids: ids()? },
            "permissions" => {
                let mut bits = 0;
                for v in &g.values {
                    let ast::GuardValue::Word(w) = v else { return None };
                    bits |= crate::discord::registration::permission(&w.name)?.bits();
                }
                Guard::Permissions { bits }
            }
            _ => return None,
        })
    }
}

/// A template of text and secrets' slots only, filled from `secrets`: a
/// guard's id (`None` when a slot has no value, or for any other part).
pub fn fixed_text(t: &Template, secrets: &std::collections::HashMap<String, String>) -> Option<String> {
    let mut out = String::new();
    for part in &t.parts {
        match part {
            Seg::Text(text) => out.push_str(text),
            Seg::Secret { name } => out.push_str(secrets.get(name)?),
            _ => return None,
        }
    }
    Some(out)
}

/// When a timed event runs, and the channel its replies go to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timer {
    pub schedule: crate::language::schedule::Schedule,
    pub channel: Template,
}

/// A webhook event's head: where serve listens, how the sender signs, the
/// secret slot it signs with, and the header naming a delivery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hook {
    pub path: String,
    pub scheme: crate::base::webhook::Scheme,
    pub secret: String,
    /// Where the secret is written.
    #[serde(default)]
    pub span: Span,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<String>,
}

impl Hook {
    /// A checked file's webhook (`None` for one the checker refused).
    pub fn of(w: Option<&ast::Webhook>) -> Option<Hook> {
        let w = w?;
        let read = crate::language::webhook::read(w).ok()?;
        let span = w.setting("secret").map_or(w.span, |v| v.span());
        Some(Hook { path: read.path, scheme: read.scheme, secret: read.secret, span, delivery: read.delivery })
    }

    /// The header that names a delivery: the file's, else the scheme's.
    pub fn delivery_header(&self) -> Option<&str> {
        self.delivery.as_deref().or(self.scheme.delivery_header())
    }
}

impl Timer {
    /// A checked file's schedule (`None` for one the checker refused).
    pub fn of(s: Option<&ast::Schedule>) -> Option<Timer> {
        let s = s?;
        let zone = s.zone.as_ref().map(|z| z.value.as_str());
        let schedule = crate::language::schedule::read(s.written, &s.when.value, zone).ok()?;
        Some(Timer { schedule, channel: template(&s.channel) })
    }
}

/// A wait between two uses, kept in the store per user (in a server), per
/// server or per channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cooldown {
    pub seconds: u64,
    pub per: crate::language::vocab::VarScope,
}

impl Cooldown {
    /// A checked file's `cooldown` setting (`None` for anything else).
    pub fn of(setting: Option<&ast::Setting>) -> Option<Cooldown> {
        let s = setting?;
        let written = match s.value.as_ref()? {
            ast::SettingValue::Number(n, _) => n.to_string(),
            ast::SettingValue::Text(t) => t.as_literal()?.to_string(),
        };
        let per = match &s.scope {
            Some(word) => crate::language::vocab::VarScope::parse(&word.name)?,
            None => crate::language::vocab::VarScope::User,
        };
        Some(Cooldown { seconds: crate::language::vocab::parse_duration(&written).ok()?, per })
    }
}

impl Tree {
    /// The option that fills variable `option_<name>`.
    pub fn option_of(&self, variable: &str) -> Option<&OptionSpec> {
        let name = variable.strip_prefix("option_")?;
        self.options.iter().find(|o| o.name == name)
    }

    /// What an option the user left out reads as, as the platform gives it:
    /// an optional one is empty; a required one cannot be left out.
    pub fn left_out(option: &OptionSpec) -> Result<String, String> {
        match option.required {
            false => Ok(String::new()),
            true => Err(format!("required option `{}` was not given", option.name)),
        }
    }

    /// Checks a value given for a variable against its option's type: the
    /// error says which option and what it takes.
    pub fn check_option_value(&self, variable: &str, value: &str) -> Result<(), String> {
        match self.option_of(variable) {
            Some(o) => {
                o.kind.accepts(value).map_err(|e| format!("option `{}` is {}: {e}", o.name, o.kind.as_str()))?;
                o.within(value).map_err(|e| format!("option `{}` takes {e}", o.name))
            }
            None => Ok(()),
        }
    }
}

/// An embed of a reply: its parts and fields, each a template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbedStep {
    pub parts: Vec<(crate::language::vocab::EmbedPart, Template)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldStep {
    pub name: Template,
    pub value: Template,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inline: bool,
}

/// A button or select menu of a reply: its handler and settings, each
/// text a template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentStep {
    pub kind: ComponentKind,
    /// What it is among its handler's components (`key_components`): its
    /// `custom_id` carries it, a click finds the component's `max_clicks`
    /// and `cooldown` by it, and its counts in the store are kept under it.
    #[serde(default)]
    pub key: String,
    /// The `require` lines of the tree whose reply shows it (with those it
    /// inherited as a handler): a click holds them as well as its
    /// handler's own, so a button on a guarded command's reply runs only
    /// for whom the command does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guards: Vec<Guard>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handler: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_clicks: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown: Option<Cooldown>,
    /// `expires "10m"`: how many seconds after its message was sent a
    /// click still runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingStep>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<ChoiceStep>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComponentKind {
    Button,
    Select,
}

/// A part of a layout message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "part", rename_all = "lowercase")]
pub enum LayoutStep {
    Text {
        text: Template,
    },
    /// The reply's `components[index]`: those standing together share rows.
    Component {
        index: usize,
    },
    /// The reply's `files[index]`, shown where it stands (unless an image
    /// of the message shows it by its `attachment://` address).
    File {
        index: usize,
    },
    Container {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        settings: Vec<SettingStep>,
        parts: Vec<LayoutStep>,
    },
    /// Texts beside a thumbnail or a button (the reply's
    /// `components[button]`).
    Section {
        texts: Vec<Template>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thumbnail: Option<MediaStep>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        button: Option<usize>,
    },
    Separator {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        settings: Vec<SettingStep>,
    },
    Gallery {
        media: Vec<MediaStep>,
    },
}

/// A poll: its settings (`question`, `duration`, `multiple`) and answers,
/// each with its settings (`emoji`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PollStep {
    pub settings: Vec<SettingStep>,
    pub answers: Vec<(Template, Vec<SettingStep>)>,
}

/// A thumbnail or a gallery's image: its address and settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MediaStep {
    pub url: Template,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingStep>,
}

impl LayoutStep {
    /// Calls `f` on every template of the part and of its parts.
    fn each_template(&self, f: &mut impl FnMut(&Template)) {
        let media = |m: &MediaStep, f: &mut dyn FnMut(&Template)| {
            f(&m.url);
            m.settings.iter().filter_map(|s| s.text.as_ref()).for_each(f);
        };
        match self {
            LayoutStep::Text { text } => f(text),
            LayoutStep::Component { .. } | LayoutStep::File { .. } => {}
            LayoutStep::Container { settings, parts } => {
                setting_templates(settings, f);
                parts.iter().for_each(|p| p.each_template(f));
            }
            LayoutStep::Section { texts, thumbnail, .. } => {
                texts.iter().for_each(&mut *f);
                thumbnail.iter().for_each(|m| media(m, f));
            }
            LayoutStep::Separator { settings } => setting_templates(settings, f),
            LayoutStep::Gallery { media: items } => items.iter().for_each(|m| media(m, f)),
        }
    }
}

/// A setting: its word, and its text or number when it takes one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingStep {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<Template>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChoiceStep {
    pub label: Template,
    pub value: Template,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingStep>,
    /// `for r in … { choice … }`: the choice once per element (a loop
    /// without steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub each: Option<Box<LoopStep>>,
}

/// A form shown as the answer: the handler its submission runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FormStep {
    pub handler: String,
    /// Its key and the `require` lines its submission holds, as a
    /// component's (`ComponentStep::key`, `ComponentStep::guards`).
    #[serde(default)]
    pub key: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guards: Vec<Guard>,
    pub settings: Vec<SettingStep>,
    pub inputs: Vec<InputStep>,
    /// Its texts, each with the place among the inputs it stands before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub texts: Vec<(usize, Template)>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputStep {
    pub name: String,
    /// Its kind (`InputKind::of` its words and choices).
    #[serde(default = "text_input")]
    pub kind: crate::discord::outgoing::InputKind,
    pub settings: Vec<SettingStep>,
    /// A menu's, a radio group's or a checkbox group's choices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<ChoiceStep>,
}

fn text_input() -> crate::discord::outgoing::InputKind {
    crate::discord::outgoing::InputKind::Text
}

/// The settings of a part, as a list a run looks them up in.
pub fn find_setting<'s>(settings: &'s [SettingStep], name: &str) -> Option<&'s SettingStep> {
    settings.iter().find(|s| s.name == name)
}

/// A command's option: `{option_<name>}` in the run, of a type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptionSpec {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: crate::discord::options::OptionType,
    pub required: bool,
    /// `min`, `max` as written: a text's length, a number's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
}

impl OptionSpec {
    /// Whether `value` (of the option's type) keeps to its bounds: a text's
    /// length in characters, a number's value, compared exactly.
    pub fn within(&self, value: &str) -> Result<(), String> {
        use serde_json::Value as Json;
        let measured = match self.kind {
            crate::discord::options::OptionType::String => value.chars().count().to_string(),
            _ => value.to_string(),
        };
        let what = if self.kind == crate::discord::options::OptionType::String { "characters" } else { "" };
        let order =
            |bound: &str| crate::base::values::order(&Json::String(measured.clone()), &Json::String(bound.to_string()));
        if let Some(min) = self.min.as_deref().filter(|m| order(m).is_lt()) {
            return Err(format!("at least {min}{}{what}", if what.is_empty() { "" } else { " " }));
        }
        if let Some(max) = self.max.as_deref().filter(|m| order(m).is_gt()) {
            return Err(format!("at most {max}{}{what}", if what.is_empty() { "" } else { " " }));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "lowercase")]
pub enum Step {
    Request(Box<Request>),
    Reply {
        /// None for a reply of embeds only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<Template>,
        /// `text fr "…"`: the text by locale (or language), for users whose
        /// client is in it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        translations: Vec<(String, Template)>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        ephemeral: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        embeds: Vec<EmbedStep>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        components: Vec<ComponentStep>,
        /// A layout message's parts, in order (its texts among them, and
        /// its `components` by their place); none for any other message.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        layout: Vec<LayoutStep>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        poll: Option<Box<PollStep>>,
        /// The files it carries, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<FileStep>,
        /// `update`: edits the message a component is on.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        update: bool,
        span: Span,
    },
    Form(Box<FormStep>),
    /// `with user option_to { … }`: steps whose scoped variables are
    /// another user's (server's, channel's), named by variable `whose`.
    With {
        scope: crate::language::vocab::VarScope,
        whose: String,
        steps: Vec<Step>,
        span: Span,
    },
    /// `together { … }`: steps whose saves are one transaction.
    Together {
        steps: Vec<Step>,
        span: Span,
    },
    /// `after "10m" { … }`: keeps its body (tree `tree`) in the store, to
    /// run when due.
    Later(Box<LaterStep>),
    /// `cancel "KEY"`: removes the work waiting under the key.
    Cancel {
        key: Template,
        per_server: bool,
        span: Span,
    },
    Save {
        name: String,
        /// The field (or element) of the variable's value it writes:
        /// `save settings[mode] = …`; empty, the whole value.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        path: Vec<String>,
        /// `=` (a `clear` is saved as `= []`), or a list operation.
        #[serde(default = "set", skip_serializing_if = "is_set")]
        op: ast::SaveOp,
        value: Val,
        span: Span,
    },
    /// An `if` with its `else if` chain, flat: the first branch whose
    /// condition holds runs, or else `otherwise`.
    If {
        branches: Vec<(Condition, Vec<Step>)>,
        otherwise: Vec<Step>,
        span: Span,
    },
    /// `for item in … { … }`: `steps` once per element of the array that
    /// `source` reads (an element path when it reads an enclosing loop's).
    Loop(Box<LoopStep>),
    /// `text "…"`: a piece of the enclosing loop's join.
    Text {
        text: Template,
        span: Span,
    },
    /// `stop`: ends the enclosing loop.
    Stop {
        span: Span,
    },
    /// `choice "…" "…"`: a choice an autocomplete tree offers.
    Choice {
        name: Template,
        value: Template,
        span: Span,
    },
    /// An action on the platform (`kick`, `send to`, `give role`…).
    Action(Box<ActionStep>),
}

/// An action, ready to run: its values as templates (each judged once
/// filled, by `discord::actions`), and the message it sends as a reply's
/// step (its one element), where handlers and keys are found as a reply's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionStep {
    pub verb: crate::discord::actions::Verb,
    /// `as NAME`: later steps read its answer as `api_NAME[…]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<ActionVal>,
    /// Each word written but `as`, with its values (none for a flag).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<(String, Vec<ActionVal>)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message: Vec<Step>,
    pub span: Span,
}

/// A value of an action: a template, or the name of an earlier action
/// whose answer it names (`edit log`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionVal {
    Text(Template),
    Earlier(String),
}

impl ActionStep {
    /// The values of word `word`, if written.
    pub fn arg(&self, word: &str) -> Option<&[ActionVal]> {
        self.args.iter().find(|(w, _)| w == word).map(|(_, v)| v.as_slice())
    }

    /// Every template of its values (its message's are its step's).
    pub fn each_template(&self, f: &mut impl FnMut(&Template)) {
        let values = self.subject.iter().chain(self.args.iter().flat_map(|(_, v)| v.iter()));
        for v in values {
            if let ActionVal::Text(t) = v {
                f(t);
            }
        }
    }
}

/// `after "10m" key "…" note "…" per server { … }`, ready to run: the body
/// is tree `tree` of the plan (its steps moved there when the plan is
/// built).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaterStep {
    /// `at` a time, not `after` a duration.
    pub at: bool,
    pub when: Template,
    pub key: Option<Template>,
    pub note: Option<Template>,
    /// Kept for the server, not for the user.
    pub per_server: bool,
    pub tree: String,
    /// The body until the plan moves it to its tree.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
    /// An `await`'s answer: the body above is its `timeout`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Box<AnswerStep>>,
    /// `after "10m"`: what a failure points at.
    pub span: Span,
}

/// What an `await message "30s" as NAME { … }` runs when the member
/// answers in time: tree `tree` of the plan, with the message's text as
/// `{NAME}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerStep {
    pub name: String,
    pub tree: String,
    /// The body until the plan moves it to its tree.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
}

/// A loop, ready to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopStep {
    /// The element's name.
    pub item: String,
    pub source: Path,
    /// `by KEY [desc]`: the key's path into each element, and whether the
    /// order is descending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<(Path, bool)>,
    /// At most this many runs: a number, or a value read when the loop starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Val>,
    /// `join "SEP" into NAME`: the separator and the name of the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join: Option<(Template, String)>,
    pub steps: Vec<Step>,
    pub span: Span,
}

fn set() -> ast::SaveOp {
    ast::SaveOp::Set
}

fn is_set(op: &ast::SaveOp) -> bool {
    *op == ast::SaveOp::Set
}

/// One API block, ready to send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub block: String,
    pub method: Method,
    pub url: Template,
    pub params: Vec<(String, Template)>,
    pub headers: Vec<(String, Template)>,
    /// The body, of its kind, if the block has one.
    pub body: Option<Body>,
    /// `auth basic …` or `auth bearer …`: the `Authorization` header blkc writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<Auth>,
    /// `timeout "5s"`: each attempt's limit, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<Retry>,
    /// `failed { … }`: what runs, instead of the rest of the tree, when the
    /// request fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<Failed>,
    /// With `pages`, the samples of its second page and on (`--offline`
    /// answers its Nth request with the Nth sample, the last after).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_samples: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<Pages>,
    /// `cache …`: the answer kept in the store, for every process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<Cache>,
    /// A multipart body of the tree sends the response as a file: its
    /// bytes are kept as received.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_bytes: bool,
    /// The sample file, as written in the block (relative to the source).
    pub sample: Option<String>,
    pub allow_bot_token: bool,
    /// `allow private_network`: a host from a value or a redirect may be an
    /// internal address.
    pub allow_private_network: bool,
    pub span: Span,
}

/// A request body, ready to encode (docs/language.md, "Bodies").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Body {
    /// Any JSON value (`body { … }`, `body [ … ]`, `body json …`).
    Json {
        value: Val,
    },
    /// `application/x-www-form-urlencoded`: each value as text.
    Form {
        fields: Vec<(String, Val)>,
    },
    Text {
        text: Template,
        media_type: String,
    },
    Multipart {
        parts: Vec<BodyPart>,
    },
}

impl Body {
    /// The `Content-Type` the body is sent with (a multipart body's boundary
    /// is added when it is encoded).
    pub fn media_type(&self) -> &str {
        match self {
            Body::Json { .. } => "application/json",
            Body::Form { .. } => "application/x-www-form-urlencoded",
            Body::Text { media_type, .. } => media_type,
            Body::Multipart { .. } => "multipart/form-data",
        }
    }

    /// Calls `f` on every template the body sends.
    pub fn each_template(&self, f: &mut impl FnMut(&Template)) {
        match self {
            Body::Json { value } => value.each_template(f),
            Body::Form { fields } => fields.iter().for_each(|(_, v)| v.each_template(f)),
            Body::Text { text, .. } => f(text),
            Body::Multipart { parts } => parts.iter().for_each(|p| match &p.value {
                PartValue::Field { text } => f(text),
                PartValue::File { from, filename, media_type } => {
                    from.each_template(f);
                    filename.iter().chain(media_type).for_each(&mut *f);
                }
            }),
        }
    }

    /// Calls `f` on every value of the body.
    pub fn each_val(&self, f: &mut impl FnMut(&Val)) {
        match self {
            Body::Json { value } => f(value),
            Body::Form { fields } => fields.iter().for_each(|(_, v)| f(v)),
            Body::Text { .. } | Body::Multipart { .. } => {}
        }
    }
}

/// One part of a multipart body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BodyPart {
    pub name: String,
    pub value: PartValue,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum PartValue {
    Field {
        text: Template,
    },
    File {
        from: FileFrom,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        media_type: Option<Template>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        filename: Option<Template>,
    },
}

/// Where a file part's bytes come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileFrom {
    /// A file beside the source, by its path as written.
    Path(String),
    /// The response bytes of a block that ran before.
    Block(String),
    /// The file a user gave as this attachment option.
    Option(String),
    /// The files a user uploaded in a form, by the handler's variable
    /// (`field_work`).
    Field(String),
    /// Text the run builds (`file text "…"`), sent as UTF-8.
    Text(Template),
}

impl FileFrom {
    /// Its source from the language's: a path, `api_<block>`,
    /// `option_<name>` or `text "…"`.
    pub fn of(source: &ast::FileSource) -> FileFrom {
        match source {
            ast::FileSource::Path(p) => FileFrom::Path(p.value.to_string()),
            ast::FileSource::Name(n) if n.name.starts_with("field_") => FileFrom::Field(n.name.to_string()),
            ast::FileSource::Name(n) => match n.name.strip_prefix("option_") {
                Some(option) => FileFrom::Option(option.to_string()),
                None => FileFrom::Block(n.name.strip_prefix("api_").unwrap_or(&n.name).to_string()),
            },
            ast::FileSource::Text(t) => FileFrom::Text(template(t)),
        }
    }

    /// The name a file goes by when nothing names it: a path's last part,
    /// the block's or option's name, `file.txt` for text.
    pub fn default_name(&self) -> String {
        match self {
            FileFrom::Path(p) => p.rsplit('/').next().unwrap_or(p).to_string(),
            FileFrom::Block(b) | FileFrom::Option(b) | FileFrom::Field(b) => b.clone(),
            FileFrom::Text(_) => "file.txt".to_string(),
        }
    }

    /// Calls `f` on its template (`file text "…"`'s).
    pub fn each_template(&self, f: &mut impl FnMut(&Template)) {
        if let FileFrom::Text(t) = self {
            f(t);
        }
    }
}

/// A file a message carries: where its bytes come from, and its settings
/// (`filename`, `type`, `description`, `spoiler`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileStep {
    pub from: FileFrom,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingStep>,
}

/// The `Authorization` header a block's `auth` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "scheme", rename_all = "lowercase")]
pub enum Auth {
    Basic { user: Template, password: Template },
    Bearer { token: Template },
}

/// `pages { … }`: the pages a block follows and where their items are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pages {
    /// Where a page holds its list (a path into the response).
    pub items: Path,
    pub next: Next,
    /// At most this many pages (the first included).
    pub max: u32,
    /// At most this many items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// Where the next page is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Next {
    /// A value of the response, sent as the URL parameter `param`.
    Cursor { path: Path, param: String },
    /// A URL in the response (on the first request's origin only).
    Url { path: Path },
    /// The `Link` header's `rel="next"`.
    Link,
}

/// How long a block's answer is kept in the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cache {
    /// `cache "10m"`: this many milliseconds.
    For { ms: u64 },
    /// `cache response.expires_in`: the answer's seconds there.
    From { path: Path },
}

/// Pages a block follows when `pages` gives no `max`.
pub const DEFAULT_PAGES: u32 = 10;

/// `retry N on … backoff …`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Retry {
    /// Retries after the first attempt.
    pub times: u32,
    /// The statuses retried, as inclusive ranges (besides a time-out and a
    /// connection that failed).
    pub on: Vec<(u16, u16)>,
    /// The first wait; each next one doubles, with jitter.
    pub backoff_ms: u64,
    /// The method may be repeated: idempotent, or `allow retry`.
    pub repeatable: bool,
}

/// The statuses a block retries when `retry` names none.
pub const RETRIED: &[(u16, u16)] = &[(408, 408), (429, 429), (500, 500), (502, 504)];

/// `failed on … { … }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failed {
    /// The statuses that count as a failure, as inclusive ranges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on: Vec<(u16, u16)>,
    pub steps: Vec<Step>,
}

/// A compiled string template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Template {
    pub parts: Vec<Seg>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Seg {
    Text(String),
    /// A trigger, option or custom variable.
    Var {
        name: String,
        span: Span,
    },
    BotToken,
    /// A secret slot, filled at run time.
    Secret {
        name: String,
    },
    Ref(Path),
    /// `{random 1 6}`, `{chance 25}` (src/language/helpers.rs).
    Draw {
        draw: crate::language::helpers::Draw,
        span: Span,
    },
    /// A variable or path with list helpers after it (src/language/helpers.rs).
    Helped {
        base: Box<Seg>,
        helpers: Vec<crate::language::helpers::Helper>,
        span: Span,
    },
}

/// A pre-split response path: `api_<block>[response.a.0]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Path {
    /// The block, or the loop whose element the path reads.
    pub block: String,
    /// A path into a loop's element (`item[name]`), not a block's response.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub element: bool,
    /// `true` for `[status]`, `false` for `[response…]`.
    pub status: bool,
    /// `true` for `[headers.NAME]` (its one key is the name, lower-case).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub headers: bool,
    /// `true` for `[items…]`: the items of the block's pages.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub items: bool,
    pub keys: Vec<Key>,
    /// The path as written, for messages and for rendering it as text.
    pub text: String,
    pub span: Span,
}

/// One level of a path: a key, and its index when it is one
/// ([`crate::base::path::index`], computed once here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Key {
    pub name: String,
    pub index: Option<usize>,
    pub span: Span,
}

impl crate::base::path::Segment for Key {
    fn text(&self) -> &str {
        &self.name
    }

    fn index(&self) -> Option<usize> {
        self.index
    }
}

/// A JSON value template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Val {
    Str(Template),
    Json(serde_json::Value),
    Ref(Path),
    Object(Vec<(String, Val)>),
    Array(Vec<Val>),
    /// A calculation, computed exactly when the run reaches it.
    Arith(Box<Calc>),
    /// A variable's value itself, by its bare name (a side of a condition).
    Var {
        name: String,
        span: Span,
    },
}

/// A calculation: operands and the operations on them (docs/language.md,
/// "Arithmetic"). Each part keeps its span, for the run's diagnostics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Calc {
    Value { value: Val, span: Span },
    Var { name: String, span: Span },
    Op { op: ast::ArithOp, left: Box<Calc>, right: Box<Calc>, span: Span },
}

impl Calc {
    /// Calls `f` on every value of the calculation.
    pub fn each_value(&self, f: &mut impl FnMut(&Val)) {
        match self {
            Calc::Value { value, .. } => f(value),
            Calc::Var { .. } => {}
            Calc::Op { left, right, .. } => {
                left.each_value(f);
                right.each_value(f);
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    pub left: Val,
    pub test: Option<(Op, Val)>,
    pub span: Span,
}

/// A comparison of a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    #[serde(rename = "==")]
    Eq,
    #[serde(rename = "!=")]
    Ne,
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "contains")]
    Contains,
    #[serde(rename = "starts with")]
    StartsWith,
    #[serde(rename = "ends with")]
    EndsWith,
}

impl From<ast::CompareOp> for Op {
    fn from(op: ast::CompareOp) -> Op {
        match op {
            ast::CompareOp::Eq => Op::Eq,
            ast::CompareOp::Ne => Op::Ne,
            ast::CompareOp::Lt => Op::Lt,
            ast::CompareOp::Le => Op::Le,
            ast::CompareOp::Gt => Op::Gt,
            ast::CompareOp::Ge => Op::Ge,
            ast::CompareOp::Contains => Op::Contains,
            ast::CompareOp::StartsWith => Op::StartsWith,
            ast::CompareOp::EndsWith => Op::EndsWith,
        }
    }
}

impl Template {
    /// What the template says, without where it stands in the file (spans
    /// move when anything above them moves): a component's key reads it.
    pub fn written(&self) -> String {
        fn strip(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Object(o) => {
                    o.remove("span");
                    o.values_mut().for_each(strip);
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
                _ => {}
            }
        }
        let mut v = serde_json::to_value(&self.parts).unwrap_or_default();
        strip(&mut v);
        v.to_string()
    }

    /// Whether the template sends the bot token.
    pub fn has_token(&self) -> bool {
        self.parts.iter().any(|s| matches!(s, Seg::BotToken))
    }

    /// Whether the template holds a secret slot or the bot token.
    pub fn has_secret(&self) -> bool {
        self.parts.iter().any(|s| matches!(s, Seg::Secret { .. } | Seg::BotToken))
    }
}

impl Val {
    /// Calls `f` on every template of the value.
    pub fn each_template(&self, f: &mut impl FnMut(&Template)) {
        match self {
            Val::Str(t) => f(t),
            Val::Object(entries) => entries.iter().for_each(|(_, v)| v.each_template(f)),
            Val::Array(items) => items.iter().for_each(|v| v.each_template(f)),
            Val::Arith(c) => c.each_value(&mut |v| v.each_template(f)),
            Val::Json(_) | Val::Ref(_) | Val::Var { .. } => {}
        }
    }
}

impl Request {
    /// Calls `f` on every template the request sends.
    pub fn each_template(&self, f: &mut impl FnMut(&Template)) {
        f(&self.url);
        self.params.iter().for_each(|(_, t)| f(t));
        self.headers.iter().for_each(|(_, t)| f(t));
        if let Some(b) = &self.body {
            b.each_template(f);
        }
        match &self.auth {
            Some(Auth::Basic { user, password }) => {
                f(user);
                f(password);
            }
            Some(Auth::Bearer { token }) => f(token),
            None => {}
        }
    }

    /// Whether the request sends the bot token anywhere.
    pub fn carries_token(&self) -> bool {
        let mut found = false;
        self.each_template(&mut |t| found |= t.has_token());
        found
    }
}

impl Step {
    /// The lists of steps nested in this one: an `if`'s branches (its
    /// `otherwise` last), a loop's body.
    pub fn nested(&self) -> Vec<&[Step]> {
        match self {
            Step::If { branches, otherwise, .. } => {
                branches.iter().map(|(_, then)| then.as_slice()).chain([otherwise.as_slice()]).collect()
            }
            Step::Loop(l) => vec![l.steps.as_slice()],
            Step::With { steps, .. } | Step::Together { steps, .. } => vec![steps.as_slice()],
            Step::Later(l) => {
                std::iter::once(&l.steps).chain(l.answer.iter().map(|a| &a.steps)).map(Vec::as_slice).collect()
            }
            Step::Request(r) => r.failed.iter().map(|f| f.steps.as_slice()).collect(),
            Step::Action(a) => vec![a.message.as_slice()],
            _ => Vec::new(),
        }
    }

    fn nested_mut(&mut self) -> Vec<&mut Vec<Step>> {
        match self {
            Step::If { branches, otherwise, .. } => {
                branches.iter_mut().map(|(_, then)| then).chain([otherwise]).collect()
            }
            Step::Loop(l) => vec![&mut l.steps],
            Step::With { steps, .. } | Step::Together { steps, .. } => vec![steps],
            Step::Later(l) => {
                let LaterStep { steps, answer, .. } = &mut **l;
                std::iter::once(steps).chain(answer.iter_mut().map(|a| &mut a.steps)).collect()
            }
            Step::Action(a) => vec![&mut a.message],
            _ => Vec::new(),
        }
    }
}

/// Whether any reply of `steps`, in any branch, is seen by everyone (not
/// `ephemeral`).
pub fn any_public_reply(steps: &[Step]) -> bool {
    steps.iter().any(|step| match step {
        Step::Reply { ephemeral, update, .. } => !ephemeral && !update,
        // (An action's message goes elsewhere, not as the answer.)
        Step::Action(_) => false,
        _ => step.nested().into_iter().any(any_public_reply),
    })
}

/// Whether any step of `steps`, in any branch, is an `update` (a handler
/// that updates defers as an update of its message, not as "thinking").
pub fn any_update(steps: &[Step]) -> bool {
    steps.iter().any(|step| match step {
        Step::Reply { update, .. } => *update,
        Step::Action(_) => false,
        _ => step.nested().into_iter().any(any_update),
    })
}

/// Calls `f` on every template of a list of settings.
fn setting_templates(settings: &[SettingStep], f: &mut impl FnMut(&Template)) {
    settings.iter().filter_map(|s| s.text.as_ref()).for_each(f);
}

/// [`each_template`] of a reply's step.
fn reply_templates(step: &Step, f: &mut impl FnMut(&Template)) {
    let Step::Reply { text, translations, embeds, components, layout, poll, files, .. } = step else { return };
    text.iter().for_each(&mut *f);
    for file in files {
        file.from.each_template(f);
        setting_templates(&file.settings, f);
    }
    layout.iter().for_each(|part| part.each_template(f));
    if let Some(p) = poll {
        setting_templates(&p.settings, f);
        for (answer, settings) in &p.answers {
            f(answer);
            setting_templates(settings, f);
        }
    }
    translations.iter().for_each(|(_, t)| f(t));
    for e in embeds {
        e.parts.iter().for_each(|(_, t)| f(t));
        for field in &e.fields {
            f(&field.name);
            f(&field.value);
        }
    }
    for c in components {
        setting_templates(&c.settings, f);
        for choice in &c.choices {
            f(&choice.label);
            f(&choice.value);
            setting_templates(&choice.settings, f);
        }
    }
}

/// Calls `f` on every template of a list of steps, in every branch.
pub fn each_template(steps: &[Step], f: &mut impl FnMut(&Template)) {
    for step in steps {
        match step {
            Step::Request(r) => r.each_template(f),
            Step::Reply { .. } => reply_templates(step, f),
            Step::Form(form) => {
                setting_templates(&form.settings, f);
                form.texts.iter().for_each(|(_, t)| f(t));
                for i in &form.inputs {
                    setting_templates(&i.settings, f);
                    for choice in &i.choices {
                        f(&choice.label);
                        f(&choice.value);
                        setting_templates(&choice.settings, f);
                    }
                }
            }
            Step::Save { value, .. } => value.each_template(f),
            Step::If { branches, otherwise, .. } => {
                for (condition, then) in branches {
                    condition.left.each_template(f);
                    if let Some((_, right)) = &condition.test {
                        right.each_template(f);
                    }
                    each_template(then, f);
                }
                each_template(otherwise, f);
            }
            Step::With { steps, .. } | Step::Together { steps, .. } => each_template(steps, f),
            Step::Later(l) => {
                f(&l.when);
                l.key.iter().chain(&l.note).for_each(&mut *f);
                each_template(&l.steps, f);
                l.answer.iter().for_each(|a| each_template(&a.steps, f));
            }
            Step::Cancel { key, .. } => f(key),
            Step::Loop(l) => {
                l.limit.iter().for_each(|v| v.each_template(f));
                if let Some((separator, _)) = &l.join {
                    f(separator);
                }
                each_template(&l.steps, f);
            }
            Step::Text { text, .. } => f(text),
            Step::Choice { name, value, .. } => {
                f(name);
                f(value);
            }
            Step::Stop { .. } => {}
            Step::Action(a) => {
                a.each_template(f);
                each_template(&a.message, f);
            }
        }
    }
}

/// Calls `f` on every response path a list of steps reads, in every branch.
pub fn each_path(steps: &[Step], f: &mut impl FnMut(&Path)) {
    fn val(v: &Val, f: &mut impl FnMut(&Path)) {
        match v {
            Val::Ref(p) => f(p),
            Val::Object(entries) => entries.iter().for_each(|(_, v)| val(v, f)),
            Val::Array(items) => items.iter().for_each(|v| val(v, f)),
            Val::Arith(c) => c.each_value(&mut |v| val(v, f)),
            Val::Str(_) | Val::Json(_) | Val::Var { .. } => {}
        }
    }
    each_template(steps, &mut |t| {
        t.parts.iter().for_each(|s| match s {
            Seg::Ref(p) => f(p),
            Seg::Helped { base, .. } => {
                if let Seg::Ref(p) = &**base {
                    f(p)
                }
            }
            _ => {}
        })
    });
    for step in steps {
        match step {
            Step::Request(r) => {
                r.body.iter().for_each(|b| b.each_val(&mut |v| val(v, f)));
                if let Some(failed) = &r.failed {
                    each_path(&failed.steps, f);
                }
            }
            Step::Save { value, .. } => val(value, f),
            Step::If { branches, otherwise, .. } => {
                for (condition, then) in branches {
                    val(&condition.left, f);
                    condition.test.iter().for_each(|(_, right)| val(right, f));
                    each_path(then, f);
                }
                each_path(otherwise, f);
            }
            Step::With { steps, .. } | Step::Together { steps, .. } => each_path(steps, f),
            Step::Later(l) => {
                each_path(&l.steps, f);
                l.answer.iter().for_each(|a| each_path(&a.steps, f));
            }
            Step::Loop(l) => {
                f(&l.source);
                l.limit.iter().for_each(|v| val(v, f));
                each_path(&l.steps, f);
            }
            Step::Reply { .. }
            | Step::Form(_)
            | Step::Text { .. }
            | Step::Stop { .. }
            | Step::Choice { .. }
            | Step::Cancel { .. }
            | Step::Action(_) => {}
        }
    }
}

impl Plan {
    /// Whether any tree reads `api_<block>[status]`.
    pub fn reads_status(&self, block: &str) -> bool {
        let mut reads = false;
        for tree in &self.trees {
            each_path(&tree.steps, &mut |p| reads |= p.status && p.block == block);
        }
        reads
    }
}

/// The inputs of every form in the plan whose submission runs `handler`.
pub fn form_inputs<'p>(plan: &'p Plan, handler: &str) -> Vec<&'p str> {
    fn walk<'p>(steps: &'p [Step], handler: &str, out: &mut Vec<&'p str>) {
        for step in steps {
            match step {
                Step::Form(f) if f.handler == handler => out.extend(f.inputs.iter().map(|i| i.name.as_str())),
                _ => step.nested().into_iter().for_each(|steps| walk(steps, handler, out)),
            }
        }
    }
    let mut out = Vec::new();
    plan.trees.iter().for_each(|t| walk(&t.steps, handler, &mut out));
    out.sort_unstable();
    out.dedup();
    out
}

/// Each input of the forms naming `handler`: its kind, and the most it
/// takes (characters of text, choices of a menu or group, files of an
/// upload): its `max`, else the platform's (the most of them when two forms
/// share an input's name). A submission is held to it: the platform's
/// client is, and a forged one must be too.
pub fn form_input_limits(plan: &Plan, handler: &str) -> Vec<(String, crate::discord::outgoing::InputKind, usize)> {
    type Inputs = Vec<(String, crate::discord::outgoing::InputKind, usize)>;
    fn walk(steps: &[Step], handler: &str, out: &mut Inputs) {
        for step in steps {
            match step {
                Step::Form(f) if f.handler == handler => {
                    for i in &f.inputs {
                        let most = i.kind.most().0.max(1) as usize;
                        let max = find_setting(&i.settings, "max").and_then(|s| s.number).map_or(most, |n| n as usize);
                        match out.iter_mut().find(|(n, _, _)| *n == i.name) {
                            Some((_, _, m)) => *m = (*m).max(max),
                            None => out.push((i.name.clone(), i.kind, max)),
                        }
                    }
                }
                _ => step.nested().into_iter().for_each(|steps| walk(steps, handler, out)),
            }
        }
    }
    let mut out = Vec::new();
    plan.trees.iter().for_each(|t| walk(&t.steps, handler, &mut out));
    out
}

/// The request of block `name` in a list of steps, in any branch.
pub fn find_request<'p>(steps: &'p [Step], name: &str) -> Option<&'p Request> {
    steps.iter().find_map(|s| match s {
        Step::Request(r) if r.block == name => Some(r.as_ref()),
        _ => s.nested().into_iter().find_map(|steps| find_request(steps, name)),
    })
}

/// Lowers a checked file to a Plan. A file with errors is refused: the
/// plan of a file that does not check would send what the checker forbids.
pub fn lower(checked: &Checked) -> Result<Plan, Box<Diagnostic>> {
    if let Some(first) = checked.diagnostics.iter().find(|d| d.is_error()) {
        let count = checked.diagnostics.iter().filter(|d| d.is_error()).count();
        let mut refusal = Diagnostic::new(
            first.code,
            format!(
                "`{}` has {count} error{}: no plan is built",
                checked.source.name,
                if count == 1 { "" } else { "s" }
            ),
        )
        .help("fix the errors `blkc check` reports, then build again");
        if let Some(span) = first.primary_span() {
            refusal = refusal.label(span, format!("the first: {}", first.message));
        }
        return Err(Box::new(refusal));
    }
    let file = &checked.ast;
    let mut plan = Plan {
        format: FORMAT,
        source: checked.source.name.clone(),
        platform: crate::discord::options::DEFAULT_PLATFORM.to_string(),
        variables: Vec::new(),
        trees: Vec::new(),
        intents: crate::language::registration::intents(&checked.ast).bits(),
        awaits: crate::language::registration::awaits(&checked.ast),
        permissions: crate::language::registration::permissions(&checked.ast)
            .iter()
            .fold(0, |all, (bit, _)| all | bit.bits()),
        commands: crate::language::registration::registration(&checked.ast).ok(),
    };
    // The checker reads the first `platform` line (a second one is B125).
    if let Some(p) = file.items.iter().find_map(|i| if let Item::Platform(p) = i { Some(p) } else { None }) {
        plan.platform = p.url.value.to_string();
    }
    for item in &file.items {
        match item {
            Item::Platform(_) | Item::Include(_) => {}
            Item::Var(v) => plan.variables.push(Variable {
                name: v.name.name.to_string(),
                default: v.default.as_ref().map(fixed),
                scope: v
                    .scope
                    .as_ref()
                    .and_then(|s| crate::language::vocab::VarScope::parse(&s.name))
                    .unwrap_or(global()),
                expires: v.expires.as_ref().and_then(|e| crate::language::vocab::parse_duration(&e.value).ok()),
            }),
            Item::Tree(t) => lower_tree(t, &[], &mut plan.trees)?,
            Item::Failed(..) => {}
        }
    }
    // The file's `failed`: every tree's that has none of its own (an
    // autocomplete answers with choices, never a message).
    let file_failed = file.items.iter().find_map(|i| match i {
        Item::Failed(b, _) => Some(b),
        _ => None,
    });
    if let Some(b) = file_failed {
        let handler = steps(&b.body)?;
        for tree in plan.trees.iter_mut().filter(|t| t.failed.is_none() && t.kind != TreeKind::Autocomplete) {
            tree.failed = Some(handler.clone());
        }
    }
    hoist_later(&mut plan.trees);
    key_components(&mut plan.trees);
    Ok(plan)
}

/// Moves each `after`'s body into a tree of its own, which its step names:
/// what waits in the store names the tree it runs. The name is the parent
/// tree's and a digest of the body's steps as written (their places left
/// out), `remind#3fa94c1e`: an edit elsewhere in the file keeps it, so
/// work kept before the edit runs the same body after it; an edit of the
/// body makes a new name, and work kept for the old body is removed when
/// it comes due (logged), never run with another body. A second body alike
/// in one tree is `…-2`. Trees made so come after the file's.
fn hoist_later(trees: &mut Vec<Tree>) {
    fn take(steps: &mut [Step], (parent, guards): (&str, &[Guard]), seen: &mut Vec<String>, out: &mut Vec<Tree>) {
        for step in steps {
            if let Step::Later(l) = step {
                l.tree = hoist(std::mem::take(&mut l.steps), (parent, guards), seen, out);
                if let Some(a) = &mut l.answer {
                    a.tree = hoist(std::mem::take(&mut a.steps), (parent, guards), seen, out);
                }
                continue;
            }
            for nested in step.nested_mut() {
                take(nested, (parent, guards), seen, out);
            }
        }
    }
    /// `steps` as a tree of their own; its name.
    fn hoist(
        steps: Vec<Step>,
        (parent, guards): (&str, &[Guard]),
        seen: &mut Vec<String>,
        out: &mut Vec<Tree>,
    ) -> String {
        let mut name = format!("{parent}#{}", body_digest(&steps));
        let alike = seen.iter().filter(|s| **s == name).count();
        seen.push(name.clone());
        if alike > 0 {
            name = format!("{name}-{}", alike + 1);
        }
        out.push(Tree {
            kind: TreeKind::Later,
            name: name.clone(),
            cooldown: None,
            timer: None,
            webhook: None,
            menu: None,
            // A button its message shows asks for its parent's `require`
            // lines, as one its parent showed would.
            guards: guards.to_vec(),
            options: Vec::new(),
            steps,
            failed: None,
        });
        name
    }
    let mut next = 0;
    while next < trees.len() {
        let mut made = Vec::new();
        let (parent, guards) = (trees[next].name.clone(), trees[next].guards.clone());
        let failed = trees[next].failed.clone();
        take(&mut trees[next].steps, (&parent, &guards), &mut Vec::new(), &mut made);
        for tree in &mut made {
            tree.failed = failed.clone();
        }
        trees.extend(made);
        next += 1;
    }
}

/// Eight hex digits of the SHA-256 of `steps` as the plan writes them,
/// without their places in the file (`span`).
fn body_digest(steps: &[Step]) -> String {
    fn placeless(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(o) => {
                o.remove("span");
                o.values_mut().for_each(placeless);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(placeless),
            _ => {}
        }
    }
    use sha2::Digest as _;
    let mut json = serde_json::to_value(steps).unwrap_or_default();
    placeless(&mut json);
    hex::encode(&sha2::Sha256::digest(json.to_string().as_bytes())[..4])
}

/// A tree as the trees that run (`ast::File::trees`, in its order): a
/// command with subcommands as each of them, with its `require` lines and
/// its group's before their own; a command's options' autocompletes after
/// it, with its options and its `require` lines.
fn lower_tree(t: &ast::Tree, inherited: &[Guard], out: &mut Vec<Tree>) -> Lowered<()> {
    let mut guards = inherited.to_vec();
    guards.extend(t.body.iter().filter_map(|n| match n {
        Node::Guard(g) => Guard::of(g),
        _ => None,
    }));
    if t.has_subs() {
        for s in t.subs().filter(|s| !s.group || s.tree.has_subs()) {
            lower_tree(&s.tree, &guards, out)?;
        }
        return Ok(());
    }
    let options: Vec<OptionSpec> = t
        .options()
        .map(|o| OptionSpec {
            name: o.name.name.to_string(),
            kind: o.option_type(),
            required: o.required.is_some(),
            min: o.bounds.iter().find(|b| !b.max).map(|b| b.value.to_string()),
            max: o.bounds.iter().find(|b| b.max).map(|b| b.value.to_string()),
        })
        .collect();
    let tree = |kind: ast::TreeKind, t: &ast::Tree, options: Vec<OptionSpec>, guards: Vec<Guard>| -> Lowered<Tree> {
        Ok(Tree {
            kind: kind.into(),
            name: t.name.name.to_string(),
            cooldown: Cooldown::of(t.cooldown.as_ref()),
            timer: Timer::of(t.schedule.as_deref()),
            webhook: Hook::of(t.webhook.as_deref()),
            menu: t.menu_target().map(str::to_string),
            guards,
            options,
            steps: with_kept_bytes(steps(&t.body)?, t),
            failed: match t.body.iter().find_map(|n| match n {
                Node::Failed(b, _) => Some(b),
                _ => None,
            }) {
                Some(b) => Some(steps(&b.body)?),
                None => None,
            },
        })
    };
    out.push(tree(t.kind, t, options.clone(), guards.clone())?);
    for a in t.options().filter_map(|o| o.autocomplete.as_deref()) {
        out.push(tree(ast::TreeKind::Autocomplete, &a.tree, options.clone(), guards.clone())?);
    }
    Ok(())
}

/// Gives every component with a handler, and every form, its key: a
/// digest of its kind, its handler, its `value` as written, and how many
/// alike in those three come before it in the file. So a component keeps
/// its key (and its click counts and cooldowns on every message sent
/// before) when the file changes anywhere else: another component added
/// above it, of its handler or another, a label or a limit changed. Only
/// a component whose kind, handler or value changes gets a new key, and
/// its earlier messages' clicks are answered as stale.
///
/// Each also gets the `require` lines its click must hold: those of the
/// tree whose reply shows it, and, when that tree is a handler, those
/// every component and form naming that handler holds.
fn key_components(trees: &mut [Tree]) {
    let mut seen = rustc_hash::FxHashMap::default();
    for tree in trees.iter_mut() {
        let guards = tree.guards.clone();
        each_named(&mut tree.steps, &mut |named| {
            let (alike, slot_key, slot_guards) = match named {
                Named::Component(c) => {
                    let value = c.settings.iter().find(|s| s.name == "value").and_then(|s| s.text.as_ref());
                    let value = value.map(Template::written).unwrap_or_default();
                    let handler = c.handler.as_deref().unwrap_or_default();
                    (format!("{:?}\0{handler}\0{value}", c.kind), &mut c.key, &mut c.guards)
                }
                Named::Form(f) => (format!("form\0{}", f.handler), &mut f.key, &mut f.guards),
            };
            let n = seen.entry(alike.clone()).or_insert(0u32);
            *slot_key = component_key(&format!("{alike}\0{n}"));
            *n += 1;
            *slot_guards = guards.clone();
        });
    }
    // A handler's components hold what every click reaching it held, to
    // the end of a chain of handlers (each pass reaches one link further).
    for _ in 0..trees.len() {
        let mut reaching: rustc_hash::FxHashMap<String, Option<Vec<Guard>>> = Default::default();
        for tree in trees.iter_mut() {
            each_named(&mut tree.steps, &mut |named| {
                let (handler, guards) = match named {
                    Named::Component(c) => (c.handler.clone().unwrap_or_default(), &c.guards),
                    Named::Form(f) => (f.handler.clone(), &f.guards),
                };
                let common = reaching.entry(handler).or_insert_with(|| Some(guards.clone()));
                if let Some(common) = common {
                    common.retain(|g| guards.iter().any(|h| g.same(h)));
                }
            });
        }
        let mut changed = false;
        for tree in trees.iter_mut().filter(|t| t.kind == TreeKind::Handler) {
            let Some(Some(inherited)) = reaching.get(&tree.name) else { continue };
            each_named(&mut tree.steps, &mut |named| {
                let guards = match named {
                    Named::Component(c) => &mut c.guards,
                    Named::Form(f) => &mut f.guards,
                };
                for g in inherited {
                    if !guards.iter().any(|h| h.same(g)) {
                        guards.push(g.clone());
                        changed = true;
                    }
                }
            });
        }
        if !changed {
            break;
        }
    }
}

/// A component with a handler, or a form: what names a handler.
enum Named<'s> {
    Component(&'s mut ComponentStep),
    Form(&'s mut FormStep),
}

/// Calls `f` on every component with a handler and every form of `steps`,
/// in the order they are written (a branch's before what follows its `if`).
fn each_named(steps: &mut [Step], f: &mut dyn FnMut(Named<'_>)) {
    for step in steps {
        match step {
            Step::Reply { components, .. } => {
                components.iter_mut().filter(|c| c.handler.is_some()).for_each(|c| f(Named::Component(c)))
            }
            Step::Form(form) => f(Named::Form(form)),
            _ => step.nested_mut().into_iter().for_each(|steps| each_named(steps, f)),
        }
    }
}

/// The first [`crate::discord::custom_id::COMPONENT_KEY`] hex digits of the SHA-256 of
/// what a component is.
fn component_key(identity: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(identity.as_bytes());
    let mut key = hex::encode(digest);
    key.truncate(crate::discord::custom_id::COMPONENT_KEY);
    key
}

/// The form of `handler` whose key is `key`.
pub fn form<'p>(plan: &'p Plan, handler: &str, key: &str) -> Option<&'p FormStep> {
    fn find<'p>(steps: &'p [Step], handler: &str, key: &str) -> Option<&'p FormStep> {
        steps.iter().find_map(|step| match step {
            Step::Form(f) if f.key == key && f.handler == handler => Some(f.as_ref()),
            _ => step.nested().into_iter().find_map(|steps| find(steps, handler, key)),
        })
    }
    plan.trees.iter().find_map(|t| find(&t.steps, handler, key))
}

/// The component running `handler` whose key is `key`.
pub fn component<'p>(plan: &'p Plan, handler: &str, key: &str) -> Option<&'p ComponentStep> {
    fn find<'p>(steps: &'p [Step], handler: &str, key: &str) -> Option<&'p ComponentStep> {
        steps.iter().find_map(|step| match step {
            Step::Reply { components, .. } => {
                components.iter().find(|c| c.key == key && c.handler.as_deref() == Some(handler))
            }
            _ => step.nested().into_iter().find_map(|steps| find(steps, handler, key)),
        })
    }
    plan.trees.iter().find_map(|t| find(&t.steps, handler, key))
}

type Lowered<T> = Result<T, Box<Diagnostic>>;

fn steps(nodes: &[Node]) -> Lowered<Vec<Step>> {
    nodes.iter().filter_map(|n| step(n).transpose()).collect()
}

fn step(node: &Node) -> Lowered<Option<Step>> {
    Ok(Some(match node {
        Node::Option(_) | Node::Register(_) | Node::Guard(_) | Node::Sub(_) | Node::Failed(..) => return Ok(None),
        Node::Choice(c) => Step::Choice { name: template(&c.name), value: template(&c.value), span: c.span },
        Node::Api(b) => Step::Request(Box::new(request(b)?)),
        Node::Reply(r) => reply_step(r),
        Node::Form(f) => Step::Form(Box::new(form_step(f))),
        Node::Save(s) => save_step(s, Vec::new()),
        Node::SaveField(f) => save_step(&f.save, f.path.iter().map(|s| s.text.to_string()).collect()),
        Node::If(i) => if_step(i)?,
        Node::For(f) => Step::Loop(Box::new(loop_step(f, steps(&f.body.body)?))),
        Node::Text(t, span) => Step::Text { text: template(t), span: *span },
        Node::Stop(span) => Step::Stop { span: *span },
        Node::Action(a) => Step::Action(Box::new(action_step(a))),
        Node::With(w) => Step::With {
            scope: crate::language::vocab::VarScope::parse(&w.scope.name)
                .unwrap_or(crate::language::vocab::VarScope::User),
            whose: w.whose.name.to_string(),
            steps: steps(&w.body.body)?,
            span: w.span,
        },
        Node::Together(b, span) => Step::Together { steps: steps(&b.body)?, span: *span },
        Node::Later(l) => Step::Later(Box::new(LaterStep {
            at: l.at,
            when: template(&l.when),
            key: l.key.as_ref().map(template),
            note: l.note.as_ref().map(template),
            per_server: l.scope.as_ref().is_some_and(|s| s.name == "server"),
            tree: String::new(),
            steps: steps(&l.body.body)?,
            answer: None,
            span: l.head,
        })),
        // Kept as an `after` whose body is the `timeout`'s, with the answer.
        Node::Await(a) => Step::Later(Box::new(LaterStep {
            at: false,
            when: template(&a.wait),
            key: None,
            note: None,
            per_server: false,
            tree: String::new(),
            steps: a.timeout.as_ref().map_or(Ok(Vec::new()), |t| steps(&t.body))?,
            answer: Some(Box::new(AnswerStep {
                name: a.name.name.to_string(),
                tree: String::new(),
                steps: steps(&a.body.body)?,
            })),
            span: a.head,
        })),
        Node::Cancel(c) => Step::Cancel {
            key: template(&c.key),
            per_server: c.scope.as_ref().is_some_and(|s| s.name == "server"),
            span: c.span,
        },
    }))
}

/// A save (`clear` saves `[]`), into the variable or a field of it.
fn save_step(s: &ast::Save, path: Vec<String>) -> Step {
    let op = if s.op == ast::SaveOp::Clear { ast::SaveOp::Set } else { s.op };
    Step::Save { name: s.name.name.to_string(), path, op, value: val(&s.value), span: s.span() }
}

/// An action as the checker let it through: its verb, its values as
/// templates (a number as its text), and its message as a reply's step.
fn action_step(a: &ast::Action) -> ActionStep {
    use crate::discord::actions::Verb;
    let value = |v: &ast::ActionValue| match v {
        ast::ActionValue::Text(t) => ActionVal::Text(template(t)),
        ast::ActionValue::Number(n, span) => {
            ActionVal::Text(Template { parts: vec![Seg::Text(n.to_string())], span: *span })
        }
        ast::ActionValue::Name(n) => ActionVal::Earlier(n.name.to_string()),
    };
    let verb = Verb::parse(&a.verb.name, a.kind.as_ref().map(|k| k.name.as_str())).unwrap_or(Verb::Send);
    ActionStep {
        verb,
        name: a.name().map(|n| n.name.to_string()),
        subject: a.subject.as_ref().map(value),
        args: a
            .args
            .iter()
            .filter(|arg| arg.word.name != "as")
            .map(|arg| (arg.word.name.to_string(), arg.values.iter().map(value).collect()))
            .collect(),
        message: a.message.iter().map(reply_step).collect(),
        span: a.span,
    }
}

fn loop_step(f: &ast::ForNode, steps: Vec<Step>) -> LoopStep {
    LoopStep {
        item: f.item.name.to_string(),
        source: loop_path(&f.source),
        order: f.order.as_ref().map(|o| (loop_path(&o.key), o.descending)),
        limit: f.limit.as_ref().map(val),
        join: f.join.as_ref().map(|j| (template(&j.separator), j.into.name.to_string())),
        steps,
        span: f.span,
    }
}

/// A loop's source, or its order's key: a reference, an element's path,
/// or a name (an enclosing element, a custom variable, the loop's own
/// element).
fn loop_path(source: &ast::LoopSource) -> Path {
    match source {
        ast::LoopSource::Ref(r) => path(r),
        ast::LoopSource::Element(e) => element_path(e),
        ast::LoopSource::Name(n) => Path {
            block: n.name.to_string(),
            element: true,
            status: false,
            headers: false,
            items: false,
            keys: Vec::new(),
            text: n.name.to_string(),
            span: n.span,
        },
    }
}

fn reply_step(r: &ast::Reply) -> Step {
    let embeds = r
        .embeds()
        .map(|e| {
            let mut step = EmbedStep { parts: Vec::new(), fields: Vec::new() };
            for item in &e.items {
                match item {
                    ast::EmbedItem::Part { part, value, .. } => step.parts.push((*part, template(value))),
                    ast::EmbedItem::Field { name, value, inline, .. } => step.fields.push(FieldStep {
                        name: template(name),
                        value: template(value),
                        inline: inline.is_some(),
                    }),
                }
            }
            step
        })
        .collect();
    let components = r
        .components()
        .map(|c| ComponentStep {
            kind: match c.kind {
                ast::ComponentKind::Button => ComponentKind::Button,
                ast::ComponentKind::Select => ComponentKind::Select,
            },
            key: String::new(),
            guards: Vec::new(),
            handler: c.handler.as_ref().map(|h| h.name.to_string()),
            max_clicks: ast::setting(&c.settings, "max_clicks").and_then(|s| match &s.value {
                Some(ast::SettingValue::Number(n, _)) => n.parse().ok(),
                _ => None,
            }),
            cooldown: Cooldown::of(ast::setting(&c.settings, crate::language::vocab::COOLDOWN)),
            expires: ast::setting(&c.settings, crate::language::vocab::EXPIRES).and_then(|s| match &s.value {
                Some(ast::SettingValue::Number(n, _)) => n.parse().ok(),
                Some(ast::SettingValue::Text(t)) => {
                    t.as_literal().and_then(|text| crate::language::vocab::parse_duration(&text).ok())
                }
                None => None,
            }),
            // What travels to the message; the gates above are serve's.
            settings: settings(&c.settings)
                .into_iter()
                .filter(|s| {
                    !matches!(
                        s.name.as_str(),
                        "max_clicks" | crate::language::vocab::COOLDOWN | crate::language::vocab::EXPIRES
                    )
                })
                .collect(),
            choices: choice_steps(&c.choices),
        })
        .collect();
    let layout = if r.is_layout() { layout_steps(&r.items, &mut (0, 0)) } else { Vec::new() };
    let files =
        r.files().map(|f| FileStep { from: FileFrom::of(&f.source), settings: settings(&f.settings) }).collect();
    let poll = r.poll().map(|p| {
        let answers = p.answers.iter().map(|a| (template(&a.text), settings(&a.settings))).collect();
        Box::new(PollStep { settings: settings(&p.settings), answers })
    });
    Step::Reply {
        text: if r.is_layout() { None } else { r.text().map(template) },
        layout,
        poll,
        files,
        translations: r.translations().map(|t| (t.locale.name.to_string(), template(&t.value))).collect(),
        ephemeral: r.ephemeral(),
        embeds,
        components,
        update: r.update,
        span: r.span,
    }
}

/// A layout message's parts, its components and files by their place
/// among the reply's (`next`: the places of the next of each, in the order
/// `Reply::components` and `Reply::files` walk them).
fn layout_steps(items: &[ast::ReplyItem], next: &mut (usize, usize)) -> Vec<LayoutStep> {
    let mut out = Vec::new();
    for item in items {
        match item {
            ast::ReplyItem::Text { value, .. } => out.push(LayoutStep::Text { text: template(value) }),
            ast::ReplyItem::Component(_) => {
                out.push(LayoutStep::Component { index: next.0 });
                next.0 += 1;
            }
            ast::ReplyItem::File(_) => {
                out.push(LayoutStep::File { index: next.1 });
                next.1 += 1;
            }
            ast::ReplyItem::Layout(l) => out.push(layout_step(l, next)),
            // (Refused beside a layout by the checker: B433.)
            ast::ReplyItem::Embed(_)
            | ast::ReplyItem::Translation(_)
            | ast::ReplyItem::Ephemeral(_)
            | ast::ReplyItem::Poll(_) => {}
        }
    }
    out
}

fn layout_step(l: &ast::Layout, next: &mut (usize, usize)) -> LayoutStep {
    let media = |m: &ast::Media| MediaStep { url: template(&m.url), settings: settings(&m.settings) };
    match l.kind {
        ast::LayoutKind::Container => {
            LayoutStep::Container { settings: settings(&l.settings), parts: layout_steps(&l.items, next) }
        }
        ast::LayoutKind::Separator => LayoutStep::Separator { settings: settings(&l.settings) },
        ast::LayoutKind::Gallery => LayoutStep::Gallery { media: l.media.iter().map(media).collect() },
        ast::LayoutKind::Section => {
            let (mut texts, mut button) = (Vec::new(), None);
            for item in &l.items {
                match item {
                    ast::ReplyItem::Text { value, .. } => texts.push(template(value)),
                    ast::ReplyItem::Component(_) => {
                        button = Some(next.0);
                        next.0 += 1;
                    }
                    _ => {}
                }
            }
            LayoutStep::Section { texts, thumbnail: l.media.first().map(media), button }
        }
    }
}

/// A form: its settings, inputs (each of its kind, with its choices) and
/// texts (each with the place among the inputs it stands before).
fn form_step(f: &ast::Form) -> FormStep {
    FormStep {
        handler: f.handler.name.to_string(),
        key: String::new(),
        guards: Vec::new(),
        settings: settings(&f.settings),
        inputs: f
            .inputs
            .iter()
            .map(|i| InputStep {
                name: i.name.name.to_string(),
                kind: i.kind(),
                settings: settings(&i.settings),
                choices: choice_steps(&i.choices),
            })
            .collect(),
        texts: f
            .texts
            .iter()
            .filter_map(|t| match t {
                ast::ReplyItem::Text { value, span } => {
                    Some((f.inputs.iter().filter(|i| i.span.start < span.start).count(), template(value)))
                }
                _ => None,
            })
            .collect(),
        span: f.span,
    }
}

/// A menu's (or a form input's) choices, each with its loop when it has one.
fn choice_steps(choices: &[ast::MenuChoice]) -> Vec<ChoiceStep> {
    choices
        .iter()
        .map(|choice| ChoiceStep {
            label: template(&choice.label),
            value: template(&choice.value),
            settings: settings(&choice.settings),
            each: choice.each.as_ref().map(|l| Box::new(loop_step(l, Vec::new()))),
        })
        .collect()
}

/// Settings as the plan keeps them (a checked file's numbers are whole
/// and in range).
fn settings(list: &[ast::Setting]) -> Vec<SettingStep> {
    list.iter()
        .map(|s| SettingStep {
            name: s.key.name.to_string(),
            text: match &s.value {
                Some(ast::SettingValue::Text(t)) => Some(template(t)),
                _ => None,
            },
            number: match &s.value {
                Some(ast::SettingValue::Number(n, _)) => n.parse().ok(),
                _ => None,
            },
        })
        .collect()
}

fn if_step(node: &ast::IfNode) -> Lowered<Step> {
    let branches = node
        .links
        .iter()
        .map(|link| {
            let condition = Condition {
                left: val(&link.condition.left),
                test: link.condition.test.as_ref().map(|(op, _, right)| ((*op).into(), val(right))),
                span: link.condition.span,
            };
            Ok((condition, steps(&link.then.body)?))
        })
        .collect::<Lowered<_>>()?;
    let otherwise = match &node.otherwise {
        Some(b) => steps(&b.body)?,
        None => Vec::new(),
    };
    Ok(Step::If { branches, otherwise, span: node.span })
}

/// A checked block has a known method and a URL; anything else is a bug in
/// the checker, said as one rather than sent as a plausible request.
fn request(block: &ast::ApiBlock) -> Lowered<Request> {
    let pairs = |ps: &[ast::Pair]| ps.iter().map(|p| (p.key.name.to_string(), template(&p.value))).collect();
    let bug = |what: &str| {
        Box::new(
            Diagnostic::new(Code::InvalidRequest, format!("block `{}` {what} after checking", block.name.name))
                .label(block.name.span, "this block")
                .help("this is a bug in blkc's checker; please report it with the file"),
        )
    };
    Ok(Request {
        block: block.name.name.to_string(),
        method: block.method().and_then(|m| Method::parse(&m.name)).ok_or_else(|| bug("has no known method"))?,
        url: block.url().map(template).ok_or_else(|| bug("has no URL"))?,
        params: pairs(block.params()),
        headers: pairs(block.headers()),
        body: block.body().map(|(b, _)| body(b)),
        auth: block.fields.iter().find_map(|f| match &f.kind {
            FieldKind::Auth(a) => auth(a),
            _ => None,
        }),
        timeout_ms: block.fields.iter().find_map(|f| match &f.kind {
            FieldKind::Timeout(t) => crate::language::vocab::parse_millis(&t.value).ok(),
            _ => None,
        }),
        retry: block.fields.iter().find_map(|f| match &f.kind {
            FieldKind::Retry(r) => Some(retry(r, block)),
            _ => None,
        }),
        failed: match block.failed() {
            Some(f) => Some(Failed { on: statuses(&f.on), steps: steps(&f.branch.body)? }),
            None => None,
        },
        sample: block.sample().map(|s| s.value.to_string()),
        more_samples: block
            .fields
            .iter()
            .find_map(|f| match &f.kind {
                FieldKind::Sample(samples) => Some(samples.iter().skip(1).map(|s| s.value.to_string()).collect()),
                _ => None,
            })
            .unwrap_or_default(),
        pages: block.pages().map(|p| pages(p, &block.name.name)),
        cache: block.fields.iter().find_map(|f| match &f.kind {
            FieldKind::Cache(c) => match &**c {
                ast::Cache::For(t) => crate::language::vocab::parse_millis(&t.value).ok().map(|ms| Cache::For { ms }),
                ast::Cache::From(k) => Some(Cache::From { path: block_path(k, &block.name.name) }),
            },
            _ => None,
        }),
        allow_bot_token: block.allows_bot_token(),
        allow_private_network: block.allows("private_network"),
        keep_bytes: false,
        span: block.span,
    })
}

fn body(b: &ast::Body) -> Body {
    match b {
        ast::Body::Json(v) => Body::Json { value: val(v) },
        ast::Body::Form(entries) => {
            Body::Form { fields: entries.iter().map(|e| (e.key.name.to_string(), val(&e.value))).collect() }
        }
        ast::Body::Text { text, media_type } => Body::Text {
            text: template(text),
            media_type: media_type.as_ref().map_or("text/plain; charset=utf-8".to_string(), |t| t.value.to_string()),
        },
        ast::Body::Multipart(parts) => Body::Multipart {
            parts: parts
                .iter()
                .map(|p| BodyPart {
                    name: p.key.name.to_string(),
                    value: match &p.value {
                        ast::PartValue::Field(t) => PartValue::Field { text: template(t) },
                        ast::PartValue::File(file) => {
                            let setting = |word: &str| {
                                file.settings.iter().find(|(w, _)| w.name == word).map(|(_, t)| template(t))
                            };
                            PartValue::File {
                                from: FileFrom::of(&file.source),
                                media_type: setting("type"),
                                filename: setting("filename"),
                            }
                        }
                    },
                })
                .collect(),
        },
    }
}

/// A checked `pages`: its paths are `response…` or `headers.NAME` (the
/// checker refuses others), with `items` and a next one.
fn pages(p: &ast::Pages, block: &str) -> Pages {
    let path = |k: &ast::Key| block_path(k, block);
    let mut out = Pages {
        items: Path {
            block: block.to_string(),
            element: false,
            status: false,
            headers: false,
            items: false,
            keys: Vec::new(),
            text: String::new(),
            span: p.span,
        },
        next: Next::Link,
        max: DEFAULT_PAGES,
        limit: None,
    };
    for s in &p.settings {
        match s {
            ast::PageSetting::Items(_, k) => out.items = path(k),
            ast::PageSetting::Cursor(_, k, param) => {
                out.next = Next::Cursor { path: path(k), param: param.name.to_string() }
            }
            ast::PageSetting::Next(_, k) => out.next = Next::Url { path: path(k) },
            ast::PageSetting::NextLink(_) => out.next = Next::Link,
            ast::PageSetting::Max(_, n) => out.max = n.value.parse().unwrap_or(DEFAULT_PAGES),
            ast::PageSetting::Limit(_, n) => out.limit = n.value.parse().ok(),
        }
    }
    out
}

/// A path a block's own setting writes as a key (`response.meta.next`,
/// `headers.x-next`), into the block's own response.
fn block_path(k: &ast::Key, block: &str) -> Path {
    let text = k.name.as_str();
    let mut segments = crate::base::path::segments(text);
    let root = segments.next().map(|(_, r)| r).unwrap_or_default();
    let keys = segments
        .map(|(at, name)| Key {
            name: name.to_string(),
            index: crate::base::path::index(name),
            span: Span::new(k.span.start as usize + at, k.span.start as usize + at + name.len()),
        })
        .collect();
    Path {
        block: block.to_string(),
        element: false,
        status: false,
        headers: crate::base::path::root(root) == Some(crate::base::path::Root::Headers),
        items: false,
        keys,
        text: format!("api_{block}[{text}]"),
        span: k.span,
    }
}

fn auth(a: &ast::Auth) -> Option<Auth> {
    match (a.scheme.name.as_str(), a.values.as_slice()) {
        ("basic", [user, password]) => Some(Auth::Basic { user: template(user), password: template(password) }),
        ("bearer", [token]) => Some(Auth::Bearer { token: template(token) }),
        _ => None,
    }
}

fn statuses(on: &[ast::Text]) -> Vec<(u16, u16)> {
    on.iter().filter_map(|s| crate::language::vocab::parse_status(&s.value)).collect()
}

fn retry(r: &ast::Retry, block: &ast::ApiBlock) -> Retry {
    let method = block.method().and_then(|m| Method::parse(&m.name));
    Retry {
        times: r.times.value.parse().unwrap_or(0),
        on: if r.on.is_empty() { RETRIED.to_vec() } else { statuses(&r.on) },
        backoff_ms: r
            .backoff
            .as_ref()
            .and_then(|b| crate::language::vocab::parse_millis(&b.value).ok())
            .unwrap_or(DEFAULT_BACKOFF_MS),
        repeatable: method.is_some_and(|m| m.idempotent()) || block.allows("retry"),
    }
}

/// Marks the requests whose response bytes a multipart body or a message
/// of the tree sends as a file (`file api_x`): only theirs are kept.
fn with_kept_bytes(mut steps: Vec<Step>, t: &ast::Tree) -> Vec<Step> {
    let mut sent = Vec::new();
    fn sent_by_messages(steps: &[Step], sent: &mut Vec<String>) {
        for step in steps {
            match step {
                Step::Reply { files, .. } => sent.extend(files.iter().filter_map(|f| match &f.from {
                    FileFrom::Block(b) => Some(b.clone()),
                    _ => None,
                })),
                Step::Action(a) => sent_by_messages(&a.message, sent),
                Step::Request(r) => {
                    if let Some(f) = &r.failed {
                        sent_by_messages(&f.steps, sent);
                    }
                }
                Step::If { branches, otherwise, .. } => {
                    branches.iter().for_each(|(_, then)| sent_by_messages(then, sent));
                    sent_by_messages(otherwise, sent);
                }
                Step::Loop(l) => sent_by_messages(&l.steps, sent),
                Step::With { steps, .. } | Step::Together { steps, .. } => sent_by_messages(steps, sent),
                _ => {}
            }
        }
    }
    sent_by_messages(&steps, &mut sent);
    ast::visit::each_block(&t.body, &mut |b| {
        if let Some((ast::Body::Multipart(parts), _)) = b.body() {
            for p in parts {
                if let ast::PartValue::File(ast::FilePart { source: ast::FileSource::Name(n), .. }) = &p.value {
                    sent.push(n.name.strip_prefix("api_").unwrap_or(&n.name).to_string());
                }
            }
        }
    });
    fn mark(steps: &mut [Step], sent: &[String]) {
        for step in steps {
            match step {
                Step::Request(r) => {
                    r.keep_bytes = sent.contains(&r.block);
                    if let Some(f) = &mut r.failed {
                        mark(&mut f.steps, sent);
                    }
                }
                Step::If { branches, otherwise, .. } => {
                    branches.iter_mut().for_each(|(_, then)| mark(then, sent));
                    mark(otherwise, sent);
                }
                Step::Loop(l) => mark(&mut l.steps, sent),
                Step::With { steps, .. } | Step::Together { steps, .. } => mark(steps, sent),
                _ => {}
            }
        }
    }
    if !sent.is_empty() {
        mark(&mut steps, &sent);
    }
    steps
}

/// The first wait between two attempts when `retry` gives no `backoff`.
pub const DEFAULT_BACKOFF_MS: u64 = 500;

/// A `var`'s default as JSON ([`Value::fixed`]).
fn fixed(v: &Value) -> serde_json::Value {
    v.fixed()
}

fn object(entries: &[ast::Entry]) -> Val {
    Val::Object(entries.iter().map(|e| (e.key.name.to_string(), val(&e.value))).collect())
}

fn val(v: &Value) -> Val {
    match v {
        Value::Str(t) => Val::Str(template(t)),
        Value::Number(n, _) => Val::Json(serde_json::from_str(n).unwrap_or(serde_json::Value::Null)),
        Value::Bool(b, _) => Val::Json(serde_json::Value::Bool(*b)),
        Value::Null(_) => Val::Json(serde_json::Value::Null),
        Value::Ref(r) => Val::Ref(path(r)),
        Value::Element(e) => Val::Ref(element_path(e)),
        Value::Var(name) => Val::Var { name: name.name.to_string(), span: name.span },
        Value::Object(entries, _) => object(entries),
        Value::Array(items, _) => Val::Array(items.iter().map(val).collect()),
        Value::Arith(e) => Val::Arith(Box::new(calc(e))),
    }
}

fn calc(e: &ast::Expr) -> Calc {
    match e {
        ast::Expr::Value(v) => Calc::Value { value: val(v), span: v.span() },
        ast::Expr::Var(name) => Calc::Var { name: name.name.to_string(), span: name.span },
        ast::Expr::Binary(b) => {
            Calc::Op { op: b.op, left: Box::new(calc(&b.left)), right: Box::new(calc(&b.right)), span: b.op_span }
        }
        ast::Expr::Group(inner, _) => calc(inner),
    }
}

pub fn template(t: &ast::Template) -> Template {
    let parts = t
        .parts
        .iter()
        .map(|p| match p {
            Part::Lit(s, _) => Seg::Text(s.to_string()),
            Part::Secret(id) => Seg::Secret { name: id.name.to_string() },
            Part::Var(var) => seg(var),
        })
        .collect();
    Template { parts, span: t.span }
}

fn seg(var: &Var) -> Seg {
    match var {
        Var::BotToken(_) => Seg::BotToken,
        Var::Named(id) => Seg::Var { name: id.name.to_string(), span: id.span },
        Var::Ref(r) => Seg::Ref(path(r)),
        Var::Element(e) => Seg::Ref(element_path(e)),
        Var::Helped(h) => Seg::Helped { base: Box::new(seg(&h.base)), helpers: h.helpers.clone(), span: h.span },
        Var::Draw(d) => Seg::Draw { draw: d.draw.clone(), span: d.span },
    }
}

fn keys(segments: &[ast::Segment]) -> Vec<Key> {
    segments
        .iter()
        .map(|s| Key { name: s.text.to_string(), index: crate::base::path::index(&s.text), span: s.span })
        .collect()
}

/// `item[a.b]`: a path into loop `item`'s element.
fn element_path(e: &ast::ElementRef) -> Path {
    Path {
        block: e.item.name.to_string(),
        element: true,
        status: false,
        headers: false,
        items: false,
        keys: keys(&e.segments),
        text: format!("{}[{}]", e.item.name, e.path_text()),
        span: e.span,
    }
}

fn path(r: &ast::Reference) -> Path {
    Path {
        block: r.block.name.to_string(),
        element: false,
        status: r.root() == Some(crate::base::path::Root::Status),
        headers: r.root() == Some(crate::base::path::Root::Headers),
        items: r.root() == Some(crate::base::path::Root::Items),
        keys: keys(&r.segments),
        text: format!("api_{}[{}]", r.block.name, r.path_text()),
        span: r.span,
    }
}
