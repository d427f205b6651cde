//! What `blkc deploy` registers: the file's commands as the platform's
//! bulk-overwrite payload (`PUT …/commands`), built from the checked file.

use serde_json::{json, Value as Json};

use crate::ast::{ChoiceValue, File, Node, TreeKind};
use crate::diagnostics::Diagnostic;
use crate::vocab::OptionType;

/// The platform's type of a slash command.
const CHAT_INPUT: u8 = 1;

/// The payload of every command of `file`, or the diagnostics of what the
/// platform would not register (the checker's B4xx findings are errors
/// already; a missing description, B409, is found here).
pub fn payload(file: &File) -> Result<Json, Vec<Diagnostic>> {
    let missing = crate::check::platform::missing_descriptions(file);
    if !missing.is_empty() {
        return Err(missing);
    }
    let mut commands = Vec::new();
    for tree in file.trees().filter(|t| t.kind == TreeKind::Command) {
        let mut options = Vec::new();
        for node in &tree.body {
            let Node::Option(o) = node else { continue };
            let kind = o.option_type();
            let mut option = json!({
                "type": kind.code(),
                "name": o.name.name.as_str(),
                "description": o.description.as_ref().map_or("", |d| d.value.as_str()),
                "required": o.required.is_some(),
            });
            if let Some(choices) = &o.choices {
                let list: Vec<Json> = choices
                    .entries
                    .iter()
                    .map(|c| json!({ "name": c.name.name.as_str(), "value": choice_value(kind, &c.value) }))
                    .collect();
                option["choices"] = Json::Array(list);
            }
            options.push(option);
        }
        commands.push(json!({
            "type": CHAT_INPUT,
            "name": tree.name.name.as_str(),
            "description": tree.description.as_ref().map_or("", |d| d.value.as_str()),
            "options": options,
        }));
    }
    Ok(Json::Array(commands))
}

/// A choice's value as the platform wants it: text for a string option, a
/// JSON number (exactly as written) for the others.
fn choice_value(kind: OptionType, value: &ChoiceValue) -> Json {
    match (kind, value) {
        (OptionType::String, v) => Json::String(v.as_str().to_string()),
        (_, ChoiceValue::Number(n, _)) => serde_json::from_str(n).unwrap_or(Json::Null),
        (_, ChoiceValue::Text(t)) => Json::String(t.value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use crate::source::SourceFile;

    #[test]
    fn options_choices_and_types_become_the_platform_s_json() {
        let checked = crate::check_source(SourceFile::new(
            "bot.blk",
            "command roll \"Roll dice\" {\n    option sides \"Sides\" integer required choices { Six = 6, Twenty = 20 }\n    \
             option who \"For whom\" user\n    reply \"{option_sides}\"\n}\nevent member_join { reply \"hi\" }\n",
        ));
        assert!(!checked.has_errors(), "{:?}", checked.diagnostics);
        let payload = super::payload(&checked.ast).unwrap();
        assert_eq!(
            payload,
            serde_json::json!([{
                "type": 1, "name": "roll", "description": "Roll dice",
                "options": [
                    { "type": 4, "name": "sides", "description": "Sides", "required": true,
                      "choices": [{ "name": "Six", "value": 6 }, { "name": "Twenty", "value": 20 }] },
                    { "type": 6, "name": "who", "description": "For whom", "required": false }
                ]
            }])
        );
        let bare =
            crate::check_source(SourceFile::new("bot.blk", "command ping {\n    option x\n    reply \"pong\"\n}\n"));
        let missing = super::payload(&bare.ast).unwrap_err();
        assert_eq!(missing.len(), 2);
        assert!(missing.iter().all(|d| d.code == crate::diagnostics::Code::MissingDescription));
    }
}
