//! Building a message from what a reply wrote: its choices, buttons,
//! selects, forms and embeds from their filled settings, each checked and
//! cut to the platform's limits. What is built is `discord::outgoing`'s
//! (the message as blkc sends it, which `discord::message` writes in the
//! platform's wire form).

use crate::discord::limits;
use crate::discord::outgoing::{
    fit, short, Button, Choice, ChoiceValue, Component, Embed, EmbedField, Form, InputKind, Media, MenuChoice, Poll,
    PollAnswer, Select, TextInput, CUT,
};
use crate::language::vocab::{self, EmbedPart, PartForm};

/// The choices an autocomplete's run offered (`name`, `value` as text),
/// as the platform takes them for an option of type `kind`: the first
/// [`limits::CHOICES`], each name and text value cut to
/// [`limits::CHOICE_TEXT`] characters; a choice with an empty name or
/// value, or a value that is not a number of the option's range, is left
/// out. Also says how many were left out or cut.
pub fn choices(offered: Vec<(String, String)>, kind: crate::discord::options::OptionType) -> (Vec<Choice>, usize) {
    use crate::discord::options::OptionType;
    let long = |s: &str| s.chars().count() > limits::CHOICE_TEXT;
    let cut = |s: &str| s.chars().take(limits::CHOICE_TEXT).collect::<String>();
    let mut out = Vec::new();
    let mut adjusted = offered.len().saturating_sub(limits::CHOICES);
    for (name, value) in offered.into_iter().take(limits::CHOICES) {
        let (name, value) = (name.trim(), value.trim());
        let kept = match kind {
            OptionType::Integer => crate::discord::options::parse_integer(value).map(ChoiceValue::Integer),
            OptionType::Number if crate::discord::options::is_option_number(value) => {
                value.parse().ok().map(ChoiceValue::Number)
            }
            OptionType::Number => None,
            _ => Some(ChoiceValue::Text(cut(value))).filter(|_| !value.is_empty()),
        };
        match kept {
            Some(kept) if !name.is_empty() => {
                adjusted += usize::from(long(name) || (kind == OptionType::String && long(value)));
                out.push(Choice { name: cut(name), value: kept });
            }
            _ => adjusted += 1,
        }
    }
    (out, adjusted)
}

/// A setting as a run filled it in.
#[derive(Debug, Clone, PartialEq)]
pub enum Filled {
    Flag,
    Text(String),
    Number(u32),
}

/// The filled-in settings of one part, and what had to change for the
/// platform to take it.
pub struct Filling<'s> {
    settings: Vec<(&'s str, Filled)>,
    specs: &'static [vocab::SettingSpec],
    pub changed: Vec<String>,
    within: &'static str,
}

