//! The closed vocabularies of the language: methods, event kinds and the
//! variables each trigger provides (documented in docs/language.md).

/// The methods an API block can send (the spec's section 4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[allow(clippy::upper_case_acronyms)] // written as HTTP writes them, in the plan's JSON too
pub enum Method {
    GET,
    POST,
    PUT,
    DELETE,
    PATCH,
}

impl Method {
    pub const ALL: [Method; 5] = [Method::GET, Method::POST, Method::PUT, Method::DELETE, Method::PATCH];

    pub fn as_str(self) -> &'static str {
        match self {
            Method::GET => "GET",
            Method::POST => "POST",
            Method::PUT => "PUT",
            Method::DELETE => "DELETE",
            Method::PATCH => "PATCH",
        }
    }

    /// The method written exactly so (methods are upper case).
    pub fn parse(s: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// Whether a request of this method may carry a body (the spec: every
    /// method but GET).
    pub fn takes_body(self) -> bool {
        self != Method::GET
    }

    /// Whether repeating the request changes nothing more (RFC 9110 §9.2.2):
    /// retried without the author saying so.
    pub fn idempotent(self) -> bool {
        matches!(self, Method::GET | Method::PUT | Method::DELETE)
    }
}

/// Methods HTTP has that the spec names and excludes.
pub const UNSUPPORTED_METHODS: &[(&str, &str)] = &[
    ("HEAD", "it is a GET without a response body, and the block exists to read the response"),
    ("OPTIONS", "it describes the target's communication options rather than reading or changing data"),
    ("CONNECT", "it opens a tunnel, which a request block cannot use"),
    ("TRACE", "it is a loop-back test of the path, not a data request"),
];

/// Variables every command provides, besides `option_<name>` per option.
pub const COMMAND_VARIABLES: &[&str] = &[
    "user_id",
    "user_name",
    "user_mention",
    "server_id",
    "server_name",
    "channel_id",
    "channel_name",
    "user_locale",
    "server_locale",
];

/// What every run can read, whatever started it: the time now (RFC 3339,
/// UTC, to the second; `blkc run --now` fixes it).
pub const WORLD_VARIABLES: &[&str] = &["now", "waiting", "cancelled"];

/// What an element of `{waiting}` holds (`run::store::later::Later::shown`
/// makes them), for the checker and the editor.
pub const WAITING_SAMPLE: &str = r#"{"key": "tea", "note": "drink tea", "due": "2026-11-28T09:00:00Z"}"#;

/// What the variables every run or every interaction reads hold, in words
/// (for the editor).
pub fn about_variable(name: &str) -> Option<&'static str> {
    Some(match name {
        "now" => {
            "the time now: RFC 3339 in UTC, to the second (`{now|timestamp 'R'}`, `{now|date '%H:%M' 'Europe/Paris'}`)"
        }
        "waiting" => "the work waiting for the user (`after … { … }`), soonest first: each its `key`, `note` and `due` time (`for w in waiting { text \"{w[note]} {w[due]|timestamp 'R'}\" }`)",
        "cancelled" => "how many pieces of waiting work the run's last `cancel` took back: 0 when there was none, or it was due or running already (`if \"{cancelled}\" == \"1\" { … }`)",
        "user_locale" => "the language the user's client is set to (`en-US`, `fr`, `pt-BR`)",
        "server_locale" => "the server's preferred language (empty in a direct message)",
        _ => return None,
    })
}

/// Every event kind, with its trigger variables: the platform layer's
/// table (`discord::events`), which the language reads and never copies.
pub use crate::discord::events::EVENTS;

/// The variables an event kind's run is given; `None` for a kind that is
/// not one.
pub fn event_variables(kind: &str) -> Option<&'static [&'static str]> {
    crate::discord::events::event(kind).map(|e| e.vars)
}

/// What a handler run is given besides a command's variables (who used
/// the component or form, and where): the message it is on, and what was
/// chosen (`value`: a button's value or the first choice; `values`: every
/// choice, joined by `, `). A form's fields come as `field_<input>` besides.
pub const HANDLER_VARIABLES: &[&str] = &["message_id", "value", "values"];

/// What a block's `failed { … }` branch is given: the failure, with what
/// each variable holds.
pub const FAILURE_VARIABLES: &[(&str, &str)] = &[
    ("failure_kind", "what failed: `timeout`, `connection`, `refused` (the request policy), `status`, `too_large`, `budget` or `rate_limited`"),
    ("failure_status", "the response's status when the kind is `status`, else empty"),
    ("failure_message", "what went wrong, in words (secrets redacted)"),
    ("failure_block", "the name of the block that failed"),
    ("failure_attempts", "how many times the request was sent (1 without retries)"),
];

/// What a timed event's run is given: the channel its replies go to, and
/// the instant of its tick (RFC 3339, UTC).
/// What an option's `autocomplete` tree is given besides a command's
/// variables: what the user has typed of the option so far (the other
/// options typed before it are its `{option_…}`).
pub const AUTOCOMPLETE_VARIABLES: &[&str] = &["typed_text"];

pub const TIMED_VARIABLES: &[&str] = &["channel_id", "tick_time"];

/// What a context-menu command is given besides a command's variables,
/// by menu: the user or the message it was chosen on.
pub const MENU_VARIABLES: &[(&str, &[&str])] = &[
    ("user", &["target_user_id", "target_user_name", "target_user_mention"]),
    (
        "message",
        &["target_message_id", "target_message_content", "target_message_author_id", "target_message_author_name"],
    ),
];

