//! The library's layers, enforced: every file of `src/` belongs to one
//! layer, a file imports only from its own layer or one below, and no two
//! files import each other, however long the way round. The import graph
//! is read from the source as the compiler would resolve it (`use` trees,
//! paths in code, `super::`, `self::` and a module's own children), with
//! comments, strings and `#[cfg(test)]` modules left out.
//!
//! `docs/architecture.md` draws the layers; the table here is the one the
//! test holds the code to. `LAYERS_DEBUG=1` prints every arrow it reads.
//! The same reading holds every function to the house style's 80 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first, by the folder of `src/` that holds each.
/// A layer may import its own files and those of the layers before it.
pub(crate) const LAYERS: &[&str] = &["base", "discord", "language", "run", "host"];

/// One module of the crate: its path (`["run", "eval", "http"]`) and file.
struct Module {
    path: Vec<String>,
    file: PathBuf,
    children: BTreeSet<String>,
}

/// What the graph breaks: arrows up a layer and cycles between files.
#[derive(Debug, Default)]
pub(crate) struct Breaks {
    pub(crate) upward: Vec<String>,
    pub(crate) cycles: Vec<Vec<String>>,
    pub(crate) outside: Vec<String>,
}

impl Breaks {
    fn is_empty(&self) -> bool {
        self.upward.is_empty() && self.cycles.is_empty() && self.outside.is_empty()
    }
}

/// Reads the crate under `src` (its `lib.rs` and every module below) and
/// returns what breaks the layering.
pub(crate) fn breaks(src: &Path, layers: &[&str]) -> Breaks {
    breaks_by(src, &|top: &str| layers.iter().position(|l| *l == top))
}

fn breaks_by(src: &Path, layer_of: &dyn Fn(&str) -> Option<usize>) -> Breaks {
    let modules = modules(src);
    let index: BTreeMap<Vec<String>, usize> = modules.iter().enumerate().map(|(i, m)| (m.path.clone(), i)).collect();
    let mut edges: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); modules.len()];
    for (i, module) in modules.iter().enumerate() {
        let text = std::fs::read_to_string(&module.file).unwrap();
        for path in imports(&code_of(&text), module) {
            if let Some(to) = resolve(&index, &path) {
                if std::env::var("LAYERS_DEBUG").is_ok() && to != i {
                    println!("EDGE {} -> {} :: {}", module.file.display(), modules[to].file.display(), path.join("::"));
                }
                if to != i {
                    edges[i].insert(to);
                }
            }
        }
    }
    let name = |i: usize| modules[i].file.strip_prefix(src).unwrap().display().to_string();
    let layer = |i: usize| modules[i].path.first().and_then(|top| layer_of(top));
    let mut found = Breaks::default();
    for (i, to) in edges.iter().enumerate() {
        if !modules[i].path.is_empty() && layer(i).is_none() {
            found.outside.push(name(i));
        }
        for &j in to {
            if let (Some(from), Some(into)) = (layer(i), layer(j)) {
                if into > from {
                    found.upward.push(format!("{} imports {}", name(i), name(j)));
                }
            }
        }
    }
    for component in strongly_connected(&edges) {
        if component.len() > 1 {
            found.cycles.push(component.into_iter().map(name).collect());
        }
    }
    found
}

