//! Properties: no input makes the front end panic; printed programs parse
//! back to the same AST; the grammar accepts and rejects what it should.

use crate::support::print;
use blkc::base::diagnostics::render::{render_json, render_terminal, RenderOptions};
use blkc::base::source::{SourceFile, Span};
use blkc::language::ast::*;
use proptest::prelude::*;

/// Parses, checks and renders; returns the diagnostics' codes.
fn run_front_end(name: &str, bytes: Vec<u8>) -> Vec<&'static str> {
    let (source, bad) = blkc::language::load::source_from_bytes(name, bytes);
    let checked = match bad {
        Some(d) => blkc::language::model::Checked::unreadable(source, d),
        None => blkc::language::load::check_source(source),
    };
    let _ = render_terminal(&checked.source, &checked.diagnostics, RenderOptions::default());
    let _ = render_json(&checked.source, &checked.diagnostics);
    checked.diagnostics.iter().map(|d| d.code.as_str()).collect()
}

fn examples() -> Vec<Vec<u8>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "blk"))
        .collect();
    files.sort();
    files.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

const SYNTAX_BYTES: &[u8] = b"{}[]\"\\<>=.,#\n api_[]response0-";

/// Each edit removes the byte at a place (0), inserts a syntax byte there
/// (1) or replaces it with one (2).
fn mutate(bytes: &mut Vec<u8>, edits: &[(prop::sample::Index, u8, usize)]) {
    for (at, kind, byte) in edits {
        if bytes.is_empty() {
            return;
        }
        let i = at.index(bytes.len());
        match kind {
            0 => {
                bytes.remove(i);
            }
            1 => bytes.insert(i, SYNTAX_BYTES[*byte]),
            _ => bytes[i] = SYNTAX_BYTES[*byte],
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        run_front_end("fuzz.blk", bytes);
    }

    #[test]
    fn mutated_programs_never_panic(
        which in 0usize..6,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, 0usize..SYNTAX_BYTES.len()), 1..6),
    ) {
        let all = examples();
        let mut bytes = all[which % all.len()].clone();
        mutate(&mut bytes, &edits);
        run_front_end("mutated.blk", bytes);
    }

    #[test]
    fn printed_programs_parse_back_to_the_same_ast(file in arb_file()) {
        let printed = print::file(&file);
        let parsed = blkc::language::syntax::parse(&SourceFile::new("printed.blk", printed.clone()));
        prop_assert!(parsed.complete && parsed.diagnostics.is_empty(), "{printed}\n{:#?}", parsed.diagnostics);
        let reprinted = print::file(&parsed.ast);
        prop_assert_eq!(&reprinted, &printed);
        let again = blkc::language::syntax::parse(&SourceFile::new("printed.blk", reprinted));
        prop_assert_eq!(again.ast, parsed.ast);
    }

    #[test]
    fn the_lexer_reads_strings_comments_and_references_as_the_grammar_does(
        file in arb_file(),
        comments in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4, 0usize..SYNTAX_BYTES.len()), 0..4),
    ) {
        let text = crate::fmt::with_comments(&print::file(&file), &comments);
        same_reading(&text)?;
        let mut bytes = text.into_bytes();
        for &(at, kind, byte) in &edits {
            if bytes.is_empty() { break; }
            let i = at.index(bytes.len());
            match kind {
                0..=2 => mutate(&mut bytes, &[(at, kind, byte)]),
                // Inside a string, a reference or a comment, where the two
                // readings could part.
                _ => {
                    use blkc::language::syntax::lexer::{Kind, Lexer};
                    let Ok(now) = std::str::from_utf8(&bytes) else { break };
                    let inside: Vec<usize> = Lexer::new(now)
                        .filter(|t| matches!(t.kind, Kind::Str { .. } | Kind::Reference { .. } | Kind::Comment) && t.end() - t.start() > 2)
                        .map(|t| t.start() + 1 + (i % (t.end() - t.start() - 2)))
                        .filter(|&j| now.is_char_boundary(j))
                        .collect();
                    if let Some(&j) = inside.get(i % inside.len().max(1)) {
                        bytes.insert(j, SYNTAX_BYTES[byte]);
                    }
                }
            }
        }
        if let Ok(mutated) = String::from_utf8(bytes) {
            same_reading(&mutated)?;
        }
    }

    #[test]
    fn a_squeezed_tree_reads_as_the_tree_as_written(
        file in arb_file(),
        comments in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, 0usize..SYNTAX_BYTES.len()), 0..4),
    ) {
        let mut bytes = crate::fmt::with_comments(&print::file(&file), &comments).into_bytes();
        mutate(&mut bytes, &edits);
        if let Ok(text) = String::from_utf8(bytes) {
            same_squeezed(&text)?;
        }
    }

    #[test]
    fn deep_nesting_never_overflows(depth in 1usize..3000, bracket in any::<bool>()) {
        let (open, close) = if bracket { ("[", "]") } else { ("{ a = ", "}") };
        let text = format!(
            "command c {{ api a {{ method POST url \"https://x.io\" body {{ k = {}1{} }} }} }}",
            open.repeat(depth), close.repeat(depth)
        );
        run_front_end("deep.blk", text.into_bytes());
    }
}

/// A tree read squeezed (its trivia taken out before pest reads it, the
/// way `check` reads a tree) and read as written give the same AST, spans
/// and all, and the same diagnostics.
fn same_squeezed(text: &str) -> Result<(), TestCaseError> {
    use blkc::language::syntax::{parse_with, Limits};
    let source = SourceFile::new("squeezed.blk", text.to_string());
    let squeezed = parse_with(&source, Limits { big_item: usize::MAX, threads: 1, ..Limits::default() });
    let as_written = parse_with(&source, Limits { big_item: 0, threads: 1, ..Limits::default() });
    prop_assert_eq!(&squeezed.ast, &as_written.ast, "{}", text);
    prop_assert_eq!(&squeezed.diagnostics, &as_written.diagnostics, "{}", text);
    prop_assert_eq!(squeezed.complete, as_written.complete);
    Ok(())
}

// ── strategies for ASTs (spans are filled by parsing, so they are zero) ──

