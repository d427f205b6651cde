//! One fixture per diagnostic: `err_` fixtures must fail, `warn_` fixtures
//! must warn without failing, `hint_` fixtures must only hint, the rest must
//! check clean (hints allowed). A fixture named
//! after a code must report that code. Each rendered report is a snapshot.

use std::path::Path;

use blkc::base::diagnostics::render::{render_json, render_terminal, RenderOptions};
use blkc::base::diagnostics::{Code, Severity};
use blkc::language::syntax::Limits;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/check");

/// Reads `# fixture: max-file-size=N` from the first line, if present.
fn limits_of(text: &str) -> Limits {
    let mut limits = Limits::default();
    if let Some(n) = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# fixture: max-file-size="))
        .and_then(|n| n.trim().parse().ok())
    {
        limits.max_file_size = n;
    }
    limits
}

fn check_fixture(path: &Path) -> blkc::language::model::Checked {
    let name = format!("fixtures/check/{}", path.file_name().unwrap().to_string_lossy());
    if path.is_dir() {
        // A fixture that cannot be read (B007): a folder named like a file.
        let err = blkc::language::load::load(path, blkc::language::load::LoadOptions::default())
            .expect_err("a folder cannot be read as a file");
        let mut checked = err.into_checked();
        checked.source.name = name;
        return checked;
    }
    let bytes = std::fs::read(path).unwrap();
    let (source, bad_utf8) = blkc::language::load::source_from_bytes(&name, bytes);
    match bad_utf8 {
        Some(diag) => blkc::language::model::Checked::unreadable(source, diag),
        None => {
            let limits = limits_of(&source.text);
            // A bot in several files: its files read from beside it.
            let samples = blkc::language::model::Samples::in_folder(FIXTURES.into());
            let mut checked = blkc::language::load::check_bot(source, Some(Path::new(FIXTURES)), limits, samples);
            // (Named as the fixture is, from the crate's tests folder: the
            // snapshots hold no machine's path.)
            for part in &mut checked.source.parts {
                part.name = part.name.replace(FIXTURES, "fixtures/check");
            }
            for d in &mut checked.diagnostics {
                d.message = d.message.replace(FIXTURES, "fixtures/check");
            }
            checked
        }
    }
}

fn code_in_name(stem: &str) -> Option<&str> {
    stem.split('_').find(|part| part.len() == 4 && part.starts_with('B'))
}

#[test]
fn fixtures() {
    insta::glob!("fixtures/check/*.blk", |path| {
        let checked = check_fixture(path);
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let warnings = checked.diagnostics.iter().filter(|d| d.severity == Severity::Warning).count();
        if stem.starts_with("err_") {
            assert!(checked.has_errors(), "{stem} must fail but checked without errors");
        } else if stem.starts_with("warn_") {
            assert!(!checked.has_errors() && warnings > 0, "{stem} must warn and not fail");
        } else if stem.starts_with("hint_") {
            assert!(!checked.has_errors() && warnings == 0, "{stem} must only hint");
            assert!(checked.diagnostics.iter().any(|d| d.severity == Severity::Hint), "{stem} must hint");
        } else {
            // Hints are allowed: a clean file has no error or warning.
            assert!(
                checked.diagnostics.iter().all(|d| d.severity == Severity::Hint),
                "{stem} must check clean: {:#?}",
                checked.diagnostics
            );
        }
        if let Some(code) = code_in_name(&stem) {
            assert!(checked.diagnostics.iter().any(|d| d.code.as_str() == code), "{stem} must report {code}");
        }
        for d in &checked.diagnostics {
            assert!(d.help.is_some(), "{stem}: {} has no help line", d.code.as_str());
            assert!(d.primary_span().is_some(), "{stem}: {} has no span", d.code.as_str());
        }
        let opts = RenderOptions { color: false, width: 100 };
        insta::assert_snapshot!(render_terminal(&checked.source, &checked.diagnostics, opts));
    });
}

#[test]
fn every_code_has_a_fixture() {
    // Runtime codes have their fixtures in fixtures/run (tests/run_fixtures.rs).
    let run_fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run");
    // Registration codes in fixtures/deploy (tests/serve.rs).
    let deploy_fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/deploy");
    // Conversation tests' codes in fixtures/conversations (tests/conversations.rs).
    let conversation_fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/conversations");
    let names: Vec<String> = [FIXTURES, run_fixtures, deploy_fixtures, conversation_fixtures]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    for code in Code::ALL {
        assert!(names.iter().any(|n| n.contains(&format!("_{}_", code.as_str()))), "no fixture for {}", code.as_str());
    }
}

#[test]
fn json_report_has_positions_labels_and_help() {
    let checked = check_fixture(&Path::new(FIXTURES).join("err_B101_duplicate_block.blk"));
    insta::assert_snapshot!(serde_json::to_string_pretty(&render_json(&checked.source, &checked.diagnostics)).unwrap());
}

/// Every did-you-mean comes with its edit (an editor's quick fix; not made
/// by `--fix`, since a guessed name is not certain).
#[test]
fn a_did_you_mean_comes_with_its_edit() {
    use blkc::base::diagnostics::Confidence;
    let text = r#"command c {
    api forecast {
        method GET
        url "https://api.example.com/w"
        sample "samples/titles.json"
    }
    reply "{api_forcast[response.title]} {api_forecast[response.titel]}"
}
event member_joined {
    reply "hi"
}
"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("samples")).unwrap();
    std::fs::write(dir.path().join("samples/titles.json"), r#"{"title": "x"}"#).unwrap();
    std::fs::write(dir.path().join("bot.blk"), text).unwrap();
    let checked =
        blkc::language::load::load(&dir.path().join("bot.blk"), blkc::language::load::LoadOptions::default()).unwrap();
    for (code, replaced, with) in
        [("B111", "forcast", "forecast"), ("B201", "titel", "title"), ("B121", "member_joined", "member_join")]
    {
        let d = checked
            .diagnostics
            .iter()
            .find(|d| d.code.as_str() == code)
            .unwrap_or_else(|| panic!("{code}: {:#?}", checked.diagnostics));
        let s = d.suggestions.first().unwrap_or_else(|| panic!("{code} has no suggestion"));
        assert_eq!(s.confidence, Confidence::Maybe, "{code}");
        assert_eq!(&text[s.edits[0].span.range()], replaced, "{code}");
        assert_eq!(s.edits[0].replacement, with, "{code}");
    }
}