/// Every module file reachable from `lib.rs` through `mod` declarations.
fn modules(src: &Path) -> Vec<Module> {
    let mut found = Vec::new();
    let mut queue = vec![(Vec::<String>::new(), src.join("lib.rs"))];
    while let Some((path, file)) = queue.pop() {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let code = code_of(&text);
        let dir = if path.is_empty() || file.ends_with("mod.rs") {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        let mut children = BTreeSet::new();
        for child in declared_modules(&code) {
            let flat = dir.join(format!("{child}.rs"));
            let nested = dir.join(&child).join("mod.rs");
            let child_file = if flat.exists() { flat } else { nested };
            if child_file.exists() {
                let mut child_path = path.clone();
                child_path.push(child.clone());
                queue.push((child_path, child_file));
                children.insert(child);
            }
        }
        found.push(Module { path, file, children });
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// The names of `mod x;` declarations (inline modules are part of their file).
fn declared_modules(code: &str) -> Vec<String> {
    let tokens = tokens(code);
    let mut names = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        if token == "mod" && tokens.get(i + 2).is_some_and(|t| t == ";") {
            names.push(tokens[i + 1].clone());
        }
    }
    names
}

/// The source with comments, string and character literals blanked and
/// every `#[cfg(test)]` item removed, so only what the build compiles is read.
fn code_of(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            let len = rest.find("*/").map_or(rest.len(), |e| e + 2);
            out.extend(rest[..len].matches('\n').map(|_| '\n'));
            i += len;
        } else if let Some(len) = raw_string(rest) {
            // Blanked, keeping its lines: lengths in lines stay true.
            out.push_str("\"\"");
            out.extend(rest[..len].matches('\n').map(|_| '\n'));
            i += len;
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() && rest.as_bytes()[j] != b'"' {
                j += if rest.as_bytes()[j] == b'\\' { 2 } else { 1 };
            }
            let len = (j + 1).min(rest.len());
            out.push_str("\"\"");
            out.extend(rest[..len].matches('\n').map(|_| '\n'));
            i += len;
        } else if let Some(len) = char_literal(rest) {
            out.push_str("' '");
            i += len;
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    without_test_items(&out)
}

/// The length of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) at the start of `rest`.
fn raw_string(rest: &str) -> Option<usize> {
    let after_b = rest.strip_prefix('b').unwrap_or(rest);
    let after_r = after_b.strip_prefix('r')?;
    let hashes = after_r.len() - after_r.trim_start_matches('#').len();
    let body = after_r[hashes..].strip_prefix('"')?;
    let close = format!("\"{}", "#".repeat(hashes));
    let end = body.find(&close)?;
    Some(rest.len() - body.len() + end + close.len())
}

/// The length of a character literal at the start of `rest` (not a lifetime).
fn char_literal(rest: &str) -> Option<usize> {
    let body = rest.strip_prefix('\'')?;
    if let Some(escaped) = body.strip_prefix('\\') {
        return escaped.find('\'').map(|e| e + 3);
    }
    let c = body.chars().next()?;
    body[c.len_utf8()..].starts_with('\'').then_some(2 + c.len_utf8())
}

/// `code` without any item marked `#[cfg(test)]` (to its closing brace or semicolon).
fn without_test_items(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let (mut depth, mut end) = (0usize, item.len());
        for (i, c) in item.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                ';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// Identifiers, `::` and single punctuation, in order.
fn tokens(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = code.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_alphanumeric() || c == '_' || c == '$' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            tokens.push(code[i..end].to_string());
        } else if c == ':' && chars.peek().is_some_and(|&(_, d)| d == ':') {
            chars.next();
            tokens.push("::".to_string());
        } else if !c.is_whitespace() {
            tokens.push(c.to_string());
        }
    }
    tokens
}

/// Every path the module names, made absolute from the crate root.
fn imports(code: &str, module: &Module) -> Vec<Vec<String>> {
    let tokens = tokens(code);
    let mut paths = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == "use" {
            let end = tokens[i..].iter().position(|t| t == ";").map_or(tokens.len(), |e| i + e);
            for path in use_tree(&tokens[i + 1..end]) {
                paths.extend(absolute(&path, module));
            }
            i = end;
            continue;
        }
        let starts_path = (i == 0 || tokens[i - 1] != "::") && tokens.get(i + 1).is_some_and(|t| t == "::");
        if starts_path {
            let mut path = vec![tokens[i].clone()];
            let mut j = i + 1;
            while tokens.get(j).is_some_and(|t| t == "::") && tokens.get(j + 1).is_some_and(|t| is_ident(t)) {
                path.push(tokens[j + 1].clone());
                j += 2;
            }
            paths.extend(absolute(&path, module));
            i = j;
            continue;
        }
        i += 1;
    }
    paths
}

fn is_ident(token: &str) -> bool {
    token.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// The paths of a `use` tree: `a::{b, c::{d, e}}` is `a::b`, `a::c::d`, `a::c::e`.
fn use_tree(tokens: &[String]) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let mut prefix = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match tokens[i].as_str() {
            "{" => {
                let (mut depth, mut end) = (0, tokens.len());
                let mut starts = vec![i + 1];
                for (j, t) in tokens.iter().enumerate().skip(i) {
                    match t.as_str() {
                        "{" => depth += 1,
                        "}" => {
                            depth -= 1;
                            if depth == 0 {
                                end = j;
                                break;
                            }
                        }
                        "," if depth == 1 => starts.push(j + 1),
                        _ => {}
                    }
                }
                starts.push(end + 1);
                for pair in starts.windows(2) {
                    for tail in use_tree(&tokens[pair[0]..pair[1] - 1]) {
                        paths.push([prefix.clone(), tail].concat());
                    }
                }
                return paths;
            }
            "as" => break,
            "::" | "pub" | "(" | ")" => {}
            "*" => break,
            name => prefix.push(name.to_string()),
        }
        i += 1;
    }
    if !prefix.is_empty() {
        paths.push(prefix);
    }
    paths
}

/// `path` as written in `module`, from the crate root; `None` for paths
/// into other crates (and the standard library).
fn absolute(path: &[String], module: &Module) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "self" => module.path.clone(),
        "super" => {
            let mut up = module.path.clone();
            up.pop();
            let mut rest = rest;
            while rest.first().is_some_and(|s| s == "super") {
                up.pop();
                rest = &rest[1..];
            }
            return Some([up, rest.to_vec()].concat());
        }
        child if module.children.contains(child) => {
            let mut here = module.path.clone();
            here.push(child.to_string());
            return Some([here, rest.to_vec()].concat());
        }
        _ => return None,
    };
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The module a path lands in: its longest prefix that is a module.
fn resolve(index: &BTreeMap<Vec<String>, usize>, path: &[String]) -> Option<usize> {
    (1..=path.len()).rev().find_map(|n| index.get(&path[..n]).copied())
}

