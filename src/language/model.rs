//! The model of a file: what the checker learns once and hands to everyone
//! who needs it — the language server, `blkc test` and the runner — so none
//! of them works it out again.
//!
//! For each command or event: its blocks with their samples (each sample
//! file read and parsed once, as JSON values), the variables its templates
//! may name, and which blocks have run at every place of the tree, on every
//! path there. [`Flow`] is the one definition of "has run": the checker's
//! reference rule walks a tree with it, and the model records its states so
//! that any offset can be asked about afterwards.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::base::data::Data;
use crate::base::diagnostics::Diagnostic;
use crate::base::source::{SourceFile, Span};
use crate::language::ast::visit::each_block;
use crate::language::ast::visit::{self, Visitor};
use crate::language::ast::{ApiBlock, File, IfNode, Input, Item, Node, Tree, TreeKind};
use crate::language::vocab;

/// The largest sample blkc reads (a recorded response, 64 MiB).
pub const MAX_SAMPLE_SIZE: u64 = 64 * 1024 * 1024;

/// Where samples are read from, each file read and parsed once.
#[derive(Debug, Default)]
pub struct Samples {
    /// The folder sample paths are relative to (the `.blk` file's); `None`
    /// reads no sample at all.
    base: Option<PathBuf>,
    /// Whether the checker walks response paths through the samples
    /// (`blkc test` reads them only to compare a new response).
    check_paths: bool,
    cache: Mutex<FxHashMap<String, Arc<Result<Data, String>>>>,
    files: Mutex<FxHashMap<String, FileRead>>,
}

/// Where the headers of a sample are recorded: `forecast.json` keeps them in
/// `forecast.headers.json` beside it.
pub fn headers_path(sample: &str) -> String {
    match sample.strip_suffix(".json") {
        Some(stem) => format!("{stem}.headers.json"),
        None => format!("{sample}.headers.json"),
    }
}

/// A file beside the bot, read: its bytes, or why it cannot be.
pub type FileRead = Result<Arc<[u8]>, String>;

/// The largest file a multipart body or a message sends from beside the
/// `.blk`: the platform's upload limit ([`crate::discord::limits::UPLOAD_BYTES`]).
pub const MAX_UPLOAD_SIZE: u64 = crate::discord::limits::UPLOAD_BYTES;

impl Samples {
    /// Samples beside the file, read when needed, and paths checked
    /// against them.
    pub fn in_folder(base: PathBuf) -> Samples {
        Samples { base: Some(base), check_paths: true, cache: Mutex::default(), files: Mutex::default() }
    }

    /// No samples: paths are checked for form only.
    pub fn none() -> Samples {
        Samples::default()
    }

    /// Samples that can be read, but that the checker does not walk paths
    /// through.
    pub fn unchecked(mut self) -> Samples {
        self.check_paths = false;
        self
    }

    /// Whether paths are checked against samples.
    pub fn enabled(&self) -> bool {
        self.base.is_some() && self.check_paths
    }

    pub fn folder(&self) -> Option<&Path> {
        self.base.as_deref()
    }

    /// The parsed sample at `path` (relative to the folder), or why it
    /// cannot be had; `None` without a folder.
    pub fn load(&self, path: &str) -> Option<Arc<Result<Data, String>>> {
        let base = self.base.as_ref()?;
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hit) = cache.get(path) {
            return Some(hit.clone());
        }
        let loaded = Arc::new(read_sample(&base.join(path)));
        cache.insert(path.to_string(), loaded.clone());
        Some(loaded)
    }

    /// A file a multipart body sends (`file "chart.png"`), read once, within
    /// [`MAX_UPLOAD_SIZE`]; `None` when no folder is known.
    pub fn file(&self, path: &str) -> Option<FileRead> {
        let base = self.base.as_ref()?;
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hit) = files.get(path) {
            return Some(hit.clone());
        }
        let read = read_regular(&base.join(path), MAX_UPLOAD_SIZE).map(Arc::from);
        files.insert(path.to_string(), read.clone());
        Some(read)
    }

    /// The headers recorded beside a sample (`headers_path`), lower-case
    /// names to values, when there is such a file and it reads as an object.
    pub fn headers(&self, sample: &str) -> Option<Vec<(String, String)>> {
        let loaded = self.load(&headers_path(sample))?;
        let Ok(Data::Object(entries)) = loaded.as_ref() else { return None };
        let text = |d: &Data| match d {
            Data::String(s) => s.to_string(),
            other => {
                let mut out = String::new();
                other.write_json(&mut out);
                out
            }
        };
        Some(entries.iter().map(|(k, v)| (k.to_ascii_lowercase().to_string(), text(v))).collect())
    }

    /// The sample of a block, if it has one and it can be read.
    pub fn of(&self, block: &ApiBlock) -> Option<Arc<Result<Data, String>>> {
        self.load(&block.sample()?.value)
    }
}

