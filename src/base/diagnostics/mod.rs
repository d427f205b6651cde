//! Diagnostic codes, the diagnostic type, and rendering (terminal and JSON).
//!
//! Every code is listed once in `codes!`; its page lives in
//! `docs/codes/<CODE>.md` and is compiled in for `blkc explain`.

pub mod formats;
pub mod render;

use crate::base::source::{SourceFile, Span};

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
    Unreadable = "B007", Error, "file cannot be read";
    IncludeUnreadable = "B008", Error, "an included file cannot be read";
    IncludedTwice = "B009", Error, "a file included twice";
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
    DollarBeforeVariable = "B134", Warning, "`$` before a `{…}` variable";
    ReferenceAsText = "B135", Warning, "response reference written as text in a string";
    WholeResponseOfSecretRequest = "B136", Warning, "whole response of a request that sends a secret, saved or shown";
    UnknownOptionType = "B137", Error, "unknown option type";
    PrivilegedIntent = "B138", Hint, "event that needs a privileged Gateway intent";
    CalcNotANumber = "B139", Error, "calculation on a value that is never a number";
    CalcDivisionByZero = "B140", Error, "division by a literal zero";
    UnknownScope = "B141", Error, "unknown variable scope";
    ScopeNotInTree = "B142", Error, "scoped variable where the trigger has no id for its scope";
    TextOptionInCalc = "B143", Error, "text option in a calculation";
    NoFirstValue = "B144", Error, "variable a calculation reads that can never get a first value";
    ElementOutsideLoop = "B145", Error, "loop element or joined text read where its loop has not run";
    LoopMisplaced = "B146", Error, "`text` or `stop` outside a loop, or `text` in a loop without `join`";
    LoopLimit = "B147", Error, "loop limit or requests beyond the run's bounds";
    LoopNameTaken = "B148", Error, "loop name or join name that is already a variable";
    NotAListVariable = "B149", Error, "list operation or loop on a variable declared as something else";
    BadHelper = "B150", Error, "unknown helper, or one written wrong (or `random`, `chance`)";
    BadSchedule = "B151", Error, "timed event's schedule, time zone or channel not understood";
    BodyTypeMismatch = "B152", Error, "a body and its `Content-Type` header that disagree";
    BadBody = "B153", Error, "a form or multipart body written wrong, or a file part that cannot be sent";
    BadAuth = "B154", Error, "an `auth` that is not understood, or beside an `Authorization` header";
    BadRetry = "B155", Error, "a `timeout`, `retry` or `failed` that is not understood";
    RetryNotRepeatable = "B156", Warning, "`retry` on a POST or PATCH without `allow retry`";
    BadCache = "B158", Error, "a `cache` that is not understood, or on a request that is not kept";
    BadPages = "B157", Error, "a `pages` that is not understood, or `items` read from a block without one";
    BadAction = "B159", Error, "an action written wrong: a word it does not take or needs, or a value past the platform's limits";
    ActionTarget = "B160", Error, "an action's value that is not an id, a mention or a name of what it acts on";
    ActionWithoutServer = "B161", Error, "an action in a command or event that can run where the bot is in no server";
    BadWebhook = "B163", Error, "a webhook event written wrong: its path, its signature, its secret or its settings";
    ReplyNowhere = "B162", Warning, "a reply in an event whose replies have no channel to go to";
    MissingTranslation = "B166", Warning, "a reply's text not in a language the file's other replies are translated into";
    TypedPlace = "B167", Error, "`with server` or `with channel` named by a value a user types";
    NotUndoable = "B165", Error, "a step inside `together` that its transaction cannot take back";
    FieldNotInDefault = "B164", Warning, "a field or element of a custom variable that its declared default does not have";
    BadExpiry = "B169", Error, "a variable's `expires` that is not a duration";
    MisplacedInLater = "B168", Error, "a step an `after` or an `await` cannot hold, or a value of the run that keeps it that it reads";
    // Samples.
    SampleMissingKey = "B201", Error, "key not in the block's sample";
    SampleArrayWithoutIndex = "B202", Error, "array addressed without an index";
    SampleIndexOnObject = "B203", Error, "index on an object";
    SamplePastScalar = "B204", Error, "path goes past a string, number, boolean or null";
    SampleIndexOutOfRange = "B205", Warning, "index past the end of the sample's array";
    SampleJsonInText = "B206", Hint, "object or array written into text";
    SampleUnreadable = "B207", Error, "sample cannot be read";
    NoSampleHint = "B208", Hint, "block without a sample";
    ShapeChanged = "B209", Error, "response shape changed from the sample";
    LeftAsText = "B210", Warning, "variables left as text in a test request";
    StructuredInRequest = "B211", Error, "object or array written into a URL, parameter or header";
    SampleNotAList = "B212", Error, "loop over a value the sample shows is not a list";
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
    MemoryBudget = "B321", Error, "responses exceed the run's memory budget";
    ChangedByAnotherRun = "B322", Error, "a variable the run read was changed by another run before its save";
    NotANumber = "B323", Error, "a value in a calculation is not a number";
    DivisionByZero = "B324", Error, "division by zero";
    ScopeIdMissing = "B325", Error, "scoped variable in a run without its scope's id";
    EmbedAdjusted = "B326", Warning, "a value of an embed, a component or a form cut or left out at run time";
    RunBound = "B327", Error, "a run past its bound of loop runs, requests, joined text, list elements or a variable's bytes";
    NotAList = "B328", Error, "a loop's or list operation's value not a list, or its limit or index not a whole number";
    NoTimerChannel = "B329", Error, "timed event's channel not a channel id when its tick came";
    RequestRetried = "B330", Warning, "a block's request sent again";
    PagesLeft = "B331", Warning, "a block's pages not all read";
    ActionRefused = "B332", Error, "the platform refused an action: a permission the bot lacks, a role above its own, or what it names is gone";
    DmClosed = "B333", Error, "a direct message the user does not take";
    ActionValue = "B334", Error, "an action's value, once filled, not an id, a mention or a name the server has";
    NotATime = "B335", Error, "a value a time or duration helper is given is not a time or a duration";
    LaterRefused = "B336", Error, "work that waits not kept: its time is no time, or too much waits already";
    FileUnsent = "B337", Error, "a file a message carries could not be had, or is larger than the platform takes";
    // What the chat platform registers (`blkc deploy`; checked by `check` too).
    PlatformName = "B401", Error, "command or option name the platform refuses";
    DescriptionLength = "B402", Error, "description empty or longer than 100 characters";
    TooManyOptions = "B403", Error, "more than 25 options in a command";
    TooManyChoices = "B404", Error, "more than 25 choices in an option";
    ChoiceMismatch = "B405", Error, "choice that does not fit its option";
    TooManyCommands = "B406", Error, "more than 100 commands";
    CommandTooLong = "B407", Error, "command longer than 8,000 characters";
    RequiredAfterOptional = "B408", Error, "required option after an optional one";
    MissingDescription = "B409", Error, "command or option without a description, at registration";
    TextTooLong = "B410", Error, "text of an embed, a component or a form longer than the platform takes";
    TooManyEmbedParts = "B411", Error, "more than 10 embeds in a reply, or 25 fields in an embed";
    EmbedsTooLong = "B412", Error, "embeds of a reply longer than 6,000 characters together";
    EmbedValueForm = "B413", Error, "embed colour, URL or time that is not one";
    ReplyPartTwice = "B414", Error, "part of a reply, an embed or a component written twice";
    EmptyReply = "B415", Error, "reply or embed with nothing to show";
    EphemeralInEvent = "B416", Error, "ephemeral reply in an event";
    UnknownSetting = "B417", Error, "a setting a button, menu, choice, form or input does not take";
    BadSetting = "B418", Error, "a setting's value not of its form, or a setting missing";
    TooManyComponents = "B419", Error, "more than 5 rows, 25 choices, 5 inputs, 40 layout components, 3 texts in a section or 10 images in a gallery, or none";
    LinkOrHandler = "B420", Error, "a button with both or neither of a handler and a link, or a premium button with either";
    UnknownHandler = "B421", Error, "a component or form naming a handler the file does not have";
    UnusedHandler = "B422", Warning, "a handler that no component or form runs";
    MisplacedForm = "B423", Error, "a form where the platform does not take one";
    MisplacedUpdate = "B424", Error, "`update` with no message to edit, or ephemeral";
    CustomIdTooLong = "B425", Error, "a component's id longer than 100 characters";
    UnversionedPlatform = "B426", Warning, "the platform's API called without a version";
    BadOptionBound = "B427", Error, "an option's `min` or `max` that the platform refuses";
    UnknownRegisterWord = "B428", Error, "a permission, context, install, channel kind, locale or option a registration line does not know";
    MisplacedRegister = "B429", Error, "a registration line where it does not belong, or written twice";
    BadGuard = "B430", Error, "a `require` line blkc cannot hold";
    MisplacedSubcommand = "B431", Error, "a subcommand or group where the platform does not take it";
    BadAutocomplete = "B432", Error, "an `autocomplete` or a `choice` that cannot work";
    BadLayout = "B433", Error, "a layout message the platform refuses: an embed or a translation beside its parts, a section without one accessory";
    BadAttachment = "B434", Error, "an `attachment://` address that names no file of its message, or a file an embed cannot show";
    // Conversation tests (`.blkt` files; docs/test.md).
    UnknownInTest = "B501", Error, "a test naming what the bot does not have";
    BadTestStep = "B502", Error, "a test step or expectation that cannot be read";
    StepNotTaken = "B503", Error, "a test step the conversation cannot take";
    ExpectationFailed = "B504", Error, "an expectation the bot did not meet";
    NoBotFile = "B505", Error, "a test file whose bot cannot be read";
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Hint,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Hint => "hint",
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

