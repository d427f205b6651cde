//! One test taken step by step on a [`Stage`]: each step becomes what the
//! platform would send (an interaction, a dispatch, a tick), and what the
//! bot did in answer (its messages as the platform got them, and its run's
//! requests and saves) is gathered for the expectations after it.

use std::time::Duration;

use serde_json::{json, Value as Json};

use super::stage::Stage;
use super::syntax::{Click, Member, MessageKind, Step, StepKind, Word};
use crate::base::diagnostics::{Code, Diagnostic};
use crate::base::source::Span;
use crate::host::play::Call;

/// How long a step waits for its run to end: a bound on a hang, never a
/// pace (a step goes on as soon as its run's record arrives).
const STEP_WITHIN: Duration = Duration::from_secs(60);

/// A message as the platform's client has it: its id, its channel and what
/// it shows (content, embeds, components, flags).
#[derive(Debug, Clone)]
pub struct Shown {
    pub id: String,
    pub payload: Json,
}

/// One thing the bot said in a step, in order.
#[derive(Debug, Clone)]
pub struct Said {
    pub kind: MessageKind,
    pub payload: Json,
    pub taken: bool,
}

/// What the bot did in answer to one step.
#[derive(Debug, Default)]
pub struct Did {
    /// The step that made it, for a failure's label.
    pub step: Span,
    pub said: Vec<Said>,
    /// Each request event of the run, and whether an expectation took it.
    pub requests: Vec<(Json, bool)>,
    /// Each action of the run, and whether an expectation took it (one
    /// that sends a message is taken by the message's).
    pub actions: Vec<(Json, bool)>,
    pub saves: Vec<Json>,
    /// The choices an autocomplete offered, and whether an expectation
    /// took them.
    pub choices: Option<(Vec<Json>, bool)>,
    /// How the run ended, and its error.
    pub outcome: String,
    pub error: Option<String>,
    /// Whether an expectation looked at it.
    pub examined: bool,
}

/// The state of one test's conversation.
pub struct Conversation<'a> {
    pub stage: &'a mut Stage,
    member: Member,
    /// The bot's messages in the conversation, the newest last.
    messages: Vec<Shown>,
    /// The form the bot showed last, and the message it came from.
    form: Option<(Json, Option<Json>)>,
    pub did: Option<Did>,
    /// The trees that ran (their kind and name), and the branches of
    /// `if`s taken (where the `if` starts, and which), for `--coverage`.
    pub reached: std::collections::BTreeSet<(String, String)>,
    pub branches: std::collections::BTreeSet<(u32, usize)>,
}

