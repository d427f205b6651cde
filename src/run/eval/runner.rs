//! The runner: walks a tree's steps in order, sends each request, renders
//! replies and saves, and reports as it goes. Everything it emits passes
//! its redactor first.

use std::collections::HashMap;
use std::time::Instant;

use serde_json::Value as Json;

use super::budget::{Budgets, Charge};
use super::failure::{self, path_warning, store_failure};
use super::inputs::{DiagnosticEvent, Event, Inputs, MissingAs, Options, Outcome, RequestEvent};
use super::redact::Redactor;
use super::render::{self, Body, Miss, Missing, Response};
use super::request::{self, Built};
use super::{condition, http};
use crate::base::data::{Data, Shape};
use crate::base::diagnostics::{Diagnostic, Severity};
use crate::base::source::Span;
use crate::discord::outgoing;
use crate::language::ast::SaveOp;
use crate::language::message;
use crate::language::plan::{self, Condition, Plan, Request, Step};
use crate::run::store::StoreError;
use crate::run::store::VarStore;

mod actions;
mod files;
mod later;
mod layout;

pub(super) struct Runner<'r> {
    pub plan: &'r Plan,
    pub inputs: &'r Inputs,
    pub options: &'r Options,
    pub store: &'r mut dyn VarStore,
    pub redactor: Redactor,
    pub responses: HashMap<String, Response>,
    pub client: Option<http::Client>,
    pub sink: &'r mut dyn FnMut(Event),
    /// Warnings of the current step, sent after it.
    pub pending: Vec<Diagnostic>,
    /// A failure found while rendering (a store that cannot be read).
    pub fatal: Option<Diagnostic>,
    /// Variables a test request left as their text.
    pub left_as_text: Vec<String>,
    /// The response headers of the last request (redacted).
    pub last_headers: Vec<(String, String)>,
    /// The branches of `if`s told (`Options::branches`), each once.
    branches_told: std::collections::HashSet<(u32, usize)>,
    /// The time now and the run's draws (`Options::seed`, `Options::now`).
    world: crate::base::world::Real,
    /// How many reads had no value so far.
    pub misses: usize,
    /// Where the bot token may go: `--platform`, or the plan's (read once).
    pub platform: Option<crate::language::policy::Platform>,
    /// What the responses may hold, and what each one holds.
    budgets: Budgets,
    charges: HashMap<String, Charge>,
    /// What the variables read from the store hold, charged to the same
    /// budgets as responses for the run's life.
    read_charges: Vec<Charge>,
    /// Each custom variable this run has read from the store outside a
    /// save, as it read it (`None`: not saved yet). Later reads return the
    /// same, and a save is made only if none of them has changed since
    /// (docs/run.md, "Runs at once").
    seen: HashMap<String, Option<Json>>,
    /// A save's value is being rendered, inside its transaction: its reads
    /// are fresh, and are part of the save itself.
    in_save: bool,
    /// What this run saved, by key: its later reads (outside a save) see
    /// what it wrote, not what another run wrote since, so `save tickets =
    /// tickets + 1` then `reply "#{tickets}"` tells each run its own number.
    saved: HashMap<String, Json>,
    /// The loops running, innermost last: each one's element and index.
    frames: Vec<Frame>,
    /// Per running loop, innermost last: the `text` pieces of its join.
    joins: Vec<Option<(Vec<String>, usize)>>,
    /// The texts loops have joined, by name.
    joined: HashMap<String, String>,
    /// The custom variables loops run over, each read when its loop
    /// starts (a save in the loop changes the variable, not the loop).
    lists: HashMap<String, Response>,
    /// The custom variables element paths read outside loops, each as it
    /// was read last (`{settings[mode]}`).
    views: HashMap<String, Response>,
    /// The ids `with user …` (`server`, `channel`) blocks give scoped
    /// variables in place of the run's, innermost last.
    whose: Vec<(&'static str, String)>,
    /// Inside `together { … }`: its saves share its transaction, and are
    /// told when it commits.
    together: Option<Vec<Event>>,
    /// A `stop` ran: the steps unwind to the loop, which ends.
    stopping: bool,
    /// Loop runs and requests so far (each bounded per run).
    iterations: usize,
    requests: usize,
    /// What kind of failure the last request met (`failure_kind`).
    failure_kind: Option<&'static str>,
    /// How many times the last request was sent.
    attempts: u32,
    /// In a block's `failed { … }`: its failure's variables.
    failure: Option<Vec<(&'static str, String)>>,
    /// A `failed { … }` ran: the run ends after it.
    ended: bool,
    /// The items of each block's pages, as a list.
    items: HashMap<String, Response>,
    /// A kept token is being fetched again after a 401.
    refreshing: bool,
    /// The block of the request last sent.
    last_block: String,
    /// The action running: its values as filled, for its event (`told`),
    /// and whether a value read a variable with no value (offline, an
    /// action then acts on an id of its own).
    told: Vec<(&'static str, String)>,
    /// The files of the message the action being run sends (its
    /// `message_body` has them; its call sends them as multipart).
    action_files: Vec<outgoing::File>,
    placeholder: bool,
    /// The value last filled read what a user or another server gave (an
    /// option, a clicked value, a block's response): a channel it names is
    /// asked to be the run's server's before it is acted on.
    outside: bool,
    /// What the run's last `cancel` took back (`{cancelled}`).
    cancelled: u64,
}

/// The responses a run starts with: a webhook event's request, as block
/// `webhook`'s.
fn received(inputs: &Inputs) -> HashMap<String, Response> {
    let mut out = HashMap::new();
    if let Some(r) = &inputs.received {
        let response = Response {
            status: 200,
            body: super::render::Body::Json(r.body.clone()),
            headers: r.headers.clone(),
            bytes: None,
        };
        out.insert(crate::language::ast::Webhook::BLOCK.to_string(), response);
    }
    out
}

/// A running loop's element.
struct Frame {
    item: String,
    element: Response,
    index: usize,
}

impl<'r> Runner<'r> {
    pub fn new(
        plan: &'r Plan,
        inputs: &'r Inputs,
        options: &'r Options,
        store: &'r mut dyn VarStore,
        redactor: Redactor,
        sink: &'r mut dyn FnMut(Event),
    ) -> Runner<'r> {
        Runner {
            plan,
            inputs,
            options,
            store,
            redactor,
            responses: received(inputs),
            client: None,
            sink,
            pending: Vec::new(),
            fatal: None,
            left_as_text: Vec::new(),
            last_headers: Vec::new(),
            branches_told: std::collections::HashSet::new(),
            views: HashMap::new(),
            whose: Vec::new(),
            together: None,
            world: crate::base::world::Real::new(
                options.seed.map(|seed| {
                    let n = options.draws.as_ref().map_or(0, |d| d.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
                    seed.wrapping_add(n)
                }),
                options.now,
            ),
            misses: 0,
            platform: options.platform.clone().or_else(|| crate::language::policy::Platform::parse(&plan.platform)),
            read_charges: Vec::new(),
            budgets: Budgets::new(options.memory.run, options.memory.shared.clone()),
            charges: HashMap::new(),
            seen: HashMap::new(),
            in_save: false,
            saved: HashMap::new(),
            frames: Vec::new(),
            joins: Vec::new(),
            joined: HashMap::new(),
            lists: HashMap::new(),
            stopping: false,
            iterations: 0,
            requests: 0,
            failure_kind: None,
            attempts: 0,
            failure: None,
            ended: false,
            items: HashMap::new(),
            refreshing: false,
            last_block: String::new(),
            told: Vec::new(),
            action_files: Vec::new(),
            placeholder: false,
            outside: false,
            cancelled: 0,
        }
    }
}

impl Runner<'_> {
    /// The response a path reads, of a block or of a running loop.
    fn lookup(&self, path: &plan::Path) -> Option<&Response> {
        if path.element {
            let frame = self.frames.iter().rev().find(|f| f.item == path.block).map(|f| &f.element);
            return frame.or_else(|| self.lists.get(&path.block));
        }
        if path.items {
            return self.items.get(&path.block);
        }
        self.responses.get(&path.block)
    }
}

impl render::Scope for Runner<'_> {
    /// An element path no loop runs for reads a custom variable's value
    /// (`{settings[mode]}`, `{queue[-1]}`), as the run reads it now.
    fn response(&mut self, path: &plan::Path) -> Option<&Response> {
        if path.element && !self.frames.iter().any(|f| f.item == path.block) && !self.lists.contains_key(&path.block) {
            let value = self.variable_json(&path.block, path.span).unwrap_or(Json::Null);
            let data = Data::parse(&serde_json::to_vec(&value).unwrap_or_default()).map_or(Data::Null, |p| p.data);
            self.views.insert(path.block.clone(), Response::new(200, Body::Json(data)));
            return self.views.get(&path.block);
        }
        self.lookup(path)
    }

    fn variable(&mut self, name: &str, span: Span) -> Option<String> {
        if let Some(value) = self.loop_variable(name) {
            return Some(value);
        }
        self.variable_json(name, span).map(|value| match value {
            Json::String(s) => s,
            other => other.to_string(),
        })
    }

    fn variable_json(&mut self, name: &str, span: Span) -> Option<Json> {
        if let Some(value) = self.loop_json(name) {
            return Some(value);
        }
        if let Some((_, v)) = self.failure.iter().flatten().find(|(n, _)| *n == name) {
            return Some(Json::String(v.clone()));
        }
        if self.options.test_request {
            return None;
        }
        if name == "now" && !self.inputs.vars.contains_key(name) {
            use crate::base::world::World as _;
            return Some(Json::String(crate::base::when::written(self.world.now())));
        }
        if name == "waiting" && !self.inputs.vars.contains_key(name) {
            return Some(self.waiting_list(span));
        }
        if name == "cancelled" && !self.inputs.vars.contains_key(name) {
            return Some(Json::from(self.cancelled));
        }
        if let Some(v) = self.inputs.vars.get(name) {
            // `--vars FILE.json` gives lists and objects as their JSON text.
            let structured = self.inputs.structured.contains(name);
            return Some(structured.then(|| serde_json::from_str(v).ok()).flatten().unwrap_or(Json::String(v.clone())));
        }
        let key = match self.store_key(name, span) {
            Ok(key) => key,
            Err(d) => {
                self.fatal.get_or_insert(*d);
                return Some(Json::String(String::new()));
            }
        };
        let saved = if self.in_save { None } else { self.saved.get(&key).cloned() };
        let stored = match self.seen.get(&key) {
            _ if saved.is_some() => saved,
            Some(seen) => self.live(name, seen.clone()),
            None => match self.store.get(&key) {
                Ok(stored) => {
                    if let Err(exceeded) = self.charge_read(stored.as_ref()) {
                        self.fatal.get_or_insert(failure::read_over_budget(name, exceeded, span));
                        return Some(Json::String(String::new()));
                    }
                    if self.options.reads {
                        self.tell_read(name, &key, stored.as_ref());
                    }
                    if !self.in_save {
                        self.seen.insert(key.clone(), stored.clone());
                    }
                    self.live(name, stored)
                }
                Err(e) => {
                    self.fatal.get_or_insert(store_failure(&e, span, format!("reading `{name}`")));
                    return Some(Json::String(String::new()));
                }
            },
        };
        if stored.is_some() {
            return stored;
        }
        let declared = self.plan.variables.iter().find(|v| v.name == name)?;
        match &declared.default {
            Some(default) => Some(default.clone()),
            // `var visits` with no default, never saved: empty, and said so.
            None => {
                self.pending.push(failure::unset_variable(name, span));
                Some(Json::String(String::new()))
            }
        }
    }

    fn is_structured(&self, name: &str) -> bool {
        // A loop's whole element that is an object or a list is JSON text.
        if let Some(frame) = self.frames.iter().rev().find(|f| f.item == name) {
            return matches!(&frame.element.body, Body::Json(d) if d.is_structured());
        }
        self.inputs.structured.contains(name)
    }

    fn failed(&mut self, diagnostic: Diagnostic) {
        self.fatal.get_or_insert(diagnostic);
    }

    fn world(&mut self) -> &mut dyn crate::base::world::World {
        &mut self.world
    }

    fn secret(&self, name: &str) -> Option<&str> {
        self.inputs.secrets.get(name).map(String::as_str)
    }

    fn file(&mut self, from: &plan::FileFrom) -> Result<render::FileBytes, String> {
        match from {
            plan::FileFrom::Path(path) => match self.options.samples.file(path) {
                Some(read) => read.map(render::FileBytes::bytes).map_err(|why| format!("the file `{path}` {why}")),
                None => Err(format!("the file `{path}` cannot be read: no folder is known for the bot")),
            },
            plan::FileFrom::Option(option) => self.attachment(option),
            plan::FileFrom::Field(field) => {
                let mut files = self.uploads(field)?;
                match files.len() {
                    1 => Ok(files.remove(0)),
                    n => Err(format!("`{field}` holds {n} files, and a part sends one")),
                }
            }
            plan::FileFrom::Text(t) => {
                let text = render::render(t, self);
                Ok(render::FileBytes::bytes(self.redactor.redact(&text).into_bytes().into()))
            }
            plan::FileFrom::Block(block) => match self.responses.get(block) {
                Some(response) => {
                    Ok(render::FileBytes::bytes(response.bytes.clone().unwrap_or_else(|| match &response.body {
                        Body::Json(j) => {
                            let mut text = String::new();
                            j.write_json(&mut text);
                            std::sync::Arc::from(text.into_bytes())
                        }
                        Body::Text(t) => std::sync::Arc::from(t.as_bytes()),
                    })))
                }
                // Nothing is sent in a dry run: the part shows what it would hold.
                None if self.options.dry_run => Ok(render::FileBytes::bytes(std::sync::Arc::from(
                    format!("<the response of block `{block}`>").into_bytes(),
                ))),
                None => Err(format!("block `{block}` has no response in this run")),
            },
        }
    }

    fn bot_token(&self) -> Option<&str> {
        self.inputs.bot_token.as_deref()
    }

    fn missing(&mut self, what: Missing<'_>) -> String {
        self.misses += 1;
        let (text, diag) = match what {
            Missing::Variable { name, span } => {
                let text = format!("{{{name}}}");
                if self.options.test_request {
                    if !self.left_as_text.iter().any(|n| n == name) {
                        self.left_as_text.push(name.to_string());
                    }
                    return text;
                }
                (text, Some(failure::missing_variable(name, span)))
            }
            Missing::Path { path, miss } => {
                let text = format!("{{{}}}", path.text);
                if self.options.test_request && miss == Miss::NoResponse {
                    if !self.left_as_text.contains(&path.text) {
                        self.left_as_text.push(path.text.clone());
                    }
                    return text;
                }
                if self.options.dry_run && miss == Miss::NoResponse {
                    return text;
                }
                // A map read by a value's key may not have it yet: no mistake.
                let unkept = matches!(&miss, Miss::Path(m) if matches!(m.kind, crate::base::path::MissKind::NoKey | crate::base::path::MissKind::IndexOnObject) && render::key_was_variable(path, m.at));
                (text, (!unkept).then(|| path_warning(path, &miss)))
            }
        };
        if let Some(d) = diag {
            self.pending.push(d);
        }
        match self.options.missing_as {
            MissingAs::Text => text,
            MissingAs::Empty => String::new(),
            MissingAs::Null => "null".to_string(),
        }
    }
}

