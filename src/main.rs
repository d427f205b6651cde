//! The `blkc` binary: everything is in [`cli`], over the library.

mod cli;

// The AST is many small allocations; mimalloc makes them (and the threads'
// allocations side by side) measurably cheaper than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
