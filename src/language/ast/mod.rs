//! The typed syntax tree. Every node carries the byte span it came from.

pub(crate) mod visit;

use crate::base::source::Span;

/// Text in the AST: names, number text, keys and literals, up to 15 bytes
/// inline in a 16-byte handle (longer ones shared, cloned without copying).
/// The small handle keeps a one-line node (`save v = 1`) at 64 bytes, which
/// is most of what a file of a million of them costs. One crate for every
/// inline string: `ecow`.
pub type Str = ecow::EcoString;

/// Names and number text (the same type as [`Str`]).
pub type Name = ecow::EcoString;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct File {
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Tree(Tree),
    Var(VarDecl),
    Platform(Platform),
    /// `include "commands.blk"`: another file of the bot, read with it.
    Include(Include),
    /// `failed { … }` at the top of the file: what every command, event
    /// and handler without its own runs when a step fails.
    Failed(Branch, Span),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TreeKind {
    Command,
    Event,
    /// Runs when a button, a select menu or a form naming it is used.
    Handler,
    /// An option's `autocomplete { … }`: runs as the user types the option,
    /// and offers choices.
    Autocomplete,
}

impl TreeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TreeKind::Command => "command",
            TreeKind::Event => "event",
            TreeKind::Handler => "handler",
            TreeKind::Autocomplete => "autocomplete",
        }
    }
}

/// A `command`, `event` or `handler` tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Tree {
    pub kind: TreeKind,
    pub name: Ident,
    pub description: Option<Text>,
    /// `cooldown "1d" per user` in the head: a setting, read as a
    /// button's is (`vocab::TREE_SETTINGS`).
    pub cooldown: Option<Setting>,
    /// A timed event's `every`/`at`/`cron … channel …`.
    pub schedule: Option<Box<Schedule>>,
    /// A webhook event's `webhook "/path" …`.
    pub webhook: Option<Box<Webhook>>,
    /// A context-menu command's `for user` or `for message` (its name is
    /// the string before it).
    pub menu: Option<Box<Menu>>,
    pub body: Vec<Node>,
    /// Whether its body holds a `subcommand` or a `group`, and an option
    /// with `autocomplete` (found once, by [`Tree::name_parts`]: a body may
    /// be a million nodes long, and the trees that run are asked for often).
    pub parts: Parts,
    pub span: Span,
}

/// What a tree's body holds besides its own nodes: see [`Tree::parts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Parts {
    pub subcommands: bool,
    pub autocompletes: bool,
    /// Whether its body holds an action, anywhere (set as it is read: the
    /// rules on actions and the permissions skip a tree without one).
    pub actions: bool,
}

/// `for user`, `for message`: the menu a context-menu command is in (the
/// word is the checker's to read).
#[derive(Debug, Clone, PartialEq)]
pub struct Menu {
    pub target: Ident,
    pub span: Span,
}

impl Tree {
    /// A webhook event's received request, read as a block (`webhook`).
    pub fn received(&self) -> Option<&ApiBlock> {
        self.webhook.as_ref().map(|w| &w.block)
    }

    /// The menu a context-menu command is in: `user` or `message` (as
    /// written; the checker refuses any other word).
    pub fn menu_target(&self) -> Option<&str> {
        self.menu.as_ref().map(|m| m.target.name.as_str())
    }
}

/// `at "09:00" in "Europe/Paris" channel "<NEWS_CHANNEL>"`: when a timed
/// event runs (read by src/language/schedule.rs) and where its replies go.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    pub written: crate::language::schedule::Written,
    /// `every`, `at` or `cron`.
    pub keyword: Span,
    pub when: Text,
    /// `in "Europe/Paris"`.
    pub zone: Option<Text>,
    /// The channel's id: a template (a secret slot or a variable can hold it).
    pub channel: Template,
    pub span: Span,
}

/// `webhook "/hooks/github" signed github secret "<GITHUB_SECRET>" sample
/// "push.json"`: an event an HTTP POST to serve's listener triggers, at
/// `path`; its settings as written (the checker reads them:
/// `language::webhook`).
#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    pub keyword: Span,
    pub path: Text,
    pub words: Vec<(Ident, WebhookValue)>,
    /// What the tree reads the request it received as: a block named
    /// `webhook` that has run before the tree's first node, its response
    /// the request's body and headers, its `sample` the setting's.
    pub block: ApiBlock,
    pub span: Span,
}

/// A webhook setting's value: a word (`github`) or a string.
#[derive(Debug, Clone, PartialEq)]
pub enum WebhookValue {
    Word(Ident),
    Text(Text),
}

impl WebhookValue {
    pub fn text(&self) -> &str {
        match self {
            WebhookValue::Word(w) => &w.name,
            WebhookValue::Text(t) => &t.value,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            WebhookValue::Word(w) => w.span,
            WebhookValue::Text(t) => t.span,
        }
    }
}

impl Webhook {
    /// The name the tree reads the request by: `{api_webhook[response.…]}`.
    pub const BLOCK: &'static str = "webhook";

    /// The value of setting `word`, the first written.
    pub fn setting(&self, word: &str) -> Option<&WebhookValue> {
        self.words.iter().find(|(w, _)| w.name == word).map(|(_, v)| v)
    }
}

/// `var name = "default"`: a custom variable that outlives a run. The
/// default is a fixed value (its strings are literal text, it holds no
/// reference): a string, a number, `true`, `false`, `null`, an array or
/// an object.
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl {
    pub name: Ident,
    /// `per user` and the like: the scope's word (the checker reads it).
    pub scope: Option<Ident>,
    pub default: Option<Value>,
    /// `expires "1d"`: how long a saved value lasts.
    pub expires: Option<Text>,
    pub span: Span,
}

/// `platform "https://discord.com/api"`: the chat platform's API base URL.
#[derive(Debug, Clone, PartialEq)]
pub struct Platform {
    pub url: Text,
    pub span: Span,
}

/// `include "PATH"`: a file of the bot beside this one (its path relative
/// to this file's folder), whose items are the bot's as if written here.
#[derive(Debug, Clone, PartialEq)]
pub struct Include {
    pub path: Text,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: Name,
    pub span: Span,
}

/// A string literal without variables (descriptions, paths, URLs of `platform`).
#[derive(Debug, Clone, PartialEq)]
pub struct Text {
    pub value: Str,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Option(Box<OptionDecl>),
    Api(Box<ApiBlock>),
    Reply(Reply),
    /// `form handler { … }`: shows a form as the answer.
    Form(Box<Form>),
    Save(Save),
    /// `save settings[mode] = …`: a save into a field or an element of a
    /// custom variable (boxed: a plain save keeps the node small).
    SaveField(Box<SaveField>),
    If(Box<IfNode>),
    /// `for item in … { … }`: its branch once per element of an array.
    For(Box<ForNode>),
    /// `text "…"`: a piece of the enclosing loop's `join`.
    Text(Box<Template>, Span),
    /// `stop`: ends the enclosing loop.
    Stop(Span),
    /// `permissions …`, `contexts …`, `installs …`, `nsfw`, `locale …`:
    /// what a command registers besides its options.
    Register(Box<Register>),
    /// `require roles|channels|permissions …`: who may run the tree, where.
    Guard(Box<Guard>),
    /// `subcommand show "…" { … }` or `group role "…" { … }`.
    Sub(Box<Sub>),
    /// `choice "Shown" "value"`: a choice an `autocomplete` tree offers.
    Choice(Box<ChoiceNode>),
    /// `failed { … }` at the top of a tree: what runs when a step fails.
    Failed(Box<Branch>, Span),
    /// `kick "{option_member}" reason "…"`, `send to "<LOG>" { … }`: an
    /// action on the platform (docs/language.md, "Actions").
    Action(Box<Action>),
    /// `with user option_to { … }`: another user's (server's, channel's)
    /// scoped values.
    With(Box<WithNode>),
    /// `together { … }`: saves made in one transaction.
    Together(Box<Branch>, Span),
    /// `after "10m" { … }`, `at "{when}" { … }`: steps that run later.
    Later(Box<LaterNode>),
    /// `cancel "KEY"`: takes back the work waiting under a key.
    Cancel(Box<CancelNode>),
    /// `await message "30s" as guess { … } timeout { … }`: the member's
    /// next message, waited for.
    Await(Box<AwaitNode>),
}