/// The longest GET URL, parameters included, that blkc lets through (the
/// spec's section 8 restricts it without a number; 2,048 is the limit that
/// common browsers, CDNs and servers all accept).
pub const MAX_GET_URL: usize = 2048;

/// The longest header value blkc sends, once filled (16 KiB: above the
/// 8 KiB most servers accept for a whole header line, so that nothing a
/// server would take is refused, and a value of a megabyte never reaches
/// the HTTP library, which could not write it).
pub const MAX_HEADER_VALUE: usize = 16 * 1024;

/// What a block can `allow`: each lifts one rule of the destination policy
/// (docs/run.md, "Security model").
pub const ALLOWS: &[(&str, &str)] = &[
    ("bot_token", "send `{bot_token}` to a host other than the platform's API (still over https)"),
    ("private_network", "let a host that comes from a value or a redirect be an internal address"),
    ("retry", "retry a POST or PATCH, which the server may then carry out twice"),
];

/// Where a custom variable's value is kept: once for the whole bot (the
/// default), or once per user in each server, per server, or per channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VarScope {
    Global,
    User,
    Server,
    Channel,
}

impl VarScope {
    /// The scopes a `var` may name after `per`.
    pub const WORDS: &'static [VarScope] = &[VarScope::User, VarScope::Server, VarScope::Channel];

    pub fn as_str(self) -> &'static str {
        match self {
            VarScope::Global => "global",
            VarScope::User => "user",
            VarScope::Server => "server",
            VarScope::Channel => "channel",
        }
    }

    pub fn parse(word: &str) -> Option<VarScope> {
        VarScope::WORDS.iter().copied().find(|s| s.as_str() == word)
    }

    /// The trigger variables whose values pick the variable's value: a
    /// user's is theirs within one server.
    pub fn ids(self) -> &'static [&'static str] {
        match self {
            VarScope::Global => &[],
            VarScope::User => &["server_id", "user_id"],
            VarScope::Server => &["server_id"],
            VarScope::Channel => &["channel_id"],
        }
    }

    /// The one id a run must have (a direct message has no server: a user's
    /// value there is theirs outside any server).
    pub fn needs(self) -> Option<&'static str> {
        match self {
            VarScope::Global => None,
            VarScope::User => Some("user_id"),
            VarScope::Server => Some("server_id"),
            VarScope::Channel => Some("channel_id"),
        }
    }

    /// In words: "per user (in each server)".
    pub fn describe(self) -> &'static str {
        match self {
            VarScope::Global => "one value for the whole bot",
            VarScope::User => "a value per user in each server",
            VarScope::Server => "a value per server",
            VarScope::Channel => "a value per channel",
        }
    }

    /// The store's key for the value of `name` in this scope, from the
    /// scope's ids (`points:user:777:1001`). Variable names are words, so
    /// `:` cannot clash.
    pub fn key(self, name: &str, ids: &[&str]) -> String {
        match self {
            VarScope::Global => name.to_string(),
            _ => format!("{name}:{}:{}", self.as_str(), ids.join(":")),
        }
    }

    /// A store key read back: the name, the scope and its ids.
    pub fn split_key(key: &str) -> (&str, VarScope, Vec<&str>) {
        let mut parts = key.split(':');
        let name = parts.next().unwrap_or_default();
        match parts.next().and_then(VarScope::parse) {
            Some(scope) => (name, scope, parts.collect()),
            None => (key, VarScope::Global, Vec::new()),
        }
    }
}

/// The most loop runs one run of a tree makes, all its loops together
/// (docs/language.md, "Loops").
pub const MAX_LOOP_RUNS: usize = 10_000;

/// The most bytes a loop's `join` builds (a message shows at most a few
/// thousand characters; the bound keeps a long list of long texts from
/// filling memory).
pub const MAX_JOINED: usize = 1 << 20;

/// The most requests one run of a tree sends (an `api` block in a loop
/// counts each time it runs).
pub const MAX_REQUESTS: usize = 100;

/// The most elements a list variable holds (each `save` writes the whole
/// list; the bound keeps one variable from growing without end).
pub const MAX_LIST: usize = 10_000;

/// The most bytes a variable's value holds, saved as JSON (a list filled
/// by users once reached 57 MB, and every read of it held that much).
pub const MAX_VALUE_BYTES: usize = 1024 * 1024;

/// How a setting is written: a bare word, or a word and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingForm {
    /// `disabled`: the word alone.
    Flag,
    /// `label "…"`: a template of at most this many characters.
    Text(usize),
    /// `url "https://…"`: a web address of at most this many characters.
    Url(usize),
    /// `emoji "👍"`: what the platform takes as an emoji
    /// (`discord::emoji::judge`).
    Emoji,
    /// `max 3`: a whole number in this range.
    Number(u32, u32),
    /// `accent "#5865F2"`: a colour ([`parse_color`]).
    Color,
    /// `duration "1d"`: a length of time in whole hours, 1 to this many.
    Hours(u32),
    /// `expires "10m"`: a length of time ([`parse_duration`]), from a second
    /// to this many seconds.
    Lasting(u64),
    /// `cooldown 30` or `cooldown "1h30m" per server`: a length of time
    /// ([`parse_duration`]), kept per user unless a `per` says otherwise.
    Duration,
}

