//! The editor, with the clients VS Code is built on: the JSON-RPC and
//! protocol libraries of its language client drive `blkc lsp`, its TextMate
//! engine tokenises files with the extension's grammar, and vsce packages
//! the extension.

use std::path::Path;
use std::process::Command;

use insta_cmd::get_cargo_bin;

use crate::support::node;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn vscode_s_protocol_libraries_drive_the_server() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("samples")).unwrap();
    std::fs::copy(
        Path::new(ROOT).join("tests/fixtures/lsp/samples/forecast.json"),
        dir.path().join("samples/forecast.json"),
    )
    .unwrap();
    std::fs::copy(Path::new(ROOT).join("tests/fixtures/lsp/bot.blk"), dir.path().join("bot.blk")).unwrap();
    let blkc = get_cargo_bin("blkc");
    let out = node::node("lsp-client.js", &[blkc.as_os_str(), dir.path().as_os_str()]);
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["opened"][0], "B103");
    assert_eq!(summary["quickfix"], "write `GET`");
    assert_eq!(summary["exit"], 0);
}

#[test]
fn the_textmate_grammar_tokenises_like_vscode() {
    let grammar = Path::new(ROOT).join("editors/vscode/syntaxes/blk.tmLanguage.json");
    // Strings, variables, paths, slots and comments each have a scope;
    // names in any script are names.
    let reference = "variable.other.block-reference.blk";
    for (fixture, scopes) in [
        ("tests/fixtures/fmt/every_construct.blk", &[reference][..]),
        ("examples/weather.blk", &[reference][..]),
        (
            "examples/names.blk",
            &["entity.name.function.blk", "variable.other.declaration.blk", "variable.other.blk"][..],
        ),
    ] {
        let file = Path::new(ROOT).join(fixture);
        let out = node::node("tokenize.js", &[grammar.as_os_str(), file.as_os_str()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let tokens = String::from_utf8(out.stdout).unwrap();
        for scope in scopes.iter().chain(&["comment.line.number-sign.blk", "string.quoted.double.blk"]) {
            assert!(tokens.contains(scope), "{fixture}: no {scope}");
        }
        let name = Path::new(fixture).file_stem().unwrap().to_string_lossy().to_string();
        insta::assert_snapshot!(format!("tokens_{name}"), tokens);
    }
}

#[test]
fn the_extension_packages_into_a_vsix() {
    node::extension_modules();
    let vsce = node::modules().join("@vscode/vsce/vsce");
    let dir = tempfile::tempdir().unwrap();
    let vsix = dir.path().join("blkc.vsix");
    let out = Command::new("node")
        .arg(&vsce)
        .args(["package", "--out"])
        .arg(&vsix)
        .current_dir(Path::new(ROOT).join("editors/vscode"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(&vsix).unwrap();
    assert!(bytes.starts_with(b"PK"), "a .vsix is a zip");
    let listing = String::from_utf8_lossy(&bytes);
    for part in [
        "extension/package.json",
        "extension/syntaxes/blk.tmLanguage.json",
        "extension/syntaxes/blkt.tmLanguage.json",
        "extension/extension.js",
        "vscode-languageclient",
    ] {
        assert!(listing.contains(part), "the package holds {part}");
    }
}

/// The Neovim 0.7–0.10 recipe of docs/editor.md, run as written in a
/// headless Neovim: the server starts and the diagnostics arrive. Needs
/// `nvim` (CI installs Debian's, 0.7.2); without it the test says so and
/// passes, since the other editor tests cover the server itself.
#[test]
fn the_neovim_recipe_of_the_docs_gets_diagnostics() {
    if Command::new("nvim").arg("--version").output().is_err() {
        eprintln!("skipped: no `nvim` on this machine (CI installs it)");
        return;
    }
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/editor.md")).unwrap();
    let section = doc.split("## Neovim 0.7 to 0.10").nth(1).expect("the section");
    let recipe = section.split("```lua").nth(1).and_then(|r| r.split("```").next()).expect("its Lua block");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("init.lua"), recipe).unwrap();
    std::fs::write(dir.path().join("bot.blk"), "command c {\n    reply \"{option_citty}\"\n}\n").unwrap();
    std::fs::write(
        dir.path().join("probe.lua"),
        r#"vim.cmd("edit bot.blk")
vim.wait(10000, function() return #vim.diagnostic.get(0) > 0 end, 50)
for _, d in ipairs(vim.diagnostic.get(0)) do io.stdout:write(tostring(d.code) .. "\n") end
io.stdout:write("filetype " .. vim.bo.filetype .. "\n")
vim.cmd("qa!")
"#,
    )
    .unwrap();
    let blkc = get_cargo_bin("blkc");
    let path = format!("{}:{}", blkc.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("nvim")
        .args(["--headless", "-u", "init.lua", "-c", "luafile probe.lua"])
        .current_dir(dir.path())
        .env("PATH", path)
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("filetype blk"), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.lines().any(|l| l == "B115"), "no diagnostics from blkc lsp: {stdout}");
}

/// Test files (`.blkt`) have a TextMate grammar of their own: steps,
/// expectations, names, strings and comments each have a scope, as VS
/// Code's own engine reads them.
#[test]
fn the_test_files_textmate_grammar_tokenises_like_vscode() {
    let grammar = Path::new(ROOT).join("editors/vscode/syntaxes/blkt.tmLanguage.json");
    for fixture in ["examples/poll.blkt", "examples/settings.blkt", "tests/fixtures/conversations/bot.blkt"] {
        let file = Path::new(ROOT).join(fixture);
        let out = node::node("tokenize.js", &[grammar.as_os_str(), file.as_os_str()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let tokens = String::from_utf8(out.stdout).unwrap();
        for scope in [
            "storage.type.test.blkt",
            "keyword.other.step.blkt",
            "keyword.control.expect.blkt",
            "entity.name.function.blkt",
            "string.quoted.double.blkt",
            "comment.line.number-sign.blkt",
        ] {
            assert!(tokens.contains(scope), "{fixture}: no {scope}");
        }
        let name = Path::new(fixture).file_stem().unwrap().to_string_lossy().to_string();
        insta::assert_snapshot!(format!("blkt_tokens_{name}"), tokens);
    }
}

/// Every word of the test files' grammar (grammar/conversation.pest: its
/// keywords and an `as` line's words) is in a pattern of their TextMate
/// grammar: a word added to one and not the other would show as plain text.
#[test]
fn every_word_of_the_test_files_is_highlighted_by_their_textmate_grammar() {
    let pest = std::fs::read_to_string(Path::new(ROOT).join("grammar/conversation.pest")).unwrap();
    let mut words: Vec<String> = pest
        .lines()
        .filter_map(|l| {
            l.trim().strip_prefix("kw_")?.split_once("@{ \"")?.1.split_once('"').map(|(w, _)| w.to_string())
        })
        .collect();
    let member = pest.lines().find(|l| l.starts_with("member_word")).expect("the `as` line's words");
    words.extend(member.split('"').skip(1).step_by(2).map(str::to_string));
    assert!(words.len() > 50, "{words:?}");
    let grammar =
        std::fs::read_to_string(Path::new(ROOT).join("editors/vscode/syntaxes/blkt.tmLanguage.json")).unwrap();
    let grammar: serde_json::Value = serde_json::from_str(&grammar).unwrap();
    let mut patterns = Vec::new();
    collect_matches(&grammar, &mut patterns);
    for word in &words {
        let listed = patterns.iter().any(|p| p.split(['(', ')', '|']).any(|alternative| alternative == word));
        assert!(listed, "`{word}` of grammar/conversation.pest is not in any pattern of blkt.tmLanguage.json");
    }
}

/// Every `match` pattern of a TextMate grammar.
fn collect_matches(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            if let Some(m) = map.get("match").and_then(|m| m.as_str()) {
                out.push(m.to_string());
            }
            map.values().for_each(|v| collect_matches(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_matches(v, out)),
        _ => {}
    }
}

#[test]
fn every_keyword_of_the_language_is_highlighted_by_the_textmate_grammar() {
    // The grammar's words are `vocab::Keyword`; a word added there and not
    // to the editor's grammar would show as plain text.
    let grammar =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/editors/vscode/syntaxes/blk.tmLanguage.json"))
            .unwrap();
    let grammar: serde_json::Value = serde_json::from_str(&grammar).unwrap();
    let mut patterns = Vec::new();
    collect_matches(&grammar, &mut patterns);
    for keyword in blkc::language::vocab::Keyword::ALL {
        let word = keyword.as_str();
        let listed = patterns.iter().any(|p| {
            p.split(['(', ')', '|']).any(|alternative| alternative == word || alternative == format!("\\b{word}\\b"))
        });
        assert!(listed, "`{word}` is not in any pattern of the TextMate grammar");
    }
}