impl<'s> Filling<'s> {
    pub fn new(settings: Vec<(&'s str, Filled)>, specs: &'static [vocab::SettingSpec], within: &'static str) -> Self {
        Filling { settings, specs, changed: Vec::new(), within }
    }

    pub fn flag(&self, name: &str) -> bool {
        self.settings.iter().any(|(n, _)| *n == name)
    }

    pub fn number(&self, name: &str) -> Option<u32> {
        self.settings.iter().find_map(|(n, v)| match v {
            Filled::Number(x) if *n == name => Some(*x),
            _ => None,
        })
    }

    /// A text setting, cut to its limit (a warning says so); a blank one
    /// is left out (the platform refuses empty text).
    pub fn text(&mut self, name: &str) -> Option<String> {
        let mut text = self.settings.iter().find_map(|(n, v)| match v {
            Filled::Text(t) if *n == name => Some(t.clone()),
            _ => None,
        })?;
        if text.trim().is_empty() {
            return None;
        }
        let limit = self.specs.iter().find(|s| s.name == name).map(|s| s.form);
        match limit {
            Some(vocab::SettingForm::Text(max)) => self.cut(&mut text, max, name),
            Some(vocab::SettingForm::Url(max)) if text.trim().chars().count() > max => {
                let n = text.trim().chars().count();
                self.changed.push(format!(
                    "{}'s `{name}` was left out: it is {n} characters, and the platform takes {max}",
                    self.within
                ));
                return None;
            }
            Some(vocab::SettingForm::Color) if vocab::parse_color(&text).is_none() => {
                let shown = crate::base::display::one_line(&text);
                self.changed.push(format!("{}'s `{name}` was left out: `{shown}` is not a colour", self.within));
                return None;
            }
            Some(vocab::SettingForm::Emoji) => {
                if let Err(problem) = crate::discord::emoji::judge(text.trim()) {
                    self.changed.push(format!("{}'s `{name}` was left out: {}", self.within, problem.describe(&text)));
                    return None;
                }
                text = text.trim().to_string();
            }
            _ => {}
        }
        Some(text)
    }

    /// Cuts `text` to `max`, saying so.
    pub fn cut(&mut self, text: &mut String, max: usize, what: &str) {
        if fit(text, max) {
            self.changed.push(format!("{}'s `{what}` was cut to {max} characters", self.within));
        }
    }
}

/// A layout message's text as the platform takes it: none when blank (it
/// refuses an empty one), else cut to [`limits::LAYOUT_TEXT`] (`changed`
/// says so).
pub fn layout_text(mut text: String, changed: &mut Vec<String>) -> Option<String> {
    if text.trim().is_empty() {
        return None;
    }
    if fit(&mut text, limits::LAYOUT_TEXT) {
        changed.push(format!("a layout text was cut to {} characters", limits::LAYOUT_TEXT));
    }
    Some(text)
}

/// A thumbnail or a gallery's image from its filled address and settings,
/// or why it is left out (an address that is not http or https, or too
/// long: the platform would refuse the whole message).
pub fn media(url: &str, mut f: Filling<'_>) -> Result<(Media, Vec<String>), String> {
    let url = url.trim();
    let shown = crate::base::display::one_line(url);
    if !vocab::is_image_address(url) {
        return Err(format!(
            "{} was left out: `{shown}` is not an http or https address or a file's `attachment://` address",
            f.within
        ));
    }
    if url.chars().count() > limits::MEDIA_URL {
        return Err(format!("{} was left out: its address is over {} characters", f.within, limits::MEDIA_URL));
    }
    let media = Media { url: url.to_string(), description: f.text("description"), spoiler: f.flag("spoiler") };
    Ok((media, f.changed))
}

/// A poll from its filled settings and answers (each cut to the platform's
/// 55 characters, a blank one left out, at most 10), or none when no
/// answer is left; what had to change.
pub fn poll(mut f: Filling<'_>, answers: Vec<(String, Filling<'_>)>) -> (Option<Poll>, Vec<String>) {
    let question = f.text("question").unwrap_or_else(|| CUT.into());
    let hours = match f.text("duration").map(|d| vocab::parse_hours(&d, limits::POLL_HOURS)) {
        Some(Ok(hours)) => hours,
        Some(Err(why)) => {
            f.changed.push(format!("a poll's `duration` was left out (a day): {why}"));
            24
        }
        None => 24,
    };
    let mut changed = std::mem::take(&mut f.changed);
    let mut kept = Vec::new();
    for (mut text, mut a) in answers {
        if text.trim().is_empty() {
            changed.push("a poll's blank answer was left out".into());
            continue;
        }
        a.cut(&mut text, limits::POLL_ANSWER, "answer");
        kept.push(PollAnswer { text, emoji: a.text("emoji") });
        changed.append(&mut a.changed);
    }
    if kept.len() > limits::POLL_ANSWERS {
        changed.push(format!("a poll kept its first {} answers", limits::POLL_ANSWERS));
        kept.truncate(limits::POLL_ANSWERS);
    }
    if kept.is_empty() {
        changed.push("a poll with no answer left was left out".into());
        return (None, changed);
    }
    (Some(Poll { question, answers: kept, hours, multiple: f.flag("multiple") }), changed)
}

