//! A tree's actions on the platform (docs/language.md, "Actions"): each
//! value filled and judged by `discord::actions` (an id, a mention, or a
//! channel's or role's name asked of the server), then sent as a request
//! of the run's own: through the destination policy of the bot token, the
//! shared rate limiter, the request bound and the redactor, told as a
//! request event, and failing the run (or running its `failed`) with the
//! platform's refusal in words. Offline, unless the platform is a stand-in
//! on this machine (`play`, conversation tests), nothing is sent: each
//! call is answered as the platform would.

use serde_json::{json, Value as Json};

use super::Runner;
use crate::base::diagnostics::Diagnostic;
use crate::discord::actions::{self, Slot, Target, Verb};
use crate::language::plan::{self, ActionStep, ActionVal, Method, Request, Step};
use crate::run::eval::failure;
use crate::run::eval::inputs::{Event, Outcome};
use crate::run::eval::render::{self, Body, Response};

/// One call an action makes: its method, its path below the API's base,
/// its JSON body, and the audit-log reason it gives.
struct Call<'a> {
    method: Method,
    path: String,
    body: Option<Json>,
    reason: Option<&'a str>,
}

type Done<T> = Result<T, Box<Diagnostic>>;

impl Runner<'_> {
    /// Runs the action `a`; its answer is kept as `api_NAME`'s response
    /// when it has `as NAME`.
    pub(super) fn action(&mut self, a: &ActionStep) -> Outcome {
        let spec = a.verb.spec();
        self.failure_kind = None;
        self.attempts = 0;
        self.told.clear();
        self.last_block = a.name.clone().unwrap_or_else(|| spec.written.replace(' ', "_"));
        let reason = self.text_of(a, "reason")?;
        let reason = reason.as_deref();
        let answer = match a.verb {
            Verb::Send | Verb::Dm => self.send_message(a)?,
            Verb::React => {
                let emoji = self.emoji(a)?;
                let (message, from) = self.word_message(a, "to")?.unwrap_or_default();
                let channel = self.channel_in(a, from)?;
                let emoji = percent_encoding::utf8_percent_encode(&emoji, percent_encoding::NON_ALPHANUMERIC);
                let path = format!("/channels/{channel}/messages/{message}/reactions/{emoji}/@me");
                self.call(a, Call { method: Method::PUT, path, body: None, reason: None })?
            }
            Verb::GiveRole | Verb::TakeRole => {
                let role = self.subject_id(a, Slot::Role)?;
                let user = self.word_id(a, if a.verb == Verb::GiveRole { "to" } else { "from" }, Slot::Member)?;
                let server = self.server(a)?;
                let method = if a.verb == Verb::GiveRole { Method::PUT } else { Method::DELETE };
                self.call(
                    a,
                    Call { method, path: format!("/guilds/{server}/members/{user}/roles/{role}"), body: None, reason },
                )?
            }
            Verb::Timeout | Verb::Nickname | Verb::Kick | Verb::Ban | Verb::Unban => self.on_member(a, reason)?,
            Verb::CreateThread => self.create_thread(a, reason)?,
            Verb::CreateChannel => self.create_channel(a, reason)?,
            Verb::DeleteMessage | Verb::Pin | Verb::Unpin | Verb::Edit | Verb::EndPoll => self.on_message(a, reason)?,
            Verb::DeleteChannel => {
                let channel = self.subject_id(a, Slot::Channel)?;
                self.call(a, Call { method: Method::DELETE, path: format!("/channels/{channel}"), body: None, reason })?
            }
            Verb::Purge => self.purge(a, reason)?,
        };
        self.flush()?;
        self.tell_action(a, &answer);
        if let Some(name) = &a.name {
            self.responses.insert(name.clone(), answer);
        }
        Ok(())
    }

    /// The action's event: its values as filled, and what the platform
    /// answered (nothing offline or in a dry run).
    fn tell_action(&mut self, a: &ActionStep, answer: &Response) {
        let unsent = self.options.dry_run || (self.options.offline && !self.options.stand_in);
        let later = !unsent && answer.status == 202 && a.arg("after").is_some();
        let mut told = std::mem::take(&mut self.told);
        // The reason, read first, is told last.
        told.sort_by_key(|(w, _)| *w == "reason");
        let values =
            told.into_iter().map(|(w, v)| (w, self.redactor.redact(&crate::base::display::one_line(&v)))).collect();
        let made = json_of(answer)["id"].as_str().filter(|_| a.verb.spec().answers).map(str::to_string);
        let event = crate::run::eval::inputs::ActionEvent {
            action: a.verb.spec().written,
            values,
            status: (!unsent && !later).then_some(answer.status),
            made,
            later,
            offline: self.options.offline && !self.options.stand_in,
            dry_run: self.options.dry_run,
        };
        (self.sink)(Event::Action(event));
    }

    /// `send to …` and `dm …`: a message to a channel (replying to one
    /// when it says `reply_to`), or to a user's direct messages, opened first.
    fn send_message(&mut self, a: &ActionStep) -> Done<Response> {
        let channel = match a.verb {
            Verb::Dm => {
                let user = self.subject_id(a, Slot::Member)?;
                let body = Some(json!({ "recipient_id": user }));
                let opened = self
                    .call(a, Call { method: Method::POST, path: "/users/@me/channels".into(), body, reason: None })?;
                self.answer_id(a, &opened, "id")?
            }
            _ => self.word_id(a, "to", Slot::Channel)?,
        };
        let mut body = self.message_body(a)?;
        if let Some(message) = self.word_message(a, "reply_to")? {
            body["message_reference"] = json!({ "message_id": message.0, "fail_if_not_exists": false });
        }
        self.call(
            a,
            Call {
                method: Method::POST,
                path: format!("/channels/{channel}/messages"),
                body: Some(body),
                reason: None,
            },
        )
    }

    /// `timeout`, `nickname`, `kick`, `ban`, `unban`: a member of the run's server.
    fn on_member(&mut self, a: &ActionStep, reason: Option<&str>) -> Done<Response> {
        let user = self.subject_id(a, Slot::Member)?;
        let server = self.server(a)?;
        let member = format!("/guilds/{server}/members/{user}");
        let (method, path, body) = match a.verb {
            Verb::Nickname => {
                (Method::PATCH, member, Some(json!({ "nick": self.text_of(a, "to")?.filter(|n| !n.is_empty()) })))
            }
            Verb::Timeout => {
                (Method::PATCH, member, Some(json!({ "communication_disabled_until": self.timeout_until(a)? })))
            }
            Verb::Kick => (Method::DELETE, member, None),
            Verb::Unban => (Method::DELETE, format!("/guilds/{server}/bans/{user}"), None),
            _ => {
                let seconds = self.duration_of(a, "delete_messages")?.unwrap_or(0);
                (
                    Method::PUT,
                    format!("/guilds/{server}/bans/{user}"),
                    Some(json!({ "delete_message_seconds": seconds })),
                )
            }
        };
        self.call(a, Call { method, path, body, reason })
    }

    /// `delete message`, `pin`, `unpin`, `edit`, `end poll`: a message by id or by the
    /// earlier action that sent it, in `in`, its action's channel or the run's.
    fn on_message(&mut self, a: &ActionStep, reason: Option<&str>) -> Done<Response> {
        let (message, from) = self.subject_message(a)?;
        let channel = self.channel_in(a, from)?;
        let at = format!("/channels/{channel}/messages/{message}");
        let pins = format!("/channels/{channel}/messages/pins/{message}");
        let (method, path, body) = match a.verb {
            Verb::DeleteMessage => (Method::DELETE, at, None),
            Verb::Pin => (Method::PUT, pins, None),
            Verb::Unpin => (Method::DELETE, pins, None),
            Verb::EndPoll => (Method::POST, format!("/channels/{channel}/polls/{message}/expire"), None),
            _ => (Method::PATCH, at, Some(self.message_body(a)?)),
        };
        let reason = if a.verb == Verb::Edit { None } else { reason };
        let after = self.duration_of(a, "after")?.filter(|s| *s > 0);
        self.call_after(a, Call { method, path, body, reason }, after)
    }

    /// `create thread name "…" [in …] [from …] [private] [tags …] [{ … }]`:
    /// from a message, a forum post with its first message, or a thread in
    /// a channel.
    fn create_thread(&mut self, a: &ActionStep, reason: Option<&str>) -> Done<Response> {
        let name = self.text_of(a, "name")?.unwrap_or_default();
        let from = self.word_message(a, "from")?;
        let channel = self.channel_in(a, from.as_ref().and_then(|(_, c)| c.clone()))?;
        if let Some((message, _)) = from {
            let path = format!("/channels/{channel}/messages/{message}/threads");
            return self.call(a, Call { method: Method::POST, path, body: Some(json!({ "name": name })), reason });
        }
        let path = format!("/channels/{channel}/threads");
        let body = if !a.message.is_empty() || a.arg("tags").is_some() {
            let message = self.message_body(a)?;
            let mut tags = Vec::new();
            for t in a.arg("tags").unwrap_or_default() {
                tags.push(self.fill_value(a, t)?);
            }
            let tags = self.tag_ids(a, &channel, tags)?;
            json!({ "name": name, "message": message, "applied_tags": tags })
        } else {
            let kind = if a.arg("private").is_some() { 12 } else { 11 };
            json!({ "name": name, "type": kind })
        };
        self.call(a, Call { method: Method::POST, path, body: Some(body), reason })
    }

    /// A forum's tags by id or by name (asked of the forum once).
    fn tag_ids(&mut self, a: &ActionStep, channel: &str, tags: Vec<String>) -> Done<Vec<String>> {
        if tags.iter().all(|t| crate::discord::is_snowflake(t)) {
            return Ok(tags);
        }
        let forum =
            self.call(a, Call { method: Method::GET, path: format!("/channels/{channel}"), body: None, reason: None })?;
        let known = json_of(&forum)["available_tags"].as_array().cloned().unwrap_or_default();
        tags.into_iter()
            .map(|t| {
                if crate::discord::is_snowflake(&t) {
                    return Ok(t);
                }
                let found = known.iter().find(|k| k["name"].as_str().is_some_and(|n| n.eq_ignore_ascii_case(&t)));
                match found.and_then(|k| k["id"].as_str()) {
                    Some(id) => Ok(id.to_string()),
                    None => Err(self.value_refused(a, "tags", &t, "the id or the name of one of the forum's tags")),
                }
            })
            .collect()
    }

    /// `create channel name "…" [category …] [topic …] [private] [visible …]`:
    /// a text channel; `private` hides it from everyone but `visible`
    /// (each a role or a member, told apart by the server's roles).
    fn create_channel(&mut self, a: &ActionStep, reason: Option<&str>) -> Done<Response> {
        let server = self.server(a)?;
        let name = self.text_of(a, "name")?.unwrap_or_default();
        let mut body = json!({ "name": name, "type": 0 });
        if let Some(topic) = self.text_of(a, "topic")? {
            body["topic"] = json!(topic);
        }
        if a.arg("category").is_some() {
            body["parent_id"] = json!(self.word_id(a, "category", Slot::Channel)?);
        }
        let mut overwrites = Vec::new();
        const SEE: u64 = 1 << 10 | 1 << 11 | 1 << 16; // view, send, read history
        if a.arg("private").is_some() {
            overwrites.push(json!({ "id": server, "type": 0, "deny": (1u64 << 10).to_string() }));
        }
        let mut roles: Option<Vec<String>> = None;
        for v in a.arg("visible").unwrap_or_default() {
            let text = self.fill_value(a, v)?;
            self.told.push(("visible", text.clone()));
            let id = self.resolve(a, "visible", Slot::Who, &text)?;
            let is_role = text.trim().starts_with("<@&") || text.trim().starts_with('@') || {
                if roles.is_none() {
                    roles = Some(self.server_roles(a, &server)?);
                }
                roles.as_ref().is_some_and(|r| r.contains(&id))
            };
            overwrites.push(json!({ "id": id, "type": if is_role { 0 } else { 1 }, "allow": SEE.to_string() }));
        }
        if !overwrites.is_empty() {
            body["permission_overwrites"] = json!(overwrites);
        }
        self.call(
            a,
            Call { method: Method::POST, path: format!("/guilds/{server}/channels"), body: Some(body), reason },
        )
    }

    /// The ids of a server's roles (for telling a role from a member).
    fn server_roles(&mut self, a: &ActionStep, server: &str) -> Done<Vec<String>> {
        let roles = self
            .call(a, Call { method: Method::GET, path: format!("/guilds/{server}/roles"), body: None, reason: None })?;
        let list = json_of(&roles).as_array().cloned().unwrap_or_default();
        Ok(list.iter().filter_map(|r| r["id"].as_str().map(str::to_string)).collect())
    }

    /// `purge N [in …]`: the channel's last N messages, read a hundred at a
    /// time, deleted in bulk calls of at most a hundred (one alone by its
    /// own call); those older than 14 days, which the platform does not
    /// delete in bulk, are left and counted. Its answer: `deleted`, `skipped`.
    fn purge(&mut self, a: &ActionStep, reason: Option<&str>) -> Done<Response> {
        let text = self.subject_text(a)?;
        let wanted = match text.trim().parse::<u64>() {
            Ok(n) if (1..=actions::MAX_PURGE).contains(&n) => n as usize,
            _ => {
                let expected = "a whole number of messages from 1 to 500";
                return Err(self.value_refused(a, "how many", &text, expected));
            }
        };
        let channel = self.channel_in(a, None)?;
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let (mut ids, mut skipped, mut before) = (Vec::new(), 0usize, None::<String>);
        while ids.len() + skipped < wanted {
            let limit = (wanted - ids.len() - skipped).min(actions::BULK_DELETE_MAX);
            let after = before.as_ref().map(|b| format!("&before={b}")).unwrap_or_default();
            let path = format!("/channels/{channel}/messages?limit={limit}{after}");
            let page = self.call(a, Call { method: Method::GET, path, body: None, reason: None })?;
            let page = json_of(&page).as_array().cloned().unwrap_or_default();
            for m in &page {
                let Some(id) = m["id"].as_str().filter(|id| crate::discord::is_snowflake(id)) else { continue };
                let young =
                    actions::snowflake_ms(id).is_some_and(|t| now.saturating_sub(t) < actions::BULK_DELETE_AGE_MS);
                if young {
                    ids.push(id.to_string())
                } else {
                    skipped += 1
                }
                before = Some(id.to_string());
            }
            if page.len() < limit || self.options.dry_run || (self.options.offline && !self.options.stand_in) {
                break;
            }
        }
        for chunk in ids.chunks(actions::BULK_DELETE_MAX) {
            let call = match chunk {
                [one] => Call {
                    method: Method::DELETE,
                    path: format!("/channels/{channel}/messages/{one}"),
                    body: None,
                    reason,
                },
                _ => Call {
                    method: Method::POST,
                    path: format!("/channels/{channel}/messages/bulk-delete"),
                    body: Some(json!({ "messages": chunk })),
                    reason,
                },
            };
            self.call(a, call)?;
        }
        let told = json!({ "deleted": ids.len(), "skipped": skipped });
        Ok(Response::new(200, Body::Json(data_of(&told))))
    }

    /// When a timeout ends (RFC 3339), or `null` for `off`.
    fn timeout_until(&mut self, a: &ActionStep) -> Done<Json> {
        if a.arg("off").is_some() {
            return Ok(Json::Null);
        }
        let seconds = self.duration_of(a, "for")?.unwrap_or(0);
        let until = time::OffsetDateTime::now_utc() + time::Duration::seconds(seconds as i64);
        let text = until.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
        Ok(json!(text))
    }

    /// The message an action sends, in the platform's form: its reply's
    /// step run as a reply is (its text, embeds and components filled
    /// in), who it may ping kept to the run's own (never roles or
    /// `@everyone`).
    fn message_body(&mut self, a: &ActionStep) -> Done<Json> {
        let Some(Step::Reply { text, embeds, components, layout, poll, files, span, .. }) = a.message.first() else {
            return Ok(json!({ "content": "" }));
        };
        let text = text.as_ref().map(|t| render::render(t, self)).unwrap_or_default();
        let embeds = self.embeds(embeds, *span);
        let files = self.files(files, *span)?;
        let (components, layout) = self.laid_out(components, layout, &files, *span)?;
        let poll = poll.as_ref().and_then(|p| self.poll(p, *span));
        self.flush()?;
        let shown: String = text.chars().take(80).collect();
        if !text.is_empty() {
            self.told.push(("text", if shown.len() < text.len() { format!("{shown}…") } else { shown }));
        }
        if let Some(p) = &poll {
            let shown: String = p.question.chars().take(80).collect();
            self.told.push(("poll", shown));
        }
        for f in &files {
            self.told.push(("file", format!("{} ({} bytes)", f.name, f.bytes.len())));
        }
        let mut message = crate::discord::outgoing::Message::new(text, &self.inputs.mentions);
        crate::discord::outgoing::fit_message(&mut message.content);
        message.embeds = embeds;
        message.components = components;
        message.layout = layout;
        message.poll = poll;
        message.files = files;
        let body = crate::discord::message::body(&message);
        let wire = crate::discord::message::wire(&body, &message);
        // The call that sends this message sends its files with it.
        self.action_files = message.files;
        Ok(wire.unwrap_or_else(|| serde_json::to_value(body).unwrap_or_else(|_| json!({}))))
    }

    /// Sends one call of the action (or answers it offline), told as a
    /// request event; a refusal fails the run with the platform's words.
    fn call(&mut self, a: &ActionStep, call: Call<'_>) -> Done<Response> {
        self.call_after(a, call, None)
    }

    /// [`Runner::call`], sent `after` seconds from now when given: handed to
    /// the process's queue of calls that wait (`later`), the run going on.
    fn call_after(&mut self, a: &ActionStep, call: Call<'_>, after: Option<u64>) -> Done<Response> {
        self.requests += 1;
        if self.requests > crate::language::vocab::MAX_REQUESTS {
            self.failure_kind = Some("budget");
            return Err(Box::new(failure::too_many_requests(&self.action_request(a, Method::GET, ""))));
        }
        let base = match &self.platform {
            Some(p) => p.base_url(),
            None => crate::discord::options::DEFAULT_PLATFORM.to_string(),
        };
        let r = self.action_request(a, call.method, &format!("{}{}", base.trim_end_matches('/'), call.path));
        let redactor = std::mem::take(&mut self.redactor);
        let platform = self.platform.clone();
        let built = super::request::build(&r, self, platform.as_ref(), false, &redactor);
        self.redactor = redactor;
        let mut built = built.map_err(|refusal| {
            self.failure_kind = Some("refused");
            Box::new(self.redact_diag(failure::refused(&r, &refusal)))
        })?;
        if let Some(reason) = call.reason.filter(|r| !r.is_empty()) {
            let value = percent_encoding::utf8_percent_encode(reason, percent_encoding::NON_ALPHANUMERIC).to_string();
            built.headers.push(super::request::Header { name: "X-Audit-Log-Reason".into(), value, secret: false });
        }
        let files = std::mem::take(&mut self.action_files);
        if let Some(body) = &call.body {
            let json = serde_json::to_vec(body).unwrap_or_default();
            let (bytes, media_type) = match files.is_empty() {
                true => (json, "application/json".to_string()),
                false => crate::discord::message::with_files(&json, &files)
                    .map_err(|why| Box::new(failure::file_unsent(&files[0].name, &why, a.span)))?,
            };
            built.body = Some(bytes);
            let header = super::request::Header { name: "Content-Type".into(), value: media_type, secret: false };
            built.headers.push(header);
        }
        // What filling its values warned of is said before it is sent (and,
        // with `--strict`, fails the run: nothing is sent).
        self.flush()?;
        let mut event = self.event(&r, &built);
        event.action = Some(a.verb.spec().written);
        let response = if self.options.dry_run || (self.options.offline && !self.options.stand_in) {
            event.offline = self.options.offline;
            self.attempts = 1;
            self.answered_here(a, &call)
        } else if let Some(seconds) = after {
            let (client, limits) = (self.options.client.clone(), self.options.http);
            let limiter = self.options.limiter.clone();
            let wait = std::time::Duration::from_secs(seconds);
            if crate::run::eval::later::send_after(wait, built, client, limits, limiter).is_err() {
                let full = format!("{} calls already waiting", crate::run::eval::later::MAX_WAITING);
                return Err(self.value_refused(a, "after", &full, "room in the queue of calls that wait"));
            }
            Response::new(202, Body::Text(String::new()))
        } else {
            self.send(&r, built, &mut event)?
        };
        event.status = Some(response.status).filter(|_| !self.options.dry_run && after.is_none());
        event.response_body = self.preview(&response.body);
        (self.sink)(Event::Request(event));
        if !(200..300).contains(&response.status) {
            // Told as taken and refused, then the run fails.
            self.tell_action(a, &response);
            self.failure_kind = Some("status");
            let refusal = refusal_of(&response);
            return Err(Box::new(self.redact_diag(failure::action_refused(a, &r.block, call.method, &refusal))));
        }
        Ok(response)
    }

    /// The request an action's call is: to the platform, with the bot
    /// token, named as the action.
    fn action_request(&self, a: &ActionStep, method: Method, url: &str) -> Request {
        let text = |s: &str| plan::Seg::Text(s.to_string());
        Request {
            block: self.last_block.clone(),
            method,
            url: plan::Template { parts: vec![text(url)], span: a.span },
            params: Vec::new(),
            headers: vec![(
                "Authorization".to_string(),
                plan::Template { parts: vec![text("Bot "), plan::Seg::BotToken], span: a.span },
            )],
            body: None,
            auth: None,
            timeout_ms: None,
            retry: None,
            failed: None,
            more_samples: Vec::new(),
            pages: None,
            cache: None,
            keep_bytes: false,
            sample: None,
            allow_bot_token: false,
            allow_private_network: false,
            span: a.span,
        }
    }

    /// What the platform would answer a call offline: the object it makes
    /// (the body sent, with an id of its own), a list for a read, or no
    /// content.
    fn answered_here(&mut self, a: &ActionStep, call: &Call<'_>) -> Response {
        let answer = match (call.method, &call.body) {
            (Method::GET, _) if call.path.contains("/messages?") => json!([]),
            (Method::GET, _) if call.path.ends_with("/roles") => json!([]),
            (Method::GET, _) if call.path.ends_with("/channels") => json!([]),
            (Method::GET, _) => json!({ "available_tags": [] }),
            (Method::POST | Method::PATCH, Some(body)) => {
                let mut object = if body.is_object() { body.clone() } else { json!({}) };
                object["id"] = json!(self.made_id());
                if let Some(channel) = call.path.strip_prefix("/channels/").and_then(|p| p.split('/').next()) {
                    object["channel_id"] = json!(channel);
                }
                if a.verb == Verb::Dm && call.path == "/users/@me/channels" {
                    object["type"] = json!(1);
                }
                object
            }
            _ => return Response::new(204, Body::Text(String::new())),
        };
        Response::new(200, Body::Json(data_of(&answer)))
    }

    /// An id for an object made offline: of the platform's form, the same
    /// in every run of the same steps.
    fn made_id(&mut self) -> String {
        (1_500_000_000_000_000_000u64 + self.requests as u64).to_string()
    }

    /// A value filled in (an earlier action's name: its answer's id).
    fn fill_value(&mut self, a: &ActionStep, v: &ActionVal) -> Done<String> {
        match v {
            ActionVal::Text(t) => {
                let before = self.misses;
                let text = render::render(t, self);
                self.placeholder = self.misses > before;
                self.outside = self.reads_outside(t);
                Ok(text)
            }
            ActionVal::Earlier(name) => match self.responses.get(name).inspect(|_| self.outside = false) {
                Some(r) => Ok(json_of(r)["id"].as_str().unwrap_or_default().to_string()),
                None => Err(self.value_refused(a, name, "", "an earlier action's answer")),
            },
        }
    }

    /// The text of word `word`, filled in, if written.
    fn text_of(&mut self, a: &ActionStep, word: &str) -> Done<Option<String>> {
        let Some(v) = a.arg(word).and_then(|v| v.first()) else { return Ok(None) };
        let text = self.fill_value(a, v)?;
        let word = a.verb.spec().word(word).map_or("", |w| w.word);
        self.told.push((word, text.clone()));
        Ok(Some(text))
    }

    /// The subject, filled in (told as the action's first value).
    fn subject_text(&mut self, a: &ActionStep) -> Done<String> {
        let text = match &a.subject {
            Some(v) => self.fill_value(a, v)?,
            None => String::new(),
        };
        self.told.push(("", text.clone()));
        Ok(text)
    }

    /// The seconds of word `word`'s duration, if written.
    fn duration_of(&mut self, a: &ActionStep, word: &str) -> Done<Option<u64>> {
        let Some(text) = self.text_of(a, word)? else { return Ok(None) };
        let max = match a.verb.spec().word(word).map(|w| w.slot) {
            Some(Slot::Duration { max_secs }) => max_secs,
            _ => u64::MAX,
        };
        match crate::language::vocab::action_duration(&text) {
            Ok(s) if s <= max => Ok(Some(s)),
            _ => Err(self.value_refused(
                a,
                word,
                &text,
                "a duration like `10m`, `1h30m` or `7d`, within the platform's limit",
            )),
        }
    }

    /// The server the run is in: where roles, members and channels are.
    fn server(&mut self, a: &ActionStep) -> Done<String> {
        match self.inputs.vars.get("server_id").filter(|s| crate::discord::is_snowflake(s)) {
            Some(s) => Ok(s.clone()),
            None if self.options.dry_run || (self.options.offline && !self.options.stand_in) => {
                self.pending.push(failure::missing_variable("server_id", a.span));
                Ok(self.made_id())
            }
            None => Err(self.value_refused(a, "server", "", "a run in a server (this one has no `server_id`)")),
        }
    }

    /// The subject's id, read as `slot`.
    fn subject_id(&mut self, a: &ActionStep, slot: Slot) -> Done<String> {
        let text = self.subject_text(a)?;
        let what = a.verb.spec().subject.map_or("value", |(_, what)| what);
        self.resolve(a, what, slot, &text)
    }

    /// Word `word`'s id, read as `slot`.
    fn word_id(&mut self, a: &ActionStep, word: &str, slot: Slot) -> Done<String> {
        let text = self.text_of(a, word)?.unwrap_or_default();
        self.resolve(a, word, slot, &text)
    }

    /// A message named by the subject: an earlier action's (with its
    /// channel), or an id.
    fn subject_message(&mut self, a: &ActionStep) -> Done<(String, Option<String>)> {
        match &a.subject {
            Some(ActionVal::Earlier(name)) => self.earlier_message(a, name),
            _ => self.subject_id(a, Slot::Message).map(|id| (id, None)),
        }
    }

    /// A message named by word `word`, if written.
    fn word_message(&mut self, a: &ActionStep, word: &str) -> Done<Option<(String, Option<String>)>> {
        match a.arg(word).and_then(|v| v.first()) {
            Some(ActionVal::Earlier(name)) => {
                let found = self.earlier_message(a, name)?;
                // (Told by the message's id, as a filled value is.)
                let word = a.verb.spec().word(word).map_or("", |w| w.word);
                self.told.push((word, found.0.clone()));
                Ok(Some(found))
            }
            Some(_) => self.word_id(a, word, Slot::Message).map(|id| Some((id, None))),
            None => Ok(None),
        }
    }

    fn earlier_message(&mut self, a: &ActionStep, name: &str) -> Done<(String, Option<String>)> {
        let answer = self.responses.get(name).map(json_of).unwrap_or_default();
        let id = answer["id"].as_str().unwrap_or_default().to_string();
        let channel = answer["channel_id"].as_str().map(str::to_string);
        if !crate::discord::is_snowflake(&id) {
            return Err(self.value_refused(a, name, &id, "the message an earlier action sent"));
        }
        Ok((id, channel))
    }

    /// The channel of `in`, else the one a message named came from, else
    /// the run's own.
    fn channel_in(&mut self, a: &ActionStep, from: Option<String>) -> Done<String> {
        if a.arg("in").is_some() {
            return self.word_id(a, "in", Slot::Channel);
        }
        let here = from.or_else(|| self.inputs.vars.get("channel_id").cloned()).unwrap_or_default();
        // (The run's own channel, or an earlier action's message's: the platform's.)
        self.outside = false;
        self.resolve(a, "in", Slot::Channel, &here)
    }

    /// The emoji of `react`, as its route takes it.
    fn emoji(&mut self, a: &ActionStep) -> Done<String> {
        let text = self.subject_text(a)?;
        actions::emoji(&text).map_err(|p| {
            let why = p.describe(&text);
            self.value_refused(a, "emoji", &text, &why)
        })
    }

    /// A value read as `slot` (`discord::actions::target`, the checker's
    /// rule): an id, or a name asked of the server.
    fn resolve(&mut self, a: &ActionStep, what: &str, slot: Slot, text: &str) -> Done<String> {
        // Offline, a secret or a variable with no value stays as written
        // (a warning said so): nothing is sent, and the action acts on an
        // id of its own.
        let secret = text.len() > 2
            && text.starts_with('<')
            && text.ends_with('>')
            && text[1..text.len() - 1].bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        let unsent = self.options.dry_run || (self.options.offline && !self.options.stand_in);
        // (Offline, play's stand-in takes any id for a secret it lacks.)
        let lacking = secret && self.options.offline;
        if (unsent && (secret || self.placeholder || text.is_empty())) || lacking {
            self.placeholder = false;
            return Ok(self.made_id());
        }
        let outside = std::mem::take(&mut self.outside);
        match actions::target(slot, text) {
            Ok(Target::Id(id)) if slot == Slot::Channel && outside && !unsent => self.own_channel(a, what, id),
            Ok(Target::Id(id)) => Ok(id),
            Ok(Target::Named(name)) => self.named(a, what, slot, &name),
            Err(expected) => Err(self.value_refused(a, what, text, expected)),
        }
    }

    /// Whether template `t` reads what a user or another server gave: a
    /// variable (but the run's own channel, the platform's), or a block's
    /// response; not a secret, and not an earlier action's answer.
    fn reads_outside(&self, t: &plan::Template) -> bool {
        let outside = |seg: &plan::Seg| match seg {
            plan::Seg::Var { name, .. } => name != "channel_id",
            plan::Seg::Ref(p) => p.element || self.is_block(&p.block),
            plan::Seg::Helped { .. } | plan::Seg::Draw { .. } => true,
            plan::Seg::Text(_) | plan::Seg::Secret { .. } | plan::Seg::BotToken => false,
        };
        t.parts.iter().any(outside)
    }

    /// Whether `name` is one of the plan's `api` blocks (not an action).
    fn is_block(&self, name: &str) -> bool {
        self.plan.trees.iter().any(|tree| plan::find_request(&tree.steps, name).is_some())
    }

    /// A channel id a user or another server gave: acted on only when the
    /// platform says it is the run's server's (so no value can point an
    /// action at a channel of another server the bot is in).
    fn own_channel(&mut self, a: &ActionStep, what: &str, id: String) -> Done<String> {
        if self.inputs.vars.get("channel_id") == Some(&id) {
            return Ok(id);
        }
        let server = self.server(a)?;
        let asked =
            self.call(a, Call { method: Method::GET, path: format!("/channels/{id}"), body: None, reason: None })?;
        match json_of(&asked)["guild_id"].as_str() {
            Some(guild) if guild == server => Ok(id),
            _ => Err(self.value_refused(a, what, &id, "a channel of this server")),
        }
    }

    /// A channel (`#name`) or a role (`@Name`) of the run's server by its
    /// name, asked of the platform (a channel's name as the platform keeps
    /// it, lower-case; a role's as written). Offline, an id of its own.
    fn named(&mut self, a: &ActionStep, what: &str, slot: Slot, name: &str) -> Done<String> {
        let server = self.server(a)?;
        let channels = slot == Slot::Channel;
        let path = format!("/guilds/{server}/{}", if channels { "channels" } else { "roles" });
        let listed = self.call(a, Call { method: Method::GET, path, body: None, reason: None })?;
        if self.options.dry_run || (self.options.offline && !self.options.stand_in) {
            return Ok(self.made_id());
        }
        let list = json_of(&listed).as_array().cloned().unwrap_or_default();
        let found = list.iter().find(|x| {
            x["name"].as_str().is_some_and(|n| if channels { n.eq_ignore_ascii_case(name) } else { n == name })
        });
        match found.and_then(|x| x["id"].as_str()) {
            Some(id) if crate::discord::is_snowflake(id) => Ok(id.to_string()),
            _ => {
                let sigil = if channels { '#' } else { '@' };
                let expected = if channels { "a channel of this server" } else { "a role of this server" };
                Err(self.value_refused(a, what, &format!("{sigil}{name}"), expected))
            }
        }
    }

    /// B334: a value that is not what the action needs, redacted.
    fn value_refused(&mut self, a: &ActionStep, what: &str, value: &str, expected: &str) -> Box<Diagnostic> {
        self.failure_kind = Some("refused");
        let value = self.redactor.redact(&crate::base::display::one_line(value));
        Box::new(failure::action_value(a, what, &value, expected))
    }

    /// The id at `key` of an answer.
    fn answer_id(&mut self, a: &ActionStep, r: &Response, key: &str) -> Done<String> {
        match json_of(r)[key].as_str().filter(|id| crate::discord::is_snowflake(id)) {
            Some(id) => Ok(id.to_string()),
            None => Err(self.value_refused(a, key, "", "an id in the platform's answer")),
        }
    }
}

/// A response's body as JSON (small: the platform's objects).
fn json_of(r: &Response) -> Json {
    match &r.body {
        Body::Json(d) => d.to_json(),
        Body::Text(_) => Json::Null,
    }
}

/// A JSON value as a response's body.
fn data_of(value: &Json) -> crate::base::data::Data {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    crate::base::data::Data::parse(&bytes).map(|p| p.data).unwrap_or(crate::base::data::Data::Null)
}

/// The platform's refusal in a response: its status, JSON code and message.
fn refusal_of(r: &Response) -> crate::discord::rest::Refusal {
    let body = json_of(r);
    let message = body["message"].as_str().map(crate::base::display::one_line).unwrap_or_default();
    crate::discord::rest::Refusal { status: r.status, code: body["code"].as_u64(), message }
}