impl<'a> Conversation<'a> {
    pub fn new(stage: &'a mut Stage) -> Conversation<'a> {
        stage.reset();
        Conversation {
            stage,
            member: Member::default(),
            messages: Vec::new(),
            form: None,
            did: None,
            reached: Default::default(),
            branches: Default::default(),
        }
    }

    /// Takes a step that is not an expectation; a step that cannot be
    /// taken is B503.
    pub fn take(&mut self, step: &Step) -> Result<(), Box<Diagnostic>> {
        match &step.kind {
            StepKind::As(member) => self.member = member.clone(),
            StepKind::Wait { seconds, .. } => {
                let before = self.stage.play.due_now(STEP_WITHIN).unwrap_or(0);
                let after = self.stage.play.next_call();
                let ms = i64::try_from(seconds.saturating_mul(1000)).unwrap_or(i64::MAX);
                self.stage.moved.fetch_add(ms, std::sync::atomic::Ordering::SeqCst);
                self.due_now(step.span, before, after)?;
            }
            StepKind::Respond { block, response } => self.stage.answers.set(&block.text, response.clone()),
            StepKind::Command { path, args } => {
                let asked = json!({ "type": 2, "data": command_data(path, args, None, self.stage) });
                self.interact(step.span, asked, None)?;
            }
            StepKind::Type { path, option, typed } => {
                let typing = Some((option, typed));
                let asked = json!({ "type": 4, "data": command_data(path, &[], typing, self.stage) });
                self.interact(step.span, asked, None)?;
            }
            StepKind::Menu { name, menu, args } => {
                let asked = json!({ "type": 2, "data": menu_data(name, menu, args) });
                self.interact(step.span, asked, None)?;
            }
            StepKind::Click(click) => {
                let (custom_id, message) = self.button(click, step.span)?;
                let asked = json!({ "type": 3, "data": { "custom_id": custom_id, "component_type": 2 } });
                self.interact(step.span, asked, Some(message))?;
            }
            StepKind::Choose(labels) => {
                let (custom_id, kind, values, message) = self.select(labels, step.span)?;
                let data = json!({ "custom_id": custom_id, "component_type": kind, "values": values });
                self.interact(step.span, json!({ "type": 3, "data": data }), Some(message))?;
            }
            StepKind::Submit(fields) => {
                let (data, message) = self.submit(fields, step.span)?;
                self.interact(step.span, json!({ "type": 5, "data": data }), message)?;
            }
            StepKind::Event { kind, args } => self.event(step.span, kind, args)?,
            StepKind::Tick(name) => self.tick(step.span, name)?,
            StepKind::Say(text) => self.say(step.span, text)?,
            StepKind::Expect(_) => {}
        }
        Ok(())
    }

    /// Who the interaction is from and where, as the `as` line says.
    fn asked_member(&self, asked: &mut Json) {
        let field = |name: &str| self.member.fields.iter().find(|(w, _)| w.text == name).map(|(_, v)| v);
        let one = |name: &str| field(name).and_then(|v| v.first()).map(|w| w.text.clone());
        let roles: Vec<String> = field("roles").map(|v| v.iter().map(|w| w.text.clone()).collect()).unwrap_or_default();
        let mut member =
            json!({ "name": if self.member.name.is_empty() { "you" } else { &self.member.name }, "roles": roles });
        if let Some(id) = one("id") {
            member["id"] = json!(id);
        }
        if let Some(words) = field("permissions") {
            member["permissions"] = json!(permission_bits(words).to_string());
        }
        asked["member"] = member;
        if let Some(server) = one("server") {
            asked["server"] = json!(server);
        }
        if let Some(channel) = one("channel") {
            asked["channel"] = json!(channel);
        }
        if let Some(locale) = one("locale") {
            asked["locale"] = json!(locale);
        }
    }

    /// Sends an interaction as the platform would, and gathers what the
    /// bot did until its run's record arrives.
    fn interact(&mut self, step: Span, mut asked: Json, on: Option<Json>) -> Result<(), Box<Diagnostic>> {
        self.asked_member(&mut asked);
        if let Some(message) = &on {
            asked["message"] = message.clone();
        }
        let play = self.stage.play.clone();
        let after = play.next_call();
        let interaction = play.interaction(&asked);
        let id = interaction["id"].as_str().unwrap_or_default().to_string();
        let sent = play.send(&interaction).map_err(|e| stuck(step, &format!("the bot did not answer: {e}")))?;
        let mut did = Did { step, ..Did::default() };
        if sent["status"] != 200 {
            return Err(stuck(
                step,
                &format!("the bot refused the interaction: {} {}", sent["status"], sent["answer"]),
            ));
        }
        let first = &sent["answer"];
        let clicked = on.as_ref().and_then(|m| m["id"].as_str()).map(str::to_string);
        let kind = first["type"].as_u64().unwrap_or(0);
        // A new message's time, as the platform keeps it (a click carries it).
        let stamped = |mut payload: Json| {
            if let (Some(at), Some(fields)) = (sent["timestamp"].as_str(), payload.as_object_mut()) {
                fields.insert("timestamp".into(), json!(at));
            }
            payload
        };
        match kind {
            4 => self.said(&mut did, MessageKind::Reply, &id, stamped(first["data"].clone())),
            7 => self.said(&mut did, MessageKind::Update, clicked.as_deref().unwrap_or(""), first["data"].clone()),
            8 => did.choices = Some((first["data"]["choices"].as_array().cloned().unwrap_or_default(), false)),
            9 => {
                self.form = Some((first["data"].clone(), on.clone()));
                did.said.push(Said { kind: MessageKind::Form, payload: first["data"].clone(), taken: false });
            }
            _ => {}
        }
        let ended = |calls: &[Call]| calls.iter().any(|c| c.kind == "run" && c.interaction.as_deref() == Some(&id));
        let (calls, _) = play.wait_calls(after, STEP_WITHIN, ended);
        if !ended(&calls) {
            return Err(stuck(step, "the bot's run did not end within 60 seconds"));
        }
        // An edit of the first answer: the reply a "thinking…" answer
        // became, or the clicked message updated.
        let mut deferred = kind == 5;
        for call in calls.iter().filter(|c| c.kind == "run" || c.interaction.as_deref() == Some(&id)) {
            match call.kind {
                "edit" if deferred => {
                    deferred = false;
                    // A "thinking…" answer that was private makes a private
                    // message of its edit, as the platform shows it.
                    let mut body = call.body.clone();
                    if let (Some(flags), Some(edit)) = (first["data"]["flags"].as_u64(), body.as_object_mut()) {
                        edit.entry("flags").or_insert(flags.into());
                    }
                    self.said(&mut did, MessageKind::Reply, &id, stamped(body));
                }
                "edit" => {
                    let target = if kind == 6 { clicked.clone().unwrap_or_default() } else { id.clone() };
                    self.said(&mut did, MessageKind::Update, &target, call.body.clone());
                }
                "follow_up" => {
                    let n = self.messages.len();
                    let own = call.body["id"].as_str().map_or_else(|| format!("{id}-{n}"), str::to_string);
                    self.said(&mut did, MessageKind::Reply, &own, call.body.clone());
                }
                "run" if call.interaction.as_deref() == Some(&id) => self.ran(&mut did, &call.body),
                _ => {}
            }
        }
        self.channel_messages(&mut did, &calls);
        self.did = Some(did);
        Ok(())
    }

    /// Messages the bot sent to channels in the step (by the bot token),
    /// and those it edited so (a button disabled after its last click: the
    /// message shown changes, as the client shows it, and no message is
    /// said).
    fn channel_messages(&mut self, did: &mut Did, calls: &[Call]) {
        for call in calls.iter().filter(|c| c.kind == "edit_message") {
            let edited = call.route.rsplit('/').next().unwrap_or_default();
            if let Some(m) = self.messages.iter_mut().find(|m| m.id == edited) {
                if let (Some(old), Some(new)) = (m.payload.as_object_mut(), call.body.as_object()) {
                    old.extend(new.clone());
                }
            }
        }
        for call in calls.iter().filter(|c| c.kind == "message" || c.kind == "dm") {
            let channel = match call.body["dm_user"].as_str() {
                // A direct message: in the user's inbox, `@ID`.
                Some(user) => format!("@{user}"),
                None => call.route.split('/').nth(2).unwrap_or_default().to_string(),
            };
            // A channel the world knows by name is expected by it too: `#ticket-ann`.
            let name = self.stage.play.acted.lock().unwrap_or_else(|e| e.into_inner()).channel_name(&channel);
            let channel = match name {
                Some(name) => format!("{channel} #{name}"),
                None => channel,
            };
            let n = self.messages.len();
            let kind = MessageKind::In(Word { text: channel, span: Span::default() });
            let id = call.body["id"].as_str().map_or_else(|| format!("channel-{n}"), str::to_string);
            self.said(did, kind, &id, call.body.clone());
        }
    }

    /// Keeps a message the bot said: a new one, or an update of one shown
    /// (what an edit gives replaces, the rest stays, as the platform does).
    fn said(&mut self, did: &mut Did, kind: MessageKind, id: &str, payload: Json) {
        let shown = match self.messages.iter_mut().find(|m| m.id == id) {
            Some(m) if kind == MessageKind::Update => {
                if let (Some(old), Some(new)) = (m.payload.as_object_mut(), payload.as_object()) {
                    old.extend(new.clone());
                }
                m.payload.clone()
            }
            _ => {
                self.messages.push(Shown { id: id.to_string(), payload: payload.clone() });
                payload
            }
        };
        did.said.push(Said { kind, payload: shown, taken: false });
    }

    /// What a run's record says: its requests, saves, outcome and error.
    fn ran(&mut self, did: &mut Did, record: &Json) {
        did.outcome = record["outcome"].as_str().unwrap_or_default().to_string();
        did.error = record["error"].as_str().map(str::to_string);
        if let (Some(kind), Some(tree)) = (record["tree_kind"].as_str(), record["tree"].as_str()) {
            self.reached.insert((kind.to_string(), tree.to_string()));
        }
        for event in record["events"].as_array().into_iter().flatten() {
            match event["event"].as_str() {
                // An action's calls are its own: expected as the action.
                Some("request") if event["action"].is_null() => did.requests.push((event.clone(), false)),
                Some("action") => {
                    let messages = matches!(event["action"].as_str(), Some("send" | "dm" | "edit"));
                    did.actions.push((event.clone(), messages));
                }
                Some("save") => did.saves.push(event.clone()),
                Some("branch") => {
                    let (start, arm) = (event["span"]["start"].as_u64(), event["arm"].as_u64());
                    if let (Some(start), Some(arm)) = (start, arm) {
                        self.branches.insert((start as u32, arm as usize));
                    }
                }
                _ => {}
            }
        }
    }

    /// Fires an event as the platform's Gateway would, from the member
    /// taking the steps unless the step says otherwise.
    fn event(&mut self, step: Span, kind: &Word, args: &[(Word, Json)]) -> Result<(), Box<Diagnostic>> {
        let mut given = json!({ "user_name": if self.member.name.is_empty() { "you" } else { &self.member.name } });
        for (field, value) in self.member.fields.iter().filter_map(|(w, v)| Some((w, v.first()?))) {
            match field.text.as_str() {
                "id" => given["user_id"] = json!(value.text),
                "server" => given["server_id"] = json!(value.text),
                "channel" => given["channel_id"] = json!(value.text),
                _ => {}
            }
        }
        for (key, value) in args {
            given[&key.text] = match value {
                Json::String(s) => json!(s),
                other => json!(other.to_string()),
            };
        }
        if kind.text == "message_create" && self.stage.awaits {
            return self.message(step, given);
        }
        let play = self.stage.play.clone();
        let after = play.next_call();
        play.fire(&kind.text, &given).map_err(|e| stuck(step, &e.to_string()))?;
        let what = if play.is_webhook(&kind.text) { "webhook" } else { "event" };
        self.await_run(step, after, what, &kind.text)
    }

    /// The member's message in the channel (where a command of theirs
    /// would be): an `await` of theirs waiting there runs its answer, and
    /// `message_create` events run; the step is what those runs did.
    fn say(&mut self, step: Span, text: &Word) -> Result<(), Box<Diagnostic>> {
        use crate::host::play::world;
        let field = |name: &str| self.member.fields.iter().find(|(w, _)| w.text == name).and_then(|(_, v)| v.first());
        let id = |name: &str, or: &str| field(name).map_or(or.to_string(), |w| w.text.clone());
        let (user, server, channel) =
            (id("id", world::MEMBER), id("server", world::SERVER), id("channel", world::CHANNEL));
        let name = if self.member.name.is_empty() { "you" } else { &self.member.name };
        let given = json!({ "user_id": user, "user_name": name, "server_id": server, "channel_id": channel, "content": text.text });
        self.message(step, given)
    }

    /// A member's message (`given`, as an event step gives one; its ids are
    /// the page's where not given) and the runs it starts: the answer of
    /// the `await` of theirs waiting there, and `message_create` events.
    fn message(&mut self, step: Span, mut given: Json) -> Result<(), Box<Diagnostic>> {
        use crate::host::play::world;
        let mut id = |k: &str, or: &str| -> String {
            let own = given[k].as_str().filter(|v| !v.is_empty()).map_or(or.to_string(), str::to_string);
            given[k] = json!(own);
            own
        };
        let (user, server) = (id("user_id", world::MEMBER), id("server_id", world::SERVER));
        let at = world::SERVERS.iter().find(|s| s.id == server).map_or(world::CHANNEL, |s| s.channel);
        let channel = id("channel_id", at);
        let play = self.stage.play.clone();
        let (owner, key) = (format!("user:{server}:{user}"), crate::run::store::later::answer_key(&channel));
        let waits = play.waiting()["waiting"]
            .as_array()
            .is_some_and(|all| all.iter().any(|p| p["owner"] == owner && p["key"] == key));
        let heard = self.stage.hears("message_create");
        let after = play.next_call();
        let id = play.fire("message_create", &given).map_err(|e| stuck(step, &e.to_string()))?;
        // Read for an answer (when the file awaits any), answered by the
        // run of the wait it answered, and heard by the event's runs.
        let read = |c: &Call| c.kind == "heard" && c.body["message"] == id.as_str();
        let answer = |c: &&Call| c.kind == "run" && c.body["kind"] == "later";
        let event = |c: &&Call| c.kind == "run" && c.body["kind"] == "event" && c.body["name"] == "message_create";
        let done = |calls: &[Call]| {
            (!self.stage.awaits || calls.iter().any(read))
                && (!waits || calls.iter().any(|c| answer(&c)))
                && (!heard || calls.iter().any(|c| event(&c)))
        };
        let (calls, _) = play.wait_calls(after, STEP_WITHIN, done);
        if !done(&calls) {
            return Err(stuck(step, "the bot's runs of the message did not end within 60 seconds"));
        }
        let mut did = Did { step, ..Did::default() };
        for record in calls.iter().filter(|c| answer(c) || event(c)).map(|c| c.body.clone()).collect::<Vec<_>>() {
            self.ran(&mut did, &record);
        }
        self.channel_messages(&mut did, &calls);
        self.did = Some(did);
        Ok(())
    }

    fn tick(&mut self, step: Span, name: &Word) -> Result<(), Box<Diagnostic>> {
        let play = self.stage.play.clone();
        let after = play.next_call();
        play.tick(&name.text).map_err(|e| stuck(step, &e.to_string()))?;
        self.await_run(step, after, "timer", &name.text)
    }

    /// After the clock moved: the waiting work now due runs, and the step
    /// is what those runs did (a step with none due changes nothing).
    /// `before`: how many pieces serve had queued before the clock moved
    /// (it may queue some on its own as soon as the clock moves: counted),
    /// and `after` the first call after that.
    fn due_now(&mut self, step: Span, before: usize, after: usize) -> Result<(), Box<Diagnostic>> {
        let play = self.stage.play.clone();
        let Some(queued) = play.due_now(STEP_WITHIN).map(|total| total.saturating_sub(before)) else {
            return Err(stuck(step, "the bot did not look for waiting work within 60 seconds"));
        };
        if queued == 0 {
            return Ok(());
        }
        let later = |c: &&Call| c.kind == "run" && c.body["kind"] == "later";
        let all = |calls: &[Call]| calls.iter().filter(later).count() >= queued;
        let (calls, _) = play.wait_calls(after, STEP_WITHIN, all);
        if !all(&calls) {
            return Err(stuck(step, "the waiting work's runs did not end within 60 seconds"));
        }
        let mut did = Did { step, ..Did::default() };
        for record in calls.iter().filter(later).map(|c| c.body.clone()).collect::<Vec<_>>() {
            self.ran(&mut did, &record);
        }
        self.channel_messages(&mut did, &calls);
        self.did = Some(did);
        Ok(())
    }

    /// Waits for the record of the run of an event or a tick, and gathers
    /// the messages it sent.
    fn await_run(&mut self, step: Span, after: usize, kind: &str, name: &str) -> Result<(), Box<Diagnostic>> {
        let ended = |c: &Call| c.kind == "run" && c.body["kind"] == kind && c.body["name"] == name;
        let (mut calls, _) = self.stage.play.wait_calls(after, STEP_WITHIN, |calls| calls.iter().any(ended));
        let Some(record) = calls.iter().find(|c| ended(c)).cloned() else {
            return Err(stuck(step, "the bot's run did not end within 60 seconds"));
        };
        // One dispatch may start several runs (a member's update is also
        // the end of their timeout): the step is over when all have ended,
        // so that none ends in the next step.
        if let Some(count) = record.body["dispatch"][1].as_u64().filter(|n| *n > 1) {
            let of_it = |c: &&Call| c.kind == "run" && c.body["dispatch"][0] == record.body["dispatch"][0];
            let all = |calls: &[Call]| calls.iter().filter(of_it).count() as u64 >= count;
            calls = self.stage.play.wait_calls(after, STEP_WITHIN, all).0;
            if !all(&calls) {
                return Err(stuck(step, "the bot's runs of this event did not end within 60 seconds"));
            }
        }
        let mut did = Did { step, ..Did::default() };
        // The other runs of its dispatch first: the step's outcome is the
        // run of the event it names.
        let dispatch = &record.body["dispatch"];
        let others = calls.iter().filter(|c| c.kind == "run" && !dispatch.is_null() && c.body["dispatch"] == *dispatch);
        for other in others.filter(|c| c.body != record.body).map(|c| c.body.clone()).collect::<Vec<_>>() {
            self.ran(&mut did, &other);
        }
        self.ran(&mut did, &record.body);
        self.channel_messages(&mut did, &calls);
        self.did = Some(did);
        Ok(())
    }

    /// The button a click names, on the newest message that has it, and
    /// that message as a click carries it.
    fn button(&self, click: &Click, step: Span) -> Result<(String, Json), Box<Diagnostic>> {
        type Wanted<'w> = Box<dyn Fn(&Json) -> bool + 'w>;
        let (word, wanted): (&Word, Wanted<'_>) = match click {
            Click::Label(label) => (label, Box::new(move |c: &Json| c["label"] == label.text.as_str())),
            Click::Handler(h) => {
                let prefix = format!("{}{}:", crate::discord::custom_id::CUSTOM_ID_PREFIX, h.text);
                (h, Box::new(move |c: &Json| c["custom_id"].as_str().is_some_and(|id| id.starts_with(&prefix))))
            }
        };
        for message in self.messages.iter().rev() {
            let found = components(&message.payload).into_iter().find(|c| c["type"] == 2 && wanted(c));
            let Some(button) = found else { continue };
            if button["disabled"] == true {
                return Err(not_offered(word, "that button is disabled", &self.offered(2)));
            }
            let Some(id) = button["custom_id"].as_str() else {
                return Err(not_offered(
                    word,
                    "that button is a link: it opens a web page, and the bot hears nothing",
                    &[],
                ));
            };
            return Ok((id.to_string(), self.carried(message)));
        }
        let _ = step;
        Err(not_offered(word, "no message of the bot's offers that button", &self.offered(2)))
    }

    /// The select menu that offers every label, its kind, the values
    /// chosen and the message.
    #[allow(clippy::type_complexity)]
    fn select(&self, labels: &[Word], step: Span) -> Result<(String, u64, Vec<String>, Json), Box<Diagnostic>> {
        for message in self.messages.iter().rev() {
            for menu in components(&message.payload).into_iter().filter(|c| c["type"] == 3) {
                let options = menu["options"].as_array().cloned().unwrap_or_default();
                let value = |w: &Word| {
                    let o = options.iter().find(|o| o["label"] == w.text.as_str() || o["value"] == w.text.as_str());
                    o.and_then(|o| o["value"].as_str()).map(str::to_string)
                };
                let values: Option<Vec<String>> = labels.iter().map(value).collect();
                let (Some(values), Some(id)) = (values, menu["custom_id"].as_str()) else { continue };
                return Ok((id.to_string(), 3, values, self.carried(message)));
            }
        }
        let first = labels.first().cloned().unwrap_or(Word { text: String::new(), span: step });
        Err(not_offered(&first, "no select menu of the bot's offers that choice", &self.offered(3)))
    }

    /// A form's submission: its fields given, each by its id, each in the
    /// shape the platform's client sends its kind of input in (a text's
    /// or a radio group's `value`, a checkbox's `true` or `false`, a menu's,
    /// a group's or an upload's `values`; an upload's files named, with
    /// their attachments resolved).
    fn submit(&self, fields: &[(Word, Json)], step: Span) -> Result<(Json, Option<Json>), Box<Diagnostic>> {
        let Some((form, on)) = &self.form else {
            return Err(stuck(step, "the bot has shown no form to submit"));
        };
        let inputs: Vec<Json> = components(form).into_iter().filter(|c| c["custom_id"].is_string()).collect();
        let ids: Vec<String> = inputs.iter().filter_map(|c| c["custom_id"].as_str().map(str::to_string)).collect();
        for (field, _) in fields {
            if !ids.contains(&field.text) {
                return Err(not_offered(field, "the form has no such field", &ids));
            }
        }
        for input in inputs.iter().filter(|c| c["required"] != false && c["type"] != 23) {
            let id = input["custom_id"].as_str().unwrap_or_default();
            if !fields.iter().any(|(f, _)| f.text == id) {
                return Err(stuck(
                    step,
                    &format!(
                        "the form's field `{id}` is required: the platform's client does not send the form without it"
                    ),
                ));
            }
        }
        let mut files = serde_json::Map::new();
        let mut labels = Vec::new();
        for (f, v) in fields {
            let input = inputs.iter().find(|c| c["custom_id"] == f.text.as_str()).cloned().unwrap_or_default();
            labels.push(json!({ "type": 18, "component": submitted(f, v, &input, &mut files)? }));
        }
        let mut data = json!({ "custom_id": form["custom_id"], "components": labels });
        if !files.is_empty() {
            data["resolved"] = json!({ "attachments": files });
        }
        Ok((data, on.clone()))
    }

    /// A message as a click carries it: its id, flags and components.
    fn carried(&self, message: &Shown) -> Json {
        let mut carried =
            json!({ "id": message.id, "components": message.payload["components"], "flags": message.payload["flags"] });
        // A channel's message is in its channel: a click on it comes from there.
        if let Some(channel) = message.payload["channel_id"].as_str() {
            carried["channel_id"] = json!(channel);
        }
        // When it was sent, on the bot's clock (a component may expire).
        if let Some(at) = message.payload["timestamp"].as_str() {
            carried["timestamp"] = json!(at);
        }
        carried
    }

    /// The labels the conversation's messages offer, of components of
    /// `kind` (2 buttons, 3 select menus' choices), for a failure's help.
    fn offered(&self, kind: u64) -> Vec<String> {
        let mut out = Vec::new();
        for message in self.messages.iter().rev() {
            for c in components(&message.payload).into_iter().filter(|c| c["type"] == kind) {
                match kind {
                    2 => out.extend(c["label"].as_str().map(str::to_string)),
                    _ => out.extend(
                        c["options"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|o| o["label"].as_str().map(str::to_string)),
                    ),
                }
            }
        }
        out.dedup();
        out
    }
}

/// One field of a form as the platform's client sends it, by its input's
/// kind; an upload's files added to `files` (the interaction's resolved
/// attachments, each named as the test names it, of the type its
/// extension says, its size unknown: 0).
fn submitted(
    field: &Word,
    value: &Json,
    input: &Json,
    files: &mut serde_json::Map<String, Json>,
) -> Result<Json, Box<Diagnostic>> {
    let texts: Vec<String> = match value {
        Json::Array(items) => items.iter().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)).collect(),
        Json::String(s) => vec![s.clone()],
        other => vec![other.to_string()],
    };
    let kind = input["type"].as_u64().unwrap_or(4);
    let offered: Vec<String> = input["options"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["value"].as_str().map(str::to_string))
        .collect();
    if matches!(kind, 3 | 21 | 22) {
        if let Some(wrong) = texts.iter().find(|t| !offered.contains(t)) {
            let word = Word { text: wrong.clone(), span: field.span };
            return Err(not_offered(&word, "the input offers no such choice", &offered));
        }
    }
    let id = &field.text;
    Ok(match kind {
        23 => {
            json!({ "type": 23, "custom_id": id, "value": value.as_bool().unwrap_or(texts.first().is_some_and(|t| t == "true")) })
        }
        21 => json!({ "type": 21, "custom_id": id, "value": texts.first() }),
        19 => {
            let mut ids = Vec::new();
            for name in &texts {
                let file_id = format!("{}", 1_495_000_000_000_000_000u64 + files.len() as u64);
                let kind = crate::base::media::of_name(name);
                files.insert(
                    file_id.clone(),
                    json!({ "id": file_id, "filename": name, "size": 0, "content_type": kind,
                            "url": crate::discord::model::attachment_url(&file_id, name) }),
                );
                ids.push(file_id);
            }
            json!({ "type": 19, "custom_id": id, "values": ids })
        }
        4 => json!({ "type": 4, "custom_id": id, "value": texts.join(", ") }),
        other => json!({ "type": other, "custom_id": id, "values": texts }),
    })
}