/// A replacement of a span's text: what a suggestion does to the file.
/// An empty span inserts; an empty replacement deletes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

/// How sure a suggestion is. `blkc check --fix` applies only certain ones;
/// editors offer both as quick fixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// The one obvious fix: a misspelled keyword, `:` for `=`.
    Certain,
    /// A likely fix that a person should confirm.
    Maybe,
}

/// A fix for a diagnostic: edits applied together, and what they do.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    pub message: String,
    pub edits: Vec<Edit>,
    pub confidence: Confidence,
}

/// One finding: what is wrong (message), where (labels), what to do (help),
/// and the edits that do it (suggestions).
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    pub labels: Vec<Label>,
    pub help: Option<String>,
    pub note: Option<String>,
    pub suggestions: Vec<Suggestion>,
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
            suggestions: Vec::new(),
        }
    }

    /// A certain fix: replace `span` with `replacement` (`blkc check --fix`
    /// applies it).
    pub fn fix(self, message: impl Into<String>, span: Span, replacement: impl Into<String>) -> Diagnostic {
        self.suggest_edits(message, vec![Edit { span, replacement: replacement.into() }], Confidence::Certain)
    }

    /// The word a person most likely meant at `span`: "did you mean `x`?"
    /// with the certain fix that writes it, or `otherwise` as the help when
    /// nothing is close.
    pub fn meant(self, span: Span, meant: Option<&str>, otherwise: impl Into<String>) -> Diagnostic {
        match meant {
            Some(word) => self.help(format!("did you mean `{word}`?")).fix(format!("write `{word}`"), span, word),
            None => self.help(otherwise),
        }
    }

    /// A likely fix that a person should confirm (offered, never applied
    /// by `--fix`).
    pub fn maybe_fix(self, message: impl Into<String>, span: Span, replacement: impl Into<String>) -> Diagnostic {
        self.suggest_edits(message, vec![Edit { span, replacement: replacement.into() }], Confidence::Maybe)
    }

    /// [`Diagnostic::maybe_fix`] when there is one: a did-you-mean's edit.
    pub fn maybe_fixes(self, fix: Option<(String, Span, String)>) -> Diagnostic {
        match fix {
            Some((message, span, replacement)) => self.maybe_fix(message, span, replacement),
            None => self,
        }
    }

    /// A fix made of several edits applied together.
    pub fn suggest_edits(mut self, message: impl Into<String>, edits: Vec<Edit>, confidence: Confidence) -> Diagnostic {
        self.suggestions.push(Suggestion { message: message.into(), edits, confidence });
        self
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

/// Diagnostics as they are found, each code capped at [`MAX_PER_CODE`] as
/// they come: the first ones of a code are kept, the rest only counted
/// (with where the first of them was), so a file of a million mistakes
/// costs the memory of a hundred. Reads as the list kept (`Deref`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Findings {
    kept: Vec<Diagnostic>,
    counts: rustc_hash::FxHashMap<Code, usize>,
    left_out: Vec<(Code, usize, Option<Span>)>,
}

