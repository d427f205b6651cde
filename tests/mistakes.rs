//! The mistakes people make first (tests/fixtures/mistakes): habits from
//! JSON, YAML, `.http` and `.hurl` files, curl and JavaScript, and the slips
//! of a first hour. Each fixture's first line says where the mistake is
//! (`expect: LINE:COLUMN`, columns in characters). Each must give exactly
//! one error or warning (no cascade), with its primary label there and a
//! help line; where the fix is certain, `blkc check --fix` must leave a file
//! that checks clean. The snapshot shows the report and the fixed file.

use blkc::base::diagnostics::render::{render_terminal, RenderOptions};
use blkc::base::diagnostics::{Confidence, Severity};
use blkc::base::source::SourceFile;

fn check(name: &str, text: &str) -> blkc::language::model::Checked {
    blkc::language::load::check_source(SourceFile::new(name, text.to_string()))
}

fn expected_position(text: &str) -> (usize, usize) {
    let line = text.lines().next().unwrap_or("");
    let at = line.rsplit("expect: ").next().unwrap_or("");
    let (l, c) = at.trim().split_once(':').unwrap_or_else(|| panic!("no `expect: LINE:COLUMN` in {line:?}"));
    (l.parse().unwrap(), c.parse().unwrap())
}

#[test]
fn corpus_is_large() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mistakes");
    let count = std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "blk"))
        .count();
    assert!(count >= 40, "the corpus of newcomer mistakes holds {count} files, fewer than 40");
}

#[test]
fn each_mistake_gets_one_diagnostic_at_its_token() {
    insta::glob!("fixtures/mistakes/*.blk", |path| {
        let name = format!("fixtures/mistakes/{}", path.file_name().unwrap().to_string_lossy());
        let text = std::fs::read_to_string(path).unwrap();
        let checked = check(&name, &text);
        let found: Vec<_> = checked.diagnostics.iter().filter(|d| d.severity != Severity::Hint).collect();
        assert_eq!(found.len(), 1, "{name}: one mistake must give one error or warning, got {found:#?}");
        let diag = found[0];
        let span = diag.primary_span().expect("a primary label");
        assert_eq!(checked.source.line_col(span.start as usize), expected_position(&text), "{name}: {}", diag.message);
        assert!(diag.help.is_some(), "{name}: no help line");

        let opts = RenderOptions { color: false, width: 100 };
        let mut shown = render_terminal(&checked.source, &checked.diagnostics, opts);
        if diag.suggestions.iter().any(|s| s.confidence == Confidence::Certain) {
            let (after, applied) = blkc::language::load::fix_certain(check(&name, &text), |fixed| check(&name, &fixed));
            assert!(applied > 0);
            let fixed = after.source.text.clone();
            let left: Vec<_> = after.diagnostics.iter().filter(|d| d.severity != Severity::Hint).collect();
            assert!(left.is_empty(), "{name}: `--fix` left {left:#?}\n{fixed}");
            shown.push_str("\n── after `blkc check --fix` ──\n");
            shown.push_str(&fixed);
        }
        insta::assert_snapshot!(shown);
    });
}

#[test]
fn every_recogniser_fires_on_a_file_of_the_corpus() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mistakes");
    let mut fired = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "blk") {
            let text = std::fs::read_to_string(&path).unwrap();
            if let Some(name) = blkc::language::syntax::recognised_mistake(&text) {
                fired
                    .entry(name)
                    .or_insert_with(Vec::new)
                    .push(path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let silent: Vec<&str> = blkc::language::syntax::mistake_names().filter(|n| !fired.contains_key(n)).collect();
    assert!(silent.is_empty(), "recognisers no corpus file makes fire: {silent:?}");
}

#[test]
fn a_hash_inside_a_reference_is_not_a_comment_to_the_lost_brace_recogniser() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mistakes/lost_brace_after_hash_in_reference.blk"
    ))
    .unwrap();
    assert_eq!(blkc::language::syntax::recognised_mistake(&text), Some("lost_close_brace"));
    let checked = check("x.blk", &text);
    assert_eq!(checked.diagnostics[0].message, "`api b {` is never closed");
}

/// The help shows the edit: where a certain fix changes one line, its help
/// quotes that line as the fix leaves it.
#[test]
fn the_help_shows_the_line_the_fix_makes() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mistakes");
    let mut checked_any = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "blk") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let checked = check("m.blk", &text);
        for d in &checked.diagnostics {
            let Some(s) = d.suggestions.iter().find(|s| s.confidence == Confidence::Certain) else { continue };
            let line_of = |at: usize| {
                (text[..at].rfind('\n').map_or(0, |i| i + 1), text[at..].find('\n').map_or(text.len(), |i| at + i))
            };
            let (start, end) = line_of(s.edits[0].span.start as usize);
            if s.edits.iter().any(|e| (e.span.start as usize) < start || (e.span.end as usize) > end) {
                continue; // an edit over several lines: no one line to show
            }
            let mut line = text[start..end].to_string();
            let mut edits = s.edits.clone();
            edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
            for e in edits {
                line.replace_range(e.span.start as usize - start..e.span.end as usize - start, &e.replacement);
            }
            let fixed = line.trim();
            if fixed.contains('\n') || fixed.is_empty() {
                continue;
            }
            let help = d.help.as_deref().unwrap_or("");
            // The fixed line, or (for one edit) what it writes, in backticks.
            let replacement = s.edits[0].replacement.trim();
            let shows_edit = s.edits.len() == 1
                && !replacement.is_empty()
                && help.split('`').skip(1).step_by(2).any(|quoted| quoted.contains(replacement));
            assert!(
                help.contains(fixed) || shows_edit,
                "{}: the help does not show the fixed line `{fixed}`: {help}",
                path.display()
            );
            checked_any += 1;
        }
    }
    assert!(checked_any > 20, "only {checked_any} fixes compared");
}