/// One setting a component, a choice, a form or an input takes.
#[derive(Debug, Clone, Copy)]
pub struct SettingSpec {
    pub name: &'static str,
    pub form: SettingForm,
    /// What it does, for hovers and completion.
    pub about: &'static str,
}

const fn setting(name: &'static str, form: SettingForm, about: &'static str) -> SettingSpec {
    SettingSpec { name, form, about }
}

/// The styles of a button, each a bare word (a link button's is its `url`).
pub const BUTTON_STYLES: &[&str] = &["primary", "secondary", "success", "danger"];

/// The kinds of a select menu besides choices written in the file.
pub const SELECT_KINDS: &[&str] = &["users", "roles", "mentionables", "channels"];

pub const BUTTON_SETTINGS: &[SettingSpec] = &[
    setting("label", SettingForm::Text(80), "the text on the button (at most 80 characters)"),
    setting("emoji", SettingForm::Emoji, "an emoji before the label: `\"👍\"`, or a server's `\"<:name:id>\"`"),
    setting("value", SettingForm::Text(100), "what the handler gets as `{value}`; travels in the button's id"),
    setting(
        "url",
        SettingForm::Url(crate::discord::limits::LINK_URL),
        "makes it a link button: opens this address, runs no handler",
    ),
    setting("disabled", SettingForm::Flag, "shown greyed out; cannot be clicked"),
    setting("primary", SettingForm::Flag, "style: blurple (the default)"),
    setting("secondary", SettingForm::Flag, "style: grey"),
    setting("success", SettingForm::Flag, "style: green"),
    setting("danger", SettingForm::Flag, "style: red"),
    setting("sku", SettingForm::Text(20), "makes it a premium button: buys this SKU of the app's store (its id)"),
    setting(
        "max_clicks",
        SettingForm::Number(1, 1_000_000),
        "disabled after this many clicks, by anyone, on one message (counted in the store, across processes)",
    ),
    setting(COOLDOWN, SettingForm::Duration, COOLDOWN_ABOUT),
    setting(EXPIRES, SettingForm::Lasting(MAX_EXPIRES), EXPIRES_ABOUT),
];

/// The setting of a component that stops working a time after its message
/// was sent (a collector's `time`).
pub const EXPIRES: &str = "expires";
const EXPIRES_ABOUT: &str =
    "stops working this long after its message was sent: `\"10m\"`, `\"1d\"` (a later click is told it has expired)";
/// The longest `expires`: 30 days.
pub const MAX_EXPIRES: u64 = 30 * 24 * 3600;

/// The setting of a wait between two uses: of a button, a select menu, or
/// (written in its head) a command, handler or event.
pub const COOLDOWN: &str = "cooldown";
const COOLDOWN_ABOUT: &str =
    "a wait between two uses by one user (`per server`, `per channel`: by anyone there); the user is told how long is left";

/// What a command, a handler or an event may say in its head, after its
/// description: `command daily "…" cooldown "1d" { … }`.
pub const TREE_SETTINGS: &[SettingSpec] = &[setting(COOLDOWN, SettingForm::Duration, COOLDOWN_ABOUT)];

/// The longest wait [`parse_duration`] takes: 366 days.
pub const MAX_DURATION_SECS: u64 = 366 * 86_400;

/// A length of time as written: a whole number of seconds (`90`), or a
/// string of numbers each with its unit, `s`, `m`, `h` or `d` (`"90s"`,
/// `"1h30m"`, `"1d"`); from one second to 366 days.
/// A block's `timeout` or `backoff`: `"500ms"`, or a duration as
/// [`parse_duration`] reads it, in milliseconds.
pub fn parse_millis(text: &str) -> Result<u64, String> {
    let words = "a duration like \"500ms\", \"5s\" or \"1m\"";
    match text.trim().strip_suffix("ms") {
        Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => match n.parse::<u64>() {
            Ok(0) => Err("at least one millisecond".to_string()),
            Ok(ms) => Ok(ms),
            Err(_) => Err(words.to_string()),
        },
        Some(_) => Err(words.to_string()),
        None => parse_duration(text).map(|s| s.saturating_mul(1000)).map_err(|_| words.to_string()),
    }
}