/// Where a [`Findings`] was, to go back to ([`Findings::rollback`]).
#[derive(Debug, Clone)]
pub struct Mark {
    len: usize,
    counts: rustc_hash::FxHashMap<Code, usize>,
    left_out: Vec<(Code, usize, Option<Span>)>,
}

impl Findings {
    pub fn new() -> Findings {
        Findings::default()
    }

    pub fn push(&mut self, d: Diagnostic) {
        let n = self.counts.entry(d.code).or_default();
        if *n < MAX_PER_CODE {
            *n += 1;
            self.kept.push(d);
            return;
        }
        match self.left_out.iter_mut().find(|(c, ..)| *c == d.code) {
            Some((_, count, _)) => *count += 1,
            None => self.left_out.push((d.code, 1, d.primary_span())),
        }
    }

    pub fn extend(&mut self, ds: impl IntoIterator<Item = Diagnostic>) {
        ds.into_iter().for_each(|d| self.push(d));
    }

    /// Takes in another's findings, its counts of what it left out too.
    pub fn absorb(&mut self, other: Findings) {
        self.extend(other.kept);
        for (code, count, span) in other.left_out {
            match self.left_out.iter_mut().find(|(c, ..)| *c == code) {
                Some((_, n, _)) => *n += count,
                None => self.left_out.push((code, count, span)),
            }
        }
    }