/// Reads a sample: a regular file of JSON, within the size limit. It is
/// opened without blocking (a FIFO or a terminal named as a sample must not
/// hang `check` or the editor) and refused unless it is a regular file.
fn read_sample(path: &Path) -> Result<Data, String> {
    let bytes = read_regular(path, MAX_SAMPLE_SIZE)?;
    Data::parse(&bytes).map(|parsed| parsed.data).map_err(|e| format!("is not valid JSON: {e}"))
}

/// A regular file's bytes, up to `limit`: opened without blocking, refused
/// unless it is a regular file.
fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| format!("cannot be read: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err("cannot be read: it is not a regular file".into());
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!("is larger than the limit of {limit} bytes"));
    }
    Ok(bytes)
}

/// The model of a whole file.
#[derive(Debug, Default)]
pub struct Model {
    /// One per command or event, in the file's order.
    pub trees: Vec<TreeModel>,
    pub samples: Arc<Samples>,
}

/// A block of a tree.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockInfo {
    pub name: String,
    pub span: Span,
    /// The `sample` path as written, if the block has one.
    pub sample: Option<String>,
    /// An action with `as NAME`, not an `api` block: its answer is the
    /// platform's (it has no sample, and a test does not answer it).
    pub action: bool,
}

/// A variable a tree's templates may name.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// Provided by the command or the event kind.
    Trigger,
    /// `option_<name>`, with the option's description, type and whether
    /// it is required.
    Option {
        description: Option<String>,
        kind: crate::discord::options::OptionType,
        required: bool,
        span: Span,
    },
    /// A form's input, `field_<name>`: where it is declared, and the
    /// handler its form names.
    Field {
        span: Span,
        form: String,
    },
    /// A `var` or a `save` target.
    Custom,
    BotToken,
}

/// What the model knows of one command or event.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeModel {
    pub kind: TreeKind,
    pub name: String,
    pub span: Span,
    /// Every block, in source order (across branches).
    pub blocks: Vec<BlockInfo>,
    /// The variables its templates may name but the custom ones: trigger
    /// variables, options and the bot token, sorted by name.
    pub variables: Arc<[Variable]>,
    /// The file's custom variables (`var`s and `save` targets), sorted; one
    /// list shared by every tree.
    pub custom: Arc<[Box<str>]>,
    /// The states of the flow, in source order (see [`Flow`]).
    points: Vec<Point>,
}

/// A state of the flow: from `at` on (until the next point), the blocks
/// that have run are those of `base` and `added`.
#[derive(Debug, Clone, PartialEq)]
struct Point {
    at: u32,
    base: Option<u32>,
    added: Box<[u32]>,
}

impl TreeModel {
    /// The first block named `name`.
    pub fn block(&self, name: &str) -> Option<&BlockInfo> {
        self.blocks.iter().find(|b| b.name == name)
    }

    /// The variable `name` may name here, and where it comes from.
    pub fn variable(&self, name: &str) -> Option<Variable> {
        if let Ok(i) = self.variables.binary_search_by(|v| v.name.as_str().cmp(name)) {
            return Some(self.variables[i].clone());
        }
        self.custom
            .binary_search_by(|c| (**c).cmp(name))
            .ok()
            .map(|_| Variable { name: name.to_string(), origin: Origin::Custom })
    }

