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
}

/// Methods HTTP has that the spec names and excludes.
pub const UNSUPPORTED_METHODS: &[(&str, &str)] = &[
    ("HEAD", "it is a GET without a response body, and the block exists to read the response"),
    ("OPTIONS", "it describes the target's communication options rather than reading or changing data"),
    ("CONNECT", "it opens a tunnel, which a request block cannot use"),
    ("TRACE", "it is a loop-back test of the path, not a data request"),
];

/// Variables every command provides, besides `option_<name>` per option.
pub const COMMAND_VARIABLES: &[&str] =
    &["user_id", "user_name", "user_mention", "server_id", "server_name", "channel_id", "channel_name"];

/// Event kinds and the variables each provides.
pub const EVENTS: &[(&str, &[&str])] = &[
    (
        "member_join",
        &[
            "user_id",
            "user_name",
            "user_mention",
            "server_id",
            "server_name",
            "member_count",
            // The server's system channel, where welcome messages go.
            "channel_id",
            "channel_name",
        ],
    ),
    ("member_leave", &["user_id", "user_name", "server_id", "server_name", "member_count"]),
    (
        "message_create",
        &[
            "user_id",
            "user_name",
            "user_mention",
            "channel_id",
            "channel_name",
            "server_id",
            "server_name",
            "message_id",
            "message_content",
        ],
    ),
    (
        "message_update",
        &["user_id", "user_name", "channel_id", "channel_name", "server_id", "message_id", "message_content"],
    ),
    ("message_delete", &["channel_id", "channel_name", "server_id", "message_id"]),
    ("reaction_add", &["user_id", "user_name", "user_mention", "channel_id", "server_id", "message_id", "emoji"]),
    ("reaction_remove", &["user_id", "user_name", "channel_id", "server_id", "message_id", "emoji"]),
    ("channel_create", &["channel_id", "channel_name", "server_id", "server_name"]),
    ("channel_delete", &["channel_id", "channel_name", "server_id", "server_name"]),
    ("role_create", &["role_id", "role_name", "server_id", "server_name"]),
    ("ready", &["bot_id", "bot_name", "server_count"]),
];

pub fn event_variables(kind: &str) -> Option<&'static [&'static str]> {
    EVENTS.iter().find(|(k, _)| *k == kind).map(|(_, v)| *v)
}

/// The chat platform's API, where `{bot_token}` may go unless a file says
/// otherwise with `platform "…"`.
pub const DEFAULT_PLATFORM: &str = "https://discord.com/api";

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
];

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
    Var "var" Top,
    Platform "platform" Top,
    Option "option" Tree,
    Api "api" Tree,
    Reply "reply" Tree,
    Save "save" Tree,
    If "if" Tree,
    Else "else" Tree,
    Method "method" Block,
    Url "url" Block,
    Params "params" Block,
    Headers "headers" Block,
    Body "body" Block,
    Sample "sample" Block,
    Allow "allow" Block,
    True "true" Value,
    False "false" Value,
    Null "null" Value,
}

impl Keyword {
    /// The keyword spelled exactly `word`.
    pub fn parse(word: &str) -> Option<Keyword> {
        Keyword::ALL.iter().copied().find(|k| k.as_str() == word)
    }
}