impl<'r> Runner<'r> {
    /// A name a loop makes: its element (`{item}`), the element's number
    /// from 1 and index from 0 (`{item_number}`, `{item_index}`), or a
    /// joined text.
    fn loop_variable(&self, name: &str) -> Option<String> {
        for frame in self.frames.iter().rev() {
            if name == frame.item {
                let mut text = String::new();
                if let Body::Json(element) = &frame.element.body {
                    render::push_json(&mut text, element);
                }
                return Some(text);
            }
            match name.strip_prefix(frame.item.as_str()) {
                Some("_number") => return Some((frame.index + 1).to_string()),
                Some("_index") => return Some(frame.index.to_string()),
                _ => {}
            }
        }
        self.joined.get(name).cloned()
    }

    /// A name a loop makes, as its value: the element itself, its number
    /// and index as numbers, a joined text as text.
    fn loop_json(&self, name: &str) -> Option<Json> {
        for frame in self.frames.iter().rev() {
            if name == frame.item {
                return Some(match &frame.element.body {
                    Body::Json(element) => element.to_json(),
                    Body::Text(text) => Json::String(text.clone()),
                });
            }
            match name.strip_prefix(frame.item.as_str()) {
                Some("_number") => return Some(Json::from(frame.index + 1)),
                Some("_index") => return Some(Json::from(frame.index)),
                _ => {}
            }
        }
        self.joined.get(name).map(|text| Json::String(text.clone()))
    }

    /// How many times a loop runs: its list's length, up to its limit;
    /// refused when that would take the run past its bound of loop runs.
    fn loop_runs(&mut self, l: &plan::LoopStep) -> Result<usize, Box<Diagnostic>> {
        let len = match render::resolve(self.lookup(&l.source), &l.source) {
            Ok(render::Resolved::Json(Data::Array(items))) => items.len(),
            // `null` is an empty list (an API's way of saying "none").
            Ok(render::Resolved::Json(Data::Null)) => 0,
            Ok(other) => return Err(Box::new(failure::not_a_list(l, &render::resolved_json(&other)))),
            Err(miss) => {
                render::Scope::missing(self, Missing::Path { path: &l.source, miss });
                0
            }
        };
        let limit = match &l.limit {
            None => None,
            Some(v) => {
                let value = render::render_val(v, self);
                self.flush()?;
                // (The value is shown in the message: a secret in it is masked.)
                Some(failure::loop_limit(l, &value).map_err(|d| Box::new(self.redact_diag(*d)))?)
            }
        };
        let runs = limit.map_or(len, |n| n.min(len));
        if runs > crate::language::vocab::MAX_LOOP_RUNS - self.iterations.min(crate::language::vocab::MAX_LOOP_RUNS) {
            return Err(Box::new(failure::too_many_runs(l, runs, self.iterations)));
        }
        Ok(runs)
    }

    /// Reads the custom variable a loop runs over (a source named as an
    /// element that no enclosing loop has: the checker allows only a
    /// variable there). Nothing saved and no default is an empty list.
    fn read_list(&mut self, source: &plan::Path) -> Outcome {
        let value = match render::Scope::variable_json(self, &source.block, source.span) {
            None => Json::Null,
            Some(Json::String(s)) if s.is_empty() => Json::Null,
            Some(value) => value,
        };
        self.flush()?;
        let bytes = serde_json::to_vec(&value).unwrap_or_default();
        let data = Data::parse(&bytes).map_or(Data::Null, |parsed| parsed.data);
        self.lists.insert(source.block.clone(), Response::new(200, Body::Json(data)));
        Ok(())
    }