    /// Whether `{name}` names a variable here.
    pub fn knows(&self, name: &str) -> bool {
        self.variables.binary_search_by(|v| v.name.as_str().cmp(name)).is_ok()
            || self.custom.binary_search_by(|c| (**c).cmp(name)).is_ok()
    }

    /// Every variable `{…}` may name here: the tree's, then the custom ones
    /// it does not shadow.
    pub fn all_variables(&self) -> impl Iterator<Item = Variable> + '_ {
        let own = self.variables.iter().cloned();
        let custom = self
            .custom
            .iter()
            .filter(|c| self.variables.binary_search_by(|v| v.name.as_str().cmp(c)).is_err())
            .map(|c| Variable { name: c.to_string(), origin: Origin::Custom });
        own.chain(custom)
    }

    /// The blocks whose responses exist at `offset`: those that have run
    /// before it on every path there.
    pub fn ran_at(&self, offset: usize) -> Vec<&BlockInfo> {
        let k = self.points.partition_point(|p| p.at as usize <= offset);
        let mut out: Vec<usize> = Vec::new();
        let mut next = k.checked_sub(1);
        while let Some(i) = next {
            let p = &self.points[i];
            out.extend(p.added.iter().map(|&b| b as usize));
            next = p.base.map(|b| b as usize);
        }
        out.sort_unstable();
        out.dedup();
        out.into_iter().map(|i| &self.blocks[i]).collect()
    }

    /// What a variable is, in words (for hovers and completion).
    pub fn describe(&self, v: &Variable) -> String {
        match &v.origin {
            Origin::Trigger if vocab::about_variable(&v.name).is_some() => {
                format!("trigger variable: {}", vocab::about_variable(&v.name).unwrap_or_default())
            }
            Origin::Trigger => match self.kind {
                TreeKind::Command => format!("trigger variable of command `{}`", self.name),
                TreeKind::Event => match crate::discord::events::describe(&v.name) {
                    Some(what) => format!("trigger variable of `{}` events: {what}", self.name),
                    None => format!("trigger variable of `{}` events", self.name),
                },
                TreeKind::Handler => format!("trigger variable of handler `{}`", self.name),
                TreeKind::Autocomplete => format!("trigger variable of the autocomplete of `{}`", self.name),
            },
            Origin::Field { form, .. } => format!("a field of the form of `{form}`: what the user typed"),
            Origin::Option { description, kind, required, .. } => {
                let what = description.as_ref().map_or(String::new(), |d| format!(": {d}"));
                let required = if *required { ", required" } else { "" };
                format!("option `{}` ({}{required}){what}", v.name.trim_start_matches("option_"), kind.as_str())
            }
            Origin::Custom => "custom variable".into(),
            Origin::BotToken => "the bot's token (sent only to the platform's API)".into(),
        }
    }
}

impl Model {
    /// Builds the model of a file (one that parsed whole, or the items read
    /// before a syntax error).
    pub fn build(file: &File, samples: Arc<Samples>) -> Model {
        let mut custom = custom_variables(file);
        custom.sort_unstable();
        let custom: Arc<[Box<str>]> = custom.into_iter().map(Box::from).collect();
        // Trees without options share one list of variables per kind.
        let mut shared = FxHashMap::default();
        let fields = form_fields(file);
        // (An autocomplete follows its command, whose options it reads.)
        let mut command: Option<&Tree> = None;
        let trees = file
            .trees()
            .map(|t| {
                let own = if t.kind == TreeKind::Handler { fields.get(t.name.name.as_str()) } else { None };
                let options: Vec<&crate::language::ast::OptionDecl> = match t.kind {
                    TreeKind::Autocomplete => command.map(|c| c.options().collect()).unwrap_or_default(),
                    _ => {
                        command = Some(t);
                        Vec::new()
                    }
                };
                tree_model(t, (own.map_or(&[], Vec::as_slice), &options), &custom, &mut shared)
            })
            .collect();
        Model { trees, samples }
    }