/// The lexer and the grammar agree on `text`: every string and reference
/// the grammar reads is one closed token of the lexer with the same span,
/// the lexer finds none the grammar does not (in the items that parse), and
/// no comment of the lexer's is inside a token of the grammar's. The
/// lexer's tokens cover the text exactly.
fn same_reading(text: &str) -> Result<(), TestCaseError> {
    use blkc::language::syntax::lexer::{Kind, Lexer};
    use blkc::language::syntax::GrammarLeaf;
    let tokens: Vec<_> = Lexer::new(text).collect();
    let joined: String = tokens.iter().map(|t| t.text(text)).collect();
    prop_assert_eq!(&joined, text);
    let leaves = blkc::language::syntax::grammar_leaves(text);
    let parsed_to = leaves.iter().map(|(_, s)| s.end as usize).max().unwrap_or(0);
    for (leaf, span) in &leaves {
        let want = match leaf {
            GrammarLeaf::Str => Some(Kind::Str { closed: true }),
            GrammarLeaf::Reference => Some(Kind::Reference { closed: true }),
            GrammarLeaf::Other => None,
        };
        let same = tokens.iter().find(|t| t.span == *span);
        match want {
            Some(kind) => prop_assert!(
                same.is_some_and(|t| t.kind == kind),
                "the grammar reads {:?} at {:?} ({:?}), the lexer {:?}\n{}",
                leaf,
                span,
                &text[span.range()],
                same,
                text
            ),
            None => prop_assert!(
                !tokens.iter().any(|t| t.kind == Kind::Comment
                    && t.start() >= span.start as usize
                    && t.start() < span.end as usize),
                "a comment of the lexer's inside the grammar's token {:?}\n{}",
                &text[span.range()],
                text
            ),
        }
    }
    for t in tokens.iter().filter(|t| t.end() <= parsed_to) {
        let grammar = match t.kind {
            Kind::Str { .. } => Some(GrammarLeaf::Str),
            Kind::Reference { .. } => Some(GrammarLeaf::Reference),
            _ => None,
        };
        if let Some(g) = grammar {
            prop_assert!(
                leaves.contains(&(g, t.span)),
                "the lexer reads {:?} at {:?}, the grammar does not\n{}",
                t.kind,
                t.text(text),
                text
            );
        }
        if t.kind == Kind::Comment {
            prop_assert!(
                !leaves.iter().any(|(_, s)| s.start as usize <= t.start() && t.start() < s.end as usize),
                "the lexer's comment {:?} is inside a token of the grammar's\n{}",
                t.text(text),
                text
            );
        }
    }
    Ok(())
}

fn sp() -> Span {
    Span::default()
}

fn ident() -> impl Strategy<Value = Ident> {
    "[a-z_][a-z0-9_]{0,6}".prop_map(|name: String| Ident { name: name.into(), span: sp() })
}

/// A command's or an option's name: the platform's characters, in any
/// script (src/discord/names.rs).
fn name() -> impl Strategy<Value = Ident> {
    prop_oneof![
        ident(),
        "[a-zé日жन्][-a-z0-9é日жन्'_]{0,6}".prop_map(|name: String| Ident { name: name.into(), span: sp() })
    ]
}

fn part() -> impl Strategy<Value = Part> {
    prop_oneof![
        "\\PC{1,8}".prop_map(|s: String| Part::Lit(s.into(), sp())),
        "[A-Z][A-Z0-9_]{0,5}".prop_map(|name: String| Part::Secret(Ident { name: name.into(), span: sp() })),
        Just(Part::Var(Var::BotToken(sp()))),
        ident()
            .prop_filter("not bot_token", |i| i.name != "bot_token" && !i.name.starts_with("api_"))
            .prop_map(|i| Part::Var(Var::Named(i))),
        reference().prop_map(|r| Part::Var(Var::Ref(Box::new(r)))),
        element().prop_map(|e| Part::Var(Var::Element(Box::new(e)))),
        helped().prop_map(|h| Part::Var(Var::Helped(Box::new(h)))),
        drawn().prop_map(|d| Part::Var(Var::Draw(Box::new(d)))),
    ]
}

/// `{random 1 6}`, `{random 1 sides}`, `{chance 25}`.
fn drawn() -> impl Strategy<Value = blkc::language::ast::Drawn> {
    use blkc::language::helpers::{Bound, Draw};
    let var = ident().prop_filter("not bot_token", |i| i.name != "bot_token" && !i.name.starts_with("api_"));
    let bound = prop_oneof![
        (-1000i64..1000).prop_map(|n| (Bound::Number(n.to_string()), None)),
        var.prop_map(|i| (Bound::Var(i.name.to_string()), Some(i)))
    ];
    let var = ident().prop_filter("not bot_token", |i| i.name != "bot_token" && !i.name.starts_with("api_"));
    let chance = prop_oneof![
        (0u32..=100).prop_map(|n| (Bound::Number(n.to_string()), None)),
        var.prop_map(|i| (Bound::Var(i.name.to_string()), Some(i)))
    ];
    prop_oneof![
        (bound.clone(), bound).prop_map(|((low, a), (high, b))| {
            // Two numbers: the smaller first.
            let (low, high) = match (&low, &high) {
                (Bound::Number(l), Bound::Number(h)) if l.parse::<i64>().ok() > h.parse::<i64>().ok() => (high, low),
                _ => (low, high),
            };
            (Draw::Between(low, high), [a, b].into_iter().flatten().collect())
        }),
        chance.prop_map(|(p, a)| (Draw::Chance(p), a.into_iter().collect())),
    ]
    .prop_map(|(draw, variables)| blkc::language::ast::Drawn { draw, variables, span: sp() })
}

/// `{base|first 2|join ' | '}`: list helpers after a name, a reference or
/// an element path.
fn helped() -> impl Strategy<Value = Helped> {
    use blkc::language::helpers::Helper;
    let base = prop_oneof![
        ident()
            .prop_filter("not bot_token", |i| i.name != "bot_token" && !i.name.starts_with("api_"))
            .prop_map(Var::Named),
        reference().prop_map(|r| Var::Ref(Box::new(r))),
        element().prop_map(|e| Var::Element(Box::new(e))),
    ];
    let helper = prop_oneof![
        Just(Helper::Count),
        (1u32..100).prop_map(Helper::First),
        "[a-z ,;/&|'-]{0,3}".prop_map(Helper::Join),
    ];
    (base, proptest::collection::vec(helper, 1..4)).prop_map(|(base, helpers)| Helped { base, helpers, span: sp() })
}

/// `item[a.b]`: a loop element's path (a name not starting `api_`).
fn element() -> impl Strategy<Value = ElementRef> {
    (
        ident().prop_filter("not a block's reference", |i| !i.name.starts_with("api_")),
        proptest::collection::vec("[a-zA-Z0-9_ ]{1,6}", 1..4),
    )
        .prop_map(|(item, segs)| ElementRef {
            item,
            segments: segs.into_iter().map(|text: String| Segment { text: text.into(), span: sp() }).collect(),
            span: sp(),
        })
}

fn reference() -> impl Strategy<Value = Reference> {
    (ident(), prop::sample::select(vec!["response", "status"]), proptest::collection::vec("[a-zA-Z0-9_ ]{1,6}", 0..4))
        .prop_map(|(block, root, segs)| Reference {
            block,
            root: Ident { name: root.into(), span: sp() },
            segments: segs.into_iter().map(|text: String| Segment { text: text.into(), span: sp() }).collect(),
            span: sp(),
        })
}