/// `await message "30s" as guess { … } timeout { … }`: kept in the store
/// as work that waits, owned by the run's user and keyed by its channel;
/// the user's next message there runs `body` in a run of its own with the
/// message's text as `{guess}`, or, when none came in time, `timeout`.
#[derive(Debug, Clone, PartialEq)]
pub struct AwaitNode {
    /// How long it waits: a duration.
    pub wait: Template,
    /// The answer's text's name in `body`.
    pub name: Ident,
    pub body: Branch,
    pub timeout: Option<Branch>,
    /// `await message "30s"`: its keywords and value.
    pub head: Span,
    pub span: Span,
}

/// `after "10m" key "…" note "…" per server { … }` (or `at "{when}"`):
/// its steps are kept in the store and run when due, in a run of their own
/// with the variables of the run that kept them.
#[derive(Debug, Clone, PartialEq)]
pub struct LaterNode {
    /// `at` a time, not `after` a duration.
    pub at: bool,
    /// The duration or the time.
    pub when: Template,
    pub key: Option<Template>,
    pub note: Option<Template>,
    /// `per user` (the default) or `per server`: whose it is.
    pub scope: Option<Ident>,
    pub body: Branch,
    /// `after "10m"`: its keyword and value.
    pub head: Span,
    pub span: Span,
}

impl AwaitNode {
    /// Its first block, then its `timeout`'s.
    pub fn bodies(&self) -> impl Iterator<Item = &Branch> {
        std::iter::once(&self.body).chain(&self.timeout)
    }
}

/// `cancel "KEY" [per server]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CancelNode {
    pub key: Template,
    pub scope: Option<Ident>,
    pub span: Span,
}

/// `with user option_to { … }`: inside, the variables kept `per user` read
/// and save the values of the user `whose` names (`with server …`, `with
/// channel …`: of that server, channel).
#[derive(Debug, Clone, PartialEq)]
pub struct WithNode {
    /// `user`, `server` or `channel` (the checker reads it).
    pub scope: Ident,
    /// The variable whose value names them: an id or a mention.
    pub whose: Ident,
    pub body: Branch,
    pub span: Span,
}

/// A platform action as written: its verb, the kind of thing it acts on
/// (`give role`, `delete message`), its subject, its words and their
/// values, and the message it sends. Which words a verb takes is the
/// checker's to read (`discord::actions`).
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub verb: Ident,
    pub kind: Option<Ident>,
    pub subject: Option<ActionValue>,
    pub args: Vec<ActionArg>,
    /// The message `send`, `dm`, `edit` or a forum post sends.
    pub message: Option<Reply>,
    pub span: Span,
}

/// A value an action is given: a template, a number, or the name of an
/// earlier action (`edit log { … }`).
#[derive(Debug, Clone, PartialEq)]
pub enum ActionValue {
    Text(Template),
    Number(Name, Span),
    Name(Ident),
}

impl ActionValue {
    pub fn span(&self) -> Span {
        match self {
            ActionValue::Text(t) => t.span,
            ActionValue::Number(_, span) => *span,
            ActionValue::Name(n) => n.span,
        }
    }

    pub fn template(&self) -> Option<&Template> {
        match self {
            ActionValue::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// `reason "…"`, `to "…"`, `visible "a", "b"`, `as log`, `private`: a word
/// of an action and its values (none for a flag).
#[derive(Debug, Clone, PartialEq)]
pub struct ActionArg {
    pub word: Ident,
    pub values: Vec<ActionValue>,
    pub span: Span,
}

impl Action {
    /// The argument of word `word`, if written.
    pub fn arg(&self, word: &str) -> Option<&ActionArg> {
        self.args.iter().find(|a| a.word.name == word)
    }

    /// `as NAME`: the name later nodes read its answer by.
    pub fn name(&self) -> Option<&Ident> {
        self.arg("as").and_then(|a| match a.values.first() {
            Some(ActionValue::Name(n)) => Some(n),
            _ => None,
        })
    }

    /// Every template of the action, in the order written.
    pub fn templates(&self) -> impl Iterator<Item = &Template> {
        let values = self.subject.iter().chain(self.args.iter().flat_map(|a| a.values.iter()));
        values.filter_map(ActionValue::template).chain(self.message.iter().flat_map(|m| m.templates()))
    }
}

/// A subcommand, or a group of them: a tree of its own, named by its
/// command's name and its own (`settings role add`), as the platform sends
/// it; `word` is its own name as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Sub {
    pub group: bool,
    pub keyword: Span,
    pub word: Ident,
    pub tree: Tree,
}

impl Sub {
    pub fn keyword(&self) -> &'static str {
        if self.group {
            "group"
        } else {
            "subcommand"
        }
    }
}

/// `choice "{city[name]}" "{city[id]}"`: a choice offered, its name shown
/// and its value given to the command.
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceNode {
    pub name: Template,
    pub value: Template,
    pub span: Span,
}

/// An option's `autocomplete { … }`: its tree (kind
/// [`TreeKind::Autocomplete`], named by its command's name and the
/// option's, `weather city`).
#[derive(Debug, Clone, PartialEq)]
pub struct Autocomplete {
    pub keyword: Span,
    pub tree: Tree,
}

/// `require roles "<MOD_ROLE>"`, `require permissions manage_messages`.
#[derive(Debug, Clone, PartialEq)]
pub struct Guard {
    /// `roles`, `channels` or `permissions`, as written.
    pub what: Ident,
    pub values: Vec<GuardValue>,
    pub span: Span,
}

/// A guard's value: a role's or a channel's id (a string, which may be a
/// secret's slot), or a permission's word.
#[derive(Debug, Clone, PartialEq)]
pub enum GuardValue {
    Text(Template),
    Word(Ident),
}

impl GuardValue {
    pub fn span(&self) -> Span {
        match self {
            GuardValue::Text(t) => t.span,
            GuardValue::Word(w) => w.span,
        }
    }
}

impl Node {
    /// The node lists inside it that run where it stands (an `if`'s
    /// branches, a loop's body, a `with`'s, a `together`'s, a `failed`'s):
    /// not an `after`'s body, which runs later, in a run of its own.
    pub fn branches(&self) -> Vec<&[Node]> {
        match self {
            Node::If(i) => i
                .links
                .iter()
                .map(|l| l.then.body.as_slice())
                .chain(i.otherwise.iter().map(|o| o.body.as_slice()))
                .collect(),
            Node::For(f) => vec![&f.body.body],
            Node::With(w) => vec![&w.body.body],
            Node::Together(b, _) | Node::Failed(b, _) => vec![&b.body],
            _ => Vec::new(),
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Node::Option(n) => n.span,
            Node::Register(n) => n.span(),
            Node::Guard(n) => n.span,
            Node::Api(n) => n.span,
            Node::Reply(n) => n.span,
            Node::Form(n) => n.span,
            Node::Save(n) => n.span(),
            Node::SaveField(n) => n.save.span(),
            Node::If(n) => n.span,
            Node::For(n) => n.span,
            Node::Sub(n) => n.tree.span,
            Node::Choice(n) => n.span,
            Node::Action(n) => n.span,
            Node::With(w) => w.span,
            Node::Await(a) => a.span,
            Node::Later(l) => l.span,
            Node::Cancel(c) => c.span,
            Node::Text(_, span) | Node::Stop(span) | Node::Failed(_, span) | Node::Together(_, span) => *span,
        }
    }
}

/// `for item in api_x[response.items] limit 5 join ", " into top { … }`.
#[derive(Debug, Clone, PartialEq)]
pub struct ForNode {
    /// The element's name: `{item}`, `{item[path]}`, `{item_number}`.
    pub item: Ident,
    pub source: LoopSource,
    /// `by entry[points] desc`: the order the elements are taken in.
    pub order: Option<LoopOrder>,
    /// `limit N`: a number, a string (a template) or a reference.
    pub limit: Option<Value>,
    /// `join "SEP" into NAME`: the `text` pieces of its runs, joined.
    pub join: Option<Join>,
    pub body: Branch,
    pub span: Span,
}

/// `by KEY [desc]`: the key is a path into the loop's own element
/// (`entry[points]`), or the element itself (`entry`).
#[derive(Debug, Clone, PartialEq)]
pub struct LoopOrder {
    pub key: LoopSource,
    pub descending: bool,
    pub span: Span,
}

/// What a loop runs over.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopSource {
    /// `api_x[response.items]`
    Ref(Box<Reference>),
    /// `outer[tags]`: an array inside an enclosing loop's element.
    Element(Box<ElementRef>),
    /// `outer`: an enclosing loop's element, itself an array.
    Name(Ident),
}

