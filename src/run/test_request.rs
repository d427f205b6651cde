//! The domain of `blkc test`: which block a test request sends, what it
//! left as text, how the response's shape differs from the block's sample
//! and which paths that breaks, and saving the response as the sample. The
//! request itself is [`crate::run::eval::test_request`].

use std::path::{Path, PathBuf};

use crate::base::diagnostics::{Code, Diagnostic, Severity};
use crate::base::path::Root;
use crate::base::source::Span;
use crate::language::ast::{ApiBlock, File, Tree, TreeKind};
use crate::run::eval::explore::{self, Change};
use crate::run::eval::{Body, TestReport};

/// Finds the block, qualified by its tree when the name alone is ambiguous.
pub fn find<'a>(
    file: &'a File,
    source_name: &str,
    wanted: &str,
    wanted_tree: Option<(TreeKind, &str)>,
) -> Result<(&'a Tree, &'a ApiBlock), String> {
    let mut found = Vec::new();
    let mut names = Vec::new();
    for tree in file.trees() {
        if wanted_tree.is_some_and(|(k, n)| tree.kind != k || tree.name.name != n) {
            continue;
        }
        crate::language::ast::visit::each_block(&tree.body, &mut |b| {
            names.push(b.name.name.to_string());
            if b.name.name == wanted {
                found.push((tree, b));
            }
        });
    }
    match found.as_slice() {
        [one] => Ok(*one),
        [] => {
            let hint = match crate::base::diagnostics::did_you_mean(wanted, names.iter().map(String::as_str)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("the blocks are {}", names.join(", ")),
            };
            Err(format!("no api block `{wanted}` in `{source_name}`; {hint}"))
        }
        many => {
            let places: Vec<String> =
                many.iter().map(|(t, _)| format!("--{} {}", t.kind.as_str(), t.name.name)).collect();
            Err(format!("block `{wanted}` is in several trees; say which with {}", places.join(" or ")))
        }
    }
}

/// The warning that a test request sent variables as their own text.
pub fn left_as_text(report: &TestReport, block: &ApiBlock) -> Option<Diagnostic> {
    if report.left_as_text.is_empty() {
        return None;
    }
    let list: Vec<String> = report.left_as_text.iter().map(|v| format!("`{{{v}}}`")).collect();
    Some(
        Diagnostic::new(Code::LeftAsText, format!("sent as text, not filled: {}", list.join(", ")))
            .label(block.name.span, "test request of this block")
            .help("a test request substitutes only `{bot_token}`, as the builder's does; the server may have answered differently than in a run"),
    )
}

