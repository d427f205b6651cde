//! `blkc build FILE`: the compiled plan as versioned JSON.

use std::path::Path;

use blkc::language::load::LoadOptions;

use super::args::{Color, Format};
use super::report::{self, Exit};

pub fn build(file: &Path, output: Option<&Path>) -> Exit {
    let opts = report::render_options(Color::Auto);
    let (_, plan) = match super::compile(file, LoadOptions::default(), Format::Text, opts) {
        Ok(p) => p,
        Err(exit) => return exit,
    };
    let json = report::json(&plan, true);
    match output {
        Some(path) => match std::fs::write(path, json + "\n") {
            Ok(()) => Exit::Success,
            Err(e) => report::usage(format!("cannot write `{}`: {e}", path.display())),
        },
        None => {
            println!("{json}");
            Exit::Success
        }
    }
}