/// A message's components, rows opened (and in a layout message its
/// containers, and its sections with what stands beside their text).
pub fn components(payload: &Json) -> Vec<Json> {
    fn open(list: &Json, depth: usize, out: &mut Vec<Json>) {
        for c in list.as_array().into_iter().flatten() {
            match (c["components"].as_array(), c.get("accessory")) {
                (Some(_), accessory) if depth < 3 => {
                    open(&c["components"], depth + 1, out);
                    out.extend(accessory.cloned());
                }
                // (A form's label holds its one input.)
                (None, _) if c.get("component").is_some() => out.push(c["component"].clone()),
                _ => out.push(c.clone()),
            }
        }
    }
    let mut out = Vec::new();
    open(&payload["components"], 0, &mut out);
    out
}

/// A message's text: its `content`, or a layout message's texts (its Text
/// Displays, in order, a line between).
pub fn message_text(payload: &Json) -> Json {
    let layout = payload["flags"].as_u64().is_some_and(|f| f & (1 << 15) != 0);
    if !layout {
        return payload["content"].clone();
    }
    let texts: Vec<String> = components(payload)
        .iter()
        .filter(|c| c["type"] == 10)
        .filter_map(|c| c["content"].as_str().map(str::to_string))
        .collect();
    Json::String(texts.join("\n"))
}