    /// The tree holding `offset`.
    pub fn tree_at(&self, offset: usize) -> Option<&TreeModel> {
        let holding = self.trees.iter().filter(|t| t.span.start as usize <= offset && offset <= t.span.end as usize);
        // The innermost: an autocomplete's, not its command's.
        holding.min_by_key(|t| t.span.end - t.span.start)
    }

    /// A block's sample, read once.
    pub fn sample(&self, block: &BlockInfo) -> Option<Arc<Result<Data, String>>> {
        self.samples.load(block.sample.as_deref()?)
    }
}

/// The inputs of the forms naming each handler, with the handler's name:
/// its run is given `field_<input>` for each.
pub fn form_fields(file: &File) -> FxHashMap<&str, Vec<(&Input, &str)>> {
    let mut out: FxHashMap<&str, Vec<(&Input, &str)>> = FxHashMap::default();
    // Only a handler is given a form's fields (a form naming no handler is
    // the checker's B421): a file without one is not walked for forms.
    if !file.trees().any(|t| t.kind == TreeKind::Handler) {
        return out;
    }
    for tree in file.trees() {
        crate::language::ast::visit::each_form(&tree.body, &mut |form| {
            let handler = form.handler.name.as_str();
            out.entry(handler).or_default().extend(form.inputs.iter().map(|i| (i, handler)));
        });
    }
    out
}

/// The names of the file's custom variables: `var`s and `save` targets.
fn custom_variables<'a>(file: &'a File) -> Vec<&'a str> {
    let mut seen = FxHashSet::default();
    let mut names = Vec::new();
    let mut add = |name: &'a str| {
        if seen.insert(name) {
            names.push(name);
        }
    };
    for item in &file.items {
        match item {
            Item::Var(v) => add(v.name.name.as_str()),
            Item::Tree(t) => crate::language::ast::visit::each_save(&t.body, &mut |s| add(s.name.name.as_str())),
            Item::Failed(b, _) => crate::language::ast::visit::each_save(&b.body, &mut |s| add(s.name.name.as_str())),
            Item::Platform(_) | Item::Include(_) => {}
        }
    }
    names
}

/// Each block of a tree, a webhook's received request first.
fn each_block_of<'a>(tree: &'a Tree, f: &mut impl FnMut(&'a ApiBlock)) {
    tree.received().into_iter().for_each(&mut *f);
    each_block(&tree.body, f);
}

fn tree_model(
    tree: &Tree,
    (fields, options): (&[(&Input, &str)], &[&crate::language::ast::OptionDecl]),
    custom: &Arc<[Box<str>]>,
    shared: &mut FxHashMap<(TreeKind, String), Arc<[Variable]>>,
) -> TreeModel {
    let mut blocks = Vec::new();
    let mut refs: Vec<&ApiBlock> = Vec::new();
    let received = tree.received();
    each_block_of(tree, &mut |b| {
        refs.push(b);
        blocks.push(BlockInfo {
            name: b.name.name.to_string(),
            span: b.span,
            sample: b.sample().map(|s| s.value.to_string()),
            action: false,
        });
    });
    let has_options =
        tree.body.iter().any(|n| matches!(n, Node::Option(_))) || !fields.is_empty() || !options.is_empty();
    // (An event's variables are its kind's, a context-menu command's its menu's.)
    let key = match (tree.kind, tree.menu_target()) {
        (TreeKind::Event, _) => (tree.kind, tree.name.name.to_string()),
        (_, Some(menu)) => (tree.kind, menu.to_string()),
        _ => (tree.kind, String::new()),
    };
    let variables = match shared.get(&key) {
        Some(list) if !has_options => list.clone(),
        _ => {
            let list = tree_variables(tree, fields, options);
            if !has_options {
                shared.insert(key, list.clone());
            }
            list
        }
    };
    let mut walk = FlowWalk(Flow::new(&refs));
    // A webhook's request has run before the tree's first node.
    if let Some(b) = received {
        walk.0.block_ran(&b.name.name, b.span.end);
    }
    // An action with `as NAME` answers as a block does (it has no sample).
    let nodes: &[Node] = if tree.parts.actions { &tree.body } else { &[] };
    visit::each_action(nodes, &mut |a| {
        if let Some(name) = a.name() {
            walk.0.also(&name.name);
            blocks.push(BlockInfo { name: name.name.to_string(), span: a.span, sample: None, action: true });
        }
    });
    visit::walk_nodes(&mut walk, &tree.body);
    TreeModel {
        kind: tree.kind,
        name: tree.name.name.to_string(),
        span: tree.span,
        blocks,
        variables,
        custom: custom.clone(),
        points: walk.0.points,
    }
}