impl LoopSource {
    pub fn span(&self) -> Span {
        match self {
            LoopSource::Ref(r) => r.span,
            LoopSource::Element(e) => e.span,
            LoopSource::Name(n) => n.span,
        }
    }
}

/// `join ", " into top`.
#[derive(Debug, Clone, PartialEq)]
pub struct Join {
    pub separator: Template,
    pub into: Ident,
    pub span: Span,
}

/// `item[name.first]`: a path into a loop's element (no `response` root:
/// the element is the root).
#[derive(Debug, Clone, PartialEq)]
pub struct ElementRef {
    pub item: Ident,
    pub segments: Vec<Segment>,
    pub span: Span,
}

impl ElementRef {
    /// The path as written: `name.first`.
    pub fn path_text(&self) -> String {
        self.segments.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join(".")
    }
}

/// `option city "City to look up" string required choices { … }`: makes
/// `{option_city}` in a command.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionDecl {
    pub name: Ident,
    pub description: Option<Text>,
    /// The type as written (the checker reads it; `string` when absent).
    pub kind: Option<Ident>,
    /// The span of `required`, when written.
    pub required: Option<Span>,
    /// `min N`, `max N`, as written (a duplicate is the checker's to find).
    pub bounds: Vec<OptionBound>,
    /// `in text, forum`: the kinds of channel a `channel` option offers.
    pub channels: Option<Words>,
    /// `types "image .pdf"`: the kinds of file an `attachment` option
    /// takes, with the keyword's span.
    pub file_types: Option<(Span, Text)>,
    pub choices: Option<Choices>,
    /// `autocomplete { … }`: choices offered as the user types.
    pub autocomplete: Option<Box<Autocomplete>>,
    pub span: Span,
}

/// A keyword and its list of words: `in text, forum`, `permissions
/// ban_members, kick_members` (the checker reads the words).
#[derive(Debug, Clone, PartialEq)]
pub struct Words {
    pub keyword: Span,
    pub words: Vec<Ident>,
    pub span: Span,
}

/// What a command registers besides its options, a line each.
#[derive(Debug, Clone, PartialEq)]
pub enum Register {
    /// `permissions ban_members, kick_members`: who may use the command
    /// unless a server's settings say otherwise.
    Permissions(Words),
    /// `contexts server, bot_dm, private_channel`: where it can be used.
    Contexts(Words),
    /// `installs server, user`: the installations that offer it.
    Installs(Words),
    /// `nsfw`: only in age-restricted channels.
    Nsfw(Span),
    /// `locale fr "…" "…" { option "…" "…" }`.
    Locale(Locale),
}

impl Register {
    pub fn span(&self) -> Span {
        match self {
            Register::Permissions(w) | Register::Contexts(w) | Register::Installs(w) => w.span,
            Register::Nsfw(span) => *span,
            Register::Locale(l) => l.span,
        }
    }

    /// The line's keyword, as written.
    pub fn keyword(&self) -> &'static str {
        match self {
            Register::Permissions(_) => "permissions",
            Register::Contexts(_) => "contexts",
            Register::Installs(_) => "installs",
            Register::Nsfw(_) => "nsfw",
            Register::Locale(_) => "locale",
        }
    }
}

/// `locale fr "bannir" "Bannir un membre" { member "membre" "Qui bannir" }`:
/// a command's name and description in one language, and its options'.
#[derive(Debug, Clone, PartialEq)]
pub struct Locale {
    /// The platform's name of the language (`fr`, `pt-BR`).
    pub locale: Ident,
    pub name: Text,
    pub description: Option<Text>,
    pub options: Vec<LocaleOption>,
    /// `"Red" "Rouge"`: a choice's name (as written in its `choices`) and
    /// its name in this language.
    pub choices: Vec<(Text, Text)>,
    pub span: Span,
}

/// `member "membre" "Qui bannir"`: an option's name and description in the
/// enclosing `locale`'s language.
#[derive(Debug, Clone, PartialEq)]
pub struct LocaleOption {
    /// The option's own name.
    pub option: Ident,
    pub name: Text,
    pub description: Option<Text>,
    pub span: Span,
}

/// `min 13` or `max 120`: a value bound of a number option, a length bound
/// of a text option.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionBound {
    pub max: bool,
    /// The number as written.
    pub value: Name,
    pub span: Span,
}

impl OptionDecl {
    /// The option's type: `string` when none is written or the word is not
    /// a type (the checker has said so).
    pub fn option_type(&self) -> crate::discord::options::OptionType {
        self.kind
            .as_ref()
            .and_then(|k| crate::discord::options::OptionType::parse(&k.name))
            .unwrap_or(crate::discord::options::OptionType::String)
    }
}

/// `choices { "Shown" = value, … }` of an option.
#[derive(Debug, Clone, PartialEq)]
pub struct Choices {
    pub entries: Vec<Choice>,
    /// The span of the keyword.
    pub keyword: Span,
    pub span: Span,
}

/// One choice: the name shown to the user and the value the run gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub name: Key,
    pub value: ChoiceValue,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ChoiceValue {
    Text(Text),
    Number(Name, Span),
}

