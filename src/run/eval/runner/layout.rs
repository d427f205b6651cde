//! A layout message's parts filled in (docs/language.md, "Layout"): its
//! texts, images and settings from their templates, its buttons and menus
//! in place, each kept to the platform's limits (`language::message`).
//! What had to change is a warning (B326): a text cut, an image whose
//! address is not one left out, and a part with nothing left to show left
//! out or shown without what it lost, so that the platform never refuses
//! the message.

use super::Runner;
use crate::base::source::Span;
use crate::discord::outgoing::{Accessory, Block, Component};
use crate::language::message::{self, Filling};
use crate::language::plan::{LayoutStep, MediaStep};
use crate::language::vocab;
use crate::run::eval::failure;

impl Runner<'_> {
    /// A layout message's parts: [`Runner::layout`], each file shown once.
    pub(super) fn layout_message(
        &mut self,
        steps: &[LayoutStep],
        built: &mut [Option<Component>],
        files: &[crate::discord::outgoing::File],
        span: Span,
    ) -> Vec<Block> {
        let mut blocks = self.layout(steps, built, files, span);
        unshown_files_only(&mut blocks);
        blocks
    }

    /// The parts of `steps`, with the reply's components (`built`, each
    /// taken where it stands).
    fn layout(
        &mut self,
        steps: &[LayoutStep],
        built: &mut [Option<Component>],
        files: &[crate::discord::outgoing::File],
        span: Span,
    ) -> Vec<Block> {
        let mut out = Vec::new();
        let mut together = false;
        for step in steps {
            let was_together = std::mem::replace(&mut together, matches!(step, LayoutStep::Component { .. }));
            match step {
                LayoutStep::Text { text } => {
                    let text = self.fill_text(text);
                    out.extend(self.layout_text(text, span).map(|text| Block::Text { text }));
                }
                LayoutStep::Component { index } => {
                    let Some(c) = built.get_mut(*index).and_then(Option::take) else { continue };
                    match out.last_mut() {
                        Some(Block::Components { components }) if was_together => components.push(c),
                        _ => out.push(Block::Components { components: vec![c] }),
                    }
                }
                LayoutStep::Container { settings, parts } => {
                    let filled = self.fill(settings);
                    let (accent, spoiler, changed) =
                        message::container(Filling::new(filled, vocab::CONTAINER_SETTINGS, "a container"));
                    self.adjusted(changed, span);
                    let parts = self.layout(parts, built, files, span);
                    if parts.is_empty() {
                        self.adjusted(vec!["a container with nothing left to show was left out".into()], span);
                    } else {
                        out.push(Block::Container { accent, spoiler, parts });
                    }
                }
                LayoutStep::Section { texts, thumbnail, button } => {
                    let button = button.and_then(|i| built.get_mut(i).and_then(Option::take));
                    self.section(texts, thumbnail.as_ref(), button, span, &mut out);
                }
                LayoutStep::File { index } => {
                    // (A file the run could not have failed it: B337.)
                    if let Some(f) = files.get(*index) {
                        out.push(Block::File { name: f.name.clone(), spoiler: f.spoiler });
                    }
                }
                LayoutStep::Separator { settings } => {
                    let filled = self.fill(settings);
                    let f = Filling::new(filled, vocab::SEPARATOR_SETTINGS, "a separator");
                    out.push(Block::Separator { large: f.flag("large"), invisible: f.flag("invisible") });
                }
                LayoutStep::Gallery { media } => {
                    let media: Vec<_> = media.iter().filter_map(|m| self.media(m, "a gallery's image", span)).collect();
                    if media.is_empty() {
                        self.adjusted(vec!["a gallery with no image left to show was left out".into()], span);
                    } else {
                        out.push(Block::Gallery { media });
                    }
                }
            }
        }
        out
    }

    /// A section: its texts beside its thumbnail or button. Without its
    /// thumbnail (an address that is not one), its texts stand alone;
    /// without text (all blank), its button does.
    fn section(
        &mut self,
        texts: &[crate::language::plan::Template],
        thumbnail: Option<&MediaStep>,
        button: Option<Component>,
        span: Span,
        out: &mut Vec<Block>,
    ) {
        let mut kept = Vec::new();
        for t in texts {
            let text = self.fill_text(t);
            kept.extend(self.layout_text(text, span));
        }
        let accessory = match (thumbnail, button) {
            (_, Some(c)) => Some(Accessory::Component(c)),
            (Some(m), None) => self.media(m, "a section's thumbnail", span).map(Accessory::Thumbnail),
            (None, None) => None,
        };
        match (kept.is_empty(), accessory) {
            (false, Some(accessory)) => out.push(Block::Section { texts: kept, accessory }),
            (false, None) => out.extend(kept.into_iter().map(|text| Block::Text { text })),
            (true, Some(Accessory::Component(c))) => {
                self.adjusted(vec!["a section's texts were all empty: its button is shown alone".into()], span);
                out.push(Block::Components { components: vec![c] });
            }
            (true, _) => self.adjusted(vec!["a section with no text left to show was left out".into()], span),
        }
    }

    /// A thumbnail or a gallery's image, or none (a warning says why).
    fn media(&mut self, m: &MediaStep, within: &'static str, span: Span) -> Option<crate::discord::outgoing::Media> {
        let url = self.fill_text(&m.url);
        let filled = self.fill(&m.settings);
        match message::media(&url, Filling::new(filled, vocab::MEDIA_SETTINGS, within)) {
            Ok((media, changed)) => {
                self.adjusted(changed, span);
                Some(media)
            }
            Err(why) => {
                self.adjusted(vec![why], span);
                None
            }
        }
    }

    fn layout_text(&mut self, text: String, span: Span) -> Option<String> {
        let mut changed = Vec::new();
        let text = message::layout_text(text, &mut changed);
        self.adjusted(changed, span);
        text
    }

    /// [`Runner::adjusted`] for a message's files.
    pub(super) fn adjusted_files(&mut self, changed: Vec<String>, span: Span) {
        self.adjusted(changed, span);
    }

    /// A warning (B326) for each change made to fit the platform.
    fn adjusted(&mut self, changed: Vec<String>, span: Span) {
        self.pending.extend(changed.iter().map(|what| failure::embed_adjusted(what, span)));
    }
}

/// Leaves out a file part whose file an image of the message already shows
/// (`attachment://NAME`): each file is shown once; a container left empty
/// by it goes too.
fn unshown_files_only(blocks: &mut Vec<Block>) {
    fn shown(blocks: &[Block], out: &mut Vec<String>) {
        for b in blocks {
            let media: Vec<&crate::discord::outgoing::Media> = match b {
                Block::Gallery { media } => media.iter().collect(),
                Block::Section { accessory: Accessory::Thumbnail(m), .. } => vec![m],
                Block::Container { parts, .. } => {
                    shown(parts, out);
                    Vec::new()
                }
                _ => Vec::new(),
            };
            out.extend(media.iter().filter_map(|m| vocab::attachment_name(&m.url).map(str::to_string)));
        }
    }
    fn keep(blocks: &mut Vec<Block>, shown: &[String]) {
        blocks.retain_mut(|b| match b {
            Block::File { name, .. } => !shown.contains(name),
            Block::Container { parts, .. } => {
                keep(parts, shown);
                !parts.is_empty()
            }
            _ => true,
        });
    }
    let mut names = Vec::new();
    shown(blocks, &mut names);
    if !names.is_empty() {
        keep(blocks, &names);
    }
}
