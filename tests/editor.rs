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
    for fixture in ["tests/fixtures/fmt/every_construct.blk", "examples/weather.blk"] {
        let file = Path::new(ROOT).join(fixture);
        let out = node::node("tokenize.js", &[grammar.as_os_str(), file.as_os_str()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let tokens = String::from_utf8(out.stdout).unwrap();
        // Strings, variables, paths, slots and comments each have a scope.
        for scope in ["variable.other.block-reference.blk", "comment.line.number-sign.blk", "string.quoted.double.blk"]
        {
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
        "extension/extension.js",
        "vscode-languageclient",
    ] {
        assert!(listing.contains(part), "the package holds {part}");
    }
}