/// What each word of an `api` block does: the language server's completion
/// and hover read it here.
pub fn block_word_about(word: &str) -> Option<&'static str> {
    Some(match word {
        "method" => "the HTTP method: GET, POST, PUT, DELETE or PATCH",
        "url" => "the address the request is sent to, a template (values in it are encoded)",
        "params" => "URL parameters, `{ key = \"value\" }`, appended to the query",
        "headers" => "request headers, `{ Name = \"value\" }`; secrets as `<SLOT>`s",
        "body" => "the request body: `{ … }` or `[ … ]` (JSON), `json VALUE`, `form { … }` (form-urlencoded), `text \"…\" type \"…\"`, `multipart { name = \"…\", doc = file \"a.csv\" }`; `Content-Type` is set from it",
        "sample" => "a JSON file beside the .blk: what `--offline` answers, and what response paths are checked against",
        "allow" => "`allow bot_token`, `allow private_network` or `allow retry` (repeat a POST or PATCH)",
        "auth" => "`auth basic \"<USER>\" \"<PASSWORD>\"` or `auth bearer \"<TOKEN>\"`: the `Authorization` header, written by blkc",
        "timeout" => "how long one attempt may take, `timeout \"5s\"` (at most 2 minutes), in place of `--timeout`",
        "retry" => "`retry 3 on 429, 5xx backoff \"1s\"`: send again after a time-out, a failed connection or a listed status (by default 408, 429, 500, 502–504), waiting `backoff` doubled each time with jitter, or what `Retry-After` asks; GET, PUT and DELETE only, unless `allow retry`",
        "failed" => "`failed on 404, 5xx { … }`: what runs instead of the rest of the tree when the block fails (a time-out, no connection, a refusal, or a listed status), with `{failure_kind}`, `{failure_status}`, `{failure_message}`, `{failure_block}` and `{failure_attempts}`",
        "json" => "`body json VALUE`: any JSON value as the body",
        "multipart" => "`body multipart { … }`: multipart/form-data parts, text or files",
        "file" => "a part's file: `file \"chart.png\"` (beside the .blk) or `file api_x` (a block's response)",
        "type" => "a media type: of a `text` body or of a file part",
        "filename" => "the file name a file part is sent with",
        "on" => "the statuses a `retry` or `failed` takes: `on 429, 5xx`",
        "backoff" => "the first wait between two attempts (doubled each time, with jitter): `backoff \"500ms\"`",
        "pages" => "`pages { items response.data  cursor response.next param cursor  max 10 }`: follow the pages of a list (a cursor into a parameter, `next response.links.next` for a URL, `next link` for the `Link` header) and collect their items into `api_x[items]`",
        "items" => "where each page holds its list: `items response.data`",
        "cache" => "keep the answer in the store, shared by every process of the bot: `cache \"10m\"` for a GET, `cache response.expires_in` for a token (as many seconds as the answer says); a 401 to a block that sends the token fetches it again, once",
        "cursor" => "the next page's cursor, sent as a URL parameter: `cursor response.meta.next param cursor`",
        "next" => "the next page's URL: `next response.links.next` (same origin only), or `next link` (the `Link` header's `rel=\"next\"`)",
        "param" => "the URL parameter a cursor is sent in",
        "link" => "the `Link` response header (RFC 8288)",
        _ => return None,
    })
}

/// The longest `timeout` a block may give (the platform waits 15 minutes
/// for a deferred answer; a block gets two).
pub const MAX_BLOCK_TIMEOUT_MS: u64 = 120_000;
/// The most retries a block may ask for, and its longest `backoff`.
pub const MAX_RETRIES: u64 = 10;
pub const MAX_BACKOFF_MS: u64 = 60_000;

/// A status a `retry on` or `failed on` names: `503` is itself, `5xx` its
/// class; as an inclusive range.
pub fn parse_status(text: &str) -> Option<(u16, u16)> {
    let b = text.as_bytes();
    if b.len() != 3 || !(b'1'..=b'5').contains(&b[0]) {
        return None;
    }
    if b[1..].eq_ignore_ascii_case(b"xx") {
        let base = u16::from(b[0] - b'0') * 100;
        return Some((base, base + 99));
    }
    let n: u16 = text.parse().ok()?;
    Some((n, n))
}

/// A duration an action is given (`for "10m"`, `delete_messages "1d"`,
/// `after "30s"`): [`parse_duration`]'s, and zero (`"0d"`: none) too. The
/// checker reads a written one, the runner a filled one.
pub fn action_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.trim_end_matches(['s', 'm', 'h', 'd']);
    if !digits.is_empty() && t.len() - digits.len() <= 1 && digits.bytes().all(|b| b == b'0') {
        return Ok(0);
    }
    parse_duration(text)
}

/// A poll's `duration`: whole hours from 1 to `most` (`"1d"`, `"36h"`).
pub fn parse_hours(text: &str, most: u32) -> Result<u32, String> {
    let seconds = parse_duration(text)?;
    if seconds == 0 || seconds % 3600 != 0 {
        return Err("a poll is open for whole hours: `\"1h\"`, `\"12h\"`, `\"3d\"`".into());
    }
    let hours = seconds / 3600;
    if hours > u64::from(most) {
        return Err(format!("a poll is open for at most {} days", most / 24));
    }
    Ok(hours as u32)
}

pub fn parse_duration(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let seconds = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse::<u64>().ok()
    } else {
        let mut total: u64 = 0;
        let mut digits = String::new();
        let mut ok = !text.is_empty();
        for c in text.chars() {
            let unit = match c {
                '0'..='9' => {
                    digits.push(c);
                    continue;
                }
                's' => 1,
                'm' => 60,
                'h' => 3_600,
                'd' => 86_400,
                _ => 0,
            };
            let n = std::mem::take(&mut digits).parse::<u64>().ok();
            match n.and_then(|n| n.checked_mul(unit)).filter(|_| unit > 0) {
                Some(part) => total = total.saturating_add(part),
                None => ok = false,
            }
        }
        (ok && digits.is_empty()).then_some(total)
    };
    match seconds {
        None => Err("a number of seconds, or a string like \"90s\", \"5m\", \"1h30m\" or \"1d\"".to_string()),
        Some(0) => Err("at least one second".to_string()),
        Some(n) if n > MAX_DURATION_SECS => Err("at most 366 days".to_string()),
        Some(n) => Ok(n),
    }
}