/// The variables a tree's templates may name but the custom ones.
fn tree_variables(
    tree: &Tree,
    fields: &[(&Input, &str)],
    options: &[&crate::language::ast::OptionDecl],
) -> Arc<[Variable]> {
    let mut variables: Vec<Variable> = Vec::new();
    let mut add = |name: String, origin: Origin| variables.push(Variable { name, origin });
    for t in trigger_variables(tree) {
        add(t.to_string(), Origin::Trigger);
    }
    for (input, form) in fields {
        let (name, span) = (&input.name.name, input.name.span);
        add(format!("field_{name}"), Origin::Field { span, form: form.to_string() });
        // An upload's files' names, types and sizes besides their addresses.
        if input.kind() == crate::discord::outgoing::InputKind::Upload {
            for part in ["name", "type", "size"] {
                add(format!("field_{name}_{part}"), Origin::Field { span, form: form.to_string() });
            }
        }
    }
    // (An option in an event is an error of its own, B-coded where options
    // are declared; its variable is still known, so it is not reported twice.)
    let own = tree.body.iter().filter_map(|n| match n {
        Node::Option(o) => Some(&**o),
        _ => None,
    });
    for o in own.chain(options.iter().copied()) {
        {
            let description = o.description.as_ref().map(|d| d.value.to_string());
            let (kind, required, span) = (o.option_type(), o.required.is_some(), o.name.span);
            if kind == crate::discord::options::OptionType::Attachment {
                // The file's address, name, media type and size.
                for part in ["url", "name", "type", "size"] {
                    let origin = Origin::Option { description: description.clone(), kind, required, span };
                    add(format!("option_{}_{part}", o.name.name), origin);
                }
            }
            add(format!("option_{}", o.name.name), Origin::Option { description, kind, required, span });
        }
    }
    add("bot_token".into(), Origin::BotToken);
    // Sorted, and the first of a name kept (an option declared twice is an
    // error of its own).
    variables.sort_by(|a, b| a.name.cmp(&b.name));
    variables.dedup_by(|b, a| a.name == b.name);
    variables.into()
}

/// Which blocks have run, as a tree is walked in order: after a block, it
/// has; after an `if`, what ran before it and what ran in every branch of it
/// (a chain without a final `else` has an empty one). The checker's
/// reference rule walks with one; the model records its states.
#[derive(Debug)]
pub struct Flow<'a> {
    /// The blocks that have run, by index.
    ran: Blocks,
    /// The tree's blocks by name (the first, when a name is used twice).
    index: FxHashMap<&'a str, u32>,
    /// Per open `if` chain.
    chains: Vec<Chain>,
    points: Vec<Point>,
    current: Option<u32>,
    /// How many names the index numbers (blocks, then [`Flow::also`]'s).
    count: u32,
}

/// An `if` chain being walked: what had run before it, the point then,
/// and what ran in every branch finished so far.
#[derive(Debug)]
struct Chain {
    before: Blocks,
    point: Option<u32>,
    after: Option<Blocks>,
}

/// A set of a tree's blocks, by index: a bit each, so that the sets an `if`
/// copies and intersects per branch cost a word per 64 blocks.
#[derive(Debug, Clone, Default)]
struct Blocks(Vec<u64>);

