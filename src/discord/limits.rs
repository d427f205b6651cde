//! The platform's limits on what a bot registers and sends: commands,
//! options and choices, messages, embeds, components and forms.

/// Context-menu commands in the menu of a user, and of a message (15 each
/// since the platform's change of 2026-03-03; 5 before).
pub const MENU_COMMANDS: usize = 15;
/// Characters in a description (and at least one).
pub const DESCRIPTION: usize = 100;
/// Options of one command.
pub const OPTIONS: usize = 25;
/// The longest `min`/`max` length of a text option.
pub const OPTION_LENGTH: u32 = 6_000;
/// Choices of one option.
pub const CHOICES: usize = 25;
/// Characters of a choice's name and of a string choice's value.
pub const CHOICE_TEXT: usize = 100;
/// Global commands of one application.
pub const COMMANDS: usize = 100;
/// Characters of a command's names, descriptions and choices together.
pub const COMMAND_TEXT: usize = 8000;
/// Characters of a message's `content`.
pub const MESSAGE: usize = 2000;
/// Embeds on one message.
pub const EMBEDS: usize = 10;
/// Fields of one embed.
pub const EMBED_FIELDS: usize = 25;
/// Characters of a field's name and of its value.
pub const FIELD_NAME: usize = 256;
pub const FIELD_VALUE: usize = 1024;
/// Characters of every embed of a message together (titles,
/// descriptions, fields, footers and authors).
pub const EMBED_TOTAL: usize = 6000;
/// Rows of components on a message, and buttons in a row.
pub const ROWS: usize = 5;
pub const ROW_BUTTONS: usize = 5;
/// Choices of a select menu.
pub const MENU_CHOICES: usize = 25;
/// Inputs of a form, its texts counted.
pub const INPUTS: usize = 5;
/// Characters a form's text input takes.
pub const INPUT_TEXT: u32 = 4000;
/// Files one upload of a form takes.
pub const UPLOAD_FILES: u32 = 10;
/// Choices of a radio group and of a group of checkboxes.
pub const GROUP_CHOICES: usize = 10;
/// Kinds of file an upload filters for.
pub const UPLOAD_TYPES: usize = 10;
/// Characters of a component's `custom_id`.
pub const CUSTOM_ID: usize = 100;
/// Characters of an embed's `url`, `image` and `thumbnail`.
pub const EMBED_URL: usize = 2048;
/// Components of a layout message, every one counted (its containers,
/// sections, texts, thumbnails, galleries, separators, rows, buttons and
/// menus).
pub const LAYOUT_COMPONENTS: usize = 40;
/// Characters of a layout message's text (each Text Display).
pub const LAYOUT_TEXT: usize = 4000;
/// Texts of a section (at least one, beside its accessory).
pub const SECTION_TEXTS: usize = 3;
/// Images of a media gallery (at least one).
pub const GALLERY_ITEMS: usize = 10;
/// Characters of a thumbnail's or a gallery image's description, and of
/// its address.
pub const MEDIA_DESCRIPTION: usize = 1024;
pub const MEDIA_URL: usize = 2048;
/// A poll's answers, the characters of its question and of an answer,
/// and the hours it may stay open (32 days).
pub const POLL_ANSWERS: usize = 10;
pub const POLL_QUESTION: usize = 300;
pub const POLL_ANSWER: usize = 55;
pub const POLL_HOURS: u32 = 768;
/// Files on one message, and the characters of a file's name and of its
/// description.
pub const FILES: usize = 10;
pub const FILE_NAME: usize = 1024;
pub const FILE_DESCRIPTION: usize = 1024;
/// The bytes of one uploaded file: the platform's default for every user
/// (a server's boosts may allow more; blkc holds to this one).
pub const UPLOAD_BYTES: u64 = 10 << 20;
/// Characters of a link button's `url`.
pub const LINK_URL: usize = 512;

/// The row of each component of a message, given whether each is a
/// button: buttons fill rows of 5 in order, a select menu takes a row of
/// its own. The one layout rule, for the checker and the wire alike.
pub fn rows(is_button: &[bool]) -> Vec<usize> {
    let mut out = Vec::with_capacity(is_button.len());
    let (mut row, mut in_row, mut buttons_row) = (0usize, 0usize, false);
    for (i, &button) in is_button.iter().enumerate() {
        let fits = button && buttons_row && in_row < ROW_BUTTONS;
        if i > 0 && !fits {
            row += 1;
            in_row = 0;
        }
        in_row += 1;
        buttons_row = button;
        out.push(row);
    }
    out
}
