//! `blkc fmt FILE…`: the canonical layout (docs/language.md), written back,
//! checked (`--check`, with a unified diff) or piped (`-`).

use std::io::Write;

use blkc::base::diagnostics::render::render_terminal;
use blkc::base::source::SourceFile;
use blkc::language::load::LoadOptions;
use blkc::language::syntax::Limits;

use super::args::FmtArgs;
use super::report::{self, Exit};

pub fn fmt(args: &FmtArgs) -> Exit {
    let opts = report::render_options(args.color);
    if args.files.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return report::usage("`-` (standard input) can be given once");
    }
    let limits = Limits::default();
    let mut stdout = std::io::stdout().lock();
    let (mut unformatted, mut errors, mut unreadable) = (false, false, false);
    // The files given, then the files they include (each once): a bot in
    // several files is formatted from its root.
    let mut files: Vec<std::path::PathBuf> = args.files.clone();
    let mut seen: Vec<std::path::PathBuf> = files.iter().filter_map(|p| std::fs::canonicalize(p).ok()).collect();
    let mut next = 0;
    while next < files.len() {
        let path = &files[next].clone();
        next += 1;
        let stdin = path.as_os_str() == "-";
        let name = match (stdin, &args.stdin_filename) {
            (true, Some(n)) => n.display().to_string(),
            (true, None) => "<stdin>".to_string(),
            (false, _) => path.display().to_string(),
        };
        // Read and parsed through the loading entry every subcommand uses.
        let options = LoadOptions { limits, parse_only: true, ..LoadOptions::default() };
        let loaded = if stdin {
            blkc::language::load::load_reader(std::io::stdin().lock(), &name, None, options)
        } else {
            blkc::language::load::load(path, options)
        };
        let checked = match loaded {
            Err(e) => {
                unreadable = true;
                let checked = e.into_checked();
                eprint!("{}", render_terminal(&checked.source, &checked.diagnostics, opts));
                continue;
            }
            Ok(checked) if checked.has_errors() => {
                // Never rewritten: the errors, as `blkc check` reports them.
                errors = true;
                eprint!("{}", render_terminal(&checked.source, &checked.diagnostics, opts));
                continue;
            }
            Ok(checked) => checked,
        };
        let folder = match (stdin, &args.stdin_filename) {
            (true, Some(n)) => n.parent().map(std::path::Path::to_path_buf).unwrap_or_default(),
            (true, None) => std::path::PathBuf::new(),
            (false, _) => path.parent().map(std::path::Path::to_path_buf).unwrap_or_default(),
        };
        included(&checked.ast, &folder, &mut seen, &mut files);
        let source = &checked.source;
        let formatted = blkc::language::format::format_file(&source.text, &checked.ast);
        if args.check {
            if formatted != source.text {
                unformatted = true;
                let _ = stdout.write_all(diff(&name, source, &formatted).as_bytes());
            }
        } else if stdin {
            let _ = stdout.write_all(formatted.as_bytes());
        } else if formatted != source.text {
            if let Err(e) = super::write_atomically(path, &formatted) {
                return report::usage(format!("cannot write `{}`: {e}", path.display()));
            }
        }
    }
    match (unreadable, errors || unformatted) {
        (true, _) => Exit::Usage,
        (false, true) => Exit::Diagnostics,
        (false, false) => Exit::Success,
    }
}

/// The files a file includes that are not yet to be formatted, added to
/// `files` (one that cannot be read is `blkc check`'s B008).
fn included(
    ast: &blkc::language::ast::File,
    folder: &std::path::Path,
    seen: &mut Vec<std::path::PathBuf>,
    files: &mut Vec<std::path::PathBuf>,
) {
    for item in &ast.items {
        if let blkc::language::ast::Item::Include(include) = item {
            let path = folder.join(&*include.path.value);
            if let Ok(canonical) = std::fs::canonicalize(&path) {
                if !seen.contains(&canonical) {
                    seen.push(canonical);
                    files.push(path);
                }
            }
        }
    }
}

/// A unified diff from the file to its formatted text, as `diff -u` and
/// `git diff` print it. A diff of two texts that differ everywhere takes
/// time that grows with the square of their lines: after a second, the
/// diff is finished the quick way (still correct, maybe less tight).
fn diff(name: &str, source: &SourceFile, formatted: &str) -> String {
    similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Patience)
        .timeout(std::time::Duration::from_secs(1))
        .diff_lines(source.text.as_str(), formatted)
        .unified_diff()
        .context_radius(3)
        .header(name, &format!("{name} (formatted)"))
        .to_string()
}