/// How a new response differs from the block's sample: every change with
/// the places in the tree that read it, and a diagnostic for each change
/// that is not a new key (an error when a path reads it).
#[derive(Debug, Default)]
pub struct ShapeReport {
    pub changes: Vec<(Change, Vec<Span>)>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Compares `new` with the sample of `block` (the model's, read once); a
/// block without a readable sample has nothing to compare.
pub fn compare_with_sample(
    tree: &Tree,
    block: &ApiBlock,
    samples: &crate::language::model::Samples,
    new: &crate::base::data::Data,
) -> ShapeReport {
    let mut report = ShapeReport::default();
    let Some(sample) = block.sample() else { return report };
    let loaded = samples.of(block);
    let Some(Ok(old)) = loaded.as_deref() else { return report };
    let mut refs = Vec::new();
    crate::language::ast::visit::each_reference(&tree.body, &mut |r| {
        if r.block.name == block.name.name && r.root() == Some(Root::Response) {
            refs.push(r);
        }
    });
    for change in explore::shape_changes(old, new) {
        let spans: Vec<Span> = refs
            .iter()
            .filter(|r| change.affects(&r.segments.iter().map(|s| s.text.as_str()).collect::<Vec<_>>()))
            .map(|r| r.span)
            .collect();
        if !matches!(change.kind, explore::ChangeKind::KeyAdded) {
            report.diagnostics.push(shape_diagnostic(
                &change,
                &spans,
                Some((sample.value.as_str(), sample.span)),
                block,
            ));
        }
        report.changes.push((change, spans));
    }
    report
}

fn shape_diagnostic(
    change: &Change,
    spans: &[crate::base::source::Span],
    sample: Option<(&str, crate::base::source::Span)>,
    block: &ApiBlock,
) -> Diagnostic {
    let (sample_name, sample_span) = sample.unwrap_or(("", block.name.span));
    let mut d = Diagnostic::new(Code::ShapeChanged, format!("{} since the sample `{sample_name}`", change.describe()));
    match spans.split_first() {
        Some((first, rest)) => {
            d = d.label(*first, "reads it");
            for s in rest {
                d = d.related(*s, "reads it too");
            }
            d = d.related(sample_span, "the sample").help(
                "the response no longer has the shape these paths expect; update them, then record the new shape with `--save`",
            );
        }
        None => {
            d = d
                .with_severity(Severity::Warning)
                .label(sample_span, "the sample")
                .help("no path in the file reads it; record the new shape with `--save`");
        }
    }
    d
}

pub struct Saved {
    pub path: PathBuf,
    /// The `sample` line to add when the block has none.
    pub add_line: Option<String>,
}

/// The `sample` paths of the file's blocks other than `block`, each with
/// the block that names it, as written.
fn other_samples<'a>(file: &'a File, block: &ApiBlock) -> Vec<(PathBuf, &'a ApiBlock)> {
    let mut out = Vec::new();
    for tree in file.trees() {
        crate::language::ast::visit::each_block(&tree.body, &mut |b| {
            if !std::ptr::eq(b, block) {
                if let Some(s) = b.sample() {
                    out.push((normal(Path::new(s.value.as_str())), b));
                }
            }
        });
    }
    out
}

/// A relative path without `.` parts, for comparing what two lines name.
fn normal(path: &Path) -> PathBuf {
    path.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect()
}

/// Where a block with no `sample` line saves its response: `samples/NAME.json`
/// when its name is the only block of that name in the file, else
/// `samples/TREE.NAME.json`; never a path another block's `sample` names (a
/// number is added until none does).
fn default_sample(file: &File, tree: &Tree, block: &ApiBlock) -> String {
    let claimed: Vec<PathBuf> = other_samples(file, block).into_iter().map(|(p, _)| p).collect();
    let mut same_name = 0;
    for t in file.trees() {
        crate::language::ast::visit::each_block(&t.body, &mut |b| {
            same_name += usize::from(b.name.name == block.name.name)
        });
    }
    let qualified = format!("samples/{}.{}", tree.name.name, block.name.name);
    let stem = if same_name > 1 { qualified.clone() } else { format!("samples/{}", block.name.name) };
    let free = |p: &str| !claimed.contains(&normal(Path::new(p)));
    let candidates = [format!("{stem}.json"), format!("{qualified}.json")].into_iter();
    candidates.chain((2..).map(|n| format!("{qualified}-{n}.json"))).find(|p| free(p)).unwrap_or_default()
}

/// Saves a test request's JSON response as the sample of `block` (in
/// `tree` of `file`): at `target` when given, else at the block's `sample`
/// path, else at a path of its own ([`default_sample`]). A path another
/// block's `sample` line names is never written: that block's sample would
/// change under it without a word.
pub fn save(
    (body, headers): (&Body, &[(String, String)]),
    target: &str,
    file: &File,
    tree: &Tree,
    block: &ApiBlock,
    base_dir: &Path,
) -> Result<Saved, String> {
    let Body::Json(json) = body else {
        return Err("the response is not JSON, and a sample must be: nothing was saved".into());
    };
    let (path, relative) = if !target.is_empty() {
        let path = PathBuf::from(target);
        let relative = path.strip_prefix(base_dir).map(Path::to_path_buf).unwrap_or_else(|_| path.clone());
        (path, relative.display().to_string())
    } else if let Some(s) = block.sample() {
        (base_dir.join(s.value.as_str()), s.value.to_string())
    } else {
        let relative = default_sample(file, tree, block);
        (base_dir.join(&relative), relative)
    };
    if let Some((_, owner)) = other_samples(file, block).into_iter().find(|(p, _)| *p == normal(Path::new(&relative))) {
        return Err(format!(
            "`{relative}` is the sample of block `{}` (line `sample {relative:?}`), so it was not overwritten with the \
             response of `{}`; give this block a sample of its own with `--save samples/{}.json`",
            owner.name.name, block.name.name, block.name.name
        ));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(json).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    // Its headers beside it, names in lower case, as `api_x[headers.NAME]`
    // is checked against them.
    let headers: serde_json::Map<String, serde_json::Value> =
        headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), serde_json::Value::String(v.clone()))).collect();
    let headers_file = base_dir.join(crate::language::model::headers_path(&relative));
    let text = serde_json::to_string_pretty(&headers).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&headers_file, text).map_err(|e| format!("cannot write `{}`: {e}", headers_file.display()))?;
    let add_line = match block.sample() {
        Some(s) if s.value == relative => None,
        _ => Some(format!("sample {relative:?}")),
    };
    Ok(Saved { path, add_line })
}