/// A wait in words, rounded up to the second, in its two largest units:
/// "25 seconds", "4 minutes 10 seconds", "23 hours 59 minutes".
pub fn describe_wait(ms: u64) -> String {
    let seconds = ms.div_ceil(1000).max(1);
    let units = [(86_400, "day"), (3_600, "hour"), (60, "minute"), (1, "second")];
    let mut parts = Vec::new();
    let mut rest = seconds;
    for (size, name) in units {
        let n = rest / size;
        if n > 0 || !parts.is_empty() {
            rest -= n * size;
            if n > 0 {
                parts.push(format!("{n} {name}{}", if n == 1 { "" } else { "s" }));
            }
            if parts.len() == 2 || (!parts.is_empty() && n == 0) {
                break;
            }
        }
    }
    parts.join(" ")
}

pub const SELECT_SETTINGS: &[SettingSpec] = &[
    setting("placeholder", SettingForm::Text(150), "shown while nothing is chosen (at most 150 characters)"),
    setting("min", SettingForm::Number(0, 25), "the fewest choices a user must make (0–25; default 1)"),
    setting("max", SettingForm::Number(1, 25), "the most choices a user may make (1–25; default 1)"),
    setting("disabled", SettingForm::Flag, "shown greyed out; cannot be used"),
    setting("users", SettingForm::Flag, "choose among the server's users (their ids come in `{values}`)"),
    setting("roles", SettingForm::Flag, "choose among the server's roles"),
    setting("mentionables", SettingForm::Flag, "choose among users and roles"),
    setting("channels", SettingForm::Flag, "choose among the server's channels"),
    setting(
        "defaults",
        SettingForm::Text(2000),
        "who or what is chosen when the menu is shown: ids or mentions, `\"{user_id}\"` (a menu of users, roles, mentionables or channels)",
    ),
    setting("types", SettingForm::Text(200), "the kinds of channel a menu of channels lists: `\"text forum\"`"),
    setting(COOLDOWN, SettingForm::Duration, COOLDOWN_ABOUT),
    setting(EXPIRES, SettingForm::Lasting(MAX_EXPIRES), EXPIRES_ABOUT),
];

pub const CHOICE_SETTINGS: &[SettingSpec] = &[
    setting("description", SettingForm::Text(100), "a line under the choice's label (at most 100 characters)"),
    setting("emoji", SettingForm::Emoji, "an emoji before the label: `\"👍\"`, or a server's `\"<:name:id>\"`"),
    setting("default", SettingForm::Flag, "chosen when the menu is shown"),
];

/// A poll.
pub const POLL_SETTINGS: &[SettingSpec] = &[
    setting(
        "question",
        SettingForm::Text(crate::discord::limits::POLL_QUESTION),
        "the question asked (required; at most 300 characters)",
    ),
    setting(
        "duration",
        SettingForm::Hours(crate::discord::limits::POLL_HOURS),
        "how long it is open: `\"1h\"` to `\"32d\"` in whole hours (the default is a day)",
    ),
    setting("multiple", SettingForm::Flag, "a member may choose more than one answer"),
];

/// A poll's answer.
pub const POLL_ANSWER_SETTINGS: &[SettingSpec] =
    &[setting("emoji", SettingForm::Emoji, "an emoji beside the answer: `\"☕\"`, or a server's `\"<:name:id>\"`")];

/// A layout message's container.
pub const CONTAINER_SETTINGS: &[SettingSpec] = &[
    setting("accent", SettingForm::Color, "the colour of the bar at its left: `\"#5865F2\"`"),
    setting("spoiler", SettingForm::Flag, "hidden until clicked"),
];

/// A layout message's separator.
pub const SEPARATOR_SETTINGS: &[SettingSpec] = &[
    setting("large", SettingForm::Flag, "more space above and below (the default is small)"),
    setting("invisible", SettingForm::Flag, "space without the line"),
];

/// A section's thumbnail and a gallery's media.
pub const MEDIA_SETTINGS: &[SettingSpec] = &[
    setting(
        "description",
        SettingForm::Text(crate::discord::limits::MEDIA_DESCRIPTION),
        "the image's alternative text, for screen readers (at most 1,024 characters)",
    ),
    setting("spoiler", SettingForm::Flag, "blurred until clicked"),
];

/// A file a message carries.
pub const FILE_SETTINGS: &[SettingSpec] = &[
    setting(
        "filename",
        SettingForm::Text(crate::discord::limits::FILE_NAME),
        "the name it is sent under, which `attachment://NAME` names (a path's own name when not given)",
    ),
    setting(
        "type",
        SettingForm::Text(255),
        "its media type: `\"text/csv\"` (from its name's extension when not given)",
    ),
    setting(
        "description",
        SettingForm::Text(crate::discord::limits::FILE_DESCRIPTION),
        "its alternative text, for screen readers (at most 1,024 characters)",
    ),
    setting("spoiler", SettingForm::Flag, "hidden until clicked"),
];

pub const FORM_SETTINGS: &[SettingSpec] =
    &[setting("title", SettingForm::Text(45), "the form's title (required; at most 45 characters)")];