/// Templates never hold two literal parts in a row (the scanner joins them).
fn template() -> impl Strategy<Value = Template> {
    proptest::collection::vec(part(), 0..5).prop_map(|parts| {
        let mut out: Vec<Part> = Vec::new();
        for p in parts {
            match (out.last_mut(), p) {
                (Some(Part::Lit(prev, _)), Part::Lit(s, _)) => prev.push_str(&s),
                (_, p) => out.push(p),
            }
        }
        Template { parts: out, span: sp() }
    })
}

fn key() -> impl Strategy<Value = Key> {
    prop_oneof!["[a-zA-Z0-9_.-]{1,8}", "\\PC{0,8}"].prop_map(|name: String| Key { name: name.into(), span: sp() })
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        (0u32..1000, 0u32..100).prop_map(|(a, b)| format!("{a}.{b}e3"))
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        template().prop_map(Value::Str),
        number().prop_map(|n: String| Value::Number(n.into(), sp())),
        any::<bool>().prop_map(|b| Value::Bool(b, sp())),
        Just(Value::Null(sp())),
        reference().prop_map(|r| Value::Ref(Box::new(r))),
        element().prop_map(|e| Value::Element(Box::new(e))),
    ];
    nested(leaf, 3, 4)
}

/// Arrays and objects of `leaf`s, `depth` deep, of fewer than `width` items.
fn nested(leaf: impl Strategy<Value = Value> + 'static, depth: u32, width: usize) -> impl Strategy<Value = Value> {
    leaf.prop_recursive(depth, 4 * width as u32, width as u32, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..width).prop_map(|v| Value::Array(v.into(), sp())),
            proptest::collection::vec((key(), inner), 0..width).prop_map(|es| Value::Object(
                es.into_iter().map(|(key, value)| Entry { key, value, span: sp() }).collect(),
                sp()
            )),
        ]
    })
}

/// A `var`'s default: a value without references, its strings one literal
/// part each (braces are text there).
fn fixed() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        "\\PC{0,8}".prop_map(|s: String| Value::Str(Template { parts: vec![Part::Lit(s.into(), sp())], span: sp() })),
        number().prop_map(|n: String| Value::Number(n.into(), sp())),
        any::<bool>().prop_map(|b| Value::Bool(b, sp())),
        Just(Value::Null(sp())),
    ];
    nested(leaf, 2, 3)
}

fn pair() -> impl Strategy<Value = Pair> {
    (key(), template()).prop_map(|(key, value)| Pair { key, value, span: sp() })
}

fn field() -> impl Strategy<Value = Field> {
    let kind = prop_oneof![
        ident().prop_map(FieldKind::Method),
        template().prop_map(FieldKind::Url),
        proptest::collection::vec(pair(), 0..3).prop_map(FieldKind::Params),
        proptest::collection::vec(pair(), 0..3).prop_map(FieldKind::Headers),
        body().prop_map(|b| FieldKind::Body(Box::new(b))),
        ("\\PC{0,8}", proptest::collection::vec("\\PC{0,8}", 0..2)).prop_map(|(value, more): (String, Vec<String>)| {
            let text = |value: String| Text { value: value.into(), span: sp() };
            FieldKind::Sample(std::iter::once(value).chain(more).map(text).collect())
        }),
        "\\PC{0,8}"
            .prop_map(|value: String| FieldKind::Cache(Box::new(Cache::For(Text { value: value.into(), span: sp() })))),
        "[a-z_][a-z0-9_.-]{0,10}"
            .prop_map(|name: String| FieldKind::Cache(Box::new(Cache::From(Key { name: name.into(), span: sp() })))),
        proptest::collection::vec(page_setting(), 0..4)
            .prop_map(|settings| FieldKind::Pages(Box::new(Pages { settings, span: sp() }))),
        ident().prop_map(FieldKind::Allow),
        (ident(), proptest::collection::vec(template(), 1..3))
            .prop_map(|(scheme, values)| FieldKind::Auth(Box::new(Auth { scheme, values }))),
        "\\PC{0,8}".prop_map(|value: String| FieldKind::Timeout(Text { value: value.into(), span: sp() })),
        ("0|[1-9][0-9]{0,2}", proptest::collection::vec(status(), 0..3), proptest::option::of("\\PC{0,6}")).prop_map(
            |(times, on, backoff): (String, Vec<Text>, Option<String>)| FieldKind::Retry(Box::new(Retry {
                times: Text { value: times.into(), span: sp() },
                on,
                backoff: backoff.map(|b| Text { value: b.into(), span: sp() }),
            }))
        ),
        proptest::collection::vec(status(), 0..3)
            .prop_map(|on| FieldKind::Failed(Box::new(Failed { on, branch: Branch { body: Vec::new(), span: sp() } }))),
    ];
    kind.prop_map(|kind| Field { keyword: sp(), kind, span: sp() })
}

fn page_setting() -> impl Strategy<Value = PageSetting> {
    let path = || "[a-z_][a-z0-9_.-]{0,10}".prop_map(|name: String| Key { name: name.into(), span: sp() });
    let number = || "0|[1-9][0-9]{0,2}".prop_map(|value: String| Text { value: value.into(), span: sp() });
    prop_oneof![
        path().prop_map(|k| PageSetting::Items(sp(), k)),
        (path(), path()).prop_map(|(k, p)| PageSetting::Cursor(sp(), k, p)),
        path().prop_map(|k| PageSetting::Next(sp(), k)),
        Just(PageSetting::NextLink(sp())),
        number().prop_map(|n| PageSetting::Max(sp(), n)),
        number().prop_map(|n| PageSetting::Limit(sp(), n)),
    ]
}

fn status() -> impl Strategy<Value = Text> {
    "[1-5][0-9xX]{2}".prop_map(|value: String| Text { value: value.into(), span: sp() })
}

/// Where a file's bytes come from: a path, a name, or text.
fn file_source() -> impl Strategy<Value = FileSource> {
    prop_oneof![
        "\\PC{0,8}".prop_map(|v: String| FileSource::Path(Text { value: v.into(), span: sp() })),
        ident().prop_map(FileSource::Name),
        template().prop_map(FileSource::Text),
    ]
}

/// A file a message carries, with its settings.
fn reply_file() -> impl Strategy<Value = ReplyItem> {
    (file_source(), settings()).prop_map(|(source, settings)| {
        ReplyItem::File(Box::new(blkc::language::ast::ReplyFile { keyword: sp(), source, settings, span: sp() }))
    })
}

