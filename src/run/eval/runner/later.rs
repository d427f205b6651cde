//! Work that waits (docs/language.md, "Work that waits"): `after "10m" {
//! … }` keeps its body's tree in the store with the run's variables, due
//! at a time of the run's clock; `cancel "KEY"` takes it back; `{waiting}`
//! lists what waits for the run's user. The store holds the bounds
//! (`run::store::later`); a serving process runs what is due.

use serde_json::Value as Json;

use super::{Outcome, Runner};
use crate::base::diagnostics::{Code, Diagnostic};
use crate::base::source::Span;
use crate::language::plan::LaterStep;
use crate::run::eval::render;
use crate::run::eval::Event;
use crate::run::store::later::{self, Full, Later};

/// The most characters of a key and of a note.
const MAX_KEY: usize = 100;
const MAX_NOTE: usize = 500;

impl Runner<'_> {
    /// `after "10m" { … }`: the body's tree kept in the store.
    pub(super) fn later(&mut self, l: &LaterStep) -> Outcome {
        let when = render::render(&l.when, self);
        let mut key = l.key.as_ref().map(|k| render::render(k, self)).unwrap_or_default();
        let note = l.note.as_ref().map(|n| render::render(n, self)).unwrap_or_default();
        self.flush()?;
        let due = self.due(&when, l.at).map_err(|why| refused(why, l.span))?;
        if key.chars().count() > MAX_KEY || note.chars().count() > MAX_NOTE {
            return Err(refused(format!("its key is over {MAX_KEY} characters or its note over {MAX_NOTE}"), l.span));
        }
        if key.starts_with(later::RESERVED) {
            return Err(refused(format!("a key cannot start with `{}` (blkc's own keys do)", later::RESERVED), l.span));
        }
        let owner = self.later_owner(l.per_server, l.span)?;
        let mut vars: serde_json::Map<String, Json> =
            self.inputs.vars.iter().map(|(k, v)| (k.clone(), Json::String(v.clone()))).collect();
        if let Some(answer) = &l.answer {
            // One wait for the member's answer in a channel: a second replaces it.
            key = later::answer_key(self.scoped_id("channel_id"));
            vars.insert(later::ANSWER_TREE.into(), Json::String(answer.tree.clone()));
            vars.insert(later::ANSWER_NAME.into(), Json::String(answer.name.clone()));
        }
        let item = Later {
            id: later::new_id(),
            owner: owner.clone(),
            key: if l.answer.is_some() { key } else { self.redactor.redact(&key) },
            due_ms: due.unix_timestamp() * 1000,
            tree: l.tree.clone(),
            note: self.redactor.redact(&note),
            vars: Json::Object(vars),
        };
        if item.kept_bytes() > later::MAX_KEPT_BYTES {
            let why = format!("the run's variables, key and note are over {} KiB", later::MAX_KEPT_BYTES / 1024);
            return Err(refused(why, l.span));
        }
        let failed = |e: crate::run::store::StoreError| {
            Box::new(crate::run::eval::failure::store_failure(&e, l.span, "keeping work that waits".into()))
        };
        match self.store.wait_later(&item).map_err(failed)? {
            Ok(()) => {}
            Err(Full::Owner) => {
                let whose = if l.per_server { "this server" } else { "this user" };
                let why = format!("{whose} has {} pieces of work waiting already", later::MAX_PER_OWNER);
                return Err(refused(why, l.span));
            }
            Err(Full::Store) => {
                let why = format!("the store holds {} pieces of work waiting already", later::MAX_PER_STORE);
                return Err(refused(why, l.span));
            }
        }
        let due = crate::base::when::written(due);
        let answer = l.answer.as_ref().map(|a| a.tree.clone());
        (self.sink)(Event::Later { tree: item.tree, due, key: item.key, note: item.note, owner, answer });
        Ok(())
    }

    /// `cancel "KEY"`: the owner's work of that key removed.
    pub(super) fn cancel(&mut self, key: &crate::language::plan::Template, per_server: bool, span: Span) -> Outcome {
        let key = render::render(key, self);
        self.flush()?;
        let owner = self.later_owner(per_server, span)?;
        let key = self.redactor.redact(&key);
        let now_ms = {
            use crate::base::world::World as _;
            self.world.now().unix_timestamp() * 1000
        };
        // Work due, or running, is not taken back: it runs (`{cancelled}` 0).
        let removed = self.store.cancel_later(&owner, &key, now_ms).map_err(|e| {
            Box::new(crate::run::eval::failure::store_failure(&e, span, "cancelling work that waits".into()))
        })?;
        self.cancelled = removed;
        (self.sink)(Event::Cancel { key, removed });
        Ok(())
    }

    /// `{waiting}`: the run's user's work waiting, soonest first, each its
    /// `key`, `note` and `due`.
    pub(super) fn waiting_list(&mut self, span: Span) -> Json {
        let owner = match self.later_owner(false, span) {
            Ok(owner) => owner,
            Err(d) => {
                self.fatal.get_or_insert(*d);
                return Json::Array(Vec::new());
            }
        };
        match self.store.waiting(Some(&owner)) {
            // The waits for the member's answer are blkc's, not theirs to list.
            Ok(all) => Json::Array(all.iter().filter(|l| !l.is_answer_wait()).map(Later::shown).collect()),
            Err(e) => {
                let failure = crate::run::eval::failure::store_failure(&e, span, "reading `waiting`".into());
                self.fatal.get_or_insert(failure);
                Json::Array(Vec::new())
            }
        }
    }

    /// When work written `when` is due: a time (`at`), or the run's time
    /// now and a duration (`after`).
    fn due(&self, when: &str, at: bool) -> Result<time::OffsetDateTime, String> {
        use crate::base::world::World as _;
        if at {
            return crate::base::when::time_of(&Json::String(when.to_string()))
                .map_err(|_| format!("`{}` is not a time", crate::base::display::one_line(when)));
        }
        let seconds = crate::language::vocab::parse_duration(when).map_err(|_| {
            format!("`{}` is not a duration like `10m` or `2h30m`", crate::base::display::one_line(when))
        })?;
        let seconds = i64::try_from(seconds).map_err(|_| "a duration past the year 9999".to_string())?;
        crate::base::when::moved(self.world.now(), seconds)
    }

    /// Whose the work is: `user:SERVER:USER` (the user a `with user`
    /// names, else the run's), or `server:SERVER`.
    fn later_owner(&self, per_server: bool, span: Span) -> Result<String, Box<Diagnostic>> {
        use crate::language::vocab::VarScope;
        let server = self.scoped_id("server_id").to_string();
        // A dry or offline run keeps nothing (its store is thrown away): a
        // run from a shell without ids keeps its work under empty ones.
        let kept = !(self.options.dry_run || self.options.offline);
        let digits = |v: &str| (!kept && v.is_empty()) || (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
        if per_server {
            if !digits(&server) {
                return Err(Box::new(crate::run::eval::failure::scope_without_id(
                    "waiting work",
                    VarScope::Server,
                    "server_id",
                    span,
                )));
            }
            return Ok(format!("server:{server}"));
        }
        let user = self.scoped_id("user_id");
        if !digits(user) || !(server.is_empty() || digits(&server)) {
            return Err(Box::new(crate::run::eval::failure::scope_without_id(
                "waiting work",
                VarScope::User,
                "user_id",
                span,
            )));
        }
        Ok(format!("user:{server}:{user}"))
    }
}

/// B336: work that waits not kept, and why.
fn refused(why: String, span: Span) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::new(Code::LaterRefused, format!("the work was not kept to run later: {why}"))
            .label(span, "not kept")
            .help(format!(
                "an `after` takes a duration (`10m`, `2h30m`, `1d`), an `at` a time (`2026-12-24T18:00:00Z`); a user has at most {} pieces waiting (`cancel` one, or give a `key`, which replaces the one of that key)",
                later::MAX_PER_OWNER
            )),
    )
}
