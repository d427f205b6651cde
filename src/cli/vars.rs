//! `blkc vars list|get|set|delete`: custom variables in a store.

use std::path::Path;

use blkc::base::diagnostics::Code;
use blkc::run::store::{self, Admin, Location, Store, StoreError};

use super::args::{Format, ScopeArgs, VarsAction};
use super::report::{self, Exit};
use blkc::language::vocab::VarScope;

/// The store, after the variable name is checked: read-only to read (a
/// missing store is empty, and never created), to write otherwise.
/// The variable name an action names is one `{name}` can read, on every
/// backend alike (checked before any store is opened).
fn check_name(action: &VarsAction) -> Result<(), Exit> {
    let name = match action {
        VarsAction::List { .. } | VarsAction::Waiting { .. } | VarsAction::Migrate | VarsAction::Shards { .. } => None,
        VarsAction::Get { name } | VarsAction::Set { name, .. } | VarsAction::Delete { name } => Some(name),
    };
    match name.filter(|n| !blkc::language::syntax::template::is_ident(n)) {
        Some(name) => Err(report::usage(format!(
            "`{name}` is not a variable name: a name is letters, digits and `_`, not starting with a digit, as `{{name}}` reads it"
        ))),
        None => Ok(()),
    }
}

fn open(location: &Location, path: &Path, action: &VarsAction) -> Result<Box<dyn Admin>, Exit> {
    let reading = matches!(action, VarsAction::List { .. } | VarsAction::Waiting { .. } | VarsAction::Get { .. });
    if reading && matches!(location, Location::Sqlite(_)) && !path.exists() {
        return Err(match action {
            VarsAction::Get { name } => {
                report::usage(format!("no custom variable `{name}`: there is no store at `{}`", path.display()))
            }
            _ => Exit::Success,
        });
    }
    store::admin(location, reading).map_err(|e| report::coded_error(Code::StoreFailed, &e, Some(e.help())))
}

/// The scope the flags select, and its ids in the store's order.
fn selected(scope: &ScopeArgs) -> Result<(VarScope, Vec<String>), String> {
    for id in [&scope.user, &scope.server, &scope.channel].into_iter().flatten() {
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("`{}` is not an ID: IDs are numbers", blkc::base::display::one_line(id)));
        }
    }
    Ok(match (&scope.user, &scope.server, &scope.channel) {
        (Some(user), server, None) => (VarScope::User, vec![server.clone().unwrap_or_default(), user.clone()]),
        (None, Some(server), None) => (VarScope::Server, vec![server.clone()]),
        (None, None, Some(channel)) => (VarScope::Channel, vec![channel.clone()]),
        (None, None, None) => (VarScope::Global, Vec::new()),
        _ => return Err("give `--user` (and `--server`), `--server`, or `--channel`".into()),
    })
}

/// How a stored key reads in a listing: `points`, `points [user 1001 in server 777]`.
fn shown(key: &str) -> (String, serde_json::Value) {
    let (name, scope, ids) = VarScope::split_key(key);
    let (words, json) = match (scope, ids.as_slice()) {
        (VarScope::User, ["", user]) => {
            (format!(" [user {user}, outside servers]"), serde_json::json!({ "scope": "user", "user": user }))
        }
        (VarScope::User, [server, user]) => (
            format!(" [user {user} in server {server}]"),
            serde_json::json!({ "scope": "user", "user": user, "server": server }),
        ),
        (VarScope::Server, [server]) => {
            (format!(" [server {server}]"), serde_json::json!({ "scope": "server", "server": server }))
        }
        (VarScope::Channel, [channel]) => {
            (format!(" [channel {channel}]"), serde_json::json!({ "scope": "channel", "channel": channel }))
        }
        _ => (String::new(), serde_json::json!({ "scope": "global" })),
    };
    (format!("{name}{words}"), json)
}

