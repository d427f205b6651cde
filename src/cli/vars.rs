//! `blkc vars list|get|set|delete`: custom variables in a store.

use std::path::Path;

use blkc::diagnostics::Code;
use blkc::eval::VarStore;
use blkc::store::{self, Store};

use super::args::{Format, VarsAction};
use super::report::{self, Exit};

/// The store, after the variable name is checked: read-only to read (a
/// missing store is empty, and never created), to write otherwise.
fn open(path: &Path, action: &VarsAction) -> Result<Store, Exit> {
    let name = match action {
        VarsAction::List { .. } => None,
        VarsAction::Get { name } | VarsAction::Set { name, .. } | VarsAction::Delete { name } => Some(name),
    };
    if let Some(name) = name.filter(|n| !blkc::syntax::template::is_ident(n)) {
        return Err(report::usage(format!(
            "`{name}` is not a variable name: a name is letters, digits and `_`, not starting with a digit, as `{{name}}` reads it"
        )));
    }
    let reading = matches!(action, VarsAction::List { .. } | VarsAction::Get { .. });
    if reading && !path.exists() {
        return Err(match action {
            VarsAction::Get { name } => {
                report::usage(format!("no custom variable `{name}`: there is no store at `{}`", path.display()))
            }
            _ => Exit::Success,
        });
    }
    let opened = if reading { Store::open_read_only(path) } else { Store::open(path) };
    opened.map_err(|e| {
        report::coded_error(
            Code::StoreFailed,
            e,
            Some(
                "give another store with `--store PATH`; blkc never changes or recreates a file that is not its store",
            ),
        )
    })
}

pub fn vars(store_path: Option<&Path>, action: &VarsAction) -> Exit {
    let path = store_path.map_or_else(|| store::DEFAULT_PATH.into(), Path::to_path_buf);
    let mut store = match open(&path, action) {
        Ok(s) => s,
        Err(exit) => return exit,
    };
    let failed = |e: String| report::coded_error(Code::StoreFailed, e, None);
    match action {
        VarsAction::List { format } => match store.list() {
            Ok(entries) => {
                for e in &entries {
                    match format {
                        Format::Text => println!("{} = {}", e.name, e.value),
                        Format::Json => {
                            let entry =
                                serde_json::json!({ "name": e.name, "value": e.value, "updated_at": e.updated_at });
                            println!("{}", report::json(&entry, false))
                        }
                    }
                }
                Exit::Success
            }
            Err(e) => failed(e),
        },
        VarsAction::Get { name } => match store.get(name) {
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
            let value = if value == "-" {
                let mut text = String::new();
                if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
                    return report::usage(format!("cannot read the value from standard input: {e}"));
                }
                // One trailing line break is the shell's, not the value's.
                let trimmed = text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t));
                trimmed.map(str::to_string).unwrap_or(text)
            } else {
                value.clone()
            };
            let value = &value;
            let value = if *json {
                match serde_json::from_str(value) {
                    Ok(v) => v,
                    Err(e) => return report::usage(format!("`{value}` is not JSON: {e}")),
                }
            } else {
                serde_json::Value::String(value.clone())
            };
            match store.set(name, &value) {
                Ok(()) => Exit::Success,
                Err(e) => failed(e),
            }
        }
        VarsAction::Delete { name } => match store.delete(name) {
            Ok(true) => Exit::Success,
            Ok(false) => report::usage(format!("no custom variable `{name}` in `{}`", path.display())),
            Err(e) => failed(e),
        },
    }
}
