//! The files a message carries, had and named (docs/language.md, "Files"):
//! each one's bytes from beside the bot, a block's response, a user's
//! upload or the run's text; its name, type and description filled in and
//! kept to the platform's limits (B326 for what had to change). A file that
//! cannot be had, or is larger than the platform's upload limit, fails the
//! run before anything of the message is sent (B337).

use super::Runner;
use crate::base::diagnostics::Diagnostic;
use crate::base::source::Span;
use crate::discord::limits;
use crate::discord::outgoing::File;
use crate::language::message::Filling;
use crate::language::plan::{FileFrom, FileStep};
use crate::language::vocab;
use crate::run::eval::failure;
use crate::run::eval::render::FileBytes;
use crate::run::eval::render::Scope as _;

impl Runner<'_> {
    /// A message's files, in order (a form's upload gives each of its own).
    pub(super) fn files(&mut self, steps: &[FileStep], span: Span) -> Result<Vec<File>, Box<Diagnostic>> {
        let mut out = Vec::with_capacity(steps.len());
        for step in steps {
            let had = match &step.from {
                FileFrom::Field(field) => self.uploads(field),
                other => self.file(other).map(|f| vec![f]),
            };
            let had = had.map_err(|why| Box::new(failure::file_unsent(&step.from.default_name(), &why, span)))?;
            let one = had.len() == 1;
            for file in had {
                out.push(self.one_file(step, file, one, span)?);
            }
        }
        if out.len() > limits::FILES {
            let why =
                format!("the message has {} files, and the platform takes {} a message", out.len(), limits::FILES);
            return Err(Box::new(failure::file_unsent(&out[limits::FILES].name, &why, span)));
        }
        Ok(out)
    }

    /// One file, named (its `filename` when it is its step's only one),
    /// typed and held to the upload limit.
    fn one_file(&mut self, step: &FileStep, had: FileBytes, only: bool, span: Span) -> Result<File, Box<Diagnostic>> {
        let filled = self.fill(&step.settings);
        let mut f = Filling::new(filled, vocab::FILE_SETTINGS, "a file");
        let named = f.text("filename").filter(|_| only);
        let name = named
            .or(had.name)
            .map(|n| n.replace(['/', '\\'], "_"))
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| step.from.default_name());
        if had.bytes.len() as u64 > limits::UPLOAD_BYTES {
            let why = format!(
                "it is {} bytes, and the platform takes at most {} ({} MiB) a file",
                had.bytes.len(),
                limits::UPLOAD_BYTES,
                limits::UPLOAD_BYTES >> 20
            );
            return Err(Box::new(failure::file_unsent(&name, &why, span)));
        }
        let media_type = match f.text("type") {
            Some(t) if crate::base::multipart::is_media_type(&t) => t.trim().to_string(),
            Some(t) => {
                let shown = crate::base::display::one_line(&t);
                f.changed.push(format!("file `{name}`'s `type` was left out: `{shown}` is not a media type"));
                crate::base::media::of_name(&name)
            }
            None => had
                .media_type
                .filter(|t| crate::base::multipart::is_media_type(t))
                .unwrap_or_else(|| crate::base::media::of_name(&name)),
        };
        let file = File {
            description: f.text("description"),
            spoiler: f.flag("spoiler"),
            media_type: Some(media_type),
            name,
            bytes: had.bytes,
        };
        self.adjusted_files(std::mem::take(&mut f.changed), span);
        Ok(file)
    }
}