/// Every certain fix of the corpus leaves the lines a person evidently
/// meant, as reviewed and written down in `fixtures/mistakes/means.txt`: a
/// fix that would save `"joins + 1"` as text, or quote a variable's name, is
/// caught here. A new certain fix must add its lines there.
#[test]
fn every_certain_fix_leaves_what_was_meant() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mistakes");
    let listed = std::fs::read_to_string(dir.join("means.txt")).unwrap();
    let mut means: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for line in listed.lines().filter(|l| !l.starts_with('#')) {
        let (file, fixed) = line.split_once(": ").unwrap_or((line.trim_end_matches(':'), ""));
        means.entry(file.to_string()).or_default().push(fixed.to_string());
    }
    let mut fixed_files = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "blk") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let checked = check(&name, &text);
        if !checked.diagnostics.iter().any(|d| d.suggestions.iter().any(|s| s.confidence == Confidence::Certain)) {
            assert!(!means.contains_key(&name), "{name} is in means.txt but has no certain fix");
            continue;
        }
        let (after, _) = blkc::language::load::fix_certain(checked, |fixed| check(&name, &fixed));
        let diff = similar::TextDiff::from_lines(text.as_str(), after.source.text.as_str());
        let mut added: Vec<String> = diff
            .iter_all_changes()
            .filter(|c| c.tag() == similar::ChangeTag::Insert)
            .map(|c| c.value().trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        if added.is_empty() {
            added.push(String::new());
        }
        let want =
            means.get(&name).unwrap_or_else(|| panic!("{name}: its certain fix leaves {added:?}; add it to means.txt"));
        assert_eq!(&added, want, "{name}: the fix does not leave what was meant");
        fixed_files.push(name);
    }
    assert_eq!(fixed_files.len(), means.len(), "means.txt lists files without a certain fix");
}

#[test]
fn a_fix_never_changes_a_comment_or_moves_text_into_a_string() {
    // Pasted curl options and commands, quoted every way, each with a
    // trailing comment (some with `#` inside the quotes too).
    let headers = [
        "-H \"Accept: application/json\"",
        "-H 'Accept: application/json'",
        "--header \"X-Tag: #1\"",
        "-H 'X-Tag: a # b'",
        "-H \"Authorization: Bearer <KEY>\"",
    ];
    let methods = ["-X POST", "-X 'PUT'", "--request \"DELETE\""];
    let comments = ["# note", "#note", "# keep: \"quoted\" {braces}", "# -H 'X: y'"];
    let mut lines = Vec::new();
    for c in comments {
        for h in headers {
            lines.push(format!("{h} {c}"));
            lines.push(format!("{h}   {c}"));
            lines.push(format!("curl https://api.example.com/x {h} {c}"));
        }
        for m in methods {
            lines.push(format!("{m} {c}"));
            lines.push(format!("curl {m} 'https://api.example.com/x' {c}"));
        }
    }
    for line in lines {
        let text = format!("command c {{\n    api a {{\n        method GET\n        url \"https://api.example.com/x\"\n        {line}\n    }}\n}}\n");
        let before: Vec<String> = blkc::language::format::comments(&text).into_iter().map(|c| c.text).collect();
        let (after, _) = blkc::language::load::fix_certain(check("t.blk", &text), |fixed| check("t.blk", &fixed));
        let fixed = &after.source.text;
        let kept: Vec<String> = blkc::language::format::comments(fixed).into_iter().map(|c| c.text).collect();
        assert_eq!(kept, before, "the comment changed or moved:\n{line}\n=>\n{fixed}");
    }
}

/// pest's error detail is one switch for the whole process: files with
/// mistakes checked on several threads at once are described as each is
/// alone (a re-parse ending on one thread once switched it off under
/// another's, which then described its mistake differently).
#[test]
fn mistakes_checked_on_several_threads_at_once_are_described_as_alone() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mistakes");
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "blk"))
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    files.sort();
    let describe = |(name, text): &(String, String)| -> Vec<(String, Option<blkc::base::source::Span>)> {
        check(name, text).diagnostics.iter().map(|d| (d.message.clone(), d.primary_span())).collect()
    };
    let alone: Vec<_> = files.iter().map(describe).collect();
    let files = std::sync::Arc::new(files);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let files = files.clone();
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                for round in 0..5 {
                    // Each thread in its own order, so different files overlap.
                    for i in 0..files.len() {
                        let k = (i * (t + 1) + round) % files.len();
                        seen.push((k, describe(&files[k])));
                    }
                }
                seen
            })
        })
        .collect();
    for thread in threads {
        for (k, described) in thread.join().unwrap() {
            assert_eq!(described, alone[k], "{}", files[k].0);
        }
    }
}

/// Names in other scripts where reading stops (found by the fuzz target):
/// each recogniser steps through the text by characters, never by bytes.
#[test]
fn names_in_other_scripts_where_reading_stops_get_one_diagnostic() {
    for text in [
        "command ommand Привет \"Greets\" {\n    reply \"x\"\n}\n",
        "command ping Привет \"Greets\" {\n    reply \"x\"\n}\n",
        "command Привет \"Greets\" {\n    option И<SECRET><SECRET> \"Whom\"\n    reply \"x\"\n}\n",
        "command \"Привет\" \"Greets\" {\n    reply \"x\"\n}\n",
        "command x \"x\" {\n    option имя.фамилия \"Whom\"\n    reply \"x\"\n}\n",
        "command \"é\"é {\n}\n",
    ] {
        let checked = check("m.blk", text);
        assert_eq!(checked.diagnostics.len(), 1, "{text}: {:?}", checked.diagnostics);
    }
}