/// A body of every kind the grammar reads.
fn body() -> impl Strategy<Value = Body> {
    let entries = || {
        proptest::collection::vec((key(), value()), 0..3)
            .prop_map(|es| es.into_iter().map(|(key, value)| Entry { key, value, span: sp() }).collect::<Vec<_>>())
    };
    let file =
        (file_source(), proptest::collection::vec((prop_oneof![Just("type"), Just("filename")], template()), 0..2))
            .prop_map(|(source, settings)| {
                let settings = settings.into_iter().map(|(w, t)| (Ident { name: w.into(), span: sp() }, t)).collect();
                PartValue::File(FilePart { source, settings, span: sp() })
            });
    let part = (key(), prop_oneof![template().prop_map(PartValue::Field), file]).prop_map(|(key, value)| PartDecl {
        key,
        value,
        span: sp(),
    });
    prop_oneof![
        entries().prop_map(|es| Body::Json(Value::Object(es.into_boxed_slice(), sp()))),
        value().prop_map(Body::Json),
        entries().prop_map(Body::Form),
        (template(), text()).prop_map(|(text, media_type)| Body::Text { text, media_type }),
        proptest::collection::vec(part, 0..3).prop_map(Body::Multipart),
    ]
}

fn text() -> impl Strategy<Value = Option<Text>> {
    proptest::option::of("\\PC{0,8}".prop_map(|value: String| Text { value: value.into(), span: sp() }))
}

/// An option's type word: a type, or a word that is not one (the checker's
/// business, not the parser's).
fn option_kind() -> impl Strategy<Value = Option<Ident>> {
    let words: Vec<&str> =
        blkc::discord::options::OptionType::ALL.iter().map(|t| t.as_str()).chain(["int", "text"]).collect();
    proptest::option::of(prop::sample::select(words).prop_map(|w| Ident { name: w.into(), span: sp() }))
}

fn choices() -> impl Strategy<Value = Option<Choices>> {
    let value = prop_oneof![
        "\\PC{0,8}".prop_map(|v: String| ChoiceValue::Text(Text { value: v.into(), span: sp() })),
        number().prop_map(|n| ChoiceValue::Number(n.into(), sp())),
    ];
    proptest::option::of(
        proptest::collection::vec((key(), value).prop_map(|(name, value)| Choice { name, value, span: sp() }), 0..4)
            .prop_map(|entries| Choices { entries, keyword: sp(), span: sp() }),
    )
}

fn op() -> impl Strategy<Value = CompareOp> {
    prop::sample::select(vec![
        CompareOp::Eq,
        CompareOp::Ne,
        CompareOp::Lt,
        CompareOp::Le,
        CompareOp::Gt,
        CompareOp::Ge,
        CompareOp::Contains,
        CompareOp::StartsWith,
        CompareOp::EndsWith,
    ])
}

fn operand() -> impl Strategy<Value = Value> {
    prop_oneof![
        template().prop_map(Value::Str),
        number().prop_map(|n: String| Value::Number(n.into(), sp())),
        any::<bool>().prop_map(|b| Value::Bool(b, sp())),
        reference().prop_map(|r| Value::Ref(Box::new(r))),
        element().prop_map(|e| Value::Element(Box::new(e))),
        ident()
            .prop_filter("a variable's name is no keyword", |i| {
                blkc::language::vocab::Keyword::parse(&i.name).is_none() && i.name.as_str() != "contains"
            })
            .prop_map(Value::Var),
    ]
}

fn save_node() -> impl Strategy<Value = Node> {
    let op = prop_oneof![
        Just(SaveOp::Set),
        Just(SaveOp::Append),
        Just(SaveOp::Remove),
        Just(SaveOp::RemoveAt),
        Just(SaveOp::Clear)
    ];
    // `save NAME = …`, or into a field of it: `save NAME[a.0] = …`.
    let field = proptest::option::of(proptest::collection::vec("[a-z][a-z0-9_]{0,4}|[0-9]|-[1-9]", 1..3));
    (ident().prop_filter("not a block", |i| !i.name.starts_with("api_")), op, value(), field).prop_map(
        |(name, op, value, field)| {
            let value = if op == SaveOp::Clear { Value::Array(Box::new([]), sp()) } else { value };
            let save = Save { name, op, value, start: 0 };
            match field {
                Some(path) => Node::SaveField(Box::new(blkc::language::ast::SaveField {
                    save,
                    path: path.into_iter().map(|text: String| Segment { text: text.into(), span: sp() }).collect(),
                    span: sp(),
                })),
                None => Node::Save(save),
            }
        },
    )
}

fn reply_item() -> impl Strategy<Value = ReplyItem> {
    let part = (0..blkc::language::vocab::EmbedPart::ALL.len(), template()).prop_map(|(k, value)| EmbedItem::Part {
        part: blkc::language::vocab::EmbedPart::ALL[k],
        key: sp(),
        value,
        span: sp(),
    });
    let field = (template(), template(), any::<bool>()).prop_map(|(name, value, inline)| EmbedItem::Field {
        name,
        value,
        inline: inline.then(sp),
        span: sp(),
    });
    let component = (
        any::<bool>(),
        proptest::option::of(ident()),
        settings(),
        proptest::collection::vec(
            (
                template(),
                template(),
                settings(),
                proptest::option::of((ident(), reference(), proptest::option::of(number()))),
            ),
            0..3,
        ),
    )
        .prop_map(|(button, handler, settings, choices)| {
            let kind = if button { ComponentKind::Button } else { ComponentKind::Select };
            // A select menu always names its handler, and only it has choices.
            let handler = if button { handler } else { Some(handler.unwrap_or_else(|| sp_ident("pick"))) };
            let choices = if button { Vec::new() } else { choices };
            ReplyItem::Component(Box::new(Component {
                kind,
                keyword: sp(),
                handler,
                settings,
                choices: choices
                    .into_iter()
                    .map(|(label, value, settings, each)| MenuChoice {
                        label,
                        value,
                        settings,
                        each: each.map(|(item, source, limit)| {
                            Box::new(ForNode {
                                item,
                                source: LoopSource::Ref(Box::new(source)),
                                order: None,
                                limit: limit.map(|n: String| Value::Number(n.into(), sp())),
                                join: None,
                                body: Branch { body: Vec::new(), span: sp() },
                                span: sp(),
                            })
                        }),
                        span: sp(),
                    })
                    .collect(),
                span: sp(),
            }))
        })
        .boxed();
    prop_oneof![
        template().prop_map(|value| ReplyItem::Text { value, span: sp() }),
        Just(ReplyItem::Ephemeral(sp())),
        (prop::sample::select(vec!["fr", "de", "pt-BR", "es", "zh-CN"]), template()).prop_map(|(l, value)| {
            ReplyItem::Translation(Box::new(blkc::language::ast::Translation {
                locale: Ident { name: l.into(), span: sp() },
                value,
                span: sp(),
            }))
        }),
        proptest::collection::vec(prop_oneof![part, field], 0..4)
            .prop_map(|items| ReplyItem::Embed(Embed { items, span: sp() })),
        component.clone(),
        layout(component),
        poll(),
        reply_file(),
    ]
}