pub fn vars(store_flag: Option<&str>, scope: &ScopeArgs, action: &VarsAction) -> Exit {
    let location = store::Location::choose(store_flag, store::DEFAULT_PATH.into());
    let failed = |e: StoreError| report::coded_error(Code::StoreFailed, &e, Some(e.help()));
    match action {
        VarsAction::Migrate => return migrate(&location),
        VarsAction::Shards { format } => return shards(&location, *format),
        _ => {}
    }
    if let Err(exit) = check_name(action) {
        return exit;
    }
    let path = match &location {
        Location::Sqlite(p) => p.clone(),
        Location::Postgres(u) => std::path::PathBuf::from(store::postgres::shown(u)),
    };
    let (scope, ids) = match selected(scope) {
        Ok(s) => s,
        Err(e) => return report::usage(e),
    };
    let any_scope = ids.is_empty();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let key = |name: &str| scope.key(name, &ids);
    let mut store = match open(&location, &path, action) {
        Ok(store) => store,
        Err(exit) => return exit,
    };
    match action {
        VarsAction::List { format } => match store.list() {
            Ok(entries) => {
                // With a scope's flags, only the values of that user, server or channel.
                let wanted = |k: &str| {
                    let (name, s, found) = VarScope::split_key(k);
                    any_scope || (s == scope && found == ids && !name.is_empty())
                };
                for e in entries.iter().filter(|e| wanted(&e.name)) {
                    match blkc::run::eval::cache::listed(&e.name, &e.value) {
                        Some(value) => print_entry(&blkc::run::store::Entry { value, ..e.clone() }, *format),
                        None => print_entry(e, *format),
                    }
                }
                Exit::Success
            }
            Err(e) => failed(e),
        },
        VarsAction::Waiting { format } => match waiting(store.as_mut(), scope, &ids, *format) {
            Ok(()) => Exit::Success,
            Err(e) => failed(e),
        },
        VarsAction::Get { name } => match store.get(&key(name)) {
            Ok(Some(serde_json::Value::String(s))) => {
                println!("{s}");
                Exit::Success
            }
            Ok(Some(v)) => {
                println!("{v}");
                Exit::Success
            }
            Ok(None) => report::usage(format!("no custom variable `{name}` in `{}`", path.display())),
            Err(e) => failed(e),
        },
        VarsAction::Set { name, value, json } => {
            let value = match value_given(value, *json) {
                Ok(v) => v,
                Err(exit) => return exit,
            };
            match store.set(&key(name), &value) {
                Ok(()) => Exit::Success,
                Err(e) => failed(e),
            }
        }
        VarsAction::Delete { name } => match store.delete(&key(name)) {
            Ok(true) => Exit::Success,
            Ok(false) => report::usage(format!("no custom variable `{name}` in `{}`", path.display())),
            Err(e) => failed(e),
        },
        VarsAction::Migrate | VarsAction::Shards { .. } => Exit::Success,
    }
}

/// `blkc vars shards`: each shard's lease, from a PostgreSQL store.
fn shards(location: &Location, format: Format) -> Exit {
    let Location::Postgres(url) = location else {
        return report::usage(
            "an SQLite store leases no shards: processes lease the Gateway's shards through a PostgreSQL store \
             (`--store postgres://…`)",
        );
    };
    let failed = |e: StoreError| report::coded_error(Code::StoreFailed, &e, Some(e.help()));
    let (standing, leases) = match store::postgres::Pool::open(url).and_then(|pool| pool.leases()) {
        Ok(found) => found,
        Err(e) => return failed(e),
    };
    if let Format::Json = format {
        let shards: Vec<serde_json::Value> = leases
            .iter()
            .map(|l| {
                serde_json::json!({ "shard": l.shard, "holder": (!l.holder.is_empty()).then_some(&l.holder),
                    "lease_left_ms": l.left_ms, "resumable": l.resumable })
            })
            .collect();
        let wanted = (standing.wanted > standing.count).then_some(standing.wanted);
        println!("{}", serde_json::json!({ "count": standing.count, "wanted": wanted, "shards": shards }));
        return Exit::Success;
    }
    if standing.count == 0 {
        println!("no shard leased yet: the first `blkc serve --shards auto` on this store sets the count");
        return Exit::Success;
    }
    println!("{} shards", standing.count);
    if standing.wanted > standing.count {
        println!("the platform wants {}: the count moves once no lease is live", standing.wanted);
    }
    for l in &leases {
        let session = if l.resumable { "session kept" } else { "no session" };
        match l.holder.as_str() {
            "" => println!("shard {:>3}  free  ({session})", l.shard),
            holder => println!("shard {:>3}  {holder}  {:.1} s left  ({session})", l.shard, l.left_ms as f64 / 1e3),
        }
    }
    Exit::Success
}