/// The data of a slash command's interaction: its name, subcommand path
/// and options, each option typed as the command declares it; with the
/// option being typed (`typing`, focused) for an autocomplete.
fn command_data(path: &[Word], args: &[(Word, Json)], typing: Option<(&Word, &Word)>, stage: &Stage) -> Json {
    let name = path.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
    let types = stage.option_types(&name);
    let kind = |option: &str| types.iter().find(|(n, _)| n == option).map_or(3, |(_, t)| *t);
    let mut options: Vec<Json> =
        args.iter().map(|(k, v)| json!({ "name": k.text, "type": kind(&k.text), "value": v })).collect();
    if let Some((option, typed)) = typing {
        options.push(json!({ "name": option.text, "type": kind(&option.text), "value": typed.text, "focused": true }));
    }
    // `settings show`: the subcommand holds the options, and a group the subcommand.
    for (depth, sub) in path.iter().enumerate().skip(1).rev() {
        let kind = if depth == path.len() - 1 { 1 } else { 2 };
        options = vec![json!({ "name": sub.text, "type": kind, "options": options })];
    }
    json!({ "name": path.first().map(|w| w.text.as_str()).unwrap_or_default(), "type": 1, "options": options })
}

/// The fields a test gives what a context-menu command was chosen on.
pub fn menu_fields(menu: &str) -> &'static [&'static str] {
    match menu {
        "user" => &["id", "name"],
        _ => &["id", "content", "author_id", "author_name"],
    }
}

