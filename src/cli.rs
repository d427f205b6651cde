//! Command-line types (clap). No logic here.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "blkc", version, about = "Compile, check and run .blk chat-bot commands and their API request blocks")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check files for every mistake that can be seen before a request is sent
    Check {
        /// The .blk files to check
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        output: Output,
        /// Treat warnings as errors (exit code 1)
        #[arg(long)]
        deny_warnings: bool,
        /// Threads for parsing large files (default: the number of cores)
        #[arg(long, short = 'j')]
        jobs: Option<usize>,
    },
    /// Print the documentation page of a diagnostic code, like `blkc explain B101`
    Explain {
        /// The code, like B101
        code: String,
    },
}

#[derive(Debug, clap::Args)]
pub struct Output {
    /// How to print diagnostics
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// When to use colour in text output
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}
