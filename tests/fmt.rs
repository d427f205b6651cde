//! `blkc fmt`: for every example, fixture and documentation snippet that
//! parses, and for generated files with comments at random token
//! boundaries: (a) formatting twice changes nothing, (b) the meaning is the
//! same (the same plan, or where the file does not build, the same syntax
//! tree and the same findings), (c) the same comments in the same order.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use blkc::base::source::SourceFile;
use blkc::language::format::{comments, format_text};
use insta_cmd::get_cargo_bin;
use proptest::prelude::*;

use crate::support::print;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn comment_texts(text: &str) -> Vec<String> {
    comments(text).into_iter().map(|c| c.text).collect()
}

/// The plan as JSON, without source positions.
fn plan_without_positions(text: &str) -> Option<serde_json::Value> {
    let checked = blkc::language::load::check_source(SourceFile::new("f.blk", text.to_string()));
    let plan = blkc::language::plan::lower(&checked).ok()?;
    let mut value = serde_json::to_value(&plan).unwrap();
    strip_positions(&mut value);
    Some(value)
}

fn strip_positions(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(o) => {
            o.retain(|k, _| k != "span" && k != "at");
            o.values_mut().for_each(strip_positions);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_positions),
        _ => {}
    }
}

/// The findings of `blkc check`, without positions.
fn findings(text: &str) -> Vec<(String, String)> {
    let checked = blkc::language::load::check_source(SourceFile::new("f.blk", text.to_string()));
    checked.diagnostics.iter().map(|d| (d.code.as_str().to_string(), d.message.clone())).collect()
}

fn reprinted_ast(text: &str) -> String {
    print::file(&blkc::language::syntax::parse(&SourceFile::new("f.blk", text.to_string())).ast)
}

/// The three properties on one text; `Ok(false)` when it does not parse.
fn holds(name: &str, text: &str) -> Result<bool, String> {
    let Ok(once) = format_text(name, text) else { return Ok(false) };
    let twice =
        format_text(name, &once).map_err(|d| format!("{name}: the formatted text does not parse: {d:#?}\n{once}"))?;
    if twice != once {
        return Err(format!("{name}: formatting twice changed it:\n--- once\n{once}\n--- twice\n{twice}"));
    }
    match plan_without_positions(text) {
        Some(plan) => {
            if plan_without_positions(&once) != Some(plan) {
                return Err(format!("{name}: the plan changed\n{once}"));
            }
        }
        None => {
            if reprinted_ast(text) != reprinted_ast(&once) {
                return Err(format!("{name}: the syntax tree changed\n{once}"));
            }
            if findings(text) != findings(&once) {
                return Err(format!(
                    "{name}: the findings changed: {:#?} / {:#?}\n{once}",
                    findings(text),
                    findings(&once)
                ));
            }
        }
    }
    if comment_texts(text) != comment_texts(&once) {
        return Err(format!(
            "{name}: comments changed: {:#?} / {:#?}\n{once}",
            comment_texts(text),
            comment_texts(&once)
        ));
    }
    Ok(true)
}

/// Every example, fixture and `blk` snippet of the docs.
fn corpus() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["examples", "tests/fixtures/check", "tests/fixtures/run", "tests/fixtures/mistakes"] {
        let mut paths: Vec<_> = std::fs::read_dir(Path::new(ROOT).join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "blk"))
            .collect();
        paths.sort();
        for p in paths {
            if let Ok(text) = std::fs::read_to_string(&p) {
                out.push((p.strip_prefix(ROOT).unwrap().display().to_string(), text));
            }
        }
    }
    let mut docs: Vec<_> =
        std::fs::read_dir(Path::new(ROOT).join("docs/codes")).unwrap().map(|e| e.unwrap().path()).collect();
    docs.sort();
    docs.extend(["docs/language.md", "README.md", "docs/run.md", "docs/test.md"].map(|d| Path::new(ROOT).join(d)));
    for doc in docs {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (k, block) in text.split("```blk").skip(1).enumerate() {
            let body = block.split_once('\n').map_or("", |(_, rest)| rest);
            let snippet = body.split("```").next().unwrap_or_default();
            out.push((format!("{} snippet {k}", doc.display()), snippet.to_string()));
        }
    }
    out
}

