//! Documentation stays true: every code has its page and every page its
//! code, and every example checks clean.

use std::path::Path;

use blkc::base::diagnostics::Code;
use blkc::base::source::SourceFile;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn every_code_has_a_page_and_every_page_a_code() {
    let listing = std::fs::read_to_string(Path::new(ROOT).join("docs/diagnostics.md")).unwrap();
    for code in Code::ALL {
        let page = code.page();
        assert!(page.starts_with(&format!("# {}", code.as_str())), "{} page has no title", code.as_str());
        for section in ["## What it means", "## Why", "## Example", "## Fix"] {
            assert!(page.contains(section), "{} page has no `{section}`", code.as_str());
        }
        assert!(
            listing.contains(&format!("[{}](codes/{}.md)", code.as_str(), code.as_str())),
            "docs/diagnostics.md does not list {}",
            code.as_str()
        );
    }
    for entry in std::fs::read_dir(Path::new(ROOT).join("docs/codes")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        let code = name.trim_end_matches(".md");
        assert!(Code::ALL.iter().any(|c| c.as_str() == code), "docs/codes/{name} documents no code");
    }
}

fn assert_clean(name: &str, text: &str) {
    let mut checked = blkc::language::load::check_source(SourceFile::new(name, text));
    // Which portal switch an event needs (B138) is no fault of the example.
    checked.diagnostics.retain(|d| d.code != blkc::base::diagnostics::Code::PrivilegedIntent);
    assert!(
        checked.diagnostics.is_empty(),
        "{name} must check clean:\n{}",
        blkc::base::diagnostics::render::render_terminal(&checked.source, &checked.diagnostics, Default::default())
    );
}

#[test]
fn examples_check_clean() {
    let mut count = 0;
    for entry in std::fs::read_dir(Path::new(ROOT).join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "blk") {
            assert_clean(&path.display().to_string(), &std::fs::read_to_string(&path).unwrap());
            count += 1;
        }
    }
    assert!(count >= 6, "examples/ should hold at least six programs, found {count}");
}

/// Every ```blk block of the docs checks clean (```blk-error blocks are
/// examples of mistakes and are left out).
#[test]
fn doc_examples_check_clean() {
    let mut count = 0;
    for doc in ["docs/language.md", "README.md"] {
        let text = std::fs::read_to_string(Path::new(ROOT).join(doc)).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.trim() == "```blk" {
                let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
                assert_clean(&format!("{doc} example {count}"), &block.join("\n"));
                count += 1;
            }
        }
    }
    assert!(count >= 10, "the docs should hold examples, found {count}");
}

/// The table of event kinds in docs/language.md, as the platform layer's
/// table (`discord::events`) makes it: a kind, what happened, its
/// variables, its intent and where its replies go. `BLKC_UPDATE_DOCS=1`
/// writes it.
fn event_table() -> String {
    use blkc::discord::events::{EVENTS, VARIABLES};
    use blkc::discord::intents;
    let mut out = String::from("| event | when | variables | intent | `reply` goes to |\n|---|---|---|---|---|\n");
    for e in EVENTS {
        let vars: Vec<String> = e.vars.iter().map(|v| format!("`{v}`")).collect();
        let intent = match intents::names(e.intent).as_str() {
            "none" => "none".to_string(),
            name => match intents::privileged(e.intent).first() {
                Some((_, switch)) => format!("{name} (privileged: *{switch}*)"),
                None => name.to_string(),
            },
        };
        out += &format!("| `{}` | {} | {} | {intent} | {} |\n", e.kind, e.about, vars.join(" "), e.reply.words());
    }
    out += "\n| variable | holds |\n|---|---|\n";
    for (name, what) in VARIABLES {
        out += &format!("| `{name}` | {what} |\n");
    }
    out
}

#[test]
fn the_docs_table_of_event_kinds_is_the_platform_layer_s() {
    let path = Path::new(ROOT).join("docs/language.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (open, close) = ("<!-- event kinds: made from src/discord/events.rs -->\n", "<!-- end of event kinds -->");
    let start = text.find(open).expect("docs/language.md has the table of event kinds") + open.len();
    let end = start + text[start..].find(close).unwrap();
    let made = event_table();
    if std::env::var_os("BLKC_UPDATE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{made}{}", &text[..start], &text[end..])).unwrap();
        return;
    }
    assert_eq!(&text[start..end], made, "run with BLKC_UPDATE_DOCS=1 to write it");
}

/// The README is for a newcomer first (issue 56, item 11): what blkc is, a
/// bot, the two set-up commands, how to start one's own, where to go next;
/// the figures a click away, in a short table.
#[test]
fn the_readme_says_what_blkc_is_before_its_figures() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let order = ["## A first bot", "## Set up", "## Start a bot", "## Where to go next", "## Performance"];
    let places: Vec<usize> =
        order.iter().map(|h| readme.find(&format!("\n{h}\n")).unwrap_or_else(|| panic!("no {h}"))).collect();
    assert!(places.windows(2).all(|w| w[0] < w[1]), "the README's sections in the order {order:?}");
    let intro = &readme[..places[0]];
    assert!(intro.contains("chat bots") && !intro.contains('|'), "what blkc is comes first, in words:\n{intro}");
    let rows = readme.lines().filter(|l| l.starts_with('|')).count();
    assert!(rows <= 10, "the README has {rows} table rows: the figures belong in docs/performance.md");
    for linked in ["docs/performance.md", "docs/reliability.md", "docs/examples.md"] {
        assert!(readme.contains(&format!("]({linked})")), "the README links {linked}");
        assert!(Path::new(ROOT).join(linked).exists(), "{linked} exists");
    }
    // Every example is shown by a command in docs/examples.md.
    let shown = std::fs::read_to_string(Path::new(ROOT).join("docs/examples.md")).unwrap();
    for entry in std::fs::read_dir(Path::new(ROOT).join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "blk") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(shown.contains(&format!("examples/{name}.blk")), "docs/examples.md shows examples/{name}.blk");
        }
    }
}