impl ChoiceValue {
    pub fn span(&self) -> Span {
        match self {
            ChoiceValue::Text(t) => t.span,
            ChoiceValue::Number(_, s) => *s,
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            ChoiceValue::Text(t) => &t.value,
            ChoiceValue::Number(n, _) => n,
        }
    }
}

/// `reply "text"`, or `reply { … }` with its parts in the order written;
/// `update` the same, as an edit of the message a component is on.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub items: Vec<ReplyItem>,
    /// Written as a block (the formatter keeps it one).
    pub block: bool,
    /// `update`, not `reply`.
    pub update: bool,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ReplyItem {
    /// `text "…"` (or the string of `reply "…"`); `span` from its keyword.
    Text {
        value: Template,
        span: Span,
    },
    /// `ephemeral`: only the user who triggered it sees it.
    Ephemeral(Span),
    Embed(Embed),
    /// `button [handler] { … }` or `select handler { … }` (boxed: a reply
    /// item stays as small as a text, which most of them are).
    Component(Box<Component>),
    /// `text fr "Bonjour !"`: the text in one language (boxed, as is rare).
    Translation(Box<Translation>),
    /// `container`, `section`, `separator` or `gallery`: a part of a
    /// layout message (boxed, as is rare).
    Layout(Box<Layout>),
    /// `poll { question "…" answer "…" … }` (boxed, as is rare).
    Poll(Box<Poll>),
    /// `file "report.pdf" { … }`: a file the message carries (boxed).
    File(Box<ReplyFile>),
}

/// A file a message carries: where its bytes come from, and its settings
/// (`filename`, `type`, `description`, `spoiler`).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplyFile {
    pub keyword: Span,
    pub source: FileSource,
    pub settings: Vec<Setting>,
    pub span: Span,
}

/// A poll: its settings (`question`, `duration`, `multiple`) and answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Poll {
    pub keyword: Span,
    pub settings: Vec<Setting>,
    pub answers: Vec<PollAnswer>,
    pub span: Span,
}

/// `answer "Coffee" { emoji "☕" }`.
#[derive(Debug, Clone, PartialEq)]
pub struct PollAnswer {
    pub text: Template,
    pub settings: Vec<Setting>,
    pub span: Span,
}

impl Poll {
    pub fn templates(&self) -> Vec<&Template> {
        let answers = self.answers.iter().flat_map(|a| std::iter::once(&a.text).chain(setting_templates(&a.settings)));
        setting_templates(&self.settings).chain(answers).collect()
    }
}

/// A part of a layout message: a container of parts, a section (text beside
/// a thumbnail or a button), a separator or a media gallery.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub kind: LayoutKind,
    /// The span of its keyword.
    pub keyword: Span,
    /// A container's and a section's parts, in order (a section's button is
    /// its accessory).
    pub items: Vec<ReplyItem>,
    /// A gallery's `media`, or a section's `thumbnail`.
    pub media: Vec<Media>,
    /// A container's `accent` and `spoiler`, a separator's `large` and
    /// `invisible`.
    pub settings: Vec<Setting>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LayoutKind {
    Container,
    Section,
    Separator,
    Gallery,
}

impl LayoutKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LayoutKind::Container => "container",
            LayoutKind::Section => "section",
            LayoutKind::Separator => "separator",
            LayoutKind::Gallery => "gallery",
        }
    }
}

/// `thumbnail "https://…" { description "…" spoiler }` or a gallery's
/// `media "https://…" { … }`: an image by its address.
#[derive(Debug, Clone, PartialEq)]
pub struct Media {
    /// The span of its keyword.
    pub keyword: Span,
    pub url: Template,
    pub settings: Vec<Setting>,
    pub span: Span,
}

impl Layout {
    /// Every template of the part and of its parts, in the order written.
    pub fn templates(&self) -> Vec<&Template> {
        let mut out: Vec<&Template> = setting_templates(&self.settings).collect();
        for m in &self.media {
            out.push(&m.url);
            out.extend(setting_templates(&m.settings));
        }
        for item in &self.items {
            out.extend(item.templates());
        }
        out
    }
}

/// `text LOCALE "…"`: a reply's text for users whose client is set to that
/// language (`fr` is any French, `pt-BR` only Brazilian Portuguese).
#[derive(Debug, Clone, PartialEq)]
pub struct Translation {
    pub locale: Ident,
    pub value: Template,
    /// From its keyword.
    pub span: Span,
}

/// A button or a select menu of a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    pub kind: ComponentKind,
    /// The span of its keyword.
    pub keyword: Span,
    /// The handler it runs (none: a link button).
    pub handler: Option<Ident>,
    pub settings: Vec<Setting>,
    /// A select menu's `choice "Label" "value" { … }`s.
    pub choices: Vec<MenuChoice>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComponentKind {
    Button,
    Select,
}

impl ComponentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ComponentKind::Button => "button",
            ComponentKind::Select => "select",
        }
    }
}

/// A setting of a component, a choice, a form or an input: a word and at
/// most one value (`label "Yes"`, `max 3`, `disabled`).
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub key: Ident,
    pub value: Option<SettingValue>,
    /// `per server` after a cooldown: the scope's word (the checker reads it).
    pub scope: Option<Ident>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SettingValue {
    Text(Template),
    Number(Name, Span),
}

impl SettingValue {
    pub fn span(&self) -> Span {
        match self {
            SettingValue::Text(t) => t.span,
            SettingValue::Number(_, s) => *s,
        }
    }
}

/// `choice "Label" "value" { description "…" emoji "…" default }`.
#[derive(Debug, Clone, PartialEq)]
pub struct MenuChoice {
    pub label: Template,
    pub value: Template,
    pub settings: Vec<Setting>,
    /// `for r in … { choice … }`: one choice per element of a list (a loop
    /// whose body is this choice; its `body` is empty).
    pub each: Option<Box<ForNode>>,
    pub span: Span,
}

/// `form handler { title "…" input name { … } … }`.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub handler: Ident,
    pub settings: Vec<Setting>,
    pub inputs: Vec<Input>,
    /// Its `text "…"`s (a `ReplyItem::Text`, or a translation, which the
    /// checker refuses), shown where they stand among the inputs.
    pub texts: Vec<ReplyItem>,
    pub span: Span,
}

/// `input name { label "…" paragraph … }`: makes `{field_<name>}` in the
/// handler. Its kind is its word (`users`, `upload`, `radio`, …) or its
/// choices (`vocab::InputKind::of`).
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    pub name: Ident,
    pub settings: Vec<Setting>,
    /// A menu's, a radio group's or a checkbox group's `choice`s.
    pub choices: Vec<MenuChoice>,
    pub span: Span,
}

impl Input {
    /// Its settings' templates, then its choices'.
    pub fn templates(&self) -> impl Iterator<Item = &Template> {
        setting_templates(&self.settings).chain(
            self.choices.iter().flat_map(|c| [&c.label, &c.value].into_iter().chain(setting_templates(&c.settings))),
        )
    }

    pub fn kind(&self) -> crate::language::vocab::InputKind {
        crate::language::vocab::InputKind::of(|w| setting(&self.settings, w).is_some(), !self.choices.is_empty())
    }
}

/// The first setting named `key` among `settings`.
pub fn setting<'a>(settings: &'a [Setting], key: &str) -> Option<&'a Setting> {
    settings.iter().find(|s| s.key.name == key)
}

