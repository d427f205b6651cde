//! What the command line prints about a file and how it ends: the one
//! printer of diagnostics (text on standard error, JSON on standard
//! output), the one printer of errors, and the exit codes.

use std::io::IsTerminal;
use std::process::ExitCode;

use blkc::base::diagnostics::render::{render_json, render_terminal, RenderOptions};
use blkc::base::diagnostics::{Code, Diagnostic};
use blkc::language::model::Checked;

use super::args::{Color, Format};

/// How the program ends (docs/cli.md). Set here and nowhere else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Success,
    /// A file has errors (or warnings, with `--deny-warnings`).
    Diagnostics,
    /// Bad arguments, or a file that cannot be read or written.
    Usage,
    /// A request, the store or a test request failed.
    RunFailure,
    /// A conversation test failed (4, as Hurl's failed assert).
    TestsFailed,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(match exit {
            Exit::Success => 0,
            Exit::Diagnostics => 1,
            Exit::Usage => 2,
            Exit::RunFailure => 3,
            Exit::TestsFailed => 4,
        })
    }
}

/// Prints an error that has no place in a file, and ends with `exit`.
pub fn error(message: impl std::fmt::Display, exit: Exit) -> Exit {
    eprintln!("error: {message}");
    exit
}

/// An error of a diagnostic code that has no place in a file (the store
/// of `blkc vars`), with what to do about it.
pub fn coded_error(code: Code, message: impl std::fmt::Display, help: Option<&str>) -> Exit {
    eprintln!("error[{}]: {message}", code.as_str());
    if let Some(help) = help {
        eprintln!("help: {help}");
    }
    Exit::RunFailure
}

/// B426 for `--platform` (a `platform` line gets it from `blkc check`): a
/// base on Discord's API with no version reaches its old default version.
pub fn warn_unversioned(platform: Option<&blkc::language::policy::Platform>) {
    if let Some(p) = platform.filter(|p| p.is_unversioned_discord()) {
        eprintln!(
            "warning[{}]: `--platform {}` calls the platform's API without a version",
            Code::UnversionedPlatform.as_str(),
            p.base_url()
        );
        eprintln!(
            "help: an unversioned call reaches the platform's old default version: give `--platform {}`",
            blkc::discord::options::DEFAULT_PLATFORM
        );
    }
}

/// A usage or I/O error (exit 2).
pub fn usage(message: impl std::fmt::Display) -> Exit {
    error(message, Exit::Usage)
}

pub fn render_options(color: Color) -> RenderOptions {
    let color = match color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let width = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).unwrap_or(100);
    RenderOptions { color, width }
}

/// The diagnostics of a file as `run` and `test` print them before they
/// go on (or stop): a miette report on standard error, or in JSON one
/// `{"event":"check","report":…}` line on standard output, where `report`
/// is exactly what `blkc check --format json` says of the file.
pub fn print_check(checked: &Checked, diagnostics: &[Diagnostic], format: Format, opts: RenderOptions) {
    if diagnostics.is_empty() {
        return;
    }
    match format {
        Format::Text => eprint!("{}", render_terminal(&checked.source, diagnostics, opts)),
        Format::Json => {
            let report = render_json(&checked.source, diagnostics);
            println!("{}", json(&serde_json::json!({ "event": "check", "report": report }), false));
        }
    }
}

/// JSON text as blkc prints it: compact (one event per line) or pretty, with
/// U+0085, U+2028 and U+2029 escaped, since line-oriented readers take them
/// for line ends (JavaScript the last two, Python's `splitlines` all three;
/// JSON allows them raw, blkc never prints them so).
pub fn json(value: &impl serde::Serialize, pretty: bool) -> String {
    let text = if pretty { serde_json::to_string_pretty(value) } else { serde_json::to_string(value) };
    // Serializing a value blkc built cannot fail.
    let text = text.unwrap_or_default();
    if text.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
        text.replace('\u{85}', "\\u0085").replace('\u{2028}', "\\u2028").replace('\u{2029}', "\\u2029")
    } else {
        text
    }
}
