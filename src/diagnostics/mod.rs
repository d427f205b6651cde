//! Diagnostic codes, the diagnostic type, and rendering (terminal and JSON).
//!
//! Every code is listed once in [`codes!`]; its page lives in
//! `docs/codes/<CODE>.md` and is compiled in for `blkc explain`.

mod render;

pub use render::{render_json, render_reports, render_terminal, summary, RenderOptions};

use crate::source::Span;

macro_rules! codes {
    ($($variant:ident = $code:literal, $severity:ident, $title:literal;)*) => {
        /// Every diagnostic blkc can report. Codes are stable and never reused.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($variant,)*
        }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)*
                }
            }

            /// The severity a diagnostic of this code has.
            pub fn severity(self) -> Severity {
                match self {
                    $(Code::$variant => Severity::$severity,)*
                }
            }

            /// A one-line summary, as listed in docs/diagnostics.md.
            pub fn title(self) -> &'static str {
                match self {
                    $(Code::$variant => $title,)*
                }
            }

            /// The code's documentation page (docs/codes/<CODE>.md).
            pub fn page(self) -> &'static str {
                match self {
                    $(Code::$variant => include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/codes/", $code, ".md")),)*
                }
            }
        }
    };
}

codes! {
    // Reading and parsing.
    Syntax = "B001", Error, "syntax error";
    FileTooLarge = "B002", Error, "file too large";
    TooDeep = "B003", Error, "nesting too deep";
    InvalidEscape = "B004", Error, "invalid escape in a string";
    MalformedVariable = "B005", Error, "malformed `{…}` variable";
    InvalidUtf8 = "B006", Error, "file is not UTF-8";
    // Checking.
    DuplicateBlock = "B101", Error, "duplicate block name in one command or event";
    UnsupportedMethod = "B102", Error, "unsupported HTTP method";
    UnknownMethod = "B103", Error, "unknown HTTP method";
    BodyOnGet = "B104", Error, "request body on a GET";
    MissingField = "B105", Error, "missing required field";
    DuplicateField = "B106", Error, "field given twice";
    InvalidUrl = "B107", Error, "not an absolute http(s) URL";
    UrlTooLong = "B108", Error, "GET URL longer than the limit";
    InvalidHeaderName = "B109", Error, "invalid header name";
    HeaderValueNewline = "B110", Error, "CR or LF in a header value";
    UnknownBlock = "B111", Error, "response reference to an unknown block";
    CrossTreeReference = "B112", Error, "response reference to a block of another command or event";
    NotRunBefore = "B113", Error, "response reference to a block that may not have run";
    MalformedPath = "B114", Error, "malformed response path";
    UnknownVariable = "B115", Error, "unknown variable";
    TokenWrongHost = "B116", Error, "`{bot_token}` sent to a host other than the chat platform's API";
    TokenOutsideHeader = "B117", Error, "`{bot_token}` in a URL or body";
    SecretLiteral = "B118", Warning, "secret-looking literal in a request";
    DuplicateKey = "B119", Error, "duplicate key in a request body";
    DuplicateTree = "B120", Error, "duplicate command or event";
    UnknownEvent = "B121", Error, "unknown event kind";
    MisplacedOption = "B122", Error, "option outside the top level of a command";
    SecretInOutput = "B123", Error, "secret or bot token where it would be shown";
    UnknownAllow = "B124", Error, "unknown `allow` value";
    DuplicateDeclaration = "B125", Error, "declared twice";
    TokenPlaintext = "B126", Error, "`{bot_token}` sent over plain http";
    SecretToTemplatedHost = "B127", Error, "secret sent to a host that a value chooses";
    TemplatedHost = "B128", Warning, "host that a value chooses";
    CredentialsInUrl = "B129", Error, "user name or password in a URL";
    NearSlot = "B130", Warning, "`<name>` that is not a secret slot";
    FramingHeader = "B131", Error, "header that HTTP writes itself";
    TemplatedKey = "B132", Error, "variable in a parameter or body key";
    ShadowedVariable = "B133", Error, "custom variable named like a variable blkc provides";
    // Samples.
    SampleMissingKey = "B201", Error, "key not in the block's sample";
    SampleArrayWithoutIndex = "B202", Error, "array addressed without an index";
    SampleIndexOnObject = "B203", Error, "index on an object";
    SamplePastScalar = "B204", Error, "path goes past a string, number, boolean or null";
    SampleIndexOutOfRange = "B205", Warning, "index past the end of the sample's array";
    SampleJsonInText = "B206", Advice, "object or array written into text";
    SampleUnreadable = "B207", Error, "sample cannot be read";
    NoSampleHint = "B208", Advice, "block without a sample";
    ShapeChanged = "B209", Error, "response shape changed from the sample";
    LeftAsText = "B210", Warning, "variables left as text in a test request";
    StructuredInRequest = "B211", Error, "object or array written into a URL, parameter or header";
    // Running.
    ConnectFailed = "B301", Error, "could not connect";
    TlsFailed = "B302", Error, "TLS handshake failed";
    Timeout = "B303", Error, "request timed out";
    ResponseTooLarge = "B304", Error, "response larger than the cap";
    TooManyRedirects = "B305", Error, "too many redirects";
    MissingSecret = "B306", Error, "secret or bot token without a value";
    UnresolvedPath = "B307", Warning, "response path did not resolve";
    TokenRefused = "B308", Error, "bot token refused for this destination";
    RedirectNotFollowed = "B309", Warning, "redirect not followed";
    InvalidRequest = "B310", Error, "invalid request once variables are filled";
    StoreFailed = "B311", Error, "variable store failed";
    NoSample = "B312", Error, "no sample to answer from";
    MissingVariable = "B313", Warning, "variable without a value";
    RequestSteered = "B314", Error, "a value would change where the request goes";
    PathTraversal = "B315", Error, "a value would move the request along its path";
    InternalAddress = "B316", Error, "host from a value or redirect reaches an internal address";
    ResponseBroken = "B317", Error, "the response broke off";
    LossyJson = "B318", Warning, "JSON response with bytes that are not UTF-8";
    StatusNotRead = "B319", Warning, "error status that no step reads";
    UrlTooLongFilled = "B320", Error, "GET URL longer than the limit once filled";
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Advice,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Advice => "advice",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub span: Span,
    pub text: String,
    pub primary: bool,
}