/// The data of a context-menu command's interaction: the user or message
/// it was chosen on, as the platform resolves it.
fn menu_data(name: &Word, menu: &str, args: &[(Word, Json)]) -> Json {
    let given = |key: &str, default: &str| {
        let found = args
            .iter()
            .find(|(k, _)| k.text == key)
            .map(|(_, v)| v.as_str().map_or_else(|| v.to_string(), str::to_string));
        found.unwrap_or_else(|| default.to_string())
    };
    let id = given("id", "1400000000000000099");
    let resolved = match menu {
        "user" => {
            let name = given("name", "them");
            json!({ "users": { &id: { "id": id, "username": name, "global_name": name } } })
        }
        _ => {
            let author = given("author_name", "them");
            let message = json!({
                "content": given("content", "hello"),
                "author": { "id": given("author_id", "1002"), "username": author, "global_name": author },
            });
            json!({ "messages": { &id: message } })
        }
    };
    let kind = if menu == "user" { 2 } else { 3 };
    json!({ "name": name.text, "type": kind, "target_id": id, "resolved": resolved })
}

/// The permission bits the words of an `as` line name (a number is bits).
fn permission_bits(words: &[Word]) -> u64 {
    // (A word that is no permission is the test's checker's to report.)
    words.iter().fold(0u64, |bits, w| bits | crate::discord::registration::permission_bits(&w.text).unwrap_or(0))
}

/// B503: a step the conversation cannot take.
pub fn stuck(step: Span, why: &str) -> Box<Diagnostic> {
    Box::new(Diagnostic::new(Code::StepNotTaken, why.to_string()).label(step, "this step"))
}

/// B503: what a step names is not offered; `offered` lists what is.
fn not_offered(word: &Word, why: &str, offered: &[String]) -> Box<Diagnostic> {
    let help = match offered {
        [] => "a step uses what the bot's messages offer at that point of the conversation".to_string(),
        some => format!("offered: {}", some.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ")),
    };
    let meant = crate::base::diagnostics::did_you_mean(&word.text, offered.iter().map(String::as_str));
    let help = match meant {
        Some(m) => format!("did you mean {m:?}? {help}"),
        None => help,
    };
    Box::new(Diagnostic::new(Code::StepNotTaken, why.to_string()).label(word.span, "here").help(help))
}
