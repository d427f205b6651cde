//! `blkc explain CODE`: the documentation page of a diagnostic code.

use blkc::base::diagnostics::Code;

use super::report::{self, Exit};

pub fn explain(code: &str) -> Exit {
    let wanted = code.trim().to_ascii_uppercase();
    match Code::ALL.iter().find(|c| c.as_str() == wanted) {
        Some(c) => {
            print!("{}", c.page());
            Exit::Success
        }
        None => report::usage(format!(
            "`{code}` is not a blkc diagnostic code\nhelp: the codes are listed in docs/diagnostics.md, from B001 to B{}",
            &Code::ALL[Code::ALL.len() - 1].as_str()[1..]
        )),
    }
}