impl Blocks {
    /// Adds block `i`; whether it was not there yet.
    fn insert(&mut self, i: u32) -> bool {
        let (word, bit) = (i as usize / 64, 1u64 << (i % 64));
        if self.0.len() <= word {
            self.0.resize(word + 1, 0);
        }
        let new = self.0[word] & bit == 0;
        self.0[word] |= bit;
        new
    }

    fn contains(&self, i: u32) -> bool {
        self.0.get(i as usize / 64).is_some_and(|w| w & (1u64 << (i % 64)) != 0)
    }

    fn intersect(&mut self, other: &Blocks) {
        self.0.truncate(other.0.len());
        for (w, o) in self.0.iter_mut().zip(&other.0) {
            *w &= o;
        }
    }

    fn union(&mut self, other: &Blocks) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (w, o) in self.0.iter_mut().zip(&other.0) {
            *w |= o;
        }
    }

    /// The blocks in this set and not in `other`, in order.
    fn without<'s>(&'s self, other: &'s Blocks) -> impl Iterator<Item = u32> + 's {
        self.0.iter().enumerate().flat_map(move |(k, &w)| {
            let mut rest = w & !other.0.get(k).copied().unwrap_or(0);
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros();
                    rest &= rest - 1;
                    k as u32 * 64 + bit
                })
            })
        })
    }
}