/// A poll: settings (no word that starts an answer) and answers.
fn poll() -> impl Strategy<Value = ReplyItem> {
    use blkc::language::ast::{Poll, PollAnswer};
    let settings = || settings().prop_map(|l| l.into_iter().filter(|s| s.key.name != "answer").collect::<Vec<_>>());
    let answer = (template(), settings()).prop_map(|(text, settings)| PollAnswer { text, settings, span: sp() });
    (settings(), proptest::collection::vec(answer, 0..3)).prop_map(|(settings, answers)| {
        ReplyItem::Poll(Box::new(Poll { keyword: sp(), settings, answers, span: sp() }))
    })
}

/// A layout part: a container of texts, components, sections, separators
/// and galleries; a section of texts beside a thumbnail or a button; a
/// separator; a gallery (the checker reads which counts and settings hold).
fn layout(component: BoxedStrategy<ReplyItem>) -> impl Strategy<Value = ReplyItem> {
    use blkc::language::ast::{Layout, LayoutKind, Media};
    let media = (template(), layout_settings())
        .prop_map(|(url, settings)| Media { keyword: sp(), url, settings, span: sp() })
        .boxed();
    let text = template().prop_map(|value| ReplyItem::Text { value, span: sp() }).boxed();
    let part = |kind, items, media, settings| {
        ReplyItem::Layout(Box::new(Layout { kind, keyword: sp(), items, media, settings, span: sp() }))
    };
    let button = component
        .clone()
        .prop_filter("a section's button", |c| matches!(c, ReplyItem::Component(c) if c.kind == ComponentKind::Button));
    let section = (
        proptest::collection::vec(text.clone(), 0..3),
        proptest::option::of(media.clone()),
        proptest::option::of(button),
    )
        .prop_map(move |(mut items, thumbnail, button)| {
            items.extend(button);
            part(LayoutKind::Section, items, thumbnail.into_iter().collect(), Vec::new())
        })
        .boxed();
    let separator = layout_settings()
        .prop_map(move |settings| part(LayoutKind::Separator, Vec::new(), Vec::new(), settings))
        .boxed();
    let gallery = proptest::collection::vec(media, 0..3)
        .prop_map(move |media| part(LayoutKind::Gallery, Vec::new(), media, Vec::new()))
        .boxed();
    let inner = prop_oneof![text, component, section.clone(), separator.clone(), gallery.clone(), reply_file().boxed()];
    let container = (proptest::collection::vec(inner, 0..4), layout_settings())
        .prop_map(move |(items, settings)| part(LayoutKind::Container, items, Vec::new(), settings));
    prop_oneof![container, section, separator, gallery]
}

/// Settings of a form and its inputs: no `text`, which is a form's text.
fn form_settings() -> impl Strategy<Value = Vec<Setting>> {
    settings().prop_map(|list| list.into_iter().filter(|s| s.key.name != "text").collect())
}

/// Settings of a layout part: no word that starts one of its parts.
fn layout_settings() -> impl Strategy<Value = Vec<Setting>> {
    const PARTS: &[&str] =
        &["text", "button", "select", "container", "section", "separator", "gallery", "media", "thumbnail"];
    settings().prop_map(|list| list.into_iter().filter(|s| !PARTS.contains(&s.key.name.as_str())).collect())
}

fn sp_ident(name: &str) -> Ident {
    Ident { name: name.into(), span: sp() }
}

/// Settings: a word (never `choice` or `input`, which open parts of their
/// own) and at most one string or number.
fn settings() -> impl Strategy<Value = Vec<Setting>> {
    let key = ident().prop_filter("a setting's word", |i| !matches!(i.name.as_str(), "choice" | "input"));
    let value = proptest::option::of(prop_oneof![
        template().prop_map(SettingValue::Text),
        (0u32..5000).prop_map(|n| SettingValue::Number(n.to_string().into(), sp())),
    ]);
    let scope = proptest::option::of(ident());
    proptest::collection::vec(
        (key, value, scope).prop_map(|(key, value, scope)| Setting { key, value, scope, span: sp() }),
        0..3,
    )
}

/// A tree's `cooldown`: a string or a number, and at most one `per` word.
fn cooldown() -> impl Strategy<Value = Option<Setting>> {
    let value = prop_oneof![
        template().prop_map(SettingValue::Text),
        (0u32..5000).prop_map(|n| SettingValue::Number(n.to_string().into(), sp())),
    ];
    proptest::option::of((value, proptest::option::of(ident())).prop_map(|(value, scope)| Setting {
        key: Ident { name: "cooldown".into(), span: sp() },
        value: Some(value),
        scope,
        span: sp(),
    }))
}

/// `option NAME "…" TYPE [min N] [max N] [required] [choices { … }]`.
fn option_node() -> impl Strategy<Value = Node> {
    let bounds = proptest::collection::vec((any::<bool>(), number()), 0..3);
    let channels = proptest::option::of(words());
    let types = text();
    let autocomplete = proptest::option::of(proptest::collection::vec(choice_node(), 0..3));
    (name(), text(), option_kind(), any::<bool>(), (bounds, channels, types), choices(), autocomplete).prop_map(
        |(name, description, kind, required, (bounds, channels, types), choices, autocomplete)| {
            // (Both is the checker's B432.)
            let autocomplete = autocomplete.map(|body| {
                let tree = Tree::inner(TreeKind::Autocomplete, name.clone(), (None, None), body, sp());
                Box::new(Autocomplete { keyword: sp(), tree })
            });
            Node::Option(Box::new(OptionDecl {
                name,
                description,
                kind,
                required: required.then(sp),
                bounds: bounds.into_iter().map(|(max, n)| OptionBound { max, value: n.into(), span: sp() }).collect(),
                channels,
                file_types: types.map(|t| (sp(), t)),
                choices,
                autocomplete,
                span: sp(),
            }))
        },
    )
}

/// `choice "…" "…"`: any texts (the checker says where it may stand).
fn choice_node() -> impl Strategy<Value = Node> {
    (template(), template()).prop_map(|(name, value)| Node::Choice(Box::new(ChoiceNode { name, value, span: sp() })))
}

/// A keyword's list of words (any words: the checker reads them).
fn words() -> impl Strategy<Value = Words> {
    proptest::collection::vec(ident(), 1..4).prop_map(|words| Words { keyword: sp(), words, span: sp() })
}