/// `blkc vars migrate`: the store's format brought up to this version.
fn migrate(location: &Location) -> Exit {
    let failed = |e: StoreError| report::coded_error(Code::StoreFailed, &e, Some(e.help()));
    match location {
        Location::Postgres(url) => match store::postgres::migrate(url) {
            Ok(done) => {
                eprintln!("{done}");
                Exit::Success
            }
            Err(e) => failed(e),
        },
        Location::Sqlite(path) => match Store::open(path) {
            Ok(_) => {
                eprintln!("`{}` is at store format {}; nothing to do", path.display(), store::SCHEMA_VERSION);
                Exit::Success
            }
            Err(e) => failed(e),
        },
    }
}

/// One entry of `blkc vars list`.
fn print_entry(e: &store::Entry, format: Format) {
    let (label, place) = shown(&e.name);
    match format {
        Format::Text => println!("{label} = {}", e.value),
        Format::Json => {
            let mut entry = serde_json::json!({
                "name": VarScope::split_key(&e.name).0, "value": e.value, "updated_at": e.updated_at
            });
            if let (Some(o), Some(p)) = (entry.as_object_mut(), place.as_object()) {
                o.extend(p.clone());
            }
            println!("{}", report::json(&entry, false))
        }
    }
}

/// `blkc vars waiting`: every piece, or with a scope's flags only that
/// user's (in that server) or that server's.
fn waiting(store: &mut dyn Admin, scope: VarScope, ids: &[&str], format: Format) -> Result<(), StoreError> {
    let owner = match scope {
        VarScope::User => Some(format!("user:{}", ids.join(":"))),
        VarScope::Server => Some(format!("server:{}", ids.join(":"))),
        _ => None,
    };
    let all = store.waiting(owner.as_deref())?;
    all.iter().for_each(|piece| print_waiting(piece, format));
    Ok(())
}

/// A piece of waiting work as `blkc vars waiting` lists it: when it is
/// due, whose it is, the tree that runs, its key and note.
fn print_waiting(piece: &blkc::run::store::later::Later, format: Format) {
    let shown = piece.shown();
    let whose: Vec<&str> = piece.owner.split(':').collect();
    let whose = match whose.as_slice() {
        ["user", "", user] => format!("user {user}"),
        ["user", server, user] => format!("user {user} in server {server}"),
        ["server", server] => format!("server {server}"),
        _ => piece.owner.clone(),
    };
    match format {
        Format::Text => {
            let (key, note) = (blkc::base::display::one_line(&piece.key), blkc::base::display::one_line(&piece.note));
            println!(
                "{}  {whose}  {}  key \"{key}\"  note \"{note}\"",
                shown["due"].as_str().unwrap_or(""),
                piece.tree
            );
        }
        Format::Json => {
            let entry = serde_json::json!({
                "due": shown["due"], "owner": whose, "tree": piece.tree, "key": piece.key, "note": piece.note,
            });
            println!("{}", report::json(&entry, false))
        }
    }
}

/// The value `blkc vars set` was given: `-` reads standard input; `--json`
/// parses it.
fn value_given(value: &str, json: bool) -> Result<serde_json::Value, Exit> {
    let value = if value == "-" {
        let mut text = String::new();
        if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
            return Err(report::usage(format!("cannot read the value from standard input: {e}")));
        }
        // One trailing line break is the shell's, not the value's.
        let trimmed = text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t));
        trimmed.map(str::to_string).unwrap_or(text)
    } else {
        value.to_string()
    };
    if json {
        serde_json::from_str(&value).map_err(|e| report::usage(format!("`{value}` is not JSON: {e}")))
    } else {
        Ok(serde_json::Value::String(value))
    }
}