/// One finding: what is wrong (message), where (labels), what to do (help).
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    pub labels: Vec<Label>,
    pub help: Option<String>,
    pub note: Option<String>,
}

impl Diagnostic {
    pub fn new(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.severity(),
            message: message.into(),
            labels: Vec::new(),
            help: None,
            note: None,
        }
    }

    /// The primary label: what is here.
    pub fn label(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.labels.push(Label { span, text: text.into(), primary: true });
        self
    }

    /// A label on a related place ("first defined here").
    pub fn related(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.labels.push(Label { span, text: text.into(), primary: false });
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.note = Some(note.into());
        self
    }

    pub fn with_severity(mut self, severity: Severity) -> Diagnostic {
        self.severity = severity;
        self
    }

    pub fn primary_span(&self) -> Option<Span> {
        self.labels.iter().find(|l| l.primary).or(self.labels.first()).map(|l| l.span)
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Sorts diagnostics by position, then code, so output is stable.
pub fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by_key(|d| (d.primary_span().map(|s| (s.start, s.end)), d.code));
}

/// The most findings of one code a file reports, in every format; the rest
/// are counted in one more diagnostic of that code. A file with thousands
/// of one mistake is not helped by thousands of reports, and reporting
/// them all would cost far more than the file itself.
pub const MAX_PER_CODE: usize = 100;

/// Keeps the first [`MAX_PER_CODE`] diagnostics of each code (in order) and
/// sums up the rest, at the position of the first one left out.
pub fn cap_per_code(diags: &mut Vec<Diagnostic>) {
    if diags.len() <= MAX_PER_CODE {
        return;
    }
    let mut seen: std::collections::HashMap<Code, usize> = std::collections::HashMap::new();
    let mut left_out: Vec<(Code, usize, Option<Span>)> = Vec::new();
    diags.retain(|d| {
        let n = seen.entry(d.code).or_default();
        *n += 1;
        if *n <= MAX_PER_CODE {
            return true;
        }
        match left_out.iter_mut().find(|(c, ..)| *c == d.code) {
            Some((_, count, _)) => *count += 1,
            None => left_out.push((d.code, 1, d.primary_span())),
        }
        false
    });
    for (code, count, span) in left_out {
        let mut summary = Diagnostic::new(
            code,
            format!("{count} more {} ({}) not listed", code.as_str(), code.title()),
        )
        .help(format!("fix the {MAX_PER_CODE} listed above first; each file lists at most {MAX_PER_CODE} of one code"));
        if let Some(span) = span {
            summary = summary.label(span, "the first one not listed");
        }
        diags.push(summary);
    }
}

/// "did you mean `x`?" over a closed vocabulary.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .filter(|c| *c != word)
        .map(|c| (strsim::damerau_levenshtein(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}