/// `permissions …`, `contexts …`, `installs …`, `nsfw`, `locale …`.
fn register_node() -> impl Strategy<Value = Node> {
    let text = || "\\PC{0,8}".prop_map(|value: String| Text { value: value.into(), span: sp() });
    let option = (name(), text(), proptest::option::of(text())).prop_map(|(option, name, description)| LocaleOption {
        option,
        name,
        description,
        span: sp(),
    });
    let locale = (name(), text(), proptest::option::of(text()), proptest::collection::vec(option, 0..3)).prop_map(
        |(locale, name, description, options)| {
            Register::Locale(Locale { locale, name, description, options, choices: Vec::new(), span: sp() })
        },
    );
    prop_oneof![
        words().prop_map(Register::Permissions),
        words().prop_map(Register::Contexts),
        words().prop_map(Register::Installs),
        Just(Register::Nsfw(sp())),
        locale,
    ]
    .prop_map(|r| Node::Register(Box::new(r)))
}

/// `require WORD value, …`: strings and words (the checker reads them).
fn guard_node() -> impl Strategy<Value = Node> {
    let value = prop_oneof![template().prop_map(GuardValue::Text), ident().prop_map(GuardValue::Word)];
    (ident(), proptest::collection::vec(value, 1..4))
        .prop_map(|(what, values)| Node::Guard(Box::new(Guard { what, values, span: sp() })))
}

/// An action's verbs, kinds, words with values and flags, as the grammar
/// spells them.
const VERBS: &[&str] = &[
    "send", "dm", "react", "give", "take", "timeout", "kick", "ban", "unban", "nickname", "create", "delete", "pin",
    "unpin", "purge", "edit",
];
const KINDS: &[&str] = &["role", "message", "channel", "thread"];
const WORDS: &[&str] = &[
    "to",
    "from",
    "in",
    "for",
    "reason",
    "after",
    "reply_to",
    "delete_messages",
    "name",
    "topic",
    "category",
    "visible",
    "tags",
];
const FLAGS: &[&str] = &["off", "private"];
/// Words that start a node besides the verbs.
const NODE_WORDS: &[&str] = &[
    "api",
    "reply",
    "update",
    "form",
    "save",
    "if",
    "else",
    "option",
    "permissions",
    "contexts",
    "installs",
    "nsfw",
    "locale",
    "require",
    "text",
    "stop",
    "subcommand",
    "group",
    "choice",
    "failed",
    "with",
    "together",
    "cancel",
    "await",
    "at",
];

/// Whether an action's subject, or a name after `to`, can be `word`: not a
/// word of the action, a kind, or one that starts the next node.
fn can_be_a_name(word: &str) -> bool {
    word != "as" && ![VERBS, KINDS, WORDS, FLAGS, NODE_WORDS].iter().any(|list| list.contains(&word))
}

/// An action: any verb, kind, subject, words and message (the checker
/// reads which go together).
fn action_node() -> impl Strategy<Value = Node> {
    let word = |w: &'static str| Ident { name: w.into(), span: sp() };
    let name = || ident().prop_filter("a word of the action", |i| can_be_a_name(&i.name));
    let value = || {
        prop_oneof![
            template().prop_map(ActionValue::Text),
            number().prop_map(|n: String| ActionValue::Number(n.into(), sp())),
        ]
    };
    let kind = proptest::option::of(prop::sample::select(KINDS));
    let subject = proptest::option::of(prop_oneof![3 => value(), 1 => name().prop_map(ActionValue::Name)]);
    let arg = prop_oneof![
        (prop::sample::select(WORDS), proptest::collection::vec(value(), 1..3))
            .prop_map(move |(w, values)| ActionArg { word: word(w), values, span: sp() }),
        (prop::sample::select(vec!["to", "reply_to", "from", "as"]), name()).prop_map(move |(w, n)| ActionArg {
            word: word(w),
            values: vec![ActionValue::Name(n)],
            span: sp()
        }),
        prop::sample::select(FLAGS).prop_map(move |w| ActionArg { word: word(w), values: vec![], span: sp() }),
    ];
    let message = proptest::option::of(prop_oneof![
        template().prop_map(|text| Reply { block: false, ..Reply::text_only(text, sp()) }),
        proptest::collection::vec(reply_item(), 0..3).prop_map(|items| Reply {
            items,
            block: true,
            update: false,
            span: sp()
        }),
    ]);
    (prop::sample::select(VERBS), kind, subject, proptest::collection::vec(arg, 0..4), message).prop_map(
        move |(verb, kind, subject, args, message)| {
            // (A string message right after the verb would read as its
            // subject; a block right after `after "…"` starts an `after`.)
            let ends_after = args.last().is_some_and(|a| a.word.name == "after" && a.values.len() == 1);
            let message = message
                .filter(|m| m.block || subject.is_some() || !args.is_empty())
                .filter(|m| !(m.block && ends_after));
            Node::Action(Box::new(Action {
                verb: word(verb),
                kind: kind.map(word),
                subject,
                args,
                message,
                span: sp(),
            }))
        },
    )
}