pub const INPUT_SETTINGS: &[SettingSpec] = &[
    setting("label", SettingForm::Text(45), "the input's label (required; at most 45 characters)"),
    setting("paragraph", SettingForm::Flag, "a text area of several lines (the default is one line)"),
    setting("placeholder", SettingForm::Text(100), "shown while the input is empty (at most 100 characters)"),
    setting("value", SettingForm::Text(4000), "the text the input starts with"),
    setting("min", SettingForm::Number(0, 4000), "the fewest characters, choices or files (by its kind)"),
    setting("max", SettingForm::Number(1, 4000), "the most characters, choices or files (by its kind)"),
    setting("optional", SettingForm::Flag, "may be left empty (inputs are required unless they say so)"),
    setting("description", SettingForm::Text(100), "a line under the label (at most 100 characters)"),
    setting("users", SettingForm::Flag, "a menu of the server's members: `{field_NAME}` is their ids"),
    setting("roles", SettingForm::Flag, "a menu of the server's roles"),
    setting("mentionables", SettingForm::Flag, "a menu of the server's members and roles"),
    setting("channels", SettingForm::Flag, "a menu of the server's channels"),
    setting(
        "upload",
        SettingForm::Flag,
        "files uploaded: `{field_NAME}` is their addresses, `{field_NAME_name}`, `_type`, `_size` the first's",
    ),
    setting(
        "types",
        SettingForm::Text(200),
        "an upload's kinds of file: `\"image\"`, `\"video\"`, `\"audio\"` or extensions, `\"image .pdf\"`",
    ),
    setting("radio", SettingForm::Flag, "its choices as a radio group: exactly one is chosen"),
    setting("checkboxes", SettingForm::Flag, "its choices as checkboxes: any of them are chosen"),
    setting("checkbox", SettingForm::Flag, "one checkbox: `{field_NAME}` is `true` or `false`"),
    setting("default", SettingForm::Flag, "a checkbox shown ticked"),
];

pub use crate::discord::outgoing::InputKind;

/// The parts of an embed written `KEY "text"`: every one a template, like
/// a reply's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedPart {
    Title,
    Description,
    Url,
    Color,
    Timestamp,
    Footer,
    Author,
    /// Where the author's name links to.
    AuthorUrl,
    /// A small image beside the author's name.
    AuthorIcon,
    /// A small image beside the footer's text.
    FooterIcon,
    Image,
    Thumbnail,
}

/// What an embed part's text must be, beside its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartForm {
    Text,
    /// An `http` or `https` URL.
    Url,
    /// An image: an `http` or `https` URL, or `attachment://NAME` (a file
    /// the message carries).
    Image,
    /// `#RRGGBB`, or the colour's number (`5793266`).
    Color,
    /// A date and time as RFC 3339 writes it (`2026-11-24T14:05:00Z`).
    Timestamp,
}

impl EmbedPart {
    pub const ALL: [EmbedPart; 12] = [
        EmbedPart::Title,
        EmbedPart::Description,
        EmbedPart::Url,
        EmbedPart::Color,
        EmbedPart::Timestamp,
        EmbedPart::Footer,
        EmbedPart::Author,
        EmbedPart::AuthorUrl,
        EmbedPart::AuthorIcon,
        EmbedPart::FooterIcon,
        EmbedPart::Image,
        EmbedPart::Thumbnail,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EmbedPart::Title => "title",
            EmbedPart::Description => "description",
            EmbedPart::Url => "url",
            EmbedPart::Color => "color",
            EmbedPart::Timestamp => "timestamp",
            EmbedPart::Footer => "footer",
            EmbedPart::Author => "author",
            EmbedPart::AuthorUrl => "author_url",
            EmbedPart::AuthorIcon => "author_icon",
            EmbedPart::FooterIcon => "footer_icon",
            EmbedPart::Image => "image",
            EmbedPart::Thumbnail => "thumbnail",
        }
    }

    pub fn parse(word: &str) -> Option<EmbedPart> {
        EmbedPart::ALL.into_iter().find(|p| p.as_str() == word)
    }

    /// The most characters the platform takes, for the parts that are text.
    pub fn limit(self) -> Option<usize> {
        match self {
            EmbedPart::Title | EmbedPart::Author => Some(256),
            EmbedPart::Description => Some(4096),
            EmbedPart::Footer => Some(2048),
            _ => None,
        }
    }

    pub fn form(self) -> PartForm {
        match self {
            EmbedPart::Url | EmbedPart::AuthorUrl => PartForm::Url,
            EmbedPart::Image | EmbedPart::Thumbnail | EmbedPart::AuthorIcon | EmbedPart::FooterIcon => PartForm::Image,
            EmbedPart::Color => PartForm::Color,
            EmbedPart::Timestamp => PartForm::Timestamp,
            _ => PartForm::Text,
        }
    }

    /// Whether it counts toward the 6,000 characters of a message's embeds.
    pub fn counts_in_total(self) -> bool {
        self.limit().is_some()
    }

    /// What it is, for hover and messages.
    pub fn about(self) -> &'static str {
        match self {
            EmbedPart::Title => "the embed's title, at most 256 characters",
            EmbedPart::Description => "the embed's main text, at most 4,096 characters",
            EmbedPart::Url => "where the title links to: an http or https URL",
            EmbedPart::Color => "the colour of the embed's edge: `#RRGGBB` or its number",
            EmbedPart::Timestamp => "a time shown in the footer: RFC 3339, `2026-11-24T14:05:00Z`",
            EmbedPart::Footer => "small text at the bottom, at most 2,048 characters",
            EmbedPart::Author => "a name above the title, at most 256 characters",
            EmbedPart::AuthorUrl => "where the author's name links to: an http or https URL (with an `author`)",
            EmbedPart::AuthorIcon => "a small image beside the author's name: an http or https URL or a file's `attachment://NAME` (with an `author`)",
            EmbedPart::FooterIcon => "a small image beside the footer: an http or https URL or a file's `attachment://NAME` (with a `footer`)",
            EmbedPart::Image => "a large image below the text: an http or https URL or a file's `attachment://NAME`",
            EmbedPart::Thumbnail => "a small image at the top right: an http or https URL or a file's `attachment://NAME`",
        }
    }
}