/// The templates of a list of settings.
pub fn setting_templates(settings: &[Setting]) -> impl Iterator<Item = &Template> {
    settings.iter().filter_map(|s| match &s.value {
        Some(SettingValue::Text(t)) => Some(t),
        _ => None,
    })
}

impl Component {
    pub fn templates(&self) -> impl Iterator<Item = &Template> {
        setting_templates(&self.settings).chain(
            self.choices.iter().flat_map(|c| [&c.label, &c.value].into_iter().chain(setting_templates(&c.settings))),
        )
    }
}

impl Form {
    pub fn templates(&self) -> impl Iterator<Item = &Template> {
        setting_templates(&self.settings)
            .chain(self.texts.iter().flat_map(ReplyItem::templates))
            .chain(self.inputs.iter().flat_map(Input::templates))
    }
}

impl Reply {
    /// A plain `reply "text"`.
    pub fn text_only(text: Template, span: Span) -> Reply {
        let text_span = text.span;
        Reply { items: vec![ReplyItem::Text { value: text, span: text_span }], block: false, update: false, span }
    }

    /// Its buttons and menus, those inside its layout's parts too, in the
    /// order written.
    pub fn components(&self) -> impl Iterator<Item = &Component> {
        let mut out = Vec::new();
        components_of(&self.items, &mut out);
        out.into_iter()
    }

    /// The files it carries, those inside its layout's parts too, in the
    /// order written.
    pub fn files(&self) -> impl Iterator<Item = &ReplyFile> {
        let mut out = Vec::new();
        files_of(&self.items, &mut out);
        out.into_iter()
    }

    /// Its poll, if it has one (a second is B414).
    pub fn poll(&self) -> Option<&Poll> {
        self.items.iter().find_map(|i| match i {
            ReplyItem::Poll(p) => Some(&**p),
            _ => None,
        })
    }

    /// Whether it is a layout message: one with a container, a section, a
    /// separator or a gallery (its texts are then parts of the layout).
    pub fn is_layout(&self) -> bool {
        self.items.iter().any(|i| matches!(i, ReplyItem::Layout(_)))
    }

    /// `reply` or `update`.
    pub fn keyword(&self) -> &'static str {
        if self.update {
            "update"
        } else {
            "reply"
        }
    }

    /// Its text (the first, if written twice: an error of its own).
    pub fn text(&self) -> Option<&Template> {
        self.items.iter().find_map(|i| match i {
            ReplyItem::Text { value, .. } => Some(value),
            _ => None,
        })
    }

    /// Its texts in other languages.
    pub fn translations(&self) -> impl Iterator<Item = &Translation> {
        self.items.iter().filter_map(|i| match i {
            ReplyItem::Translation(t) => Some(&**t),
            _ => None,
        })
    }

    pub fn ephemeral(&self) -> bool {
        self.items.iter().any(|i| matches!(i, ReplyItem::Ephemeral(_)))
    }

    pub fn embeds(&self) -> impl Iterator<Item = &Embed> {
        self.items.iter().filter_map(|i| match i {
            ReplyItem::Embed(e) => Some(e),
            _ => None,
        })
    }

    /// Every template of the reply, in the order written.
    pub fn templates(&self) -> impl Iterator<Item = &Template> {
        self.items.iter().flat_map(ReplyItem::templates)
    }
}

/// The buttons and menus of `items` and of the layout parts among them.
fn files_of<'a>(items: &'a [ReplyItem], out: &mut Vec<&'a ReplyFile>) {
    for item in items {
        match item {
            ReplyItem::File(f) => out.push(f),
            ReplyItem::Layout(l) => files_of(&l.items, out),
            _ => {}
        }
    }
}

fn components_of<'a>(items: &'a [ReplyItem], out: &mut Vec<&'a Component>) {
    for item in items {
        match item {
            ReplyItem::Component(c) => out.push(c),
            ReplyItem::Layout(l) => components_of(&l.items, out),
            _ => {}
        }
    }
}

impl ReplyItem {
    /// Its templates, in the order written (a layout part's, all of them).
    pub fn templates(&self) -> Vec<&Template> {
        match self {
            ReplyItem::Text { value, .. } => vec![value],
            ReplyItem::Translation(t) => vec![&t.value],
            ReplyItem::Ephemeral(_) => Vec::new(),
            ReplyItem::Embed(e) => e.templates().collect(),
            ReplyItem::Component(c) => c.templates().collect(),
            ReplyItem::Layout(l) => l.templates(),
            ReplyItem::Poll(p) => p.templates(),
            ReplyItem::File(f) => f.templates(),
        }
    }

    pub fn span(&self) -> Span {
        match self {
            ReplyItem::Text { span, .. } | ReplyItem::Ephemeral(span) => *span,
            ReplyItem::Translation(t) => t.span,
            ReplyItem::Embed(e) => e.span,
            ReplyItem::Component(c) => c.span,
            ReplyItem::Layout(l) => l.span,
            ReplyItem::Poll(p) => p.span,
            ReplyItem::File(f) => f.span,
        }
    }
}

impl ReplyFile {
    /// Its text's template (`file text "…"`) and its settings'.
    pub fn templates(&self) -> Vec<&Template> {
        let text = match &self.source {
            FileSource::Text(t) => Some(t),
            FileSource::Path(_) | FileSource::Name(_) => None,
        };
        text.into_iter().chain(setting_templates(&self.settings)).collect()
    }

    /// The name it is sent under when written as a literal: its `filename`,
    /// or the last part of its path (none when a value fills it, or for a
    /// block's response, a user's file or text without a `filename`).
    pub fn literal_name(&self) -> Option<String> {
        match setting(&self.settings, "filename").and_then(|s| s.value.as_ref()) {
            Some(SettingValue::Text(t)) => t.as_literal(),
            Some(_) => None,
            None => match &self.source {
                FileSource::Path(p) => Some(p.value.rsplit('/').next().unwrap_or(&p.value).to_string()),
                FileSource::Name(_) | FileSource::Text(_) => None,
            },
        }
    }
}

impl EmbedItem {
    pub fn span(&self) -> Span {
        match self {
            EmbedItem::Part { span, .. } | EmbedItem::Field { span, .. } => *span,
        }
    }
}