impl<'a> Flow<'a> {
    pub fn new(blocks: &[&'a ApiBlock]) -> Flow<'a> {
        let mut index = FxHashMap::default();
        index.reserve(blocks.len());
        for (i, b) in blocks.iter().enumerate() {
            index.entry(b.name.name.as_str()).or_insert(i as u32);
        }
        let count = blocks.len() as u32;
        Flow { ran: Blocks::default(), index, chains: Vec::new(), points: Vec::new(), current: None, count }
    }

    /// Follows `name` too, as a block: a loop's joined text, which exists
    /// once the loop has run ([`Flow::block_ran`] at its end).
    pub fn also(&mut self, name: &'a str) {
        let next = self.count;
        if let std::collections::hash_map::Entry::Vacant(v) = self.index.entry(name) {
            v.insert(next);
            self.count += 1;
        }
    }

    /// A loop's body starts at `at`: it runs any number of times, maybe
    /// none, so what it runs has not run after it ([`Flow::loop_end`]).
    pub fn loop_start(&mut self, at: u32) {
        self.chain_start();
        self.branch_start(at);
    }

    pub fn loop_end(&mut self, at: u32) {
        self.branch_end();
        self.chain_end(false, at);
    }

    /// Whether the block named `name` has run on every path to here.
    pub fn has_run(&self, name: &str) -> bool {
        self.index.get(name).is_some_and(|&i| self.ran.contains(i))
    }

    fn point(&mut self, at: u32, base: Option<u32>, added: Vec<u32>) {
        self.points.push(Point { at, base, added: added.into_boxed_slice() });
        self.current = Some(self.points.len() as u32 - 1);
    }

    /// A block has run (it ends at `end`).
    pub fn block_ran(&mut self, name: &'a str, end: u32) {
        let Some(&i) = self.index.get(name) else { return };
        if self.ran.insert(i) {
            self.point(end, self.current, vec![i]);
        }
    }

    /// A tree's `failed { … }` starts at `at`: it runs after a step failed,
    /// wherever, so no block is known to have run in it.
    pub fn aside_start(&mut self, at: u32) {
        self.chain_start();
        self.ran = Blocks::default();
        self.point(at, None, Vec::new());
    }

    /// It ends at `at`: what ran before it is known again.
    pub fn aside_end(&mut self, at: u32) {
        let Some(Chain { before, point, .. }) = self.chains.pop() else { return };
        self.ran = before;
        self.point(at, point, Vec::new());
    }

    pub fn chain_start(&mut self) {
        self.chains.push(Chain { before: self.ran.clone(), point: self.current, after: None });
    }

    /// A branch of the open chain starts at `at` (and its condition is read
    /// with what ran before the chain).
    pub fn branch_start(&mut self, at: u32) {
        let Some(chain) = self.chains.last() else { return };
        self.ran = chain.before.clone();
        let point = chain.point;
        self.point(at, point, Vec::new());
    }

    pub fn branch_end(&mut self) {
        let ran = std::mem::take(&mut self.ran);
        if let Some(Chain { after, .. }) = self.chains.last_mut() {
            match after {
                None => *after = Some(ran),
                Some(a) => a.intersect(&ran),
            }
        }
    }

    /// The chain ends at `at`; without a final `else`, its empty one counts.
    pub fn chain_end(&mut self, has_else: bool, at: u32) {
        let Some(Chain { before, point, after }) = self.chains.pop() else { return };
        let after = match (after, has_else) {
            (Some(a), true) => a,
            (Some(mut a), false) => {
                a.intersect(&before);
                a
            }
            (None, _) => before.clone(),
        };
        let added: Vec<u32> = after.without(&before).collect();
        self.ran = before;
        self.ran.union(&after);
        self.point(at, point, added);
    }
}

/// Walks a tree's nodes for the flow alone.
struct FlowWalk<'a>(Flow<'a>);

impl<'a> Visitor<'a> for FlowWalk<'a> {
    fn block(&mut self, b: &'a ApiBlock) {
        self.0.block_ran(&b.name.name, b.span.end);
    }
    fn for_loop(&mut self, node: &'a crate::language::ast::ForNode) {
        self.0.loop_start(node.body.span.start);
        self.branch(&node.body.body);
        self.0.loop_end(node.span.end);
    }
    fn reply(&mut self, _: &'a crate::language::ast::Reply) {}
    fn save(&mut self, _: &'a crate::language::ast::Save) {}
    fn action(&mut self, a: &'a crate::language::ast::Action) {
        if let Some(name) = a.name() {
            self.0.block_ran(&name.name, a.span.end);
        }
    }
    /// A block's `failed` branch runs without its response (see the
    /// reference rule's walk, which keeps the same flow).
    fn tree_failed(&mut self, b: &'a crate::language::ast::Branch) {
        self.0.aside_start(b.span.start);
        self.branch(&b.body);
        self.0.aside_end(b.span.end);
    }
    fn failed(&mut self, _: &'a ApiBlock, f: &'a crate::language::ast::Failed) {
        self.0.chain_start();
        self.0.branch_start(f.branch.span.start);
        self.branch(&f.branch.body);
        self.0.branch_end();
        self.0.chain_end(false, f.branch.span.end);
    }
    fn if_chain(&mut self, node: &'a IfNode) {
        self.0.chain_start();
        for link in visit::chain(node) {
            self.0.branch_start(link.then.span.start);
            self.branch(&link.then.body);
            self.0.branch_end();
        }
        let last = visit::final_else(node);
        if let Some(last) = last {
            self.0.branch_start(last.span.start);
            self.branch(&last.body);
            self.0.branch_end();
        }
        self.0.chain_end(last.is_some(), node.span.end);
    }
}

/// The trigger variables of `tree` (an event of a kind blkc does not know:
/// none; the checker says so); a timed event's are [`vocab::TIMED_VARIABLES`],
/// whatever its name; a context-menu command's, its menu's.
pub fn trigger_variables(tree: &Tree) -> Vec<&'static str> {
    let (name, timed) = (tree.name.name.as_str(), tree.schedule.is_some());
    let world = vocab::WORLD_VARIABLES.iter();
    let besides: &[&str] = match (tree.kind, tree.menu_target()) {
        (TreeKind::Event, _) if timed => return vocab::TIMED_VARIABLES.iter().chain(world).copied().collect(),
        (TreeKind::Event, _) => {
            return vocab::event_variables(name).unwrap_or(&[]).iter().chain(world).copied().collect();
        }
        (TreeKind::Handler, _) => vocab::HANDLER_VARIABLES,
        (TreeKind::Autocomplete, _) => vocab::AUTOCOMPLETE_VARIABLES,
        (TreeKind::Command, Some(menu)) => {
            vocab::MENU_VARIABLES.iter().find(|(m, _)| *m == menu).map_or(&[], |(_, v)| v)
        }
        (TreeKind::Command, None) => &[],
    };
    vocab::COMMAND_VARIABLES.iter().chain(besides).chain(world).copied().collect()
}

/// A file read, parsed and checked.
#[derive(Debug)]
pub struct Checked {
    pub source: SourceFile,
    pub ast: crate::language::ast::File,
    /// Every finding, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
    /// What the checker learned of the file (blocks, samples, variables,
    /// what has run where), for the commands and the editor.
    pub model: Model,
}

impl Checked {
    /// A file that could not be read as source: its one diagnostic.
    pub fn unreadable(source: SourceFile, diagnostic: Diagnostic) -> Checked {
        Checked {
            source,
            ast: crate::language::ast::File::default(),
            diagnostics: vec![diagnostic],
            model: Model::default(),
        }
    }
}

impl Checked {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::source::SourceFile;