#[test]
fn every_example_fixture_and_snippet_formats_idempotently_with_its_meaning_and_comments() {
    let mut formatted = 0;
    let mut failures = Vec::new();
    for (name, text) in corpus() {
        match holds(&name, &text) {
            Ok(true) => formatted += 1,
            Ok(false) => {}
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(formatted >= 100, "only {formatted} files and snippets formatted");
}

#[test]
fn examples_are_formatted() {
    for entry in std::fs::read_dir(Path::new(ROOT).join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "blk") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(
                format_text("x.blk", &text).unwrap(),
                text,
                "{} is not formatted: run `blkc fmt`",
                path.display()
            );
        }
    }
}

/// The docs are written in fmt's style (issue 56, item 9): a newcomer
/// who formats a snippet they copied gets it back as it was.
#[test]
fn the_docs_snippets_are_written_as_fmt_writes_them() {
    for doc in ["docs/language.md", "README.md", "docs/run.md", "docs/test.md", "docs/play.md", "docs/serve.md"] {
        let text = std::fs::read_to_string(Path::new(ROOT).join(doc)).unwrap();
        for (k, block) in text.split("```blk\n").skip(1).enumerate() {
            let snippet = block.split("```").next().unwrap_or_default();
            if let Ok(formatted) = format_text("x.blk", snippet) {
                assert_eq!(formatted, snippet, "{doc}'s snippet {k} is not in fmt's style");
            }
        }
    }
}

/// The newcomer's case: the docs' `reply { ephemeral text "…" }` and a
/// button of four settings stay on one line, as rustfmt keeps a short
/// struct literal; longer or commented ones are a part a line.
#[test]
fn short_blocks_stay_on_one_line() {
    let short = r#"command c "C" {
    reply { ephemeral text "You cannot give coins to yourself." }
    update { text "Done" }
    reply {
        text "Vote"
        button vote { label "Coffee" emoji "☕" value "coffee" expires "1d" }
    }
}
"#;
    // As the newcomer ran it: `blkc fmt --check` on the file.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), short).unwrap();
    let checked = blkc().args(["fmt", "--check", "bot.blk"]).current_dir(dir.path()).output().unwrap();
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stdout));
    let long = r#"command c "C" {
    reply { ephemeral text "A private answer long enough that the reply no longer fits in a line of a hundred." }
    reply { ephemeral text "x" # why
    }
    reply { text "a" button b { label "B" emoji "☕" value "b" expires "1d" disabled } }
}
"#;
    let expected = r#"command c "C" {
    reply {
        ephemeral
        text "A private answer long enough that the reply no longer fits in a line of a hundred."
    }
    reply {
        ephemeral
        text "x"  # why
    }
    reply {
        text "a"
        button b {
            label "B"
            emoji "☕"
            value "b"
            expires "1d"
            disabled
        }
    }
}
"#;
    assert_eq!(format_text("x.blk", long).unwrap(), expected);
}

#[test]
fn the_canonical_form_of_every_construct() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("tests/fixtures/fmt/every_construct.blk")).unwrap();
    let formatted = format_text("every_construct.blk", &text).unwrap();
    assert!(holds("every_construct.blk", &text).unwrap());
    insta::assert_snapshot!(formatted);
}