/// A container's accent colour and whether it is a spoiler.
pub fn container(mut f: Filling<'_>) -> (Option<u32>, bool, Vec<String>) {
    let accent = f.text("accent").and_then(|c| vocab::parse_color(&c));
    (accent, f.flag("spoiler"), f.changed)
}

/// The `custom_id` of a component or a form, or why it cannot be one
/// (longer than the platform's 100 characters: the run fails, as the
/// value is state the handler needs whole).
pub fn custom_id(handler: &str, key: &str, value: &str) -> Result<String, String> {
    let id = crate::discord::custom_id::custom_id(handler, key, value);
    let n = id.chars().count();
    if n > limits::CUSTOM_ID {
        return Err(format!(
            "the id of a component running `{handler}` would be {n} characters with its value; the platform takes 100"
        ));
    }
    Ok(id)
}

/// A button from its filled-in settings: a link when it has a `url`.
pub fn button(handler: Option<&str>, key: &str, mut f: Filling<'_>) -> Result<(Component, Vec<String>), String> {
    let url = f.text("url").filter(|u| vocab::is_web_url(u.trim()));
    let style = vocab::BUTTON_STYLES.iter().copied().find(|s| f.flag(s)).unwrap_or("primary");
    let value = f.settings.iter().find_map(|(n, v)| match v {
        Filled::Text(t) if *n == "value" => Some(t.clone()),
        _ => None,
    });
    let custom_id = match handler {
        Some(h) => Some(custom_id(h, key, value.as_deref().unwrap_or_default())?),
        None => None,
    };
    if let (None, Some(sku)) = (handler, f.text("sku")) {
        return Ok(premium(sku.trim(), f));
    }
    let mut b = Button {
        style: if handler.is_none() { "link" } else { style },
        label: f.text("label"),
        emoji: f.text("emoji"),
        url: if handler.is_none() { url } else { None },
        handler: handler.map(str::to_string),
        custom_id,
        disabled: f.flag("disabled"),
        sku: None,
    };
    if handler.is_none() && b.url.is_none() {
        // A link whose address did not fill in as one cannot be sent.
        f.changed.push("a link button's `url` did not fill in as a web address; it is shown disabled".into());
        b.url = Some("https://discord.com".into());
        b.disabled = true;
    }
    if b.label.is_none() && b.emoji.is_none() {
        f.changed.push("a button's `label` filled in empty; `…` is shown".into());
        b.label = Some(CUT.into());
    }
    Ok((Component::Button(b), f.changed))
}