/// `embed { … }`: its parts and fields in the order written.
#[derive(Debug, Clone, PartialEq)]
pub struct Embed {
    pub items: Vec<EmbedItem>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EmbedItem {
    /// `title "…"`, `color "#5865F2"`, …
    Part { part: crate::language::vocab::EmbedPart, key: Span, value: Template, span: Span },
    /// `field "Name" "Value" [inline]`.
    Field { name: Template, value: Template, inline: Option<Span>, span: Span },
}

impl Embed {
    pub fn templates(&self) -> impl Iterator<Item = &Template> {
        self.items
            .iter()
            .flat_map(|i| match i {
                EmbedItem::Part { value, .. } => [Some(value), None],
                EmbedItem::Field { name, value, .. } => [Some(name), Some(value)],
            })
            .flatten()
    }
}

/// `save name = value`: the only way to keep response data beyond a run;
/// or a change to a list variable (`save queue append value`).
#[derive(Debug, Clone, PartialEq)]
pub struct Save {
    pub name: Ident,
    /// What is saved, appended or removed, or the index removed; `[]` for
    /// `clear` (at the keyword), which saves an empty list.
    pub value: Value,
    /// Where `save` starts: the node ends at its value (see [`Save::span`];
    /// a whole span and the operation would not fit the node in 64 bytes).
    pub start: u32,
    pub op: SaveOp,
}

/// `save NAME[path] = value`: the save, and the path into the variable's
/// value it writes.
#[derive(Debug, Clone, PartialEq)]
pub struct SaveField {
    pub save: Save,
    pub path: Vec<Segment>,
    /// `NAME[path]` as written.
    pub span: Span,
}

impl Save {
    /// From `save` to the end of its value.
    pub fn span(&self) -> Span {
        Span { start: self.start, end: self.value.span().end.max(self.name.span.end) }
    }
}

/// What a `save` does with its value (docs/language.md, "Lists").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SaveOp {
    /// `=`: the value replaces what was saved.
    Set,
    /// `append`: added at the list's end.
    Append,
    /// `remove`: every element equal to the value is taken out.
    Remove,
    /// `remove at`: the element at an index (from 0; from the end when
    /// negative) is taken out.
    RemoveAt,
    /// `clear`: the list is emptied.
    Clear,
}

impl SaveOp {
    /// As written after the name.
    pub fn as_str(self) -> &'static str {
        match self {
            SaveOp::Set => "=",
            SaveOp::Append => "append",
            SaveOp::Remove => "remove",
            SaveOp::RemoveAt => "remove at",
            SaveOp::Clear => "clear",
        }
    }
}

/// `if c1 { … } else if c2 { … } else { … }`: the links of the chain in
/// order and the final `else`. Flat, so a chain of any length takes no
/// stack to walk, compare, clone or drop.
#[derive(Debug, Clone, PartialEq)]
pub struct IfNode {
    /// At least one: the `if`, then each `else if`.
    pub links: Vec<IfLink>,
    pub otherwise: Option<Branch>,
    pub span: Span,
}

/// One `if` or `else if` of a chain: its condition and its branch.
#[derive(Debug, Clone, PartialEq)]
pub struct IfLink {
    pub condition: Condition,
    pub then: Branch,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Branch {
    pub body: Vec<Node>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub left: Value,
    pub test: Option<(CompareOp, Span, Value)>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
    /// Text begins or ends with the other side's text.
    StartsWith,
    EndsWith,
}

impl CompareOp {
    pub fn as_str(self) -> &'static str {
        match self {
            CompareOp::Eq => "==",
            CompareOp::Ne => "!=",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
            CompareOp::Contains => "contains",
            CompareOp::StartsWith => "starts with",
            CompareOp::EndsWith => "ends with",
        }
    }
}

/// An `api` request block.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiBlock {
    pub name: Ident,
    pub fields: Vec<Field>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The span of the field's keyword.
    pub keyword: Span,
    pub kind: FieldKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    Method(Ident),
    Url(Template),
    Params(Vec<Pair>),
    Headers(Vec<Pair>),
    /// Boxed, as the settings below: a field stays 48 bytes (a file of
    /// twenty thousand blocks is a hundred thousand fields).
    Body(Box<Body>),
    /// `sample "a.json"`, and with `pages` one a page after it (at least one).
    Sample(Vec<Text>),
    Allow(Ident),
    Pages(Box<Pages>),
    /// `cache "10m"` or `cache response.expires_in`.
    Cache(Box<Cache>),
    /// `auth basic "<USER>" "<PASSWORD>"`, `auth bearer "<TOKEN>"`.
    Auth(Box<Auth>),
    /// `timeout "5s"`: the duration as written.
    Timeout(Text),
    Retry(Box<Retry>),
    Failed(Box<Failed>),
}

/// A request body, of the kind its keyword names.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// `body { … }`, `body [ … ]`, `body json VALUE`.
    Json(Value),
    /// `body form { … }`: form-urlencoded.
    Form(Vec<Entry>),
    /// `body text "…" type "…"`.
    Text { text: Template, media_type: Option<Text> },
    /// `body multipart { … }`.
    Multipart(Vec<PartDecl>),
}

impl Body {
    /// The word that names the body's kind (`json` for objects and arrays).
    pub fn kind(&self) -> &'static str {
        match self {
            Body::Json(_) => "json",
            Body::Form(_) => "form",
            Body::Text { .. } => "text",
            Body::Multipart(_) => "multipart",
        }
    }

    /// The `key = value` entries of an object or form body.
    pub fn entries(&self) -> Option<&[Entry]> {
        match self {
            Body::Json(Value::Object(entries, _)) => Some(entries),
            Body::Form(entries) => Some(entries),
            _ => None,
        }
    }
}

/// One part of a multipart body: `name = "text"` or `name = file …`.
#[derive(Debug, Clone, PartialEq)]
pub struct PartDecl {
    pub key: Key,
    pub value: PartValue,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PartValue {
    Field(Template),
    File(FilePart),
}

/// `file "chart.png" type "image/png" filename "chart.png"`, or `file api_x`.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePart {
    pub source: FileSource,
    /// `type` and `filename`, each with its word's span, as written.
    pub settings: Vec<(Ident, Template)>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FileSource {
    /// A file beside the `.blk`, by its path as written.
    Path(Text),
    /// A name: `api_<block>` (that block's response bytes) or
    /// `option_<name>` (the file a user gave as an attachment option).
    Name(Ident),
    /// `file text "…"`: text the run builds (a CSV, a transcript).
    Text(Template),
}

/// How long a block's answer is kept.
#[derive(Debug, Clone, PartialEq)]
pub enum Cache {
    /// `cache "10m"`.
    For(Text),
    /// `cache response.expires_in`: seconds, from the answer.
    From(Key),
}

/// `pages { … }`: the pages a block follows, and where their items are.
#[derive(Debug, Clone, PartialEq)]
pub struct Pages {
    pub settings: Vec<PageSetting>,
    pub span: Span,
}

/// One setting of `pages`; each path is written as a key
/// (`response.meta.next`), with the setting's whole span first.
#[derive(Debug, Clone, PartialEq)]
pub enum PageSetting {
    Items(Span, Key),
    /// `cursor PATH param NAME`.
    Cursor(Span, Key, Key),
    /// `next PATH`: a URL in the response.
    Next(Span, Key),
    /// `next link`: the `Link` header's `rel="next"`.
    NextLink(Span),
    /// `max N` pages, `limit N` items: the number as written.
    Max(Span, Text),
    Limit(Span, Text),
}

impl PageSetting {
    pub fn word(&self) -> &'static str {
        match self {
            PageSetting::Items(..) => "items",
            PageSetting::Cursor(..) => "cursor",
            PageSetting::Next(..) | PageSetting::NextLink(_) => "next",
            PageSetting::Max(..) => "max",
            PageSetting::Limit(..) => "limit",
        }
    }

    pub fn span(&self) -> Span {
        match self {
            PageSetting::Items(s, _)
            | PageSetting::Cursor(s, ..)
            | PageSetting::Next(s, _)
            | PageSetting::NextLink(s)
            | PageSetting::Max(s, _)
            | PageSetting::Limit(s, _) => *s,
        }
    }
}

impl Pages {
    /// Where each page holds its items.
    pub fn items(&self) -> Option<&Key> {
        self.settings.iter().find_map(|s| match s {
            PageSetting::Items(_, k) => Some(k),
            _ => None,
        })
    }
}

