//! Large files are parsed on several threads; the result must be exactly the
//! sequential one, errors included.

use blkc::base::source::SourceFile;
use blkc::language::syntax::{parse_with, Limits};

/// About 3 MB: enough for the parser to cut it into chunks.
fn large_program() -> String {
    let one = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/order_status.blk")).unwrap();
    (0..4000).map(|i| one.replace("command order ", &format!("command order_{i} "))).collect()
}

fn limits(threads: usize) -> Limits {
    Limits { threads, ..Limits::default() }
}

#[test]
fn threaded_parse_equals_sequential_parse() {
    let text = large_program();
    assert!(text.len() > 2 << 20, "the program must be large enough to be split");
    let source = SourceFile::new("large.blk", text);
    let one = parse_with(&source, limits(1));
    let four = parse_with(&source, limits(4));
    assert!(one.complete && four.complete);
    assert_eq!(one.ast.items.len(), 4000);
    assert_eq!(one.ast, four.ast);
    assert_eq!(one.diagnostics, four.diagnostics);
}

#[test]
fn threaded_parse_reports_the_same_errors() {
    let mut text = large_program();
    // A syntax error three quarters in, and a scanner error near the start.
    let at = (text.len() * 3 / 4..).find(|i| text.is_char_boundary(*i)).unwrap();
    let line = text[at..].find("\n        reply").unwrap() + at;
    text.insert_str(line, "\n    metod GET");
    text = text.replacen("No order {option_number}.", "No order {option number}.", 1);
    let source = SourceFile::new("large.blk", text);
    let one = parse_with(&source, limits(1));
    let two = parse_with(&source, limits(2));
    assert!(!one.complete && !two.complete);
    assert_eq!(one.diagnostics, two.diagnostics);
    let codes: Vec<_> = one.diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["B005", "B001"]);
}
