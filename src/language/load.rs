//! Reading a file: the one entry every subcommand uses to read, parse and
//! check a `.blk` file, and the rounds of certain fixes.

use crate::base::diagnostics::{self, Code, Diagnostic};
use crate::base::source::{SourceFile, Span};
use crate::language::model::Checked;
use crate::language::{check, model, syntax};

/// Reads bytes as a source file; bytes that are not UTF-8 are a diagnostic
/// (the text is kept, lossily, so the report can show where).
pub fn source_from_bytes(name: &str, bytes: Vec<u8>) -> (SourceFile, Option<Diagnostic>) {
    match String::from_utf8(bytes) {
        Ok(text) => (SourceFile::new(name, text), None),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let diag = Diagnostic::new(Code::InvalidUtf8, format!("`{name}` is not valid UTF-8"))
                .label(Span::new(at, at), format!("invalid byte at offset {at}"))
                .help("save the file as UTF-8");
            (SourceFile::new(name, text), Some(diag))
        }
    }
}

/// Parses and checks one file. The checker runs only when parsing read the
/// whole file, so one typo does not cause a wall of follow-on errors.
///
/// Without a folder to read samples from, response paths are checked for
/// their form only; [`check_source_in`] reads the samples too.
pub fn check_source(source: SourceFile) -> Checked {
    check_source_in(source, syntax::Limits::default(), model::Samples::none())
}

/// [`check_source`] with other limits, reading samples through `samples`.
pub fn check_source_in(source: SourceFile, limits: syntax::Limits, samples: model::Samples) -> Checked {
    let parsed = syntax::parse_with(&source, limits);
    let mut findings = parsed.diagnostics;
    // The model of what was read, whole or up to a syntax error (the
    // editor answers from it either way).
    let model = model::Model::build(&parsed.ast, std::sync::Arc::new(samples));
    if parsed.complete {
        findings.absorb(check::check(&parsed.ast, &model));
    }
    let diagnostics = findings.finish();
    Checked { source, ast: parsed.ast, diagnostics, model }
}

/// Makes the certain suggestions of a checked file, checking again after
/// each round (a fix can uncover the next mistake), at most eight rounds.
/// `recheck` checks a new text as the same file. Returns the file as last
/// checked and how many suggestions were made.
pub fn fix_certain(mut checked: Checked, mut recheck: impl FnMut(String) -> Checked) -> (Checked, usize) {
    let mut total = 0;
    for _ in 0..8 {
        let (fixed, applied) = diagnostics::apply_certain(&checked.source.text, &checked.diagnostics);
        if applied == 0 {
            break;
        }
        total += applied;
        checked = recheck(fixed);
    }
    (checked, total)
}

/// How [`load`] reads a file.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions {
    pub limits: syntax::Limits,
    /// Check response paths against the blocks' samples (beside the file).
    /// `blkc test` leaves this off: refreshing an outdated sample is what a
    /// test request is for.
    pub skip_samples: bool,
    /// Read and parse only, with no checker rule (`blkc fmt`, which needs
    /// the syntax tree and refuses a file whose syntax has errors).
    pub parse_only: bool,
}

/// A file that could not be read at all (a file that is not UTF-8 is read,
/// and is a diagnostic).
#[derive(Debug)]
pub struct LoadError {
    pub path: std::path::PathBuf,
    pub error: std::io::Error,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot read `{}`: {}", self.path.display(), self.error)
    }
}