    fn model(text: &str) -> (String, Model) {
        let parsed = crate::language::syntax::parse(&SourceFile::new("m.blk", text.to_string()));
        (text.to_string(), Model::build(&parsed.ast, Arc::new(Samples::none())))
    }

    fn ran_at(text: &str, m: &Model, needle: &str) -> Vec<String> {
        let at = text.find(needle).unwrap();
        m.tree_at(at).unwrap().ran_at(at).into_iter().map(|b| b.name.clone()).collect()
    }

    #[test]
    fn what_has_run_on_every_path() {
        let (text, m) = model(
            "command c {\n  api a { method GET url \"https://x.io\" }\n  reply \"r1\"\n  if 1 == 1 {\n    api b { method GET url \"https://x.io\" }\n    reply \"r2\"\n  } else {\n    reply \"r3\"\n    api b2 { method GET url \"https://x.io\" }\n  }\n  reply \"r4\"\n  if 1 == 1 { api d { method GET url \"https://x.io\" } } else { api d { method GET url \"https://x.io\" } }\n  reply \"r5\"\n}\n",
        );
        assert_eq!(ran_at(&text, &m, "method GET"), Vec::<String>::new(), "a block's own fields");
        assert_eq!(ran_at(&text, &m, "r1"), ["a"]);
        assert_eq!(ran_at(&text, &m, "r2"), ["a", "b"]);
        assert_eq!(ran_at(&text, &m, "r3"), ["a"]);
        assert_eq!(ran_at(&text, &m, "r4"), ["a"], "b and b2 ran on one path each");
        assert_eq!(ran_at(&text, &m, "r5"), ["a", "d"], "d ran on both");
    }

    #[cfg(unix)]
    #[test]
    fn a_sample_that_is_a_fifo_or_a_device_is_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid path and mode; nothing is read from or written to it.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let samples = Samples::in_folder(dir.path().to_path_buf());
        let loaded = samples.load("fifo.json").unwrap();
        assert!(matches!(loaded.as_ref(), Err(e) if e.contains("not a regular file")), "{loaded:?}");
        let loaded = Samples::in_folder("/".into()).load("dev/zero").unwrap();
        assert!(matches!(loaded.as_ref(), Err(e) if e.contains("not a regular file")), "{loaded:?}");
    }

    #[test]
    fn variables_in_scope() {
        let (_, m) = model("var visits = \"0\"\ncommand c {\n  option city \"City\"\n  save last = \"x\"\n}\nevent member_join { reply \"hi\" }\n");
        let c = &m.trees[0];
        for v in ["option_city", "visits", "last", "user_name", "bot_token"] {
            assert!(c.variable(v).is_some(), "{v}");
        }
        assert_eq!(c.describe(&c.variable("option_city").unwrap()), "option `city` (string): City");
        assert_eq!(c.variable("visits").unwrap().origin, Origin::Custom);
        assert_eq!(c.all_variables().filter(|v| v.name == "last").count(), 1);
        assert!(m.trees[1].variable("option_city").is_none());
    }
}