/// Inserts `# cN` comments at the given token boundaries of `text` (blanks
/// outside strings), each ending its line.
pub(crate) fn with_comments(text: &str, picks: &[prop::sample::Index]) -> String {
    use blkc::language::syntax::lexer::{Kind, Lexer};
    let boundaries: Vec<usize> =
        Lexer::new(text).filter(|t| matches!(t.kind, Kind::Blank | Kind::Newline)).map(|t| t.start()).collect();
    if boundaries.is_empty() {
        return format!("{text}\n# c0\n");
    }
    let mut at: Vec<usize> = picks.iter().map(|p| boundaries[p.index(boundaries.len())]).collect();
    at.sort();
    at.dedup();
    let mut out = String::new();
    let mut last = 0;
    for (n, &pos) in at.iter().enumerate() {
        out.push_str(&text[last..pos]);
        out.push_str(&format!(" # c{n} {{x}} \"q\"\n"));
        last = pos;
    }
    out.push_str(&text[last..]);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn generated_files_with_comments_keep_meaning_and_comments(
        file in crate::properties::arb_file(),
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let text = with_comments(&print::file(&file), &picks);
        let result = holds("generated.blk", &text);
        prop_assert!(matches!(result, Ok(true)), "{:?}\n--- input\n{}", result, text);
    }
}

fn blkc() -> Command {
    let mut cmd = Command::new(get_cargo_bin("blkc"));
    cmd.env("NO_COLOR", "1").env("COLUMNS", "100");
    cmd
}

#[test]
fn fmt_rewrites_in_place_and_check_prints_a_diff() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bot.blk");
    let messy = "# greet\ncommand  hello   {\n  reply    \"hi\"   # say hi\n\n\n  save n=1\n}\n";
    std::fs::write(&file, messy).unwrap();
    let out = blkc().args(["fmt", "--check"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let diff = String::from_utf8(out.stdout).unwrap();
    assert!(diff.starts_with("---") && diff.contains("\n+++ "), "{diff}");
    assert!(
        diff.contains("\n-  reply    \"hi\"   # say hi\n") && diff.contains("\n+    reply \"hi\"  # say hi\n"),
        "{diff}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), messy, "--check changes nothing");
    let out = blkc().arg("fmt").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let formatted = std::fs::read_to_string(&file).unwrap();
    assert_eq!(formatted, "# greet\ncommand hello {\n    reply \"hi\"  # say hi\n\n    save n = 1\n}\n");
    let out = blkc().args(["fmt", "--check"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
}

#[test]
fn fmt_of_stdin_goes_to_stdout() {
    let mut child = blkc()
        .args(["fmt", "-", "--stdin-filename", "bot.blk"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"command c{reply \"x\"}").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "command c {\n    reply \"x\"\n}\n");
}

#[test]
fn a_file_with_syntax_errors_is_not_touched() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.blk");
    let bad = "command c {\n    reply 'hi'\n}\n";
    std::fs::write(&file, bad).unwrap();
    let out = blkc().arg("fmt").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("B001") && stderr.contains("double quotes"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), bad);
}

/// A `var` default with a comment inside keeps its comment where it was
/// (the default stays as written); one without is put on one line.
#[test]
fn a_var_default_keeps_its_comments_in_place() {
    let commented = "var x = [\n    1, # one\n    2\n]\n";
    assert_eq!(format_text("a.blk", commented).unwrap(), commented);
    let plain = "var x = [\n    1,\n    2\n]\nvar y = { a = 1 }\n";
    assert_eq!(format_text("a.blk", plain).unwrap(), "var x = [1, 2]\nvar y = { a = 1 }\n");
}

#[test]
fn a_comment_after_a_choices_last_setting_stays_inside_its_braces() {
    // Found by the generated files: the choice ended at its last setting,
    // so a second formatting put the choice on one line and the comment
    // after it.
    let text = "command c {\n    reply { select pick { choice \"A\" \"a\" { emoji \"x\" # c1\n } } }\n}\n";
    let once = format_text("a.blk", text).unwrap();
    assert!(once.contains("emoji \"x\"  # c1\n            }"), "{once}");
    assert_eq!(format_text("a.blk", &once).unwrap(), once);
}
