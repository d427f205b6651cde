//! The `blkc` binary: parse arguments, call the library, render, exit.
//!
//! Exit codes (docs/cli.md): 0 success, 1 diagnostics with errors,
//! 2 usage or I/O error, 3 run failure.

mod cli;
mod run_cmd;
mod test_cmd;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

use blkc::diagnostics::{render_json, render_terminal, Code, RenderOptions, Severity};
use cli::{Cli, Color, Command, Format, Output};

// The AST is many small allocations; mimalloc makes them (and the threads'
// allocations side by side) measurably cheaper than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const EXIT_DIAGNOSTICS: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_RUN_FAILURE: u8 = 3;

fn main() -> ExitCode {
    no_transparent_huge_pages();
    let cli = Cli::parse();
    match cli.command {
        Command::Check { files, output, deny_warnings, jobs } => check(&files, &output, deny_warnings, jobs),
        Command::Run(args) => run_cmd::run(&args),
        Command::Test(args) => test_cmd::test(&args),
        Command::Build { file, output } => run_cmd::build(&file, output.as_deref()),
        Command::Vars { store, action } => run_cmd::vars(store.as_deref(), &action),
        Command::Explain { code } => explain(&code),
    }
}

/// blkc's memory is many small allocations made once; backing them with
/// transparent huge pages makes the kernel zero 2 MiB at a time, which cost
/// about a third of `blkc check` on a large file (benches/front_end.rs).
fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and only sets a flag
    // of this process; a failure leaves things as they were.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

fn render_options(color: Color) -> RenderOptions {
    let color = match color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let width = terminal_width().unwrap_or(100);
    RenderOptions { color, width }
}

fn terminal_width() -> Option<usize> {
    std::env::var("COLUMNS").ok()?.parse().ok()
}

fn check(files: &[std::path::PathBuf], output: &Output, deny_warnings: bool, jobs: Option<usize>) -> ExitCode {
    let opts = render_options(output.color);
    let mut limits = blkc::syntax::Limits::default();
    if let Some(jobs) = jobs {
        limits.threads = jobs.max(1);
    }
    let mut failed = false;
    let mut io_error = false;
    let mut json = Vec::new();
    let (mut errors, mut warnings) = (0, 0);
    for path in files {
        // The AST is not freed: the process ends soon after, and the OS takes
        // the memory back faster than walking the tree to free it.
        let checked = match blkc::check_path(path, limits) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: cannot read `{}`: {e}", path.display());
                io_error = true;
                continue;
            }
        };
        let checked = std::mem::ManuallyDrop::new(checked);
        errors += checked.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
        warnings += checked.diagnostics.iter().filter(|d| d.severity == Severity::Warning).count();
        failed |= checked.has_errors() || (deny_warnings && warnings > 0);
        match output.format {
            Format::Text => eprint!("{}", render_terminal(&checked.source, &checked.diagnostics, opts)),
            Format::Json => {
                if let serde_json::Value::Object(mut o) = render_json(&checked.source, &checked.diagnostics) {
                    if let Some(serde_json::Value::Array(items)) = o.remove("diagnostics") {
                        json.extend(items);
                    }
                }
            }
        }
    }
    if output.format == Format::Json {
        let doc = serde_json::json!({ "errors": errors, "warnings": warnings, "diagnostics": json });
        let mut stdout = std::io::stdout().lock();
        let _ = serde_json::to_writer_pretty(&mut stdout, &doc);
        let _ = writeln!(stdout);
    }
    if io_error {
        ExitCode::from(EXIT_USAGE)
    } else if failed {
        ExitCode::from(EXIT_DIAGNOSTICS)
    } else {
        ExitCode::SUCCESS
    }
}

fn explain(code: &str) -> ExitCode {
    let wanted = code.trim().to_ascii_uppercase();
    match Code::ALL.iter().find(|c| c.as_str() == wanted) {
        Some(c) => {
            print!("{}", c.page());
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("error: `{code}` is not a blkc diagnostic code");
            eprintln!(
                "help: the codes are listed in docs/diagnostics.md, from B001 to B{}",
                &Code::ALL[Code::ALL.len() - 1].as_str()[1..]
            );
            ExitCode::from(EXIT_USAGE)
        }
    }
}