/// A menu's `defaults` (each an id or a mention of what it lists, as many
/// as can be chosen) and, for a menu of channels, its `types`; what is not
/// one is left out, said in `changed`.
fn menu_defaults(menu: &mut Select, f: &mut Filling<'_>) {
    let words = |t: Option<String>| -> Vec<String> {
        t.map(|t| t.split([' ', ',']).filter(|w| !w.is_empty()).map(str::to_string).collect()).unwrap_or_default()
    };
    if menu.of != "choices" {
        let given = words(f.text("defaults"));
        let mut kept: Vec<(String, &'static str)> =
            given.iter().filter_map(|w| crate::discord::outgoing::default_value(w, menu.of)).collect();
        let most = menu.max.unwrap_or(1) as usize;
        if kept.len() < given.len() || kept.len() > most {
            f.changed.push(format!("a select menu kept {} of its `defaults`", kept.len().min(most)));
        }
        kept.truncate(most);
        menu.defaults = kept;
    }
    if menu.of == "channels" {
        let given = words(f.text("types"));
        let known = crate::discord::registration::CHANNEL_TYPES;
        menu.channel_types = given.iter().filter_map(|w| known.iter().find(|(k, _)| k == w).map(|(k, _)| *k)).collect();
        if menu.channel_types.len() < given.len() {
            f.changed.push("a select menu of channels left out `types` that are no kind of channel".into());
        }
    }
}

/// A premium button of SKU `sku`; one that did not fill in as an id is a
/// disabled link instead (the platform would refuse the message).
fn premium(sku: &str, mut f: Filling<'_>) -> (Component, Vec<String>) {
    let disabled = f.flag("disabled");
    if crate::discord::is_snowflake(sku) {
        let b = Button { style: "premium", sku: Some(sku.to_string()), disabled, ..Button::default() };
        return (Component::Button(b), f.changed);
    }
    f.changed.push("a premium button's `sku` did not fill in as an id; it is shown disabled".into());
    let b = Button {
        style: "link",
        label: Some(CUT.into()),
        url: Some("https://discord.com".into()),
        disabled: true,
        ..Button::default()
    };
    (Component::Button(b), f.changed)
}

/// A select menu from its filled-in settings and choices.
pub fn select(
    handler: &str,
    key: &str,
    mut f: Filling<'_>,
    choices: Vec<(String, String, Filling<'_>)>,
) -> Result<(Component, Vec<String>), String> {
    let of = vocab::SELECT_KINDS.iter().copied().find(|k| f.flag(k)).unwrap_or("choices");
    let mut menu = Select {
        of,
        handler: handler.to_string(),
        custom_id: custom_id(handler, key, "")?,
        placeholder: f.text("placeholder"),
        min: f.number("min"),
        max: f.number("max"),
        disabled: f.flag("disabled"),
        choices: Vec::new(),
        defaults: Vec::new(),
        channel_types: Vec::new(),
    };
    menu_defaults(&mut menu, &mut f);
    let mut changed = std::mem::take(&mut f.changed);
    menu.choices = menu_choices(choices, &mut changed);
    // The platform refuses a menu that asks for more than it offers (its
    // choices from a list are known only now).
    if of == "choices" {
        let offered = menu.choices.len() as u32;
        if menu.max.is_some_and(|m| m > offered) {
            changed.push(format!("a select menu's `max` was lowered to its {offered} choices"));
            menu.max = Some(offered);
        }
        let most = menu.max.unwrap_or(1);
        if menu.min.is_some_and(|m| m > most) {
            changed.push(format!("a select menu's `min` was lowered to {most}, as many as can be chosen"));
            menu.min = Some(most);
        }
    }
    Ok((Component::Select(menu), changed))
}

/// A form from its filled-in settings and inputs.
/// A choice of a menu or a group: its label and value cut to the
/// platform's 100 characters.
pub fn menu_choices(choices: Vec<(String, String, Filling<'_>)>, changed: &mut Vec<String>) -> Vec<MenuChoice> {
    let mut out = Vec::with_capacity(choices.len());
    for (mut label, mut value, mut c) in choices {
        c.cut(&mut label, limits::CHOICE_TEXT, "label");
        c.cut(&mut value, limits::CHOICE_TEXT, "value");
        if label.trim().is_empty() {
            label = CUT.into();
        }
        let choice = MenuChoice {
            label,
            value,
            description: c.text("description"),
            emoji: c.text("emoji"),
            default: c.flag("default"),
        };
        changed.append(&mut c.changed);
        out.push(choice);
    }
    out
}

/// A form's input as a run filled it in: its name, kind, settings and
/// choices.
pub struct FilledInput<'s> {
    pub name: String,
    pub kind: InputKind,
    pub settings: Filling<'s>,
    pub choices: Vec<(String, String, Filling<'s>)>,
}

/// A form from its filled-in settings, inputs and texts (each with the
/// place among the inputs it stands before), and what had to change.
pub fn form(
    handler: &str,
    key: &str,
    mut f: Filling<'_>,
    inputs: Vec<FilledInput<'_>>,
    texts: Vec<(usize, String)>,
) -> Result<(Form, Vec<String>), String> {
    let mut form = Form {
        handler: handler.to_string(),
        custom_id: custom_id(handler, key, "")?,
        title: f.text("title").unwrap_or_else(|| CUT.into()),
        inputs: Vec::new(),
        texts: Vec::new(),
    };
    let mut changed = std::mem::take(&mut f.changed);
    let mut left_out = Vec::new();
    for (place, filled) in inputs.into_iter().enumerate() {
        match input(filled, &mut changed) {
            Some(input) => form.inputs.push(input),
            None => left_out.push(place),
        }
    }
    for (place, mut text) in texts {
        if text.trim().is_empty() {
            continue;
        }
        if fit(&mut text, limits::LAYOUT_TEXT) {
            changed.push(format!("a form's text was cut to {} characters", limits::LAYOUT_TEXT));
        }
        form.texts.push((place - left_out.iter().filter(|&&p| p < place).count(), text));
    }
    Ok((form, changed))
}

/// One input of a form; none when it has nothing to choose from (its
/// choices came from an empty list: the platform refuses such a form).
fn input(filled: FilledInput<'_>, changed: &mut Vec<String>) -> Option<TextInput> {
    let FilledInput { name, mut kind, settings: mut i, choices } = filled;
    let label = i.text("label").unwrap_or_else(|| name.clone());
    let mut choices = menu_choices(choices, changed);
    let (_, most_choices) = kind.most();
    if most_choices > 0 && choices.len() > most_choices {
        changed.push(format!("input `{name}` kept its first {most_choices} choices, as many as the platform shows"));
        choices.truncate(most_choices);
    }
    if most_choices > 0 && choices.is_empty() {
        changed.push(format!("input `{name}` was left out: it has no choices"));
        return None;
    }
    if kind == InputKind::Radio && choices.len() < 2 {
        // (A radio group takes two; a menu of one is the same question.)
        changed.push(format!("input `{name}` has one choice: shown as a menu"));
        kind = InputKind::Menu;
    }
    let written = i.text("types").unwrap_or_default();
    let words: Vec<&str> = written.split([' ', ',']).filter(|w| !w.is_empty()).collect();
    let types: Vec<String> = words.iter().filter_map(|w| crate::discord::outgoing::file_type(w)).collect();
    if types.len() < words.len() || types.len() > limits::UPLOAD_TYPES {
        changed.push(format!(
            "input `{name}` kept {} of its types: `image`, `video`, `audio` or an extension such as `.pdf`, at most {}",
            types.len().min(limits::UPLOAD_TYPES),
            limits::UPLOAD_TYPES
        ));
    }
    let mut input = TextInput {
        label,
        kind,
        description: i.text("description"),
        types: types.into_iter().take(limits::UPLOAD_TYPES).collect(),
        default: i.flag("default"),
        paragraph: i.flag("paragraph"),
        placeholder: i.text("placeholder"),
        value: i.text("value"),
        min: i.number("min"),
        max: i.number("max"),
        required: !i.flag("optional") && kind != InputKind::Checkbox,
        choices,
        name,
    };
    // A group or a menu cannot ask for more than it offers.
    if !input.choices.is_empty() {
        let offered = input.choices.len() as u32;
        input.max = input.max.map(|m| m.min(offered));
        input.min = input.min.map(|m| m.min(input.max.unwrap_or(offered)));
    }
    changed.append(&mut i.changed);
    Some(input)
}

/// Whether an embed part's filled text is of its part's form (an address
/// within the platform's length, a time), else why not.
fn form_holds(part: EmbedPart, text: &str) -> Result<(), String> {
    let trimmed = text.trim();
    let n = trimmed.chars().count();
    let (ok, what) = match part.form() {
        PartForm::Url | PartForm::Image if n > limits::EMBED_URL => {
            return Err(format!("it is {n} characters, and the platform takes {}", limits::EMBED_URL))
        }
        PartForm::Url => (vocab::is_web_url(trimmed), "an http or https URL"),
        PartForm::Image => {
            (vocab::is_image_address(trimmed), "an http or https URL or a file's `attachment://` address")
        }
        PartForm::Timestamp => (vocab::is_timestamp(trimmed), "an RFC 3339 time"),
        PartForm::Text | PartForm::Color => (true, ""),
    };
    match ok {
        true => Ok(()),
        false => Err(format!("{:?} is not {what}", short(text))),
    }
}

/// An embed from its parts' and fields' filled-in text, and what had to
/// change for the platform to take it (for a warning: a run never fails
/// on an embed, and the platform never answers 400 to one).
pub fn embed(parts: Vec<(EmbedPart, String)>, fields: Vec<(String, String, bool)>) -> (Embed, Vec<String>) {
    let mut e = Embed::default();
    let mut changed = Vec::new();
    for (part, mut text) in parts {
        let name = part.as_str();
        if let Some(max) = part.limit() {
            if fit(&mut text, max) {
                changed.push(format!("the embed's `{name}` was cut to {max} characters"));
            }
        }
        let blank = text.trim().is_empty();
        let slot = match part {
            EmbedPart::Title => &mut e.title,
            EmbedPart::Description => &mut e.description,
            EmbedPart::Url => &mut e.url,
            EmbedPart::Timestamp => &mut e.timestamp,
            EmbedPart::Footer => &mut e.footer,
            EmbedPart::Author => &mut e.author,
            EmbedPart::AuthorUrl => &mut e.author_url,
            EmbedPart::AuthorIcon => &mut e.author_icon,
            EmbedPart::FooterIcon => &mut e.footer_icon,
            EmbedPart::Image => &mut e.image,
            EmbedPart::Thumbnail => &mut e.thumbnail,
            EmbedPart::Color => {
                match vocab::parse_color(&text) {
                    Some(c) => e.color = Some(c),
                    None if blank => {}
                    None => {
                        changed.push(format!("the embed's `color` was left out: {:?} is not a colour", short(&text)))
                    }
                }
                continue;
            }
        };
        if blank {
            // The platform refuses an empty part: a value that filled in
            // empty leaves it out.
            continue;
        }
        if let Err(why) = form_holds(part, &text) {
            changed.push(format!("the embed's `{name}` was left out: {why}"));
            continue;
        }
        *slot = Some(match part.form() {
            PartForm::Text => text,
            PartForm::Timestamp => vocab::parse_timestamp(&text).unwrap_or_default(),
            _ => text.trim().to_string(),
        });
    }
    for (mut name, mut value, inline) in fields.into_iter().take(limits::EMBED_FIELDS) {
        for (text, max, what) in [(&mut name, limits::FIELD_NAME, "name"), (&mut value, limits::FIELD_VALUE, "value")] {
            if text.trim().is_empty() {
                // A field's name and value are required: an empty one is
                // a blank that shows as nothing.
                *text = "\u{200b}".to_string();
            } else if fit(text, max) {
                changed.push(format!("a field's {what} was cut to {max} characters"));
            }
        }
        e.fields.push(EmbedField { name, value, inline });
    }
    (e, changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discord::outgoing::{embed_units, fit_embeds, pieces, units, MAX_PIECES};

    #[test]
    fn an_author_s_link_and_icon_and_a_footer_s_icon_go_with_them_on_the_wire() {
        let parts = vec![
            (EmbedPart::Author, "Ada".into()),
            (EmbedPart::AuthorUrl, "https://example.com/ada".into()),
            (EmbedPart::AuthorIcon, "https://example.com/ada.png".into()),
            (EmbedPart::Footer, "blkc".into()),
            (EmbedPart::FooterIcon, "javascript:alert(1)".into()),
        ];
        let (e, changed) = embed(parts, Vec::new());
        assert_eq!(e.author_url.as_deref(), Some("https://example.com/ada"));
        assert_eq!(e.author_icon.as_deref(), Some("https://example.com/ada.png"));
        assert_eq!(e.footer_icon, None, "not a web address: left out");
        assert_eq!(changed.len(), 1, "{changed:?}");
        let wire = serde_json::to_value(crate::discord::message::embed(&e)).unwrap();
        assert_eq!(wire["author"]["url"], "https://example.com/ada");
        assert_eq!(wire["author"]["icon_url"], "https://example.com/ada.png");
        assert!(wire["footer"].get("icon_url").is_none_or(serde_json::Value::is_null), "{wire}");
    }

    #[test]
    fn an_embed_is_kept_to_the_platform_s_limits_and_forms() {
        let parts = vec![
            (EmbedPart::Title, "t".repeat(300)),
            (EmbedPart::Color, "#5865f2".into()),
            (EmbedPart::Url, "not a url".into()),
            (EmbedPart::Timestamp, "2026-11-24T15:05:00+01:00".into()),
            (EmbedPart::Footer, "   ".into()),
        ];
        let fields = vec![("".into(), "v".repeat(2000), true)];
        let (e, changed) = embed(parts, fields);
        let title = e.title.unwrap();
        assert_eq!((title.chars().count(), title.ends_with(CUT)), (256, true));
        assert_eq!(e.color, Some(0x5865F2));
        assert_eq!(e.url, None);
        assert_eq!(e.timestamp.as_deref(), Some("2026-11-24T14:05:00Z"));
        assert_eq!(e.footer, None, "a blank part is left out");
        assert_eq!(e.fields[0].name, "\u{200b}");
        assert_eq!(e.fields[0].value.chars().count(), 1024);
        assert_eq!(changed.len(), 3, "{changed:?}");
        let mut many = vec![Embed { description: Some("d".repeat(4000)), ..Embed::default() }; 2];
        assert!(fit_embeds(&mut many));
        assert_eq!(many.iter().map(embed_units).sum::<usize>(), limits::EMBED_TOTAL);
        // Fields alone over the total (issue 48, item 15: 6,016 were sent).
        let field = EmbedField { name: "n".repeat(256), value: "v".repeat(1024), inline: false };
        let mut fields = vec![Embed { title: Some("t".repeat(256)), fields: vec![field; 25], ..Embed::default() }; 3];
        assert!(fit_embeds(&mut fields));
        assert!(fields.iter().map(embed_units).sum::<usize>() <= limits::EMBED_TOTAL);
        let field = EmbedField { name: "n".repeat(256), value: "v".repeat(1024), inline: false };
        let mut one = vec![Embed { fields: vec![field; 6], ..Embed::default() }];
        assert!(fit_embeds(&mut one));
        assert!(embed_units(&one[0]) <= limits::EMBED_TOTAL);
        assert_eq!(one[0].fields[0].value.len(), 1024, "the last fields give way first");
        assert_eq!(one[0].fields[5].value, CUT);
        assert_eq!(vocab::parse_color("16777216"), None);
        assert_eq!(vocab::parse_color("blue"), None);
    }

    #[test]
    fn a_long_reply_is_split_at_lines_and_a_very_long_one_cut_with_a_mark() {
        let (one, warning) = pieces("hello");
        assert_eq!((one, warning), (vec!["hello".to_string()], None));
        let text = "line of text\n".repeat(300); // 3,900 characters
        let (parts, warning) = pieces(&text);
        assert_eq!(parts.len(), 2);
        assert!(parts.iter().all(|p| units(p) <= 2000));
        assert_eq!(parts.concat().replace('\n', ""), text.replace('\n', ""));
        assert!(warning.unwrap().contains("2 messages"));
        let (parts, warning) = pieces(&"x".repeat(20_000));
        assert_eq!(parts.len(), MAX_PIECES);
        assert!(parts.iter().all(|p| units(p) <= 2000));
        assert!(parts.last().unwrap().ends_with("(cut: the reply was 20000 characters)"));
        assert!(warning.unwrap().contains("cut"));
        // Characters outside the BMP count twice, as the platform counts them.
        let (parts, _) = pieces(&"😀".repeat(1500));
        assert!(parts.len() == 2 && parts.iter().all(|p| units(p) <= 2000));
        assert_eq!(pieces("  ").0, ["(empty reply)"]);
        // Blanks that fill a piece are not sent as a message of their own.
        let (parts, _) = pieces(&format!("{}x", " ".repeat(4000)));
        assert_eq!(parts, ["x"]);
        let (parts, _) = pieces(&format!("a{}b", "\n".repeat(4100)));
        assert!(parts.iter().all(|p| !p.trim().is_empty()), "{parts:?}");
    }
}