/// Tarjan's strongly connected components of a graph given by its edges.
fn strongly_connected(edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in s.edges[v].iter() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(i) if s.on_stack[w] => s.low[v] = s.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            component.sort_unstable();
            s.found.push(component);
        }
    }
    let n = edges.len();
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.found
}

fn report(found: &Breaks) -> String {
    let mut text = String::new();
    for line in &found.upward {
        text.push_str(&format!("up a layer: {line}\n"));
    }
    for cycle in &found.cycles {
        text.push_str(&format!("a cycle between {} files: {}\n", cycle.len(), cycle.join(", ")));
    }
    for file in &found.outside {
        text.push_str(&format!("in no layer: {file}\n"));
    }
    text
}

#[test]
fn the_library_imports_only_down_its_layers_and_has_no_cycle_between_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = breaks(&src, LAYERS);
    assert!(found.is_empty(), "the layering is broken:\n{}", report(&found));
}

/// The test above can fail: a planted arrow up a layer and a planted cycle
/// (through a `use` tree, a path in code, `super::` and a child module)
/// are each found, and a test module's imports are not counted.
#[test]
fn a_planted_upward_import_and_a_planted_cycle_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    write("lib.rs", "pub mod base;\npub mod host;\n");
    write("base/mod.rs", "pub mod one;\npub mod two;\npub use one::Thing;\n");
    write(
        "base/one.rs",
        "// crate::host::Server in a comment is no import\nuse crate::{base::{two::Two}};\npub struct Thing;\n\
         #[cfg(test)]\nmod tests { use crate::host::Server; }\n",
    );
    write("base/two.rs", "pub struct Two;\nfn f() -> super::Thing { let _ = \"crate::host\"; super::one::Thing }\n");
    write("host/mod.rs", "pub struct Server;\nfn f() { let _ = crate::base::Thing; }\n");
    let found = breaks(dir.path(), &["base", "host"]);
    assert!(found.upward.is_empty(), "{}", report(&found));
    let cycle: Vec<String> = ["base/mod.rs", "base/one.rs", "base/two.rs"].map(String::from).to_vec();
    assert_eq!(found.cycles, vec![cycle]);
    write("base/two.rs", "pub struct Two;\nfn f() -> crate::host::Server { crate::host::Server }\n");
    write("host/mod.rs", "pub struct Server;\n");
    let found = breaks(dir.path(), &["base", "host"]);
    assert_eq!(found.upward, vec!["base/two.rs imports host/mod.rs".to_string()]);
    assert!(found.cycles.is_empty(), "{}", report(&found));
    write("lib.rs", "pub mod base;\npub mod host;\npub mod loose;\n");
    write("loose.rs", "pub fn f() {}\n");
    assert_eq!(breaks(dir.path(), &["base", "host"]).outside, vec!["loose.rs".to_string()]);
}

/// The longest function the house style allows (docs/style.md).
const LONGEST_FUNCTION: usize = 80;

/// Every function of `code` (comments, strings and tests already out of
/// it, by [`code_of`]) longer than `most` lines: its first line and length.
fn long_functions(code: &str, most: usize) -> Vec<(usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().take_while(|w| !w.starts_with("fn")).collect();
        let is_fn = line.split_whitespace().any(|w| w == "fn")
            && words.iter().all(|w| ["pub", "async", "const", "unsafe", "extern"].contains(w) || w.starts_with("pub("));
        if !is_fn {
            continue;
        }
        let mut depth = 0i64;
        let mut opened = false;
        for (m, body) in lines.iter().enumerate().skip(n) {
            for c in body.chars() {
                match c {
                    '{' => (depth, opened) = (depth + 1, true),
                    '}' => depth -= 1,
                    ';' if !opened && depth == 0 => break,
                    _ => {}
                }
            }
            if !opened && body.contains(';') {
                break;
            }
            if opened && depth == 0 {
                if m - n + 1 > most {
                    found.push((n + 1, m - n + 1));
                }
                break;
            }
        }
    }
    found
}

#[test]
fn no_function_is_over_80_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.clone()];
    let mut long = Vec::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let code = code_of(&std::fs::read_to_string(&path).unwrap());
            for (line, length) in long_functions(&code, LONGEST_FUNCTION) {
                long.push(format!("{}:{line}: {length} lines", path.strip_prefix(&src).unwrap().display()));
            }
        }
    }
    assert!(long.is_empty(), "functions over {LONGEST_FUNCTION} lines:\n{}", long.join("\n"));
    // The count can fail: a function of 81 lines is found, one of 80 is not.
    let body = |n: usize| format!("fn f() {{\n{}}}\n", "    let _ = 1;\n".repeat(n - 2));
    assert_eq!(long_functions(&body(81), LONGEST_FUNCTION), vec![(1, 81)]);
    assert!(long_functions(&body(80), LONGEST_FUNCTION).is_empty());
}