/// `auth basic "<USER>" "<PASSWORD>"`.
#[derive(Debug, Clone, PartialEq)]
pub struct Auth {
    pub scheme: Ident,
    pub values: Vec<Template>,
}

/// `retry 3 on 429, 503 backoff "1s"`.
#[derive(Debug, Clone, PartialEq)]
pub struct Retry {
    /// The number as written.
    pub times: Text,
    pub on: Vec<Text>,
    pub backoff: Option<Text>,
}

/// `failed on 404, 5xx { … }`: what runs, instead of the rest of the tree,
/// when the block fails.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    pub on: Vec<Text>,
    pub branch: Branch,
}

impl FieldKind {
    pub fn keyword(&self) -> &'static str {
        match self {
            FieldKind::Method(_) => "method",
            FieldKind::Url(_) => "url",
            FieldKind::Params(_) => "params",
            FieldKind::Headers(_) => "headers",
            FieldKind::Body(_) => "body",
            FieldKind::Sample(..) => "sample",
            FieldKind::Pages(_) => "pages",
            FieldKind::Cache(_) => "cache",
            FieldKind::Allow(_) => "allow",
            FieldKind::Auth(_) => "auth",
            FieldKind::Timeout(_) => "timeout",
            FieldKind::Retry(_) => "retry",
            FieldKind::Failed(_) => "failed",
        }
    }
}

/// A URL parameter or header: `key = "template"`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub key: Key,
    pub value: Template,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub name: Str,
    pub span: Span,
}

/// A key of a JSON object in a body.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: Key,
    pub value: Value,
    pub span: Span,
}

/// A JSON value of a body, a `save` or a condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(Template),
    /// The number's source text, kept exactly.
    Number(Name, Span),
    Bool(bool, Span),
    Null(Span),
    /// An unquoted response reference: inserts the JSON value itself.
    Ref(Box<Reference>),
    /// An unquoted path into a loop's element: `item[score]`.
    Element(Box<ElementRef>),
    /// A variable by its bare name, as a side of a condition: its value
    /// itself, so a list stays a list (`if queue contains "{user_id}"`).
    Var(Ident),
    /// Boxed slices, not vectors: a value fits in 32 bytes.
    Object(Box<[Entry]>, Span),
    Array(Box<[Value]>, Span),
    /// `points + 1`: arithmetic, computed exactly when the run reaches it.
    Arith(Box<Expr>),
}

/// An arithmetic expression (docs/language.md, "Arithmetic").
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A number, a string (a template) or a response reference.
    Value(Value),
    /// A variable by its bare name: `points`.
    Var(Ident),
    Binary(Box<Binary>),
    /// `( … )`, kept as written.
    Group(Box<Expr>, Span),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Binary {
    pub op: ArithOp,
    pub op_span: Span,
    pub left: Expr,
    pub right: Expr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ArithOp {
    #[serde(rename = "+")]
    Add,
    #[serde(rename = "-")]
    Sub,
    #[serde(rename = "*")]
    Mul,
    #[serde(rename = "/")]
    Div,
    #[serde(rename = "%")]
    Rem,
}

impl ArithOp {
    pub fn parse(text: &str) -> Option<ArithOp> {
        Some(match text {
            "+" => ArithOp::Add,
            "-" => ArithOp::Sub,
            "*" => ArithOp::Mul,
            "/" => ArithOp::Div,
            "%" => ArithOp::Rem,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
            ArithOp::Rem => "%",
        }
    }

    /// `*`, `/` and `%` bind tighter than `+` and `-`.
    pub fn binds_tight(self) -> bool {
        matches!(self, ArithOp::Mul | ArithOp::Div | ArithOp::Rem)
    }
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Value(v) => v.span(),
            Expr::Var(i) => i.span,
            Expr::Binary(b) => b.left.span().to(b.right.span()),
            Expr::Group(_, s) => *s,
        }
    }
}

impl Value {
    pub fn span(&self) -> Span {
        match self {
            Value::Str(t) => t.span,
            Value::Number(_, s) | Value::Bool(_, s) | Value::Null(s) => *s,
            Value::Ref(r) => r.span,
            Value::Element(e) => e.span,
            Value::Var(name) => name.span,
            Value::Object(_, s) | Value::Array(_, s) => *s,
            Value::Arith(e) => e.span(),
        }
    }
}

impl Value {
    /// A `var`'s default as JSON. The grammar lets only fixed values there:
    /// literal strings, numbers, `true`, `false`, `null`, arrays and objects.
    pub fn fixed(&self) -> serde_json::Value {
        use serde_json::Value as Json;
        match self {
            Value::Str(t) => Json::String(t.as_literal().unwrap_or_default()),
            Value::Number(n, _) => serde_json::from_str(n).unwrap_or(Json::Null),
            Value::Bool(b, _) => Json::Bool(*b),
            Value::Object(entries, _) => {
                Json::Object(entries.iter().map(|e| (e.key.name.to_string(), e.value.fixed())).collect())
            }
            Value::Array(items, _) => Json::Array(items.iter().map(Value::fixed).collect()),
            Value::Null(_) | Value::Ref(_) | Value::Element(_) | Value::Var(_) | Value::Arith(_) => Json::Null,
        }
    }
}

/// A string literal, split into literal text, variables and secret slots.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    pub parts: Vec<Part>,
    pub span: Span,
}

impl Template {
    /// The text when the template holds no variable or slot.
    pub fn as_literal(&self) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Lit(text, _) => out.push_str(text),
                _ => return None,
            }
        }
        Some(out)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Lit(Str, Span),
    Var(Var),
    /// `<NAME>`: a secret filled at run time, never stored in the file.
    Secret(Ident),
}

impl Var {
    pub fn span(&self) -> Span {
        match self {
            Var::Ref(r) => r.span,
            Var::Element(e) => e.span,
            Var::BotToken(span) => *span,
            Var::Named(id) => id.span,
            Var::Helped(h) => h.span,
            Var::Draw(d) => d.span,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Var {
    /// `{api_<block>[response…]}`
    Ref(Box<Reference>),
    /// `{item[name]}`: a path into a loop's element.
    Element(Box<ElementRef>),
    /// `{bot_token}`
    BotToken(Span),
    /// A trigger, option or custom variable: `{user_name}`.
    Named(Ident),
    /// A variable, reference or element path with list helpers after it:
    /// `{queue|count}`, `{api_s[response.items]|first 3|join}`.
    Helped(Box<Helped>),
    /// `{random 1 6}`, `{chance 25}`: a value drawn at random.
    Draw(Box<Drawn>),
}

/// `{random A B}` or `{chance N}` (src/language/helpers.rs).
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    pub draw: crate::language::helpers::Draw,
    /// Its bounds that are variables, where each is written.
    pub variables: Vec<Ident>,
    /// The whole `{…}`.
    pub span: Span,
}

/// `{base|helper…}` (src/language/helpers.rs).
#[derive(Debug, Clone, PartialEq)]
pub struct Helped {
    /// Never itself helped, nor the bot token.
    pub base: Var,
    pub helpers: Vec<crate::language::helpers::Helper>,
    /// The whole `{…}`.
    pub span: Span,
}

/// `api_<block>[response.a.0.b]`: a read of a block's response.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub block: Ident,
    /// `response` or `status` (the span covers the whole path text).
    pub root: Ident,
    pub segments: Vec<Segment>,
    pub span: Span,
}

impl Reference {
    /// What the path reads (`None` for a root B114 rejects).
    pub fn root(&self) -> Option<crate::base::path::Root> {
        crate::base::path::root(&self.root.name)
    }