/// Reads at most `limit + 1` bytes, so a file over the limit (or a device
/// that never ends) costs no more than the limit to find out.
fn read_capped(reader: impl std::io::Read, known: u64, limit: usize) -> std::io::Result<Vec<u8>> {
    // Sized from the file's length when it has one: reading into a growing
    // buffer would keep up to twice the file for the whole run.
    let known = known.min(limit as u64 + 1) as usize;
    let mut bytes = Vec::with_capacity(known + 1);
    use std::io::Read as _;
    reader.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

impl LoadError {
    /// The error as a diagnostic (B007), for reports that list files'
    /// findings (`--format json`, `sarif`, …): a file that cannot be read
    /// is an error of that file, never "no errors".
    pub fn diagnostic(&self) -> Diagnostic {
        use std::io::ErrorKind;
        let help = match self.error.kind() {
            ErrorKind::NotFound => "check the path: it is read from the current folder",
            ErrorKind::PermissionDenied => "the file's permissions do not let this user read it",
            ErrorKind::IsADirectory => "give the `.blk` files inside the folder, like `folder/*.blk`",
            _ => "check that the path names a readable `.blk` file",
        };
        Diagnostic::new(Code::Unreadable, format!("cannot read this file: {}", self.error))
            .label(Span::new(0, 0), "this file")
            .help(help)
    }

    /// A [`Checked`] that holds only this error, so a file that cannot be
    /// read is reported like any other file.
    pub fn into_checked(self) -> Checked {
        let diagnostic = self.diagnostic();
        Checked::unreadable(SourceFile::new(self.path.display().to_string(), String::new()), diagnostic)
    }
}

/// Reads a file's bytes, at most the size limit and one byte more (so a
/// file over the limit is found without reading it all).
pub fn read_bytes(path: &std::path::Path, limits: syntax::Limits) -> Result<Vec<u8>, LoadError> {
    let error = |error| LoadError { path: path.to_path_buf(), error };
    let file = std::fs::File::open(path).map_err(error)?;
    let known = file.metadata().map_or(0, |m| m.len());
    read_capped(file, known, limits.max_file_size).map_err(error)
}

/// [`read_bytes`] from a reader (standard input) that `name` stands for.
pub fn read_bytes_from(reader: impl std::io::Read, name: &str, limits: syntax::Limits) -> Result<Vec<u8>, LoadError> {
    read_capped(reader, 0, limits.max_file_size).map_err(|error| LoadError { path: name.into(), error })
}

/// Bytes read by [`read_bytes`] as a source file, or the diagnostic that
/// says why they are not one (too large, not UTF-8).
pub fn source_of(
    name: &str,
    bytes: Vec<u8>,
    limits: syntax::Limits,
) -> Result<SourceFile, Box<(SourceFile, Diagnostic)>> {
    if bytes.len() > limits.max_file_size {
        return Err(Box::new((SourceFile::new(name, String::new()), syntax::too_large(limits.max_file_size))));
    }
    match source_from_bytes(name, bytes) {
        (source, None) => Ok(source),
        (source, Some(diag)) => Err(Box::new((source, diag))),
    }
}

/// Reads, parses and checks a file: the one entry every subcommand uses,
/// so `check`, `run`, `test` and `build` judge a file alike. Samples are
/// read from the file's folder unless `options.skip_samples`.
pub fn load(path: &std::path::Path, options: LoadOptions) -> Result<Checked, LoadError> {
    let bytes = read_bytes(path, options.limits)?;
    Ok(load_bytes(&path.display().to_string(), path.parent(), bytes, options))
}

/// [`load`] for text that is not a file of its own: standard input, an
/// editor's buffer. `name` is what reports call it; samples are read from
/// `folder` (the folder of the file the text stands for).
pub fn load_reader(
    reader: impl std::io::Read,
    name: &str,
    folder: Option<&std::path::Path>,
    options: LoadOptions,
) -> Result<Checked, LoadError> {
    let bytes = read_bytes_from(reader, name, options.limits)?;
    Ok(load_bytes(name, folder, bytes, options))
}

fn load_bytes(name: &str, folder: Option<&std::path::Path>, bytes: Vec<u8>, options: LoadOptions) -> Checked {
    let source = match source_of(name, bytes, options.limits) {
        Ok(source) => source,
        Err(bad) => {
            let (source, diag) = *bad;
            return Checked::unreadable(source, diag);
        }
    };
    if options.parse_only {
        let parsed = syntax::parse_with(&source, options.limits);
        let diagnostics = parsed.diagnostics.finish();
        return Checked { source, ast: parsed.ast, diagnostics, model: model::Model::default() };
    }
    let samples = model::Samples::in_folder(folder.map(std::path::Path::to_path_buf).unwrap_or_default());
    let samples = if options.skip_samples { samples.unchecked() } else { samples };
    check_bot(source, folder, options.limits, samples)
}

/// [`check_source_in`] of a root file with the files it includes, read
/// from `folder` ([`with_includes`]): what every reader of a bot calls
/// (`load`, the language server's documents and tests' bots).
pub fn check_bot(
    source: SourceFile,
    folder: Option<&std::path::Path>,
    limits: syntax::Limits,
    samples: model::Samples,
) -> Checked {
    let (source, read) = with_includes(source, folder, limits);
    let mut checked = check_source_in(source, limits, samples);
    if !read.is_empty() {
        checked.diagnostics.splice(0..0, read);
    }
    checked
}

/// The most files one bot may be made of.
pub const MAX_FILES: usize = 100;

/// A bot in several files read as one (docs/language.md, "A bot in several
/// files"): each `include "PATH"` names a file by its path from the folder
/// of the file that includes it, read once, depth first, its text after
/// the texts before it, each file a [`Part`] of the bot's text. A file
/// that cannot be read is B008 at its `include`; one included again (or
/// the root itself) is B009. A file without `include` is read as it is.
pub fn with_includes(
    source: SourceFile,
    folder: Option<&std::path::Path>,
    limits: syntax::Limits,
) -> (SourceFile, Vec<Diagnostic>) {
    if memchr::memmem::find(source.text.as_bytes(), b"include").is_none() {
        return (source, Vec::new());
    }
    let root = folder.unwrap_or(std::path::Path::new(""));
    let mut bot = Bot { text: String::new(), parts: Vec::new(), seen: Vec::new(), found: Vec::new(), limits };
    let root_path = root.join(std::path::Path::new(&source.name).file_name().unwrap_or_default());
    bot.seen.extend(std::fs::canonicalize(&root_path).ok());
    bot.add(source.name.clone(), &source.text, root);
    if bot.parts.len() == 1 {
        return (source, bot.found);
    }
    let mut whole = SourceFile::new(source.name, bot.text);
    whole.parts = bot.parts;
    (whole, bot.found)
}

/// The bot's text as its files are read into it.
struct Bot {
    text: String,
    parts: Vec<crate::base::source::Part>,
    /// Every file read, by its canonical path.
    seen: Vec<std::path::PathBuf>,
    found: Vec<Diagnostic>,
    limits: syntax::Limits,
}

impl Bot {
    /// Adds a file's text as a part, then the files it includes.
    fn add(&mut self, name: String, text: &str, folder: &std::path::Path) {
        let start = self.text.len();
        self.text.push_str(text);
        let end = self.text.len();
        // (A line break of its own after each: an offset at a file's end,
        // where a file's last error may stand, is that file's.)
        self.text.push('\n');
        self.parts.push(crate::base::source::Part { name: name.clone(), start, end });
        if memchr::memmem::find(text.as_bytes(), b"include").is_none() {
            return;
        }
        let parsed = syntax::parse_with(&SourceFile::new(name, text.to_string()), self.limits);
        for item in &parsed.ast.items {
            if let crate::language::ast::Item::Include(include) = item {
                let span = Span::new(start + include.path.span.start as usize, start + include.path.span.end as usize);
                self.include(&include.path.value, span, folder);
            }
        }
    }

    fn include(&mut self, path: &str, span: Span, folder: &std::path::Path) {
        let path = folder.join(path);
        let shown = path.display().to_string();
        let cannot = |why: String, help: &str| {
            Diagnostic::new(Code::IncludeUnreadable, format!("`{shown}` cannot be read: {why}"))
                .label(span, "included here")
                .help(help.to_string())
        };
        if self.parts.len() >= MAX_FILES {
            let help = "a bot is at most 100 files: join some of them";
            return self.found.push(cannot(format!("the bot has {MAX_FILES} files already"), help));
        }
        let canonical = match std::fs::canonicalize(&path) {
            Ok(c) => c,
            Err(e) => {
                let help = "the path is from the folder of the file that includes it";
                return self.found.push(cannot(e.to_string(), help));
            }
        };
        if self.seen.contains(&canonical) {
            let d = Diagnostic::new(Code::IncludedTwice, format!("`{shown}` is already part of the bot"))
                .label(span, "included again here")
                .help("a file is read once: remove this `include` (a file that includes the one that includes it is read once too)");
            return self.found.push(d);
        }
        self.seen.push(canonical);
        let left = self.limits.max_file_size.saturating_sub(self.text.len());
        let bytes = match read_bytes(&path, syntax::Limits { max_file_size: left, ..self.limits }) {
            Ok(bytes) if bytes.len() <= left => bytes,
            Ok(_) => {
                let help = "the bot's files together are held to the size limit of one file";
                return self
                    .found
                    .push(cannot(format!("the bot would be over {} bytes", self.limits.max_file_size), help));
            }
            Err(e) => {
                return self.found.push(cannot(e.error.to_string(), "check that the path names a readable `.blk` file"))
            }
        };
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => return self.found.push(cannot("it is not UTF-8".into(), "save the file as UTF-8")),
        };
        // (As a file of its own reads it: no BOM, lone CRs as LFs.)
        let text = SourceFile::new(shown.clone(), text).text;
        let inner = path.parent().unwrap_or(std::path::Path::new("")).to_path_buf();
        self.add(shown, &text, &inner);
    }
}