/// A colour as an embed takes it: `#RRGGBB` or its decimal number, at most
/// `0xFFFFFF`.
pub fn parse_color(text: &str) -> Option<u32> {
    let t = text.trim();
    let n = match t.strip_prefix('#') {
        Some(hex) if hex.len() == 6 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u32::from_str_radix(hex, 16).ok()?
        }
        Some(_) => return None,
        None if !t.is_empty() && t.len() <= 8 && t.bytes().all(|b| b.is_ascii_digit()) => t.parse().ok()?,
        None => return None,
    };
    (n <= 0xFF_FFFF).then_some(n)
}

/// A date and time as RFC 3339 writes it (`2026-11-24T14:05:00Z`,
/// `2026-11-24T14:05:00.5+01:00`), as the same time in UTC, written so.
pub fn parse_timestamp(text: &str) -> Option<String> {
    use time::format_description::well_known::Rfc3339;
    let at = time::OffsetDateTime::parse(text.trim(), &Rfc3339).ok()?;
    at.to_offset(time::UtcOffset::UTC).format(&Rfc3339).ok()
}

pub fn is_timestamp(text: &str) -> bool {
    parse_timestamp(text).is_some()
}

/// Whether `text` is an `http` or `https` URL with a host.
pub fn is_web_url(text: &str) -> bool {
    url::Url::parse(text).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
}

/// The file an `attachment://NAME` address names, when it is one.
pub fn attachment_name(text: &str) -> Option<&str> {
    text.strip_prefix("attachment://").filter(|n| !n.is_empty() && !n.contains(['/', '\\']))
}

/// An image's address: an http or https URL, or a file the message
/// carries (`attachment://chart.png`).
pub fn is_image_address(text: &str) -> bool {
    is_web_url(text) || attachment_name(text).is_some()
}

/// The extensions of the images an embed shows from a message's files
/// (the platform's "Using Attachments within Embeds").
pub const EMBED_IMAGE_TYPES: &[&str] = &["jpg", "jpeg", "png", "webp", "gif"];

/// Where a keyword can stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// At the top of a file.
    Top,
    /// Among the nodes of a command, an event or a branch.
    Tree,
    /// Among the fields of an `api` block.
    Block,
    /// Where a value goes.
    Value,
    /// After an `option`'s name and description.
    Option,
    /// After a `var`'s name.
    Var,
    /// After a command's, handler's or event's name and description.
    Head,
    /// Among the parts of a `reply { … }`.
    Reply,
    /// Among the parts of an `embed { … }`.
    Embed,
    /// Among the settings of a `button` or `select`.
    Component,
    /// Among the settings of a `form`.
    Form,
    /// In a `for` loop's head.
    Loop,
    /// After a `save`'s name: a list operation.
    Save,
    /// In a timed event's head.
    Schedule,
    /// Among the settings of an `api` block's `pages { … }`.
    Pages,
    /// Among the words of an action (`kick "…" reason "…"`).
    Action,
}

macro_rules! keywords {
    ($($variant:ident $text:literal $place:ident,)*) => {
        /// The keywords of the language: the one list that the parser's
        /// messages, the mistake recognisers and the editor's completion
        /// read (the grammar's `kw_*` rules spell the same words).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Keyword { $($variant,)* }

        impl Keyword {
            pub const ALL: &'static [Keyword] = &[$(Keyword::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(Keyword::$variant => $text,)* }
            }

            /// The keyword in backticks, as messages show it.
            pub fn quoted(self) -> &'static str {
                match self { $(Keyword::$variant => concat!("`", $text, "`"),)* }
            }

            pub fn place(self) -> Place {
                match self { $(Keyword::$variant => Place::$place,)* }
            }
        }
    };
}