fn node() -> impl Strategy<Value = Node> {
    let leaf =
        prop_oneof![
            action_node(),
            option_node(),
            register_node(),
            guard_node(),
            (ident(), proptest::collection::vec(field(), 0..4))
                .prop_map(|(name, fields)| Node::Api(Box::new(ApiBlock { name, fields, span: sp() }))),
            template().prop_map(|text| Node::Reply(Reply::text_only(text, sp()))),
            (proptest::collection::vec(reply_item(), 0..4), any::<bool>())
                .prop_map(|(items, update)| Node::Reply(Reply { items, block: true, update, span: sp() })),
            (
                ident(),
                form_settings(),
                proptest::collection::vec(
                    (ident(), form_settings(), proptest::collection::vec((template(), template()), 0..3)),
                    0..3
                ),
                proptest::collection::vec(template(), 0..2),
            )
                .prop_map(|(handler, settings, inputs, texts)| Node::Form(Box::new(Form {
                    handler,
                    settings,
                    inputs: inputs
                        .into_iter()
                        .map(|(name, settings, choices)| Input {
                            name,
                            settings,
                            choices: choices
                                .into_iter()
                                .map(|(label, value)| MenuChoice {
                                    label,
                                    value,
                                    settings: Vec::new(),
                                    each: None,
                                    span: sp()
                                })
                                .collect(),
                            span: sp(),
                        })
                        .collect(),
                    texts: texts.into_iter().map(|value| ReplyItem::Text { value, span: sp() }).collect(),
                    span: sp(),
                }))),
            save_node(),
            template().prop_map(|t| Node::Text(Box::new(t), sp())),
            Just(Node::Stop(sp())),
            choice_node(),
            (template(), proptest::option::of(prop::sample::select(vec!["user", "server", "x"]))).prop_map(
                |(key, scope)| Node::Cancel(Box::new(CancelNode {
                    key,
                    scope: scope.map(|s| Ident { name: s.into(), span: sp() }),
                    span: sp()
                }))
            ),
        ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        let source = prop_oneof![
            reference().prop_map(|r| LoopSource::Ref(Box::new(r))),
            element().prop_map(|e| LoopSource::Element(Box::new(e))),
            ident().prop_map(LoopSource::Name),
        ];
        let limit = proptest::option::of(prop_oneof![
            number().prop_map(|n: String| Value::Number(n.into(), sp())),
            template().prop_map(Value::Str),
            reference().prop_map(|r| Value::Ref(Box::new(r))),
        ]);
        let order = proptest::option::of((
            prop_oneof![element().prop_map(|e| LoopSource::Element(Box::new(e))), ident().prop_map(LoopSource::Name)],
            any::<bool>(),
        ));
        let for_node = (
            ident(),
            source,
            order,
            limit,
            proptest::option::of((template(), ident())),
            proptest::collection::vec(inner.clone(), 0..3),
        )
            .prop_map(|(item, source, order, limit, join, body)| {
                Node::For(Box::new(ForNode {
                    item,
                    source,
                    order: order.map(|(key, descending)| LoopOrder { key, descending, span: sp() }),
                    limit,
                    join: join.map(|(separator, into)| Join { separator, into, span: sp() }),
                    body: Branch { body, span: sp() },
                    span: sp(),
                }))
            });
        let if_node = (
            operand(),
            proptest::option::of((op(), operand())),
            proptest::collection::vec(inner.clone(), 0..3),
            proptest::option::of(proptest::collection::vec(inner.clone(), 0..3)),
        )
            .prop_map(|(left, test, then, otherwise)| {
                Node::If(Box::new(IfNode {
                    links: vec![IfLink {
                        condition: Condition { left, test: test.map(|(o, r)| (o, sp(), r)), span: sp() },
                        then: Branch { body: then, span: sp() },
                        span: sp(),
                    }],
                    otherwise: otherwise.map(|body| Branch { body, span: sp() }),
                    span: sp(),
                }))
            });
        let failed = proptest::collection::vec(inner.clone(), 0..3)
            .prop_map(|body| Node::Failed(Box::new(Branch { body, span: sp() }), sp()));
        prop_oneof![if_node, for_node, sub_node(inner.clone()), failed, later_node(inner.clone()), await_node(inner)]
    })
}

/// `after "…" key "…" note "…" per WORD { … }` or `at "…" { … }`, any
/// parts (the checker reads them).
fn later_node(inner: BoxedStrategy<Node>) -> impl Strategy<Value = Node> {
    let scope = proptest::option::of(prop::sample::select(vec!["user", "server", "x"]));
    (any::<bool>(), template(), proptest::option::of(template()), proptest::option::of(template()), scope)
        .prop_flat_map(move |(at, when, key, note, scope)| {
            proptest::collection::vec(inner.clone(), 0..3).prop_map(move |body| {
                Node::Later(Box::new(LaterNode {
                    at,
                    when: when.clone(),
                    key: key.clone(),
                    note: note.clone(),
                    scope: scope.map(|s| Ident { name: s.into(), span: sp() }),
                    body: Branch { body, span: sp() },
                    head: sp(),
                    span: sp(),
                }))
            })
        })
}

/// `await message "…" as NAME { … } [timeout { … }]`.
fn await_node(inner: BoxedStrategy<Node>) -> impl Strategy<Value = Node> {
    let body = || proptest::collection::vec(inner.clone(), 0..3);
    (template(), ident(), body(), proptest::option::of(body())).prop_map(|(wait, name, body, timeout)| {
        Node::Await(Box::new(AwaitNode {
            wait,
            name,
            body: Branch { body, span: sp() },
            timeout: timeout.map(|body| Branch { body, span: sp() }),
            head: sp(),
            span: sp(),
        }))
    })
}

/// A subcommand or a group (anywhere: the checker says where not).
fn sub_node(inner: BoxedStrategy<Node>) -> impl Strategy<Value = Node> {
    (any::<bool>(), name(), text(), cooldown(), proptest::collection::vec(inner, 0..3)).prop_map(
        |(group, word, description, cooldown, body)| {
            let tree = Tree::inner(TreeKind::Command, word.clone(), (description, cooldown), body, sp());
            Node::Sub(Box::new(Sub { group, keyword: sp(), word, tree }))
        },
    )
}

/// A timed event's head: any texts (the checker reads them), any channel.
fn schedule() -> impl Strategy<Value = Option<Schedule>> {
    use blkc::language::schedule::Written;
    let written = prop::sample::select(vec![Written::Every, Written::At, Written::Cron]);
    let text = || "\\PC{0,8}".prop_map(|value: String| Text { value: value.into(), span: sp() });
    proptest::option::of((written, text(), proptest::option::of(text()), template()).prop_map(
        |(written, when, zone, channel)| Schedule { written, keyword: sp(), when, zone, channel, span: sp() },
    ))
}

/// A webhook event's head: any path (the checker reads it), settings of
/// any of its words and of another, a word or a text each.
fn webhook() -> impl Strategy<Value = Option<Webhook>> {
    let text = || "\\PC{0,8}".prop_map(|value: String| Text { value: value.into(), span: sp() });
    let word =
        |words: Vec<&'static str>| prop::sample::select(words).prop_map(|w| Ident { name: w.into(), span: sp() });
    let value = prop_oneof![
        word(vec!["github", "stripe", "bearer", "x"]).prop_map(WebhookValue::Word),
        text().prop_map(WebhookValue::Text),
    ];
    let words = proptest::collection::vec((word(vec!["signed", "secret", "sample", "delivery", "other"]), value), 0..4);
    proptest::option::of((text(), words).prop_map(|(path, words)| {
        let block = ApiBlock { name: Ident { name: "webhook".into(), span: sp() }, fields: Vec::new(), span: sp() };
        Webhook { keyword: sp(), path, words, block, span: sp() }
    }))
}