    /// The places of a loop's elements in the order of `key` (a path into
    /// each): numbers as numbers, exactly, anything else as text; elements
    /// without the key last, in either direction; equal keys keep their
    /// order.
    fn order_of(&self, l: &plan::LoopStep, key: &plan::Path, descending: bool) -> Vec<usize> {
        let items = match render::resolve(self.lookup(&l.source), &l.source) {
            Ok(render::Resolved::Json(Data::Array(items))) => items,
            _ => return Vec::new(),
        };
        let keys: Vec<Option<Json>> =
            items.iter().map(|item| crate::base::path::walk(item, &key.keys).ok().map(Data::to_json)).collect();
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by(|&a, &b| match (&keys[a], &keys[b]) {
            (Some(x), Some(y)) if descending => crate::base::values::order(y, x),
            (Some(x), Some(y)) => crate::base::values::order(x, y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        });
        order
    }

    /// Starts run `index` of a loop: its element becomes readable.
    fn enter_run(&mut self, l: &plan::LoopStep, index: usize, order: Option<&[usize]>) -> bool {
        let at = order.map_or(Some(index), |o| o.get(index).copied());
        let element = match render::resolve(self.lookup(&l.source), &l.source) {
            Ok(render::Resolved::Json(Data::Array(items))) => at.and_then(|at| items.get(at)).cloned(),
            _ => None,
        };
        let Some(element) = element else { return false };
        let element = Response::new(200, Body::Json(element));
        self.frames.push(Frame { item: l.item.clone(), element, index });
        self.iterations += 1;
        true
    }

    /// Runs a loop's steps once per element of its source, up to its
    /// limit, within the run's bound of loop runs.
    fn run_loop(&mut self, l: &plan::LoopStep) -> Outcome {
        if l.source.element && !self.frames.iter().any(|f| f.item == l.source.block) {
            self.read_list(&l.source)?;
        }
        let runs = self.loop_runs(l)?;
        let order = l.order.as_ref().map(|(key, descending)| self.order_of(l, key, *descending));
        self.joins.push(l.join.as_ref().map(|_| (Vec::new(), 0)));
        let mut outcome = Ok(());
        for index in 0..runs {
            if !self.enter_run(l, index, order.as_deref()) {
                break;
            }
            outcome = self.steps(&l.steps);
            self.frames.pop();
            if outcome.is_err() || std::mem::take(&mut self.stopping) || self.ended {
                break;
            }
        }
        let pieces = self.joins.pop().flatten();
        outcome?;
        if let (Some((separator, into)), Some((pieces, bytes))) = (&l.join, pieces) {
            let separator = render::render(separator, self);
            self.flush()?;
            let whole = bytes.saturating_add(separator.len().saturating_mul(pieces.len().saturating_sub(1)));
            if whole > crate::language::vocab::MAX_JOINED {
                return Err(Box::new(failure::joined_too_long(l, whole)));
            }
            self.joined.insert(into.clone(), pieces.join(&separator));
        }
        Ok(())
    }

    /// A select menu's choices filled in: a `for` of choices gives one per
    /// element of its list, and the menu keeps the platform's first 25.
    #[allow(clippy::type_complexity)]
    fn choices<'s>(
        &mut self,
        choices: &'s [plan::ChoiceStep],
    ) -> Result<Vec<(String, String, Vec<(&'s str, message::Filled)>)>, Box<Diagnostic>> {
        let mut out = Vec::new();
        for choice in choices {
            let fill = |this: &mut Self| {
                let (label, value) = (this.fill_text(&choice.label), this.fill_text(&choice.value));
                (label, value, this.fill(&choice.settings))
            };
            let Some(l) = &choice.each else {
                out.push(fill(self));
                continue;
            };
            let all = self.loop_runs(l)?;
            let room = crate::discord::limits::MENU_CHOICES.saturating_sub(out.len());
            if all > room {
                let what = format!(
                    "a select menu takes 25 choices: {} of the loop over `{}` were left out",
                    all - room,
                    l.source.text
                );
                self.pending.push(failure::embed_adjusted(&what, l.span));
            }
            for index in 0..all.min(room) {
                if !self.enter_run(l, index, None) {
                    break;
                }
                out.push(fill(self));
                self.frames.pop();
            }
        }
        Ok(out)
    }

    /// Says a variable was read from the store, with its default when
    /// nothing was saved.
    fn tell_read(&mut self, name: &str, key: &str, stored: Option<&Json>) {
        let default = || self.plan.variables.iter().find(|v| v.name == name)?.default.clone();
        let value = stored.cloned().or_else(default).unwrap_or(Json::Null);
        let (scope, stored) = (self.scope_of(name).as_str(), stored.is_some());
        (self.sink)(Event::Read { name: name.to_string(), scope, key: key.to_string(), value, stored });
    }

    /// The scope `var` gave `name` (global when it declared none).
    fn scope_of(&self, name: &str) -> crate::language::vocab::VarScope {
        let declared = self.plan.variables.iter().find(|v| v.name == name);
        declared.map_or(crate::language::vocab::VarScope::Global, |v| v.scope)
    }

    /// The id `id` (`user_id`, `server_id`, `channel_id`) scoped values
    /// are kept by here: the innermost `with`'s, else the run's.
    fn scoped_id(&self, id: &str) -> &str {
        match self.whose.iter().rev().find(|(w, _)| *w == id) {
            Some((_, given)) => given.as_str(),
            None => self.inputs.vars.get(id).map_or("", String::as_str),
        }
    }

    /// Where the store keeps `name`'s value for this run: the name itself,
    /// or with the ids of its scope (`points:user:777:1001`).
    fn store_key(&self, name: &str, span: Span) -> Result<String, Box<Diagnostic>> {
        let scope = self.scope_of(name);
        // A dry or offline run keeps nothing (its store is thrown away), so
        // a scoped variable without its id reads as its default there.
        let kept = !(self.options.dry_run || self.options.offline);
        if let Some(needed) = scope.needs().filter(|_| kept) {
            if self.inputs.vars.get(needed).is_none_or(|v| v.is_empty()) {
                return Err(Box::new(failure::scope_without_id(name, scope, needed, span)));
            }
        }
        let ids: Vec<&str> = scope.ids().iter().map(|id| self.scoped_id(id)).collect();
        // IDs are numbers: one holding anything else (a `:`) could make the
        // key of another user's value.
        if let Some((id, _)) = scope.ids().iter().zip(&ids).find(|(_, v)| !v.bytes().all(|b| b.is_ascii_digit())) {
            return Err(Box::new(failure::scope_without_id(name, scope, id, span)));
        }
        Ok(scope.key(name, &ids))
    }

    pub fn steps(&mut self, steps: &[Step]) -> Outcome {
        for step in steps {
            match step {
                Step::Request(r) => self.request_or_failed(r)?,
                Step::Reply { .. } => self.reply(step)?,
                Step::Form(form) => {
                    let form = self.form(form)?;
                    self.flush()?;
                    (self.sink)(Event::Form(form));
                }
                Step::Save { name, path, op, value, span } => self.save(name, path, *op, value, *span)?,
                Step::If { branches, otherwise, span } => {
                    let (mut taken, mut arm) = (otherwise, branches.len());
                    for (n, (condition, then)) in branches.iter().enumerate() {
                        let holds = self.condition(condition);
                        self.flush()?;
                        if holds {
                            (taken, arm) = (then, n);
                            break;
                        }
                    }
                    if self.options.branches && self.branches_told.insert((span.start, arm)) {
                        (self.sink)(Event::Branch { span: *span, arm });
                    }
                    self.steps(taken)?;
                }
                Step::Loop(l) => self.run_loop(l)?,
                Step::With { scope, whose, steps, span } => self.with(*scope, whose, steps, *span)?,
                Step::Together { steps, span } => self.together(steps, *span)?,
                Step::Later(l) => self.later(l)?,
                Step::Cancel { key, per_server, span } => self.cancel(key, *per_server, *span)?,
                Step::Text { text, span } => {
                    let text = render::render(text, self);
                    self.flush()?;
                    // The checker puts every `text` inside a loop with a join.
                    if let Some((pieces, bytes)) = self.joins.iter_mut().rev().find_map(Option::as_mut) {
                        *bytes = bytes.saturating_add(text.len());
                        if *bytes > crate::language::vocab::MAX_JOINED {
                            return Err(Box::new(failure::text_past_join_bound(*span)));
                        }
                        pieces.push(text);
                    }
                }
                Step::Stop { .. } => self.stopping = true,
                Step::Action(a) => self.action(a)?,
                Step::Choice { name, value, .. } => {
                    let (name, value) = (render::render(name, self), render::render(value, self));
                    self.flush()?;
                    let (name, value) = (self.redactor.redact(&name), self.redactor.redact(&value));
                    (self.sink)(Event::Choice { name, value });
                }
            }
            if self.stopping || self.ended {
                return Ok(());
            }
        }
        Ok(())
    }

    /// A reply's message, filled in and told (`Event::Reply`).
    fn reply(&mut self, step: &Step) -> Outcome {
        let Step::Reply { text, translations, ephemeral, embeds, components, layout, poll, files, update, span } = step
        else {
            return Ok(());
        };
        let text = self.in_locale(text.as_ref(), translations);
        let text = text.map(|t| render::render(t, self)).unwrap_or_default();
        let embeds = self.embeds(embeds, *span);
        let files = self.files(files, *span)?;
        let (components, layout) = self.laid_out(components, layout, &files, *span)?;
        let poll = poll.as_ref().and_then(|p| self.poll(p, *span));
        self.flush()?;
        let text = self.redactor.redact(&text);
        let (ephemeral, update) = (*ephemeral, *update);
        (self.sink)(Event::Reply { text, ephemeral, embeds, components, layout, poll, files, update });
        Ok(())
    }

    /// The file a user gave as attachment option `option`: fetched from
    /// where the platform keeps it (its CDN over https, or the platform's
    /// own origin), within the upload bound. Offline and in a dry run,
    /// nothing is fetched: the part holds a line that says which file.
    fn attachment(&mut self, option: &str) -> Result<render::FileBytes, String> {
        let described = self.inputs.vars.get(&super::inputs::attachment_key(option));
        let file: Option<crate::discord::model::Attachment> = described.and_then(|d| serde_json::from_str(d).ok());
        self.fetched(file, option)
    }

    /// The files a user uploaded in a form (`field_NAME`), in the order
    /// sent, each fetched as an attachment option's is; none when the
    /// upload was left empty.
    pub(super) fn uploads(&mut self, field: &str) -> Result<Vec<render::FileBytes>, String> {
        use crate::discord::model::Attachment;
        let described = self.inputs.vars.get(&super::inputs::attachment_key(field)).cloned();
        match described.map(|d| serde_json::from_str::<Vec<Attachment>>(&d).map_err(|e| e.to_string())) {
            Some(Ok(files)) => files.into_iter().map(|f| self.fetched(Some(f), field)).collect(),
            Some(Err(why)) => Err(format!("the files of `{field}` cannot be read: {why}")),
            // Offline, a run without a form's submission has a line for it.
            None => Ok(vec![self.fetched(None, field)?]),
        }
    }

    /// A file a user gave (as `given_as`), fetched from where the platform
    /// keeps it; offline and in a dry run, a line that says which file.
    fn fetched(
        &mut self,
        file: Option<crate::discord::model::Attachment>,
        option: &str,
    ) -> Result<render::FileBytes, String> {
        use crate::discord::model::ATTACHMENT_HOSTS;
        if self.options.offline || self.options.dry_run {
            let name = file.as_ref().and_then(|f| f.filename.clone()).unwrap_or_else(|| option.to_string());
            let bytes = format!("<the file the user gave as `{option}`: {name}>").into_bytes();
            let media_type = file.and_then(|f| f.content_type);
            return Ok(render::FileBytes { bytes: bytes.into(), name: Some(name), media_type });
        }
        let Some(file) = file else {
            return Err(format!(
                "the file given as `{option}` is not known in this run (the platform sends it with a command)"
            ));
        };
        let url = file.url.as_deref().and_then(|u| url::Url::parse(u).ok()).ok_or("the platform gave no URL for it")?;
        let platform = self.platform.as_ref().and_then(|p| url::Url::parse(&p.base_url()).ok());
        let own = platform
            .is_some_and(|p| crate::base::urls::Destination::of(&p) == crate::base::urls::Destination::of(&url));
        let cdn = url.scheme() == "https" && url.host_str().is_some_and(|h| ATTACHMENT_HOSTS.contains(&h));
        if !(own || cdn) {
            return Err(format!(
                "its URL is not where the platform keeps files ({})",
                self.redactor.redact(url.as_str())
            ));
        }
        if file.size.is_some_and(|s| s > crate::language::model::MAX_UPLOAD_SIZE) {
            return Err(format!("it is larger than the limit of {} bytes", crate::language::model::MAX_UPLOAD_SIZE));
        }
        let get = Built {
            method: plan::Method::GET,
            url,
            headers: Vec::new(),
            body: None,
            carries_token: false,
            body_secret: false,
            guarded: !own,
            allow_private_network: false,
            within: self.options.deadline.map(|d| d.saturating_duration_since(Instant::now())),
            timeout: None,
        };
        let (options, client) = (&self.options, &mut self.client);
        let got = match &options.client {
            Some(shared) => shared.send(get),
            None => client.get_or_insert_with(|| http::Client::new(options.http)).send(get),
        };
        let got = got.map_err(|f| failure::short_failure(&f))?;
        if !(200..300).contains(&got.status) {
            return Err(format!("the platform answered {} for it", got.status));
        }
        if got.body.len() as u64 > crate::language::model::MAX_UPLOAD_SIZE {
            return Err(format!("it is larger than the limit of {} bytes", crate::language::model::MAX_UPLOAD_SIZE));
        }
        Ok(render::FileBytes { bytes: got.body.into(), name: file.filename, media_type: file.content_type })
    }

    /// A tree's `failed { … }` after a step failed: the failure told as a
    /// warning, then its steps, with the failure's variables (a kind of
    /// `run` for a failure that is not a request's).
    pub fn tree_failed(&mut self, mut failure: Diagnostic, handler: &[Step]) -> Outcome {
        failure.severity = crate::base::diagnostics::Severity::Warning;
        let message = failure.message.clone();
        self.pending.push(failure);
        self.flush()?;
        let (kind, block) = match self.failure_kind.take() {
            Some(kind) => (kind, self.last_block.clone()),
            None => ("run", String::new()),
        };
        self.failure = Some(vec![
            ("failure_kind", kind.to_string()),
            ("failure_status", String::new()),
            ("failure_message", message),
            ("failure_block", block),
            ("failure_attempts", self.attempts.to_string()),
        ]);
        self.stopping = false;
        self.ended = false;
        self.steps(handler)
    }

    /// The variables a block's `failed` runs with after `diagnostic` (none
    /// when the failure is not of a kind it takes).
    pub fn failure_of(&mut self, r: &Request, diagnostic: &Diagnostic) -> Option<Vec<(&'static str, String)>> {
        let kind = self.failure_kind.take()?;
        Some(vec![
            ("failure_kind", kind.to_string()),
            ("failure_status", String::new()),
            ("failure_message", diagnostic.message.clone()),
            ("failure_block", r.block.clone()),
            ("failure_attempts", self.attempts.to_string()),
        ])
    }

    /// A block's request; when it fails as its `failed` names (a failure
    /// of a kind blkc knows, or a status it lists), its `failed` steps run
    /// instead of the rest of the tree, with the failure's variables, and
    /// the failure is told as a warning.
    fn request_or_failed(&mut self, r: &Request) -> Outcome {
        self.failure_kind = None;
        self.last_block.clone_from(&r.block);
        self.attempts = 0;
        let outcome = self.request(r);
        let Some(failed) = &r.failed else { return outcome };
        let (kind, status, message) = match outcome {
            Ok(()) => match self.responses.get(&r.block).map(|x| x.status) {
                Some(s) if failed.on.iter().any(|(lo, hi)| (*lo..=*hi).contains(&s)) => {
                    ("status", s.to_string(), format!("the server answered {s}"))
                }
                _ => return Ok(()),
            },
            Err(d) => match self.failure_kind.take() {
                Some(kind) => {
                    let mut told = *d;
                    told.severity = crate::base::diagnostics::Severity::Warning;
                    let message = told.message.clone();
                    self.pending.push(told);
                    (kind, String::new(), message)
                }
                None => return Err(d),
            },
        };
        self.flush()?;
        self.failure = Some(vec![
            ("failure_kind", kind.to_string()),
            ("failure_status", status),
            ("failure_message", message),
            ("failure_block", r.block.clone()),
            ("failure_attempts", self.attempts.to_string()),
        ]);
        let outcome = self.steps(&failed.steps);
        self.failure = None;
        self.ended = true;
        outcome
    }

    /// A reply's text in the run's user's language: the text of their locale
    /// (`pt-BR`), else of its language (`pt`), else the reply's own.
    fn in_locale<'t>(
        &self,
        text: Option<&'t plan::Template>,
        translations: &'t [(String, plan::Template)],
    ) -> Option<&'t plan::Template> {
        let locale = self.inputs.vars.get("user_locale").map_or("", String::as_str);
        let language = locale.split('-').next().unwrap_or_default();
        let find = |wanted: &str| translations.iter().find(|(l, _)| !wanted.is_empty() && l == wanted).map(|(_, t)| t);
        find(locale).or_else(|| find(language)).or(text)
    }

    /// `with user option_to { … }`: the steps with the id the variable
    /// `whose` holds (an id, or a mention of one) in place of the run's.
    fn with(&mut self, scope: crate::language::vocab::VarScope, whose: &str, steps: &[Step], span: Span) -> Outcome {
        let value = render::Scope::variable(self, whose, span).unwrap_or_default();
        self.flush()?;
        use crate::discord::actions::{target, Slot, Target};
        use crate::language::vocab::VarScope;
        let slot = match scope {
            VarScope::User => Slot::Member,
            VarScope::Channel => Slot::Channel,
            _ => Slot::Message,
        };
        let Ok(Target::Id(id)) = target(slot, &value) else {
            return Err(Box::new(self.redact_diag(failure::with_no_id(whose, scope, &value, span))));
        };
        let slot = match scope {
            VarScope::Server => "server_id",
            VarScope::Channel => "channel_id",
            _ => "user_id",
        };
        self.whose.push((slot, id));
        let outcome = self.steps(steps);
        self.whose.pop();
        outcome
    }

    /// `together { … }`: the steps' saves in one transaction of the store,
    /// all made or none; each is told when the transaction commits.
    fn together(&mut self, steps: &[Step], span: Span) -> Outcome {
        if self.together.is_some() || self.options.dry_run || self.options.test_request {
            return self.steps(steps);
        }
        self.store.begin().map_err(|e| Box::new(store_failure(&e, span, "saving together".into())))?;
        self.together = Some(Vec::new());
        let outcome = self.steps(steps);
        let told = self.together.take().unwrap_or_default();
        let ended = self.store.end(outcome.is_ok());
        outcome?;
        ended.map_err(|e| Box::new(store_failure(&e, span, "saving together".into())))?;
        told.into_iter().for_each(|event| (self.sink)(event));
        Ok(())
    }

    /// A save: the reads of its value and its write are one transaction of
    /// the store, so that runs saving at once lose no update.
    fn save(
        &mut self,
        name: &str,
        path: &[String],
        op: SaveOp,
        value: &crate::language::plan::Val,
        span: Span,
    ) -> Outcome {
        if self.options.dry_run || self.options.test_request {
            render::render_val(value, self);
            return self.flush();
        }
        let path = &self.keyed_path(path, span);
        let failed = |e: StoreError| Box::new(store_failure(&e, span, format!("saving `{name}`")));
        let key = self.store_key(name, span)?;
        // Inside `together`, its transaction is the save's.
        let own = self.together.is_none();
        if own {
            self.store.begin().map_err(failed)?;
        }
        let made = self.save_in(name, &key, path, op, value, span);
        let written = match made {
            Ok(value) => self.store.set(&key, &self.kept(name, &value)).map(|()| value).map_err(failed),
            Err(e) => Err(e),
        };
        let value = match own {
            true => self.store.end(written.is_ok()).map_err(failed).and(written)?,
            false => written?,
        };
        // What this save wrote is not a decision the run read (another run
        // may build on it, and a later save does not wait on it), but it
        // is what the run's later reads see.
        self.seen.remove(&key);
        let scope = self.scope_of(name).as_str();
        self.saved.insert(key.clone(), value.clone());
        let event = Event::Save { name: name.to_string(), scope, key, value };
        match self.together.as_mut() {
            Some(told) => told.push(event),
            None => (self.sink)(event),
        }
        Ok(())
    }

    /// A save's path with each key written `{name}` made that variable's
    /// value (`save votes[{option_pick}] = …`).
    fn keyed_path(&mut self, path: &[String], span: Span) -> Vec<String> {
        let mut keyed = path.to_vec();
        for key in &mut keyed {
            let Some(name) = crate::base::path::key_variable(key).map(str::to_string) else { continue };
            *key = render::Scope::variable(self, &name, span).unwrap_or_else(|| {
                render::Scope::missing(self, render::Missing::Variable { name: &name, span });
                String::new()
            });
        }
        keyed
    }

    /// What a save writes, computed inside its transaction: its value (a
    /// list or a field of the variable changed), once what the run read is
    /// known to be still so and the value within its bound.
    fn save_in(
        &mut self,
        name: &str,
        key: &str,
        path: &[String],
        op: SaveOp,
        value: &crate::language::plan::Val,
        span: Span,
    ) -> Result<Json, Box<Diagnostic>> {
        self.in_save = true;
        let mut value = render::render_val(value, self);
        self.in_save = false;
        self.flush()?;
        self.redactor.redact_json(&mut value);
        if !path.is_empty() {
            value = self.field_change(name, key, path, op, value, span)?;
        } else if op != SaveOp::Set {
            value = self.list_change(name, key, op, value, span)?;
        }
        // What this run read must still be so, or its decision is stale.
        let changed =
            self.changed_since_read().map_err(|e| Box::new(store_failure(&e, span, format!("saving `{name}`"))))?;
        if let Some(changed) = changed {
            return Err(Box::new(self.redact_diag(failure::changed_by_another_run(name, &changed, span))));
        }
        let bytes = json_bytes(&value);
        if bytes > crate::language::vocab::MAX_VALUE_BYTES {
            return Err(Box::new(self.redact_diag(failure::value_too_large(name, bytes, span))));
        }
        Ok(value)
    }

    /// Charges a value read from the store to the run's budgets, for the
    /// run's life.
    fn charge_read(&mut self, value: Option<&Json>) -> Result<(), super::budget::Exceeded> {
        let Some(value) = value else { return Ok(()) };
        let charge = self.budgets.charge(json_bytes(value) as u64)?;
        self.read_charges.push(charge);
        Ok(())
    }

    /// When a value of `name` saved now lapses (ms since the epoch), if its
    /// declaration says it `expires`.
    fn lapses(&self, name: &str) -> Option<i64> {
        use crate::base::world::World as _;
        let seconds = self.plan.variables.iter().find(|v| v.name == name)?.expires?;
        Some((self.world.now().unix_timestamp() + i64::try_from(seconds).ok()?) * 1000)
    }

    /// The value a save of `name` keeps in the store: an expiring
    /// variable's with when it lapses (`{"value": …, "expires": MS}`).
    fn kept(&self, name: &str, value: &Json) -> Json {
        match self.lapses(name) {
            Some(at) => serde_json::json!({ "value": value, "expires": at }),
            None => value.clone(),
        }
    }

    /// What the store holds of `name`, as the run reads it: an expiring
    /// variable's value, or nothing once it has lapsed (its default then).
    /// A value saved before the declaration said `expires` is read as is.
    fn live(&self, name: &str, stored: Option<Json>) -> Option<Json> {
        use crate::base::world::World as _;
        if self.lapses(name).is_none() {
            return stored;
        }
        match stored {
            Some(Json::Object(mut o)) if o.len() == 2 && o.contains_key("value") && o["expires"].is_i64() => {
                let now = self.world.now().unix_timestamp() * 1000;
                (o["expires"].as_i64().unwrap_or(0) > now).then(|| o.remove("value").unwrap_or(Json::Null))
            }
            other => other,
        }
    }

    /// The variable's value as the save's transaction reads it (its default
    /// when nothing is saved), held to the run's budget while it is changed.
    fn stored_now(&mut self, name: &str, key: &str, span: Span) -> Result<(Option<Json>, Charge), Box<Diagnostic>> {
        let stored = self.store.get(key).map_err(|e| Box::new(store_failure(&e, span, format!("reading `{name}`"))))?;
        let stored = self.live(name, stored);
        // Held while the value is changed (the run keeps only what it saves).
        let bytes = stored.as_ref().map_or(0, json_bytes) as u64;
        let held =
            self.budgets.charge(bytes).map_err(|exceeded| Box::new(failure::read_over_budget(name, exceeded, span)))?;
        let current = stored.or_else(|| self.plan.variables.iter().find(|v| v.name == name)?.default.clone());
        Ok((current, held))
    }

    /// `save NAME[path] …`: the variable's whole value with the field (or
    /// element) at `path` set, or changed by a list operation; a field
    /// missing on the way is made an object, an element must exist.
    fn field_change(
        &mut self,
        name: &str,
        key: &str,
        path: &[String],
        op: SaveOp,
        value: Json,
        span: Span,
    ) -> Result<Json, Box<Diagnostic>> {
        let (current, _held) = self.stored_now(name, key, span)?;
        let mut whole = current.unwrap_or(Json::Null);
        let written = format!("{name}[{}]", path.join("."));
        let slot = crate::base::values::field_mut(&mut whole, path)
            .map_err(|why| Box::new(failure::field_save(&written, &why, span)))?;
        *slot = match op {
            SaveOp::Set | SaveOp::Clear => value,
            _ => self.list_changed(&written, Some(std::mem::take(slot)), op, value, span)?,
        };
        Ok(whole)
    }

    /// A list variable changed by `append`, `remove` or `remove at`, read
    /// inside the save's transaction: nothing saved yet (and no default) is
    /// an empty list, and so is `null`.
    fn list_change(
        &mut self,
        name: &str,
        key: &str,
        op: SaveOp,
        value: Json,
        span: Span,
    ) -> Result<Json, Box<Diagnostic>> {
        let (current, _held) = self.stored_now(name, key, span)?;
        self.list_changed(name, current, op, value, span)
    }

    /// The list `current` changed by `op` (`name`: what holds it, as said).
    fn list_changed(
        &mut self,
        name: &str,
        current: Option<Json>,
        op: SaveOp,
        value: Json,
        span: Span,
    ) -> Result<Json, Box<Diagnostic>> {
        let mut list = match current {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Array(items)) => items,
            Some(other) => return Err(Box::new(failure::list_op_on(name, op, &other, span))),
        };
        match op {
            SaveOp::Append if list.len() >= crate::language::vocab::MAX_LIST => {
                return Err(Box::new(failure::list_too_long(name, span)))
            }
            SaveOp::Append => list.push(value),
            SaveOp::Remove => list.retain(|element| !crate::base::values::same(element, &value)),
            SaveOp::RemoveAt => {
                let text = match &value {
                    Json::String(s) => s.trim().to_string(),
                    other => other.to_string(),
                };
                let index: i64 = text.parse().map_err(|_| Box::new(failure::list_index(name, &value, span)))?;
                let len = list.len();
                let at =
                    if index < 0 { i64::try_from(len).unwrap_or(i64::MAX).checked_add(index) } else { Some(index) };
                match at.and_then(|i| usize::try_from(i).ok()).filter(|&i| i < len) {
                    Some(i) => drop(list.remove(i)),
                    None => self.pending.push(failure::list_index_missing(name, index, len, span)),
                }
            }
            SaveOp::Set | SaveOp::Clear => {}
        }
        // A warning of the change (an index it does not have) is sent now.
        self.flush()?;
        Ok(Json::Array(list))
    }

    /// The first variable this run read that another run has changed
    /// since, read again inside the save's transaction.
    fn changed_since_read(&mut self) -> Result<Option<String>, StoreError> {
        let mut names: Vec<&String> = self.seen.keys().collect();
        names.sort();
        for name in names {
            if self.store.get(name)? != self.seen[name] {
                return Ok(Some(name.clone()));
            }
        }
        Ok(None)
    }

    /// A reply's embeds, filled in, with secrets redacted, and kept to the
    /// platform's limits (what had to change is a warning, B326).
    fn embeds(&mut self, embeds: &[plan::EmbedStep], span: Span) -> Vec<outgoing::Embed> {
        let mut out = Vec::with_capacity(embeds.len());
        for e in embeds {
            let mut fill = |t: &plan::Template| {
                let text = render::render(t, self);
                self.redactor.redact(&text)
            };
            let parts = e.parts.iter().map(|(part, t)| (*part, fill(t))).collect();
            let fields = e.fields.iter().map(|f| (fill(&f.name), fill(&f.value), f.inline)).collect();
            let (embed, changed) = message::embed(parts, fields);
            self.pending.extend(changed.iter().map(|what| failure::embed_adjusted(what, span)));
            out.push(embed);
        }
        if outgoing::fit_embeds(&mut out) {
            let what = "the embeds' texts were cut to keep the reply's embeds within 6,000 characters";
            self.pending.push(failure::embed_adjusted(what, span));
        }
        out
    }

    /// A setting list filled in, secrets redacted.
    fn fill<'s>(&mut self, settings: &'s [plan::SettingStep]) -> Vec<(&'s str, message::Filled)> {
        settings
            .iter()
            .map(|s| {
                let value = match (&s.text, s.number) {
                    (Some(t), _) => {
                        let text = render::render(t, self);
                        message::Filled::Text(self.redactor.redact(&text))
                    }
                    (None, Some(n)) => message::Filled::Number(n),
                    (None, None) => message::Filled::Flag,
                };
                (s.name.as_str(), value)
            })
            .collect()
    }

    /// A template filled in, secrets redacted.
    fn fill_text(&mut self, t: &plan::Template) -> String {
        let text = render::render(t, self);
        self.redactor.redact(&text)
    }

    /// A reply's buttons and menus, filled in and kept to the platform's
    /// limits (what had to change is a warning, B326); a component whose id
    /// cannot fit fails the run (B425): its value is state, never cut.
    fn components(
        &mut self,
        components: &[plan::ComponentStep],
        span: Span,
    ) -> Result<Vec<outgoing::Component>, Box<Diagnostic>> {
        Ok(self.each_component(components, span)?.into_iter().flatten().collect())
    }

    /// A reply's poll, filled in and kept to the platform's limits.
    pub(super) fn poll(&mut self, p: &plan::PollStep, span: Span) -> Option<outgoing::Poll> {
        use crate::language::vocab::{POLL_ANSWER_SETTINGS, POLL_SETTINGS};
        let filled = self.fill(&p.settings);
        let answers = p
            .answers
            .iter()
            .map(|(text, settings)| {
                let text = self.fill_text(text);
                (text, message::Filling::new(self.fill(settings), POLL_ANSWER_SETTINGS, "a poll's answer"))
            })
            .collect();
        let (poll, changed) = message::poll(message::Filling::new(filled, POLL_SETTINGS, "a poll"), answers);
        self.pending.extend(changed.iter().map(|what| failure::embed_adjusted(what, span)));
        poll
    }

    /// A reply's components, or its layout's parts with its components in
    /// them (then the first is empty).
    pub(super) fn laid_out(
        &mut self,
        components: &[plan::ComponentStep],
        layout: &[plan::LayoutStep],
        files: &[outgoing::File],
        span: Span,
    ) -> Result<(Vec<outgoing::Component>, Vec<outgoing::Block>), Box<Diagnostic>> {
        if layout.is_empty() {
            return Ok((self.components(components, span)?, Vec::new()));
        }
        let mut built = self.each_component(components, span)?;
        Ok((Vec::new(), self.layout_message(layout, &mut built, files, span)))
    }

    /// [`Runner::components`], one for each step: none where one was left
    /// out (a menu whose choices come from an empty list).
    fn each_component(
        &mut self,
        components: &[plan::ComponentStep],
        span: Span,
    ) -> Result<Vec<Option<outgoing::Component>>, Box<Diagnostic>> {
        use crate::language::vocab::{BUTTON_SETTINGS, CHOICE_SETTINGS, SELECT_SETTINGS};
        let mut out = Vec::with_capacity(components.len());
        for c in components {
            // The component's key is part of its id.
            let key = c.key.as_str();
            let filled = self.fill(&c.settings);
            let made = match c.kind {
                plan::ComponentKind::Button => message::button(
                    c.handler.as_deref(),
                    key,
                    message::Filling::new(filled, BUTTON_SETTINGS, "a button"),
                ),
                plan::ComponentKind::Select => {
                    let filled_choices = self.choices(&c.choices)?;
                    if filled_choices.is_empty() && c.choices.iter().any(|ch| ch.each.is_some()) {
                        // The platform refuses a menu with nothing to choose.
                        let what = "a select menu whose choices come from an empty list was left out";
                        self.pending.push(failure::embed_adjusted(what, span));
                        out.push(None);
                        continue;
                    }
                    let choices = filled_choices
                        .into_iter()
                        .map(|(label, value, settings)| {
                            (label, value, message::Filling::new(settings, CHOICE_SETTINGS, "a choice"))
                        })
                        .collect();
                    let f = message::Filling::new(filled, SELECT_SETTINGS, "a select menu");
                    message::select(c.handler.as_deref().unwrap_or_default(), key, f, choices)
                }
            };
            let (component, changed) = made.map_err(|why| Box::new(failure::custom_id_too_long(&why, span)))?;
            self.pending.extend(changed.iter().map(|what| failure::embed_adjusted(what, span)));
            out.push(Some(component));
        }
        Ok(out)
    }

    /// A form, filled in and kept to the platform's limits.
    fn form(&mut self, form: &plan::FormStep) -> Result<outgoing::Form, Box<Diagnostic>> {
        use crate::language::vocab::{CHOICE_SETTINGS, FORM_SETTINGS, INPUT_SETTINGS};
        let filled = self.fill(&form.settings);
        let mut inputs = Vec::with_capacity(form.inputs.len());
        for i in &form.inputs {
            let choices = self
                .choices(&i.choices)?
                .into_iter()
                .map(|(label, value, settings)| {
                    (label, value, message::Filling::new(settings, CHOICE_SETTINGS, "a choice"))
                })
                .collect();
            inputs.push(message::FilledInput {
                name: i.name.clone(),
                kind: i.kind,
                settings: message::Filling::new(self.fill(&i.settings), INPUT_SETTINGS, "an input"),
                choices,
            });
        }
        let texts = form.texts.iter().map(|(place, t)| (*place, self.fill_text(t))).collect();
        let f = message::Filling::new(filled, FORM_SETTINGS, "a form");
        let made = message::form(&form.handler, &form.key, f, inputs, texts);
        let (form_out, changed) = made.map_err(|why| Box::new(failure::custom_id_too_long(&why, form.span)))?;
        self.pending.extend(changed.iter().map(|what| failure::embed_adjusted(what, form.span)));
        Ok(form_out)
    }

    /// Sends the warnings of the step just rendered, or fails with the first
    /// one under `--strict`.
    pub(super) fn flush(&mut self) -> Outcome {
        if let Some(fatal) = self.fatal.take() {
            return Err(Box::new(self.redact_diag(fatal)));
        }
        for diag in std::mem::take(&mut self.pending) {
            let diag = self.redact_diag(diag);
            if self.options.strict {
                let mut diag = diag.with_severity(Severity::Error);
                diag.note = Some("--strict makes this a failure".into());
                return Err(Box::new(diag));
            }
            (self.sink)(Event::Warning(DiagnosticEvent::new(diag)));
        }
        Ok(())
    }

    fn redact_diag(&self, mut d: Diagnostic) -> Diagnostic {
        if self.redactor.is_empty() {
            return d;
        }
        d.message = self.redactor.redact(&d.message);
        d.help = d.help.map(|h| self.redactor.redact(&h));
        d.note = d.note.map(|n| self.redactor.redact(&n));
        for l in &mut d.labels {
            l.text = self.redactor.redact(&l.text);
        }
        d
    }

    fn condition(&mut self, c: &Condition) -> bool {
        let left = self.operand(&c.left);
        match &c.test {
            None => condition::truthy(&left),
            Some((op, right)) => {
                let right = self.operand(right);
                condition::compare(&left, *op, &right)
            }
        }
    }

    /// A side of a condition: missing when anything it reads has no value
    /// (which is warned about as for any other read).
    fn operand(&mut self, v: &crate::language::plan::Val) -> condition::Operand {
        let before = self.misses;
        let value = render::render_val(v, self);
        if self.misses > before {
            condition::Operand::Missing
        } else {
            condition::Operand::Value(value)
        }
    }

    /// Builds, checks and sends one block's request (or answers it from
    /// the sample, or only shows it); its response is kept for later steps.
    pub fn request(&mut self, r: &Request) -> Outcome {
        self.request_once(r)?;
        let refused = self.responses.get(&r.block).is_some_and(|x| x.status == 401);
        if !refused || self.refreshing || self.options.offline {
            return Ok(());
        }
        // A kept token the server no longer takes: fetched again, once, and
        // the request sent again with it.
        let stale = self.kept_blocks_read_by(r);
        if stale.is_empty() {
            return Ok(());
        }
        self.refreshing = true;
        let mut outcome = Ok(());
        for token in stale {
            let entry = super::cache::Entry::default();
            if let Ok(json) = serde_json::to_value(&entry) {
                let _ = self.store.set(&super::cache::key(&token.block), &json);
            }
            self.pending.push(failure::kept_refused(r, &token.block));
            outcome = outcome.and_then(|_| self.request_once(token));
        }
        let outcome = outcome.and_then(|_| self.request_once(r));
        self.refreshing = false;
        outcome
    }

    /// The cached blocks of `r`'s tree whose answers `r` sends.
    fn kept_blocks_read_by(&self, r: &Request) -> Vec<&'r Request> {
        let plan: &'r Plan = self.plan;
        let Some(tree) =
            plan.trees.iter().find(|t| plan::find_request(&t.steps, &r.block).is_some_and(|x| std::ptr::eq(x, r)))
        else {
            return Vec::new();
        };
        let mut read = Vec::new();
        r.each_template(&mut |t| {
            for seg in &t.parts {
                let path = match seg {
                    plan::Seg::Ref(p) => Some(p),
                    plan::Seg::Helped { base, .. } => match &**base {
                        plan::Seg::Ref(p) => Some(p),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(p) = path.filter(|p| !p.element && p.block != r.block && !read.contains(&p.block)) {
                    read.push(p.block.clone());
                }
            }
        });
        read.iter().filter_map(|name| plan::find_request(&tree.steps, name)).filter(|t| t.cache.is_some()).collect()
    }

    fn request_once(&mut self, r: &Request) -> Outcome {
        self.requests += 1;
        if self.requests > crate::language::vocab::MAX_REQUESTS {
            self.failure_kind = Some("budget");
            return Err(Box::new(failure::too_many_requests(r)));
        }
        let platform = self.platform.clone();
        let redactor = std::mem::take(&mut self.redactor);
        let allow_private = self.options.allow_private_network;
        let mut built = request::build(r, self, platform.as_ref(), allow_private, &redactor);
        // Offline, nothing is sent: a block that carries the token to the
        // file's own platform keeps to the policy a live run holds it to,
        // even where this run's platform is a stand-in's (play, tests).
        if self.options.offline && matches!(built, Err(request::Refusal::Token(_))) {
            let own = crate::language::policy::Platform::parse(&self.plan.platform);
            if own.as_ref().map(|p| p.base_url()) != platform.as_ref().map(|p| p.base_url()) {
                built = request::build(r, self, own.as_ref(), allow_private, &redactor);
            }
        }
        self.redactor = redactor;
        self.flush()?;
        let built = built.map_err(|refusal| {
            self.failure_kind = Some("refused");
            Box::new(self.redact_diag(failure::refused(r, &refusal)))
        })?;
        if self.options.dry_run {
            let event = self.event(r, &built);
            (self.sink)(Event::Request(event));
            return Ok(());
        }
        self.exchange(r, built.clone(), 1)?;
        match &r.pages {
            Some(pages) => self.follow_pages(r, pages, built),
            None => Ok(()),
        }
    }

    /// Follows a block's pages from its first response, each one sent as
    /// the first was (and counted as a request), and keeps their items.
    fn follow_pages(&mut self, r: &Request, pages: &plan::Pages, mut built: Built) -> Outcome {
        let origin = crate::base::urls::Destination::of(&built.url);
        let mut items: Vec<crate::base::data::Data> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut page = 1;
        while let Some(response) = self.responses.get(&r.block) {
            let list = super::pages::items(response, &pages.items)
                .map_err(|why| Box::new(failure::pages_not_a_list(r, &why)))?;
            items.extend(list);
            if pages.limit.is_some_and(|l| items.len() >= l as usize) {
                items.truncate(pages.limit.unwrap_or_default() as usize);
                break;
            }
            let url = match super::pages::next(response, &pages.next, &built.url, &origin) {
                None => break,
                Some(Ok(url)) => url,
                Some(Err(elsewhere)) => {
                    self.failure_kind = Some("refused");
                    let refusal = request::Refusal::Steered { value: self.redactor.redact(&elsewhere), part: "origin" };
                    return Err(Box::new(self.redact_diag(failure::refused(r, &refusal))));
                }
            };
            if !seen.insert(url.to_string()) {
                self.pending.push(failure::pages_left(r, page, true));
                break;
            }
            if page >= pages.max {
                self.pending.push(failure::pages_left(r, page, false));
                break;
            }
            page += 1;
            self.requests += 1;
            if self.requests > crate::language::vocab::MAX_REQUESTS {
                self.failure_kind = Some("budget");
                return Err(Box::new(failure::too_many_requests(r)));
            }
            built.url = url;
            self.exchange(r, built.clone(), page)?;
        }
        let footprint: u64 = items.iter().map(crate::base::data::Data::footprint).sum();
        let charge = self.charge(r, footprint)?;
        self.charges.insert(format!("{}\0items", r.block), charge);
        let list = Response::new(200, Body::Json(crate::base::data::Data::Array(items.into_boxed_slice())));
        self.items.insert(r.block.clone(), list);
        self.flush()
    }

    /// One request of a block (its `page`th): sent, or answered offline; its
    /// response kept for later steps.
    fn exchange(&mut self, r: &Request, built: Built, page: u32) -> Outcome {
        let mut event = self.event(r, &built);
        let cache = r.cache.as_ref().filter(|_| page == 1 && !self.options.test_request);
        let response = if self.options.offline {
            self.attempts = 1;
            let answer = self.options.answers.as_ref().and_then(|a| a.of(&r.block));
            let response = match answer {
                Some(answer) => self.given_response(r, answer)?,
                None => self.sample_response(r, page)?,
            };
            event.size = Some(match &response.body {
                Body::Json(j) => {
                    let mut text = String::new();
                    j.write_json(&mut text);
                    text.len()
                }
                Body::Text(t) => t.len(),
            });
            response
        } else if let Some(cache) = cache {
            self.kept_or_sent(r, cache, built, &mut event)?
        } else {
            self.send(r, built, &mut event)?
        };
        event.status = Some(response.status);
        event.response_body = self.preview(&response.body);
        self.responses.insert(r.block.clone(), response);
        (self.sink)(Event::Request(event));
        self.flush()
    }

    /// A cached block's answer: the one kept in the store when it is this
    /// request's and fresh (or once another process that is fetching it has
    /// kept it), else sent and kept. A store that cannot be read is no
    /// reason to fail: the request is sent.
    fn kept_or_sent(
        &mut self,
        r: &Request,
        cache: &plan::Cache,
        built: Built,
        event: &mut RequestEvent,
    ) -> Result<Response, Box<Diagnostic>> {
        use super::cache::{self as kept, Found};
        let key = kept::key(&r.block);
        let digest = kept::digest(&built);
        let wait = built.timeout.unwrap_or(self.options.http.timeout);
        let waited = Instant::now();
        let hit = loop {
            let now = kept::now_ms();
            let entry = self.kept_entry(&key);
            match kept::judge(entry.as_ref(), &digest, now) {
                Found::Fresh => break entry,
                Found::Filling if waited.elapsed() < wait => {
                    let _waiting = crate::base::waiting::Blocking::start();
                    std::thread::sleep(std::time::Duration::from_millis(25));
                }
                _ => {
                    let claim = kept::Entry {
                        digest: digest.clone(),
                        filling_until: now + wait.as_millis() as u64,
                        ..kept::Entry::default()
                    };
                    if self.claim_kept(&key, &digest, claim) {
                        break None;
                    }
                }
            }
        };
        if let Some(entry) = hit {
            event.cached = true;
            let (body, _) = self.keep(r, entry.body.as_bytes())?;
            let mut response = Response::new(entry.status, body);
            response.headers = entry.headers;
            self.secret_answer(r, &response);
            return Ok(response);
        }
        let sent = self.send(r, built, event);
        let entry = match &sent {
            Ok(response) if (200..300).contains(&response.status) => {
                let ms = match cache {
                    plan::Cache::For { ms } => Some(*ms),
                    plan::Cache::From { path } => match render::resolve(Some(response), path) {
                        Ok(render::Resolved::Json(crate::base::data::Data::Number(n))) => {
                            n.parse::<f64>().ok().map(kept::lifetime_ms)
                        }
                        _ => None,
                    },
                };
                let mut body = String::new();
                match &response.body {
                    Body::Json(j) => j.write_json(&mut body),
                    Body::Text(t) => body.push_str(t),
                }
                let headers = response.headers.clone();
                let expires_ms = ms.map_or(0, |ms| kept::now_ms() + ms);
                kept::Entry { digest, expires_ms, filling_until: 0, status: response.status, headers, body }
            }
            // Not kept: the claim is given up, and the next run fetches.
            _ => kept::Entry { digest, ..kept::Entry::default() },
        };
        if let Ok(json) = serde_json::to_value(&entry) {
            let _ = self.store.set(&key, &json);
        }
        if let Ok(response) = &sent {
            self.secret_answer(r, response);
        }
        sent
    }

    /// The kept entry of `key`, if the store has one it can read.
    fn kept_entry(&mut self, key: &str) -> Option<super::cache::Entry> {
        self.store.get(key).ok().flatten().and_then(|j| serde_json::from_value(j).ok())
    }

    /// Says in the store that this process fetches `key`'s answer, unless
    /// another one said so first (one transaction: every process's saves
    /// take their turn). Whether this one fetches.
    fn claim_kept(&mut self, key: &str, digest: &str, claim: super::cache::Entry) -> bool {
        use super::cache::{self as kept, Found};
        if self.store.begin().is_err() {
            return true;
        }
        let entry = self.kept_entry(key);
        let mine = kept::judge(entry.as_ref(), digest, kept::now_ms()) == Found::Fetch;
        let written = !mine || serde_json::to_value(&claim).is_ok_and(|json| self.store.set(key, &json).is_ok());
        let _ = self.store.end(written);
        mine
    }

    /// The answer of a cached block whose request sends a secret (a token
    /// got for a client secret) is a secret too: its texts are redacted
    /// wherever a secret is.
    fn secret_answer(&mut self, r: &Request, response: &Response) {
        let mut secret = false;
        r.each_template(&mut |t| secret |= t.has_secret() || t.has_token());
        if !secret {
            return;
        }
        if let Body::Json(data) = &response.body {
            let mut texts = Vec::new();
            data.clone().each_string_mut(&mut |s| {
                if s.len() >= 12 {
                    texts.push(s.to_string());
                }
            });
            for t in texts {
                self.redactor.add(&t, &format!("<api_{}>", r.block));
            }
        }
    }

    /// The start of a response's body for its event, redacted, when the
    /// options ask for one (`Options::preview`): cut at a character, with
    /// `…` when there was more.
    fn preview(&self, body: &Body) -> Option<String> {
        let most = self.options.preview;
        if most == 0 {
            return None;
        }
        let mut text = match body {
            Body::Json(json) => {
                let mut text = String::new();
                json.write_json(&mut text);
                text
            }
            Body::Text(text) => text.clone(),
        };
        if text.len() > most {
            let cut = (0..=most).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
            text.truncate(cut);
            text.push('…');
        }
        Some(self.redactor.redact(&text))
    }

    /// The request as an event, before it is sent (redacted).
    fn event(&self, r: &Request, built: &Built) -> RequestEvent {
        let shows_request = self.options.verbose || self.options.dry_run;
        RequestEvent {
            block: r.block.clone(),
            method: r.method.as_str(),
            url: self.redactor.redact(built.url.as_str()),
            status: None,
            duration_ms: None,
            size: None,
            redirects: 0,
            retries: 0,
            cached: false,
            offline: self.options.offline,
            dry_run: self.options.dry_run,
            request_headers: shows_request
                .then(|| built.headers.iter().map(|h| (h.name.clone(), self.redactor.redact(&h.value))).collect()),
            request_body: built
                .body
                .as_ref()
                .filter(|_| shows_request)
                .map(|b| self.redactor.redact(&String::from_utf8_lossy(b))),
            response_headers: None,
            response_body: None,
            action: None,
            span: r.span,
        }
    }

    /// Sends a built request over HTTP and reads its response.
    fn send(&mut self, r: &Request, built: Built, event: &mut RequestEvent) -> Result<Response, Box<Diagnostic>> {
        let started = Instant::now();
        let mut built = built;
        built.timeout = r.timeout_ms.map(std::time::Duration::from_millis);
        if let Some(d) = self.options.deadline {
            built.within = Some(d.saturating_duration_since(started));
        }
        let mut waits = r.retry.as_ref().filter(|x| x.repeatable).map(|x| (x, super::retry::waits(x)));
        let incoming = loop {
            let result = self.attempt(r, &built, started);
            let Some((retry, next)) = &mut waits else { break result };
            let wait = match &result {
                Ok(i) if super::retry::retried_status(retry, i.status) => {
                    let asked = super::retry::asked_wait(&i.headers, std::time::SystemTime::now());
                    // A server that asks for longer than the longest backoff is not retried.
                    next.next().and_then(|w| match asked {
                        Some(a) if a > std::time::Duration::from_millis(crate::language::vocab::MAX_BACKOFF_MS) => None,
                        Some(a) => Some((a, format!("it answered {}", i.status))),
                        None => Some((w, format!("it answered {}", i.status))),
                    })
                }
                Err((_, Some(f))) if super::retry::retried_failure(f) => {
                    next.next().map(|w| (w, failure::short_failure(f)))
                }
                _ => None,
            };
            let fits = |w: &std::time::Duration| self.options.deadline.is_none_or(|d| Instant::now() + *w < d);
            match wait.filter(|(w, _)| fits(w)) {
                Some((wait, why)) => {
                    event.retries += 1;
                    let attempt = event.retries + 1;
                    self.pending.push(self.redact_diag(failure::retrying(r, &why, wait, attempt, retry.times + 1)));
                    let _waiting = crate::base::waiting::Blocking::start();
                    std::thread::sleep(wait);
                }
                None => break result,
            }
        };
        self.attempts = event.retries + 1;
        let incoming = incoming.map_err(|(d, _)| d)?;
        event.duration_ms = Some((started.elapsed().as_secs_f64() * 1e4).round() / 10.0);
        event.size = Some(incoming.body.len());
        event.redirects = incoming.redirects;
        event.url = self.redactor.redact(incoming.url.as_str());
        self.last_headers = incoming.headers.iter().map(|(k, v)| (k.clone(), self.redactor.redact(v))).collect();
        if self.options.verbose {
            event.response_headers = Some(self.last_headers.clone());
        }
        if let Some((location, why)) = &incoming.redirect_refused {
            let location = self.redactor.redact(location);
            self.pending.push(failure::redirect_not_followed(r, &location, *why));
        }
        let (body, lossy) = self.keep(r, &incoming.body)?;
        if lossy {
            self.pending.push(failure::lossy_json(r));
        }
        self.status_heard(r, incoming.status, &incoming.headers);
        let bytes = r.keep_bytes.then(|| std::sync::Arc::from(incoming.body.as_slice()));
        let headers = incoming.headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone())).collect();
        Ok(Response { status: incoming.status, body, headers, bytes })
    }

    /// One attempt at sending (the platform's limiter waits its turn for a
    /// request with the bot token), or its failure with what failed.
    fn attempt(
        &mut self,
        r: &Request,
        built: &Built,
        started: Instant,
    ) -> Result<http::Incoming, (Box<Diagnostic>, Option<http::Failure>)> {
        use crate::discord::ratelimit::{Heard, Unsent};
        let limiter = self.options.limiter.clone().filter(|_| built.carries_token);
        let deadline = started + built.timeout.unwrap_or(self.options.http.timeout);
        let deadline = self.options.deadline.map_or(deadline, |d| d.min(deadline));
        let (options, client) = (&self.options, &mut self.client);
        let attempt = || match &options.client {
            Some(shared) => shared.send(built.clone()),
            None => client.get_or_insert_with(|| http::Client::new(options.http)).send(built.clone()),
        };
        fn heard(i: &http::Incoming) -> Heard<'_> {
            Heard { status: i.status, headers: &i.headers, body: &i.body }
        }
        let route = (built.method.as_str(), &built.url);
        match crate::discord::ratelimit::send(limiter.as_deref(), route, deadline, attempt, heard) {
            Ok(i) => Ok(i),
            Err(Unsent::Wait(why)) => {
                self.failure_kind = Some("rate_limited");
                Err((Box::new(failure::rate_limited(r, &why.to_string())), None))
            }
            Err(Unsent::Failed(f)) => {
                self.failure_kind = Some(failure::failure_kind_of(&f));
                let d = self.redact_diag(failure::http_failure(r, f.clone(), &self.options.http));
                Err((Box::new(d), Some(f)))
            }
        }
    }

    /// B319 when a block's error status is not read by the file (with the
    /// answer's `Retry-After`, when it gave one).
    fn status_heard(&mut self, r: &Request, status: u16, headers: &[(String, String)]) {
        let handled = r.failed.as_ref().is_some_and(|f| f.on.iter().any(|(lo, hi)| (*lo..=*hi).contains(&status)));
        if status >= 400 && !handled && !self.plan.reads_status(&r.block) {
            let retry = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("retry-after"));
            self.pending.push(failure::status_not_read(r, status, retry.map(|(_, v)| v.as_str())));
        }
    }

    /// The answer a conversation test gives the block: its response, read
    /// as a server's would be (a body that is not JSON is text), or the
    /// failure a run would have met.
    fn given_response(&mut self, r: &Request, answer: super::inputs::Answer) -> Result<Response, Box<Diagnostic>> {
        let (status, headers, body) = match answer {
            super::inputs::Answer::Timeout => {
                self.failure_kind = Some("timeout");
                let why = http::Failure::Timeout("no answer (the test's `respond … timeout`)".to_string());
                return Err(Box::new(failure::http_failure(r, why, &self.options.http)));
            }
            super::inputs::Answer::Refused => {
                self.failure_kind = Some("connection");
                let why = http::Failure::Connect("connection refused (the test's `respond … refused`)".to_string());
                return Err(Box::new(failure::http_failure(r, why, &self.options.http)));
            }
            super::inputs::Answer::Response { status, headers, body } => (status, headers, body),
        };
        let bytes = match &body {
            Some(Json::String(text)) => text.clone().into_bytes(),
            Some(json) => json.to_string().into_bytes(),
            None => Vec::new(),
        };
        let (body, _) = self.keep(r, &bytes)?;
        self.last_headers = headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), self.redactor.redact(v))).collect();
        self.status_heard(r, status, &headers);
        let kept = r.keep_bytes.then(|| std::sync::Arc::from(bytes.as_slice()));
        let headers = headers.into_iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
        Ok(Response { status, body, headers, bytes: kept })
    }

    /// A response body as JSON when it is JSON (after a UTF-8 byte order
    /// mark, and with bytes that are not UTF-8 replaced, which the second
    /// value says), otherwise as text; charged to the run's budgets before
    /// it is built.
    fn keep(&mut self, r: &Request, bytes: &[u8]) -> Result<(Body, bool), Box<Diagnostic>> {
        // A block that runs again gives back what its last response held.
        self.charges.remove(&r.block);
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let shape = Shape::of(bytes);
        let charge = self.charge(r, shape.cost(bytes.len()))?;
        if let Ok(json) = Data::parse_shaped(bytes, &shape) {
            self.charges.insert(r.block.clone(), charge);
            return Ok((Body::Json(json), false));
        }
        drop(charge);
        let text = String::from_utf8_lossy(bytes);
        if let std::borrow::Cow::Owned(fixed) = &text {
            let shape = Shape::of(fixed.as_bytes());
            let charge = self.charge(r, shape.cost(fixed.len()))?;
            if let Ok(json) = Data::parse_shaped(fixed.as_bytes(), &shape) {
                self.charges.insert(r.block.clone(), charge);
                return Ok((Body::Json(json), true));
            }
        }
        let charge = self.charge(r, text.len() as u64)?;
        self.charges.insert(r.block.clone(), charge);
        Ok((Body::Text(text.into_owned()), false))
    }

    fn charge(&mut self, r: &Request, bytes: u64) -> Result<Charge, Box<Diagnostic>> {
        self.budgets.charge(bytes).map_err(|exceeded| {
            self.failure_kind = Some("budget");
            Box::new(failure::over_budget(r, exceeded))
        })
    }

    /// The sample of a block's `page`th request: its first sample, or with
    /// `pages` the one given for that page (the last after).
    fn sample_response(&mut self, r: &Request, page: u32) -> Result<Response, Box<Diagnostic>> {
        let more = (page as usize).checked_sub(2).map(|i| r.more_samples.get(i).or(r.more_samples.last()));
        let Some(sample) = more.flatten().or(r.sample.as_ref()) else { return Err(Box::new(failure::no_sample(r))) };
        let sample_path = sample.as_str();
        let loaded = self.options.samples.load(sample);
        match loaded.as_deref() {
            Some(Ok(sample)) => {
                self.charges.remove(&r.block);
                let charge = self.charge(r, sample.footprint())?;
                self.charges.insert(r.block.clone(), charge);
                let mut response = Response::new(200, Body::Json(sample.clone()));
                response.headers = self.options.samples.headers(sample_path).unwrap_or_default();
                Ok(response)
            }
            Some(Err(why)) => Err(Box::new(failure::sample_unreadable(r, sample, why))),
            None => Err(Box::new(failure::sample_unreadable(r, sample, "cannot be read"))),
        }
    }
}

/// The bytes of `value` written as JSON, counted without building the text.
fn json_bytes(value: &Json) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}