    pub fn mark(&self) -> Mark {
        Mark { len: self.kept.len(), counts: self.counts.clone(), left_out: self.left_out.clone() }
    }

    /// Forgets everything found since `mark`.
    pub fn rollback(&mut self, mark: Mark) {
        self.kept.truncate(mark.len);
        self.counts = mark.counts;
        self.left_out = mark.left_out;
    }

    /// The findings by position, each code capped, with one more
    /// diagnostic per code that says how many of it were left out.
    pub fn finish(mut self) -> Vec<Diagnostic> {
        sort(&mut self.kept);
        // Kept in the order found; the ones of a code listed are its first
        // by position.
        let mut seen: rustc_hash::FxHashMap<Code, usize> = rustc_hash::FxHashMap::default();
        let mut left_out = self.left_out;
        self.kept.retain(|d| {
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
            let mut summary =
                Diagnostic::new(code, format!("{count} more {} ({}) not listed", code.as_str(), code.title())).help(
                    format!(
                        "fix the {MAX_PER_CODE} listed above first; each file lists at most {MAX_PER_CODE} of one code"
                    ),
                );
            if let Some(span) = span {
                summary = summary.label(span, "the first one not listed");
            }
            self.kept.push(summary);
        }
        self.kept
    }
}

impl std::ops::Deref for Findings {
    type Target = Vec<Diagnostic>;
    fn deref(&self) -> &Vec<Diagnostic> {
        &self.kept
    }
}

/// "did you mean `x`?" over a closed vocabulary.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    // Two words whose lengths differ by more than the distance allowed are
    // never that close: not measured (a word of a mutated file may be
    // 60,000 characters long, and measuring costs their product).
    // (Counted in characters, as the distance is: it is at least theirs.)
    let chars = word.chars().count();
    let near = |c: &str| c.chars().count().abs_diff(chars) <= (c.len().max(word.len()) / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != word && near(c))
        .map(|c| (strsim::damerau_levenshtein(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Applies the certain suggestions of `diags` to `text`: the new text and
/// how many suggestions were applied. A suggestion whose edits overlap an
/// earlier one's is left for the next run (fixes never fight).
pub fn apply_certain(text: &str, diags: &[Diagnostic]) -> (String, usize) {
    let mut chosen: Vec<&Edit> = Vec::new();
    let mut applied = 0;
    let mut suggestions: Vec<&Suggestion> =
        diags.iter().flat_map(|d| &d.suggestions).filter(|s| s.confidence == Confidence::Certain).collect();
    suggestions.sort_by_key(|s| s.edits.iter().map(|e| e.span.start).min());
    for suggestion in suggestions {
        let fits = suggestion.edits.iter().all(|e| {
            e.span.end as usize <= text.len()
                && text.is_char_boundary(e.span.start as usize)
                && text.is_char_boundary(e.span.end as usize)
                && chosen.iter().all(|c| !conflict(e.span, c.span))
        });
        if fits {
            chosen.extend(&suggestion.edits);
            applied += 1;
        }
    }
    chosen.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0;
    for edit in chosen {
        out.push_str(&text[at..edit.span.start as usize]);
        out.push_str(&edit.replacement);
        at = edit.span.end as usize;
    }
    out.push_str(&text[at..]);
    (out, applied)
}

/// Two edits conflict when their spans overlap or start at the same place
/// (two insertions there would have no order).
fn conflict(a: Span, b: Span) -> bool {
    (a.start < b.end && b.start < a.end) || a.start == b.start
}

/// A diagnostic of a bot in several files as its own file's (the one rule
/// every report of such a bot calls): the file its first primary label is
/// in, as a source of its own, and the diagnostic with its spans in that
/// file. A label in another file becomes a line of its note, with where it
/// is (`first declared here: commands.blk:3:9`); a suggestion that edits
/// another file is left to that file's own fix.
pub fn localized(file: &SourceFile, d: &Diagnostic) -> (SourceFile, Diagnostic) {
    let at = d.primary_span().map_or(0, |s| s.start as usize);
    match file.part_at(at) {
        Some(part) => (file.part_file(part), local_to(part, &file.line_index(), d)),
        None => (file.clone(), d.clone()),
    }
}

/// The diagnostics of a bot in several files by file, each as its own
/// file's ([`localized`]), in the order of the files; one file's as they
/// are.
pub fn by_file(file: &SourceFile, diags: &[Diagnostic]) -> Vec<(SourceFile, Vec<Diagnostic>)> {
    if file.parts.is_empty() {
        return vec![(file.clone(), diags.to_vec())];
    }
    let index = file.line_index();
    let mut out: Vec<(SourceFile, Vec<Diagnostic>)> = Vec::new();
    for part in &file.parts {
        let mine: Vec<Diagnostic> = diags
            .iter()
            .filter(|d| file.part_at(d.primary_span().map_or(0, |s| s.start as usize)) == Some(part))
            .map(|d| local_to(part, &index, d))
            .collect();
        if !mine.is_empty() {
            out.push((file.part_file(part), mine));
        }
    }
    out
}

fn local_to(
    part: &crate::base::source::Part,
    index: &crate::base::source::LineIndex<'_>,
    d: &Diagnostic,
) -> Diagnostic {
    let inside = |s: Span| (s.start as usize) >= part.start && (s.end as usize) <= part.end;
    let shift = |s: Span| Span::new(s.start as usize - part.start, s.end as usize - part.start);
    let mut local = d.clone();
    let mut elsewhere = Vec::new();
    local.labels = d
        .labels
        .iter()
        .filter_map(|l| {
            if inside(l.span) {
                return Some(Label { span: shift(l.span), ..l.clone() });
            }
            let (line, col) = index.line_col(l.span.start as usize);
            elsewhere.push(format!("{}: {}:{line}:{col}", l.text, index.file(l.span.start as usize)));
            None
        })
        .collect();
    local.suggestions = d
        .suggestions
        .iter()
        .filter(|s| s.edits.iter().all(|e| inside(e.span)))
        .map(|s| Suggestion {
            edits: s.edits.iter().map(|e| Edit { span: shift(e.span), replacement: e.replacement.clone() }).collect(),
            ..s.clone()
        })
        .collect();
    if !elsewhere.is_empty() {
        let mut note = local.note.take().map_or_else(Vec::new, |n| vec![n]);
        note.extend(elsewhere);
        local.note = Some(note.join("\n"));
    }
    local
}