pub(crate) fn arb_file() -> impl Strategy<Value = File> {
    let tree = (
        prop::sample::select(vec![TreeKind::Command, TreeKind::Event, TreeKind::Handler]),
        name(),
        text(),
        proptest::collection::vec(node(), 0..5),
        cooldown(),
        (schedule(), webhook()),
        proptest::option::of((ident(), "\\PC{1,8}")),
    )
        .prop_map(|(kind, name, description, body, cooldown, (schedule, webhook), menu)| {
            // (The grammar reads a schedule or a webhook in an event's head only.)
            let schedule = schedule.filter(|_| kind == TreeKind::Event).map(Box::new);
            let webhook = webhook.filter(|_| kind == TreeKind::Event && schedule.is_none()).map(Box::new);
            // (Only a command's name is the platform's; the others are words.)
            let name = if kind == TreeKind::Command || blkc::language::syntax::template::is_ident(&name.name) {
                name
            } else {
                Ident { name: format!("t_{}", name.name.len()).into(), span: sp() }
            };
            // (A command's name is a string in a menu: `command "A b" for user`.)
            let (name, menu) = match menu.filter(|_| kind == TreeKind::Command) {
                Some((target, shown)) => {
                    (Ident { name: shown.into(), span: sp() }, Some(Box::new(Menu { target, span: sp() })))
                }
                None => (name, None),
            };
            let mut tree = Tree {
                kind,
                name,
                description,
                cooldown,
                schedule,
                webhook,
                menu,
                body,
                parts: Parts::default(),
                span: sp(),
            };
            // (The parser names subcommands and autocompletes by their tree.)
            tree.name_parts();
            Item::Tree(tree)
        });
    let item = prop_oneof![
        4 => tree,
        1 => (ident(), proptest::option::of(fixed()), proptest::option::of(prop::sample::select(vec!["user", "server", "channel", "member"])), proptest::option::of("\\PC{0,8}"))
            .prop_map(|(name, default, scope, expires)| Item::Var(VarDecl {
                name,
                scope: scope.map(|w| Ident { name: w.into(), span: sp() }),
                default,
                expires: expires.map(|value: String| Text { value: value.into(), span: sp() }),
                span: sp()
            })),
        1 => "\\PC{0,8}".prop_map(|value: String| Item::Platform(Platform { url: Text { value: value.into(), span: sp() }, span: sp() })),
        1 => proptest::collection::vec(node(), 0..3).prop_map(|body| Item::Failed(Branch { body, span: sp() }, sp())),
        1 => "\\PC{0,8}".prop_map(|value: String| Item::Include(Include { path: Text { value: value.into(), span: sp() }, span: sp() })),
    ];
    proptest::collection::vec(item, 0..4).prop_map(|items| File { items })
}

// ── grammar tables ──

#[test]
fn grammar_accepts() {
    let accepted = [
        "",
        "# only a comment",
        "command c {}",
        "command c \"desc\" { reply \"x\" }",
        "event ready { reply \"{bot_name}\" }",
        "var v\nvar w = \"0\"",
        "platform \"https://discord.com/api\"",
        "command c { api a { method GET url \"https://x.io\" params { a = 1, b = true, c = \"s\" } } }",
        "command c { api a { method POST url \"https://x.io\" body { a = [1, -2.5e3, null, { b = false }] } } }",
        "command c { api a { method GET url \"https://x.io\" } reply \"{api_a[response.x.0.y z]}\" }",
        "command c { api a { method GET url \"https://x.io\" } if api_a[status] == 200 { } else if \"x\" contains \"y\" { } else { } }",
        "command c { save s = api_missing[response] }",
        "command c { reply \"\\{ \\} \\< \\> \\u{1F600} \\\" \\\\ \\n\" }",
        "command c { api a { method GET url \"https://x.io\" headers { \"X Weird\" = \"v\", X-Ok = \"w\" } } }",
        "command c { option x option y \"d\" }",
    ];
    for text in accepted {
        let parsed = blkc::language::syntax::parse(&SourceFile::new("t.blk", text));
        let syntax: Vec<_> = parsed.diagnostics.iter().map(|d| d.code.as_str()).collect();
        assert!(parsed.complete && syntax.is_empty(), "should parse: {text:?} got {syntax:?}");
    }
}

#[test]
fn grammar_rejects() {
    let rejected = [
        ("command", "B001"),
        ("command c", "B001"),
        ("command c {", "B001"),
        ("commandc {}", "B001"),
        ("apifoo", "B001"),
        ("command c { api a { method } }", "B001"),
        ("command c { api a { url https://x.io } }", "B001"),
        ("command c { reply x }", "B001"),
        ("command c { reply \"x }", "B001"),
        ("command c { api a { method GET url \"u\" params { a } } }", "B001"),
        ("command c { if { } }", "B001"),
        ("command c { else { } }", "B001"),
        ("command c { reply \"\\q\" }", "B004"),
        ("command c { reply \"{\" }", "B005"),
        ("command c { reply \"}\" }", "B005"),
        ("command c { reply \"{a b}\" }", "B005"),
        ("command c { reply \"{api_x[response}\" }", "B005"),
    ];
    for (text, code) in rejected {
        let parsed = blkc::language::syntax::parse(&SourceFile::new("t.blk", text));
        let codes: Vec<_> = parsed.diagnostics.iter().map(|d| d.code.as_str()).collect();
        assert!(codes.contains(&code), "{text:?} should give {code}, got {codes:?}");
    }
}

#[test]
fn spans_point_into_the_source() {
    for bytes in examples() {
        let text = String::from_utf8(bytes).unwrap();
        let parsed = blkc::language::syntax::parse(&SourceFile::new("e.blk", text.clone()));
        for item in &parsed.ast.items {
            if let Item::Tree(t) = item {
                assert!(text[t.span.range()].starts_with(t.kind.as_str()));
                // (A context-menu command's name is its string, quotes and all.)
                match &t.menu {
                    Some(_) => assert_eq!(text[t.name.span.range()].trim_matches('"'), t.name.name),
                    None => assert_eq!(&text[t.name.span.range()], t.name.name),
                }
            }
        }
    }
}

#[test]
fn the_lexer_and_the_grammar_agree_on_a_hash_in_a_reference() {
    let text = "command c {\n    save x = api_a[response.b#c]\n}\n";
    same_reading(text).unwrap();
    assert!(blkc::language::syntax::grammar_leaves(text)
        .iter()
        .any(|(k, _)| *k == blkc::language::syntax::GrammarLeaf::Reference));
}

/// A tree of every node kind, read a node at a time and, when a mistake
/// after it makes the whole item be read again, read whole: the same tree
/// (the property above found `require` missing from the whole reading).
#[test]
fn every_node_kind_reads_the_same_node_by_node_and_whole() {
    let tree = "command ban \"Ban\" {\n    permissions ban_members\n    require roles \"<MOD_ROLE>\"\n    locale fr \"bannir\" { who \"qui\" }\n    option who \"Who\" user required\n    option log \"Log\" channel in text\n    reply \"x\"\n}\ncommand \"Quote\" for message {\n    reply \"y\"\n}\n";
    for text in [tree.to_string(), format!("{tree}{{\n")] {
        same_squeezed(&text).unwrap();
        let parsed = blkc::language::syntax::parse(&SourceFile::new("t.blk", text.clone()));
        assert!(parsed.diagnostics.iter().all(|d| !d.message.contains("internal error")), "{:?}", parsed.diagnostics);
        assert_eq!(parsed.ast.trees().count(), 2, "{text}");
    }
}