keywords! {
    Command "command" Top,
    Event "event" Top,
    Handler "handler" Top,
    Cooldown "cooldown" Head,
    Var "var" Top,
    Platform "platform" Top,
    Include "include" Top,
    Option "option" Tree,
    Api "api" Tree,
    Reply "reply" Tree,
    Update "update" Tree,
    Form "form" Tree,
    Save "save" Tree,
    If "if" Tree,
    Else "else" Tree,
    For "for" Tree,
    Stop "stop" Tree,
    In "in" Loop,
    Limit "limit" Loop,
    Join "join" Loop,
    Into "into" Loop,
    By "by" Loop,
    Desc "desc" Loop,
    Append "append" Save,
    Remove "remove" Save,
    At "at" Save,
    Clear "clear" Save,
    Every "every" Schedule,
    Webhook "webhook" Head,
    Cron "cron" Schedule,
    Channel "channel" Schedule,
    Per "per" Var,
    Expires "expires" Var,
    Required "required" Option,
    Choices "choices" Option,
    Min "min" Option,
    Types "types" Option,
    Max "max" Option,
    Locale "locale" Tree,
    Permissions "permissions" Tree,
    Contexts "contexts" Tree,
    Installs "installs" Tree,
    Nsfw "nsfw" Tree,
    Require "require" Tree,
    Subcommand "subcommand" Tree,
    Group "group" Tree,
    Autocomplete "autocomplete" Option,
    Method "method" Block,
    Url "url" Block,
    Params "params" Block,
    Headers "headers" Block,
    Body "body" Block,
    Sample "sample" Block,
    Allow "allow" Block,
    Auth "auth" Block,
    Timeout "timeout" Block,
    Retry "retry" Block,
    Failed "failed" Block,
    With "with" Tree,
    Together "together" Tree,
    Cancel "cancel" Tree,
    Await "await" Tree,
    Key "key" Action,
    Note "note" Action,
    On "on" Block,
    Backoff "backoff" Block,
    Json "json" Block,
    Multipart "multipart" Block,
    File "file" Block,
    Type "type" Block,
    Filename "filename" Block,
    Pages "pages" Block,
    Cache "cache" Block,
    Items "items" Pages,
    Cursor "cursor" Pages,
    Param "param" Pages,
    Next "next" Pages,
    Link "link" Pages,
    Text "text" Reply,
    Ephemeral "ephemeral" Reply,
    Embed "embed" Reply,
    Title "title" Embed,
    Description "description" Embed,
    Color "color" Embed,
    Timestamp "timestamp" Embed,
    Footer "footer" Embed,
    Author "author" Embed,
    AuthorUrl "author_url" Embed,
    AuthorIcon "author_icon" Embed,
    FooterIcon "footer_icon" Embed,
    Image "image" Embed,
    Thumbnail "thumbnail" Embed,
    Field "field" Embed,
    Inline "inline" Embed,
    Button "button" Reply,
    Select "select" Reply,
    Container "container" Reply,
    Section "section" Reply,
    Separator "separator" Reply,
    Gallery "gallery" Reply,
    Media "media" Reply,
    Poll "poll" Reply,
    Answer "answer" Reply,
    Choice "choice" Component,
    Input "input" Form,
    True "true" Value,
    False "false" Value,
    Null "null" Value,
    Send "send" Tree,
    Dm "dm" Tree,
    React "react" Tree,
    Give "give" Tree,
    Take "take" Tree,
    Kick "kick" Tree,
    Ban "ban" Tree,
    Unban "unban" Tree,
    Nickname "nickname" Tree,
    Create "create" Tree,
    Delete "delete" Tree,
    Pin "pin" Tree,
    Unpin "unpin" Tree,
    Purge "purge" Tree,
    Edit "edit" Tree,
    End "end" Tree,
    Role "role" Action,
    Message "message" Action,
    Thread "thread" Action,
    To "to" Action,
    From "from" Action,
    Reason "reason" Action,
    After "after" Action,
    ReplyTo "reply_to" Action,
    DeleteMessages "delete_messages" Action,
    Name "name" Action,
    Topic "topic" Action,
    Category "category" Action,
    Visible "visible" Action,
    Tags "tags" Action,
    Off "off" Action,
    Private "private" Action,
    As "as" Action,
}

/// Keywords that only follow another word of their field (`body json`,
/// `retry 3 on 503 backoff "1s"`, `file "a" type "…"`): never the start of a
/// line, so one there is not a line put in the wrong block.
pub const FOLLOWING: &[Keyword] = &[
    Keyword::Json,
    Keyword::Multipart,
    Keyword::File,
    Keyword::Type,
    Keyword::Filename,
    Keyword::On,
    Keyword::Backoff,
    Keyword::Role,
    Keyword::Message,
    Keyword::Thread,
    Keyword::To,
    Keyword::From,
    Keyword::Reason,
    Keyword::After,
    Keyword::ReplyTo,
    Keyword::DeleteMessages,
    Keyword::Name,
    Keyword::Topic,
    Keyword::Category,
    Keyword::Visible,
    Keyword::Tags,
    Keyword::Off,
    Keyword::Private,
    Keyword::As,
];

impl Keyword {
    /// The keyword spelled exactly `word`.
    pub fn parse(word: &str) -> Option<Keyword> {
        Keyword::ALL.iter().copied().find(|k| k.as_str() == word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_seconds_or_numbers_with_units() {
        for (text, seconds) in [("90", 90), ("90s", 90), ("5m", 300), ("1h30m", 5_400), ("1d", 86_400), (" 2h ", 7_200)]
        {
            assert_eq!(parse_duration(text), Ok(seconds), "{text}");
        }
        for text in ["", "0", "0s", "m", "5x", "1.5h", "h5", "5m3", "367d", "99999999999999999999d", "-5"] {
            assert!(parse_duration(text).is_err(), "{text}");
        }
        assert_eq!(parse_duration("366d"), Ok(MAX_DURATION_SECS));
    }

    #[test]
    fn waits_read_in_their_two_largest_units() {
        for (ms, words) in [
            (1, "1 second"),
            (24_200, "25 seconds"),
            (60_000, "1 minute"),
            (250_000, "4 minutes 10 seconds"),
            (86_340_000, "23 hours 59 minutes"),
            (90_000_000, "1 day 1 hour"),
        ] {
            assert_eq!(describe_wait(ms), words, "{ms}");
        }
    }
}
