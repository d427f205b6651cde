//! The command line: one file per subcommand, the clap types in [`args`],
//! and in [`report`] the one printer of diagnostics and errors and the exit
//! codes (docs/cli.md).

mod args;
mod build;
mod check;
mod converse;
mod deploy;
mod explain;
mod fmt;
mod inputs;
mod invite;
mod new;
mod play;
mod report;
mod run;
mod serve;
mod test;
mod vars;

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command, Format};
use blkc::base::diagnostics::render::RenderOptions;
use blkc::base::diagnostics::Severity;
use blkc::language::load::LoadOptions;
use blkc::language::model::Checked;
use blkc::language::plan::{self, Plan};
pub use report::Exit;

/// Parses the arguments, runs the subcommand, and turns its outcome into
/// the process's exit code.
pub fn main() -> ExitCode {
    no_transparent_huge_pages();
    quiet_on_closed_pipes();
    let cli = Cli::parse();
    let exit = match cli.command {
        Command::New(args) => new::new(&args),
        Command::Check(args) => check::check(&args),
        Command::Fmt(args) => fmt::fmt(&args),
        Command::Run(args) => run::run(&args),
        Command::Test(args) => test::test(&args),
        Command::Build { file, output } => build::build(&file, output.as_deref()),
        Command::Vars { store, scope, action } => vars::vars(store.as_deref(), &scope, &action),
        Command::Explain { code } => explain::explain(&code),
        Command::Serve(args) => serve::serve(&args),
        Command::Play(args) => play::play(&args),
        Command::Deploy(args) => deploy::deploy(&args),
        Command::Invite(args) => invite::invite(&args),
        Command::Lsp => match blkc::host::lsp::serve_stdio() {
            Ok(blkc::host::lsp::Ended::Cleanly) => Exit::Success,
            // The protocol's exit code 1: `exit` came without `shutdown`.
            Ok(blkc::host::lsp::Ended::ExitWithoutShutdown) => Exit::Diagnostics,
            Err(e) => report::error(format!("blkc lsp: {e}"), Exit::RunFailure),
        },
    };
    exit.into()
}

/// A closed pipe (`blkc check … | head -1`) ends the program quietly, as it
/// does every Unix tool, instead of panicking on the failed write.
fn quiet_on_closed_pipes() {
    #[cfg(unix)]
    // SAFETY: restores the default disposition of one signal; no handler runs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
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

/// Reads and checks a file for a subcommand that goes on to run or build
/// it: prints its errors and warnings (hints are for `blkc check`), and
/// stops at an error; otherwise lowers it to its plan.
fn compile(
    path: &std::path::Path,
    options: LoadOptions,
    format: Format,
    opts: RenderOptions,
) -> Result<(Checked, Plan), Exit> {
    let checked = blkc::language::load::load(path, options).map_err(report::usage)?;
    let shown: Vec<_> = checked.diagnostics.iter().filter(|d| d.severity != Severity::Hint).cloned().collect();
    report::print_check(&checked, &shown, format, opts);
    if checked.has_errors() {
        return Err(Exit::Diagnostics);
    }
    let plan = plan::lower(&checked).map_err(|d| {
        report::print_check(&checked, &[*d], format, opts);
        Exit::Diagnostics
    })?;
    Ok((checked, plan))
}

/// Writes through a temporary file in the same folder, renamed over the
/// original: a crash or a full disk never leaves half a file.
pub(crate) fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(folder)?;
    tmp.write_all(text.as_bytes())?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