    /// The path as written: `response.a.0`.
    pub fn path_text(&self) -> String {
        let mut out = self.root.name.to_string();
        for seg in &self.segments {
            out.push('.');
            out.push_str(&seg.text);
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub text: Str,
    pub span: Span,
}

impl crate::base::path::Segment for Segment {
    fn text(&self) -> &str {
        &self.text
    }
}

impl ApiBlock {
    fn find<'a, T>(&'a self, pick: impl Fn(&'a FieldKind) -> Option<T>) -> Option<T> {
        self.fields.iter().find_map(|f| pick(&f.kind))
    }

    pub fn method(&self) -> Option<&Ident> {
        self.find(|k| match k {
            FieldKind::Method(m) => Some(m),
            _ => None,
        })
    }

    pub fn url(&self) -> Option<&Template> {
        self.find(|k| match k {
            FieldKind::Url(u) => Some(u),
            _ => None,
        })
    }

    pub fn params(&self) -> &[Pair] {
        self.find(|k| match k {
            FieldKind::Params(p) => Some(p.as_slice()),
            _ => None,
        })
        .unwrap_or(&[])
    }

    pub fn headers(&self) -> &[Pair] {
        self.find(|k| match k {
            FieldKind::Headers(h) => Some(h.as_slice()),
            _ => None,
        })
        .unwrap_or(&[])
    }

    /// The body and the body field's span, when there is a body.
    pub fn body(&self) -> Option<(&Body, Span)> {
        self.fields.iter().find_map(|f| match &f.kind {
            FieldKind::Body(b) => Some((&**b, f.span)),
            _ => None,
        })
    }

    /// The `failed { … }` branch, when the block has one.
    pub fn failed(&self) -> Option<&Failed> {
        self.find(|k| match k {
            FieldKind::Failed(f) => Some(&**f),
            _ => None,
        })
    }

    pub fn sample(&self) -> Option<&Text> {
        self.find(|k| match k {
            FieldKind::Sample(s) => s.first(),
            _ => None,
        })
    }

    /// The `pages { … }` the block follows, when it has one.
    pub fn pages(&self) -> Option<&Pages> {
        self.find(|k| match k {
            FieldKind::Pages(p) => Some(&**p),
            _ => None,
        })
    }

    /// Whether the block says `allow bot_token`.
    pub fn allows_bot_token(&self) -> bool {
        self.allows("bot_token")
    }

    /// Whether the block says `allow <what>`.
    pub fn allows(&self, what: &str) -> bool {
        self.fields.iter().any(|f| matches!(&f.kind, FieldKind::Allow(a) if a.name == what))
    }
}

impl File {
    /// The trees that run, in the file's order: each command, event and
    /// handler; for a command with subcommands, each subcommand in its
    /// place (a group's in the group's); after a command or subcommand, the
    /// `autocomplete` trees of its options.
    pub fn trees(&self) -> impl Iterator<Item = &Tree> {
        let mut out = Vec::new();
        for t in self.written() {
            t.runnable(&mut out);
        }
        out.into_iter()
    }

    /// The top-level trees as written (a command with subcommands is one).
    pub fn written(&self) -> impl Iterator<Item = &Tree> {
        self.items.iter().filter_map(|i| match i {
            Item::Tree(t) => Some(t),
            _ => None,
        })
    }

    /// Every tree as written and each subcommand and group within, with
    /// the `Sub` that holds it (`None` for a top-level tree).
    pub fn every_level(&self) -> Vec<(&Tree, Option<&Sub>)> {
        fn add<'a>(sub: &'a Sub, out: &mut Vec<(&'a Tree, Option<&'a Sub>)>) {
            out.push((&sub.tree, Some(sub)));
            for s in sub.tree.subs() {
                add(s, out);
            }
        }
        let mut out = Vec::new();
        for t in self.written() {
            out.push((t, None));
            for s in t.subs() {
                add(s, &mut out);
            }
        }
        out
    }
}

impl Tree {
    /// A tree inside a command: a subcommand's or a group's (kind
    /// `Command`, with its own description and cooldown), or an
    /// autocomplete's (kind `Autocomplete`, with neither). Its whole name
    /// is given by its command's [`Tree::name_parts`].
    pub fn inner(
        kind: TreeKind,
        name: Ident,
        head: (Option<Text>, Option<Setting>),
        body: Vec<Node>,
        span: Span,
    ) -> Tree {
        let (description, cooldown) = head;
        Tree {
            kind,
            name,
            description,
            cooldown,
            schedule: None,
            webhook: None,
            menu: None,
            body,
            parts: Parts::default(),
            span,
        }
    }

    /// The subcommands and groups at the top of its body (and any the
    /// checker refuses elsewhere at that level).
    pub fn subs(&self) -> impl Iterator<Item = &Sub> {
        let body = if self.parts.subcommands { self.body.as_slice() } else { &[] };
        body.iter().filter_map(|n| match n {
            Node::Sub(s) => Some(&**s),
            _ => None,
        })
    }

    /// Whether it is a command that runs its subcommands, not itself.
    pub fn has_subs(&self) -> bool {
        self.kind == TreeKind::Command && self.menu.is_none() && self.parts.subcommands
    }

    /// Its options as written.
    pub fn options(&self) -> impl Iterator<Item = &OptionDecl> {
        self.body.iter().filter_map(|n| match n {
            Node::Option(o) => Some(&**o),
            _ => None,
        })
    }

    fn runnable<'a>(&'a self, out: &mut Vec<&'a Tree>) {
        if !self.has_subs() {
            out.push(self);
            if self.parts.autocompletes {
                out.extend(self.options().filter_map(|o| o.autocomplete.as_ref().map(|a| &a.tree)));
            }
            return;
        }
        for s in self.subs() {
            if s.group && !s.tree.has_subs() {
                // An empty group runs nothing (the checker says so).
                continue;
            }
            s.tree.runnable(out);
        }
    }

    /// Gives its subcommands, groups and autocomplete trees their whole
    /// names (`settings role add`, `weather city`), once it is read.
    pub fn name_parts(&mut self) {
        let prefix = self.name.name.clone();
        self.parts = Parts { actions: self.parts.actions, ..Parts::default() };
        for n in &mut self.body {
            match n {
                Node::Sub(s) => {
                    self.parts.subcommands = true;
                    s.tree.name.name = ecow::eco_format!("{prefix} {}", s.word.name);
                    s.tree.name_parts();
                }
                Node::Option(o) => {
                    if let Some(a) = &mut o.autocomplete {
                        self.parts.autocompletes = true;
                        a.tree.name.name = ecow::eco_format!("{prefix} {}", o.name.name);
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of a million one-line nodes costs mostly its nodes: keep them
    /// small (the front-end benchmark prints what the memory comes to).
    #[test]
    fn nodes_stay_small() {
        assert_eq!(std::mem::size_of::<Value>(), 32);
        assert_eq!(std::mem::size_of::<Save>(), 64);
        assert_eq!(std::mem::size_of::<Node>(), 64);
        assert_eq!(std::mem::size_of::<ReplyItem>(), 40);
    }
}
