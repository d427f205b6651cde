// blkc play: a chat channel for one bot, in one page and no library. What
// the page sends becomes the platform's interaction (signed by `blkc play`
// and run by `blkc serve`'s own pipeline); what the bot sends back, first
// answer and later calls alike, is drawn here as the platform's client
// would draw it.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { commands: [], byInteraction: new Map(), runOf: new Map(), after: 0 };

function member() {
  const roles = $("user-roles").value.split(",").map((r) => r.trim()).filter(Boolean);
  return { id: $("user-id").value, name: $("user-name").value, roles, permissions: $("user-permissions").value };
}

async function post(asked) {
  asked.member = member();
  asked.server = $("server").value;
  asked.channel = $("channel-id").value;
  const r = await fetch("/play/interaction", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(Object.assign({}, asked, { used: undefined })),
  });
  return r.json();
}

// ── drawing ────────────────────────────────────────────────────────────

function text(node, s) { node.append(document.createTextNode(s)); }

// The client's markdown, drawn as DOM nodes (never as HTML): headers,
// lists, code blocks, quotes and subtext a line each; bold, italics,
// underline, strikethrough, spoilers, code, masked links, timestamps and
// mentions (drawn by name, never linked) within a line.
function inline(node, s) {
  const fence = /```(?:([\w+#.-]+)\n)?([\s\S]*?)```/g;
  let last = 0;
  for (const m of s.matchAll(fence)) {
    blocks(node, s.slice(last, m.index));
    const pre = document.createElement("pre");
    const code = document.createElement("code");
    code.textContent = m[2].replace(/\n$/, "");
    if (m[1]) code.dataset.lang = m[1];
    pre.append(code);
    node.append(pre);
    last = m.index + m[0].length;
  }
  blocks(node, s.slice(last));
}

// The lines of markdown outside code blocks: each run of alike lines (a
// quote, a list) one element; other lines kept as text with their breaks.
function blocks(node, s) {
  if (!s) return;
  const lines = s.replace(/^\n/, "").replace(/\n$/, "").split("\n");
  let plain = [];
  const flush = () => { if (plain.length) { const t = document.createElement("span"); spans(t, plain.join("\n")); node.append(t); plain = []; } };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let m;
    if (line.startsWith(">>> ")) {
      flush();
      const q = document.createElement("blockquote");
      inline(q, [line.slice(4)].concat(lines.slice(i + 1)).join("\n"));
      node.append(q);
      return;
    } else if (line.startsWith("> ") || line === ">") {
      flush();
      const quoted = [];
      while (i < lines.length && (lines[i].startsWith("> ") || lines[i] === ">")) quoted.push(lines[i++].slice(2));
      i--;
      const q = document.createElement("blockquote");
      blocks(q, quoted.join("\n"));
      node.append(q);
    } else if ((m = /^(#{1,3}) (.+)$/.exec(line))) {
      flush();
      const h = document.createElement("div");
      h.className = "md-h" + m[1].length;
      h.setAttribute("role", "heading");
      h.setAttribute("aria-level", String(m[1].length));
      spans(h, m[2]);
      node.append(h);
    } else if ((m = /^-# (.+)$/.exec(line))) {
      flush();
      const small = document.createElement("div");
      small.className = "md-subtext";
      spans(small, m[1]);
      node.append(small);
    } else if (/^\s*([-*]|\d{1,9}\.) /.test(line)) {
      flush();
      // A list goes on while its lines are of its kind, or inside an item.
      const items = [];
      const base = /^\s*/.exec(line)[0].length;
      const kind = (l) => (/^\s*\d/.test(l) ? "1" : "-");
      while (i < lines.length && /^\s*([-*]|\d{1,9}\.) /.test(lines[i])
        && (/^\s*/.exec(lines[i])[0].length > base || kind(lines[i]) === kind(line))) items.push(lines[i++]);
      i--;
      node.append(list(items));
    } else {
      plain.push(line);
    }
  }
  flush();
}

// A list's lines: `- ` or `* ` bullets, `1. ` numbers; two more spaces of
// indent, a list within the item before.
function list(lines) {
  const ordered = /^\s*\d/.test(lines[0]);
  const top = document.createElement(ordered ? "ol" : "ul");
  const first = /^\s*(\d+)\./.exec(lines[0]);
  if (first && first[1] !== "1") top.start = Number(first[1]);
  const depth = (l) => /^\s*/.exec(l)[0].length;
  const base = depth(lines[0]);
  let item;
  for (let i = 0; i < lines.length; i++) {
    if (depth(lines[i]) > base && item) {
      const inner = [];
      while (i < lines.length && depth(lines[i]) > base) inner.push(lines[i++]);
      i--;
      item.append(list(inner));
      continue;
    }
    item = document.createElement("li");
    spans(item, lines[i].replace(/^\s*([-*]|\d{1,9}\.) /, ""));
    top.append(item);
  }
  return top;
}

const INLINE = new RegExp([
  /\\([^A-Za-z0-9\s])/, // an escaped character
  /(`+)([\s\S]*?[^`])\2(?!`)/, // code
  /\|\|([\s\S]+?)\|\|/, // a spoiler
  /\*\*([\s\S]+?)\*\*(?!\*)/, // bold
  /__([\s\S]+?)__(?!_)/, // underline
  /\*(?!\s)([\s\S]+?)\*/, // italics
  /(?<![A-Za-z0-9])_(?!\s)([\s\S]+?)_(?![A-Za-z0-9])/, // italics
  /~~([\s\S]+?)~~/, // strikethrough
  /\[([^\]\n]+)\]\(<?(https?:\/\/[^\s)>]+)>?\)/, // a masked link
  /(https?:\/\/[^\s<]*[^\s<.,:;"')\]])/, // a link
  /<(@!?|@&|#)(\d+)>/, // a mention
  /<t:(-?\d{1,13})(?::([tTdDfFR]))?>/, // a timestamp
  /<a?:(\w{2,32}):\d+>/, // a server's emoji
  /<\/([\w -]{1,100}):\d+>/, // a command's mention
].map((r) => r.source).join("|"), "g");

function spans(node, s) {
  let last = 0;
  for (const m of s.matchAll(INLINE)) {
    text(node, s.slice(last, m.index));
    node.append(span(m));
    last = m.index + m[0].length;
  }
  text(node, s.slice(last));
}

function wrapped(tag, cls, inner) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  spans(el, inner);
  return el;
}

// One match of INLINE, by the group that matched.
function span(m) {
  if (m[1] !== undefined) return document.createTextNode(m[1]);
  if (m[3] !== undefined) { const c = document.createElement("code"); c.textContent = m[3].trim() || m[3]; return c; }
  if (m[4] !== undefined) {
    const el = wrapped("span", "spoiler-text", m[4]);
    el.title = "Spoiler: click to show";
    el.addEventListener("click", () => el.classList.add("shown"));
    return el;
  }
  if (m[5] !== undefined) return wrapped("strong", "", m[5]);
  if (m[6] !== undefined) return wrapped("u", "", m[6]);
  if (m[7] !== undefined || m[8] !== undefined) return wrapped("em", "", m[7] !== undefined ? m[7] : m[8]);
  if (m[9] !== undefined) return wrapped("s", "", m[9]);
  if (m[10] !== undefined) return link(m[11], m[10]);
  if (m[12] !== undefined) return link(m[12], m[12]);
  if (m[13] !== undefined) return mention(m[13], m[14]);
  if (m[15] !== undefined) return timestamp(Number(m[15]), m[16] || "f");
  const el = document.createElement("span");
  el.className = "mention";
  el.textContent = m[17] !== undefined ? ":" + m[17] + ":" : "/" + m[18];
  return el;
}

// A link opens elsewhere, never in the page; only http(s).
function link(url, label) {
  const a = document.createElement("a");
  a.href = url;
  a.target = "_blank";
  a.rel = "noopener noreferrer";
  spans(a, label === url ? "" : label);
  if (label === url) a.textContent = url;
  return a;
}

// A mention by name, as the client draws it: the member playing, the
// world's users, roles and channels; one play does not know by its id.
function mention(kind, id) {
  const el = document.createElement("span");
  el.className = "mention";
  const names = state.names || {};
  if (kind === "#") el.textContent = "#" + ((names.channels || {})[id] || id);
  else if (kind === "@&") el.textContent = "@" + ((names.roles || {})[id] || "role " + id);
  else el.textContent = "@" + (id === $("user-id").value ? $("user-name").value : (names.users || {})[id] || id);
  return el;
}

// `<t:UNIX:STYLE>` as the client shows it, in the page's locale, the
// relative one by the bot's clock (which the page can move).
function timestamp(seconds, style) {
  const at = new Date(seconds * 1000);
  const el = document.createElement("time");
  el.className = "timestamp";
  if (isNaN(at)) { el.textContent = "Invalid Date"; return el; }
  el.dateTime = at.toISOString();
  const formats = {
    t: { hour: "2-digit", minute: "2-digit" },
    T: { hour: "2-digit", minute: "2-digit", second: "2-digit" },
    d: { day: "2-digit", month: "2-digit", year: "numeric" },
    D: { day: "numeric", month: "long", year: "numeric" },
    f: { day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit" },
    F: { weekday: "long", day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit" },
  };
  el.title = at.toLocaleString(undefined, formats.F);
  el.textContent = style === "R" ? relative(at) : at.toLocaleString(undefined, formats[style]);
  return el;
}

function relative(at) {
  const seconds = Math.round((at.getTime() - botNow()) / 1000);
  const units = [["year", 31536000], ["month", 2592000], ["day", 86400], ["hour", 3600], ["minute", 60], ["second", 1]];
  const [unit, size] = units.find(([, n]) => Math.abs(seconds) >= n) || units[units.length - 1];
  return new Intl.RelativeTimeFormat(undefined, { numeric: "auto" }).format(Math.round(seconds / size), unit);
}

// The bot's clock, as /play/waiting last told it.
function botNow() { return Date.now() + (state.clockOffset || 0); }

function embed(e) {
  const box = document.createElement("div");
  box.className = "embed";
  if (e.color !== undefined) box.style.borderLeftColor = "#" + Number(e.color).toString(16).padStart(6, "0");
  const part = (cls, s) => { if (!s) return; const d = document.createElement("div"); d.className = cls; inline(d, s); box.append(d); };
  part("author", e.author && e.author.name);
  // An author's icon and link, a footer's icon, as the client shows them.
  const icon = (node, url) => {
    if (!node || !shownImage(url)) return;
    const i = document.createElement("img");
    i.className = "icon"; i.src = url; i.alt = ""; i.loading = "lazy";
    node.prepend(i);
  };
  if (e.author) {
    const name = box.lastElementChild;
    if (e.author.url && /^https?:\/\//i.test(e.author.url)) {
      const a = document.createElement("a");
      a.href = e.author.url; a.rel = "noopener noreferrer"; a.target = "_blank";
      a.append(...name.childNodes); name.append(a);
    }
    icon(name, e.author.icon_url);
  }
  part("title", e.title);
  part("description", e.description);
  if (e.fields && e.fields.length) {
    const fields = document.createElement("div");
    fields.className = "fields";
    for (const f of e.fields) {
      const d = document.createElement("div");
      d.className = "field" + (f.inline ? " inline" : "");
      const n = document.createElement("div"); n.className = "field-name"; inline(n, f.name);
      const v = document.createElement("div"); inline(v, f.value);
      d.append(n, v);
      fields.append(d);
    }
    box.append(fields);
  }
  // Images load only from web addresses (the page's policy allows https)
  // and from the files the message carries (the stand-in's own).
  for (const [cls, img] of [["thumbnail", e.thumbnail], ["image", e.image]]) {
    if (!img || !shownImage(img.url)) continue;
    const i = document.createElement("img");
    i.className = cls; i.src = img.url; i.alt = ""; i.loading = "lazy";
    box.append(i);
  }
  part("footer", e.footer && e.footer.text);
  if (e.footer) icon(box.lastElementChild, e.footer.icon_url);
  return box;
}

// The message flag of a layout message (IS_COMPONENTS_V2).
const LAYOUT = 1 << 15;

const STYLES = { 1: "", 2: "secondary", 3: "success", 4: "danger", 5: "secondary" };

// A click carries its message as the platform's does: its id, flags,
// components (serve answers only what the message offered) and when it
// was sent (a component may expire).
function clickable(rows, messageId, flags, channel, timestamp) {
  const on = { id: messageId, components: rows || [], flags: flags || 0 };
  if (timestamp) on.timestamp = timestamp;
  // A message in another channel: a click comes from there.
  if (channel) on.channel_id = channel;
  return on;
}

function components(rows, messageId, flags, channel, timestamp) {
  const on = clickable(rows, messageId, flags, channel, timestamp);
  return (rows || []).map((row) => drawRow(row.components || [], on));
}

// A row of buttons, or its one menu.
function drawRow(list, on) {
  const line = document.createElement("div");
  line.className = "row";
  for (const c of list) {
    if (c.type === 2) line.append(drawButton(c, on));
    else if (c.type === 3) line.append(drawSelect(c, on));
  }
  return line;
}

function drawButton(c, on) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = STYLES[c.style] || "";
  b.textContent = (c.emoji && c.emoji.name ? c.emoji.name + " " : "") + (c.label || "");
  b.disabled = !!c.disabled;
  // A premium button: the platform draws it from its SKU and sells it.
  if (c.style === 6) { b.className = "premium"; b.textContent = "🛒 Buy (SKU " + (c.sku_id || "?") + ")"; b.title = "the platform's store answers this click, not the bot"; return b; }
  // A link opens only as a web page (never a `javascript:` one).
  if (c.url) b.addEventListener("click", () => { if (/^https?:\/\//i.test(c.url)) window.open(c.url, "_blank", "noopener"); });
  else b.addEventListener("click", () => send({ type: 3, data: { custom_id: c.custom_id, component_type: 2 }, message: on }));
  return b;
}

function drawSelect(c, on) {
  const s = document.createElement("select");
  s.multiple = (c.max_values || 1) > 1;
  s.setAttribute("aria-label", c.placeholder || "Choose");
  const none = document.createElement("option");
  none.textContent = c.placeholder || "Choose…";
  none.value = "";
  if (!s.multiple) s.append(none);
  for (const o of c.options || []) {
    const opt = document.createElement("option");
    opt.value = o.value; opt.textContent = o.label; opt.selected = !!o.default;
    s.append(opt);
  }
  // Once sent, the menu shows what its message says again (its defaults,
  // or its placeholder), as the client resets it.
  const reset = () => { for (const opt of s.options) opt.selected = (c.options || []).some((o) => o.default && o.value === opt.value); };
  reset();
  s.addEventListener("change", () => {
    const values = [...s.selectedOptions].map((o) => o.value).filter(Boolean);
    if (values.length) send({ type: 3, data: { custom_id: c.custom_id, component_type: 3, values }, message: on });
    if (!s.multiple) reset();
  });
  return s;
}

// An image of a layout message, from a web address only (the page's policy
// allows https); a spoiler is blurred until clicked, as the client does.
function picture(cls, media, description, spoiler) {
  const url = media && media.url;
  if (!shownImage(url)) return document.createTextNode("");
  const i = document.createElement("img");
  i.className = cls + (spoiler ? " spoiler" : ""); i.src = url; i.alt = description || ""; i.loading = "lazy";
  if (spoiler) i.addEventListener("click", () => i.classList.remove("spoiler"));
  return i;
}

// Whether an image may be shown: from a web address over https, or a file
// the message carries (kept by the stand-in, as the platform's CDN keeps it).
function shownImage(url) { return /^https:\/\//i.test(url || "") || isFile(url); }
function isFile(url) { return /^\/play\/files\/\d+$/.test(url || ""); }
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

// A file a message carries, as the client shows it: an image in place (a
// spoiler blurred until clicked), any other as its name and size, to
// download.
function fileNode(a, spoiler) {
  if (IMAGE_TYPES.includes(String(a.content_type || "").split(";")[0].trim())) {
    return picture("attachment", { url: a.url }, a.description, spoiler || a.is_spoiler);
  }
  const box = document.createElement("a");
  box.className = "file" + (spoiler || a.is_spoiler ? " spoiler" : "");
  box.href = a.url; box.download = a.filename || "file";
  const name = document.createElement("span");
  name.className = "file-name"; name.textContent = a.filename || "file";
  const size = document.createElement("span");
  const n = Number(a.size) || 0;
  size.className = "file-size";
  size.textContent = n < 1024 ? n + " bytes" : n < 1048576 ? (n / 1024).toFixed(1) + " KB" : (n / 1048576).toFixed(1) + " MB";
  box.append(name, size);
  if (a.description) box.title = a.description;
  return box;
}

// The files of a message that nothing else in it shows (an embed's image
// shows its own file), each as the client shows a file.
function attachments(m) {
  const used = JSON.stringify([m.embeds || [], m.components || []]);
  return (m.attachments || []).filter(a => isFile(a.url) && !used.includes(JSON.stringify(a.url))).map(a => fileNode(a));
}

// A layout message's parts (the platform's components v2) as the client
// lays them out: texts, a container behind its accent bar, a section's
// text with its thumbnail or button at the right, a gallery's grid, a
// separator's line, rows of components.
function layout(list, on, files) {
  const out = [];
  for (const c of list || []) {
    let d = document.createElement("div");
    if (c.type === 1) d = drawRow(c.components || [], on);
    else if (c.type === 10) { d.className = "text-display"; inline(d, c.content || ""); }
    else if (c.type === 17) {
      d.className = "container" + (c.spoiler ? " spoiler" : "");
      if (c.accent_color !== undefined && c.accent_color !== null) d.style.borderLeftColor = "#" + Number(c.accent_color).toString(16).padStart(6, "0");
      if (c.spoiler) d.addEventListener("click", () => d.classList.remove("spoiler"), { once: true });
      d.append(...layout(c.components, on, files));
    } else if (c.type === 9) {
      d.className = "section";
      const texts = document.createElement("div");
      texts.className = "section-texts";
      texts.append(...layout(c.components, on, files));
      const a = c.accessory || {};
      const beside = a.type === 11 ? picture("thumbnail", a.media, a.description, a.spoiler) : a.type === 2 ? drawButton(a, on) : document.createTextNode("");
      d.append(texts, beside);
    } else if (c.type === 12) {
      d.className = "gallery n" + Math.min((c.items || []).length, 4);
      for (const item of c.items || []) d.append(picture("media", item.media, item.description, item.spoiler));
    } else if (c.type === 13) {
      const url = c.file && c.file.url;
      const a = (files || []).find(f => f.url === url);
      if (!a) continue;
      d = fileNode(a, c.spoiler);
    } else if (c.type === 14) {
      d = document.createElement("hr");
      d.className = "separator" + (c.spacing === 2 ? " large" : "") + (c.divider === false ? " invisible" : "");
    } else continue;
    out.push(d);
  }
  return out;
}

// One message as the platform's client shows it; `note` says what it is.
// An edit changes what it gives and keeps the rest, as the platform does
// (an update without `components` keeps the buttons).
function draw(li, m, note) {
  if (note && li.payload) m = Object.assign({}, li.payload, m);
  li.payload = m;
  li.replaceChildren();
  li.className = "message" + (m.flags & 64 ? " ephemeral" : "");
  heading(li, bot(), m.timestamp);
  if (m.content) { const c = document.createElement("div"); c.className = "content"; inline(c, m.content); li.append(c); }
  for (const e of m.embeds || []) li.append(embed(e));
  if (m.poll) li.append(drawPoll(m.poll, m.id, m.channel_id, m.flags));
  if (m.flags & LAYOUT) li.append(...layout(m.components, clickable(m.components, li.dataset.message, m.flags, m.channel_id, m.timestamp || li.dataset.sent), m.attachments));
  else {
    li.append(...attachments(m));
    li.append(...components(m.components, li.dataset.message, m.flags, m.channel_id, m.timestamp || li.dataset.sent));
  }
  if (m.id) li.dataset.id = m.id;
  // Where it was sent, when not in the conversation's channel.
  const where = m.dm_user ? "Direct message to <@" + m.dm_user + ">" : m.channel_name ? "in #" + m.channel_name : "";
  const n = document.createElement("div");
  n.className = "note";
  n.textContent = [m.flags & 64 ? "Only you can see this" : "", where, note].filter(Boolean).join(" · ");
  if (n.textContent) li.append(n);
  linkRun(li);
}

// The conversation stays at its newest message, as the client keeps it:
// while it is scrolled to the end, whatever is added or grows (an answer,
// its edit, its run's link) keeps it there; scrolled back, it stays put
// until the member says something.
const follow = { atEnd: true };
function followNewest() {
  const main = document.querySelector("main");
  const toEnd = () => { main.scrollTop = main.scrollHeight; };
  main.addEventListener("scroll", () => { follow.atEnd = main.scrollTop + main.clientHeight >= main.scrollHeight - 8; });
  new MutationObserver(() => { if (follow.atEnd) toEnd(); })
    .observe($("messages"), { childList: true, subtree: true, characterData: true });
  follow.toEnd = () => { follow.atEnd = true; toEnd(); };
}

function add(cls) {
  const li = document.createElement("li");
  li.className = cls;
  $("messages").append(li);
  return li;
}

// What the member playing says in the channel, headed as theirs.
function said(line) {
  const li = add("message");
  heading(li, { id: $("user-id").value, name: $("user-name").value });
  const c = document.createElement("div");
  c.className = "content";
  inline(c, line);
  li.append(c);
  if (follow.toEnd) follow.toEnd();
}

// The bot, as its messages are headed: its name is its file's.
function bot() {
  return { id: state.bot || "bot", name: (state.name || "bot").replace(/^.*\//, "").replace(/\.blk$/, "") || "bot", app: true };
}

// Who wrote a message, as the client heads it: an avatar of their
// initials, the name (the bot's with its APP tag) and the time. A message
// right after one of the same author's, within seven minutes, is grouped
// under it without a head; an answer to a command says who used it.
const AVATAR_COLOURS = ["#5865f2", "#757e8a", "#3ba55c", "#faa61a", "#ed4245", "#eb459f"];
function heading(li, who, sent) {
  const at = Date.parse(li.dataset.sent || sent || "") || Number(li.dataset.at) || botNow();
  li.dataset.at = String(at);
  li.dataset.author = who.id;
  const before = li.previousElementSibling;
  const grouped = !li.dataset.used && before && before.dataset.author === who.id && before.classList.contains("message")
    && Math.abs(at - Number(before.dataset.at)) < 7 * 60 * 1000;
  li.classList.toggle("grouped", !!grouped);
  if (li.dataset.used) {
    const used = document.createElement("div");
    used.className = "used";
    const name = document.createElement("span");
    name.className = "mention";
    name.textContent = "@" + (li.dataset.user || "you");
    used.append(name, document.createTextNode(" used "));
    const command = document.createElement("span");
    command.className = "command";
    command.textContent = li.dataset.used;
    used.append(command);
    li.append(used);
  }
  const time = new Date(at);
  const hm = time.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  if (grouped) {
    const t = document.createElement("time"); t.className = "hover-time"; t.textContent = hm; t.dateTime = time.toISOString();
    li.append(t);
    return;
  }
  const avatar = document.createElement("div");
  avatar.className = "avatar";
  avatar.setAttribute("aria-hidden", "true");
  avatar.textContent = initials(who.name);
  let hash = 0;
  for (const ch of String(who.id)) hash = (hash * 31 + ch.codePointAt(0)) >>> 0;
  avatar.style.background = AVATAR_COLOURS[hash % AVATAR_COLOURS.length];
  const head = document.createElement("div");
  head.className = "head";
  const name = document.createElement("span");
  name.className = "author";
  name.textContent = who.name;
  head.append(name);
  if (who.app) { const tag = document.createElement("span"); tag.className = "tag"; tag.textContent = "APP"; head.append(tag); }
  const t = document.createElement("time");
  t.className = "time";
  t.dateTime = time.toISOString();
  const today = new Date(botNow()).toDateString() === time.toDateString();
  t.textContent = today ? "Today at " + hm : time.toLocaleDateString() + " " + hm;
  head.append(t);
  li.append(avatar, head);
}

function initials(name) {
  const words = String(name).match(/[\p{L}\p{N}]+/gu) || ["?"];
  return words.slice(0, 2).map((w) => [...w][0].toUpperCase()).join("");
}

// The first answer to an interaction: a message, "thinking", an update of
// the component's message, a form, or choices.
function answered(result, asked) {
  const a = result.answer || {};
  const id = result.interaction;
  const target = asked.message && document.querySelector(`[data-message="${CSS.escape(asked.message.id)}"]`);
  if (a.type === 4 || a.type === 7) {
    const li = a.type === 7 && target ? target : add("message");
    if (a.type === 4) { li.dataset.sent = result.timestamp || ""; used(li, asked); }
    // A message's id is a snowflake, as the platform's (here its
    // interaction's): a click on it is counted, and edited, on it alone.
    li.dataset.message = li.dataset.message || id;
    li.dataset.interaction = id;
    state.byInteraction.set(id, li);
    draw(li, a.data || {}, a.type === 7 ? "updated" : "");
  } else if (a.type === 5) {
    const li = add("message");
    li.dataset.message = id;
    li.dataset.interaction = id;
    // (Its edit keeps when it was sent.)
    li.dataset.sent = result.timestamp || "";
    used(li, asked);
    heading(li, bot());
    const thinking = document.createElement("div");
    thinking.className = "thinking";
    thinking.textContent = bot().name + " is thinking…";
    li.append(thinking);
    state.byInteraction.set(id, li);
    linkRun(li);
  } else if (a.type === 6) {
    if (target) { target.dataset.interaction = id; state.byInteraction.set(id, target); }
  } else if (a.type === 9) {
    form(a.data, asked);
  } else {
    const li = add("message");
    li.textContent = result.error ? "blkc play: " + result.error : "bot answered " + JSON.stringify(a);
  }
}

// An answer to a command says above it who used which, as the client's.
function used(li, asked) {
  if (!asked.used) return;
  li.dataset.used = asked.used;
  li.dataset.user = $("user-name").value;
}

// A form as the client shows it: its texts, and each input in its label
// (or, the older way, in a row) drawn as its kind: a line or a paragraph,
// a menu, a radio group, checkboxes, a checkbox, an upload.
function form(data, asked) {
  $("form-title").textContent = data.title || "";
  const inputs = $("form-inputs");
  inputs.replaceChildren();
  const fields = [];
  for (const part of data.components || []) {
    if (part.type === 10) { const d = document.createElement("div"); d.className = "text-display"; inline(d, part.content || ""); inputs.append(d); continue; }
    for (const c of part.components || [part.component].filter(Boolean)) {
      const label = document.createElement("label");
      label.className = "field";
      text(label, part.label || c.label || c.custom_id);
      if (part.description) { const d = document.createElement("small"); d.textContent = part.description; label.append(d); }
      const field = formField(c);
      label.append(field.node);
      inputs.append(label);
      fields.push(field);
    }
  }
  const dialog = $("form");
  dialog.onclose = () => {
    if (dialog.returnValue !== "send") return;
    const files = {};
    const components = fields.map((f) => ({ type: 18, component: f.value(files) }));
    const sent = { custom_id: data.custom_id, components };
    if (Object.keys(files).length) sent.resolved = { attachments: files };
    send({ type: 5, data: sent, message: asked.message });
  };
  dialog.showModal();
}

// One input of a form: its node, and what it sends (in the platform's
// shape for its kind).
function formField(c) {
  const id = c.custom_id;
  const choices = (type) => {
    const box = document.createElement("div");
    box.className = "choices";
    for (const o of c.options || []) {
      const l = document.createElement("label");
      const b = document.createElement("input");
      b.type = type; b.name = id; b.value = o.value; b.checked = !!o.default;
      l.append(b, document.createTextNode(" " + o.label));
      box.append(l);
    }
    return box;
  };
  const checked = (node) => [...node.querySelectorAll("input:checked")].map((b) => b.value);
  if (c.type === 21) { const node = choices("radio"); return { node, value: () => ({ type: 21, custom_id: id, value: checked(node)[0] || null }) }; }
  if (c.type === 22) { const node = choices("checkbox"); return { node, value: () => ({ type: 22, custom_id: id, values: checked(node) }) }; }
  if (c.type === 23) {
    const node = document.createElement("input");
    node.type = "checkbox"; node.name = id; node.checked = !!c.default;
    return { node, value: () => ({ type: 23, custom_id: id, value: node.checked }) };
  }
  if (c.type === 3) {
    const node = document.createElement("select");
    node.name = id; node.multiple = (c.max_values || 1) > 1; node.required = c.required !== false;
    for (const o of c.options || []) { const opt = document.createElement("option"); opt.value = o.value; opt.textContent = o.label; opt.selected = !!o.default; node.append(opt); }
    return { node, value: () => ({ type: 3, custom_id: id, values: [...node.selectedOptions].map((o) => o.value) }) };
  }
  if (c.type === 19) {
    // The files' names, types and sizes, as the platform resolves an upload
    // (play keeps no bytes).
    const node = document.createElement("input");
    node.type = "file"; node.name = id; node.multiple = (c.max_values || 1) > 1; node.required = c.required !== false;
    if (c.file_types) node.accept = c.file_types.map((t) => (t.startsWith(".") ? t : t + "/*")).join(",");
    return { node, value: (files) => {
      const ids = [...node.files].map((f) => {
        const fileId = String(1495000000000000000n + BigInt(Object.keys(files).length));
        // (Where the platform keeps it, play's stand-in says.)
        files[fileId] = { id: fileId, filename: f.name, size: f.size, content_type: f.type || "application/octet-stream" };
        return fileId;
      });
      return { type: 19, custom_id: id, values: ids };
    } };
  }
  if (c.type >= 5 && c.type <= 8) {
    const node = document.createElement("input");
    node.name = id; node.placeholder = "ids, separated by commas"; node.required = c.required !== false;
    return { node, value: () => ({ type: c.type, custom_id: id, values: node.value.split(",").map((v) => v.trim()).filter(Boolean) }) };
  }
  const node = c.style === 2 ? document.createElement("textarea") : document.createElement("input");
  node.name = id; node.required = c.required !== false;
  if (c.value) node.value = c.value;
  if (c.placeholder) node.placeholder = c.placeholder;
  return { node, value: () => ({ type: 4, custom_id: id, value: node.value }) };
}

async function send(asked) {
  try { answered(await post(asked), asked); } catch (e) { add("message").textContent = "blkc play: " + e; }
}

// What serve sent the platform after its first answers: edits of a
// "thinking" answer or of a component's message, follow-ups, messages.
async function poll() {
  for (;;) {
    try {
      const r = await fetch("/play/calls?after=" + state.after);
      const { calls, next } = await r.json();
      state.after = next;
      for (const c of calls) {
        state.seen = (state.seen || 0) + 1;
        const li = c.interaction && state.byInteraction.get(c.interaction);
        if (c.kind === "edit" && li) { li.classList.remove("thinking"); draw(li, c.body, "edited"); }
        else if (c.kind === "delete" && li) li.remove();
        else if (c.kind === "action") acted(c);
        else if (c.kind === "follow_up" || c.kind === "message" || c.kind === "dm") { const n = add("message"); n.dataset.message = (c.body && c.body.id) || "m" + state.seen; if (c.interaction) n.dataset.interaction = c.interaction; draw(n, c.body, ""); }
        else if (c.kind === "edit_message") edited(c);
        else if (c.kind === "run") inspected(c.body);
      }
    } catch (e) { await new Promise((ok) => setTimeout(ok, 1000)); }
  }
}

// A message the bot edited with its token (a button disabled after its
// last click): that message, as the client updates it in place.
function edited(c) {
  const id = (c.route.match(/\/messages\/(\d+)$/) || [])[1];
  const li = id && document.querySelector(`[data-message="${CSS.escape(id)}"]`);
  if (li) draw(li, c.body, "edited");
  else draw(add("message"), c.body, "edited");
}

// An action's call as the chat would show its effect: a line saying what
// the bot did (or that the platform refused it, and why), and a deleted
// message gone from the conversation.
const ACTIONS = [
  [/^PUT \/guilds\/\d+\/members\/(\d+)\/roles\/(\d+)$/, (u, r) => "gave <@&" + r + "> to <@" + u + ">"],
  [/^DELETE \/guilds\/\d+\/members\/(\d+)\/roles\/(\d+)$/, (u, r) => "took <@&" + r + "> from <@" + u + ">"],
  [/^PATCH \/guilds\/\d+\/members\/(\d+)$/, (u) => "changed <@" + u + ">"],
  [/^DELETE \/guilds\/\d+\/members\/(\d+)$/, (u) => "kicked <@" + u + ">"],
  [/^PUT \/guilds\/\d+\/bans\/(\d+)$/, (u) => "banned <@" + u + ">"],
  [/^DELETE \/guilds\/\d+\/bans\/(\d+)$/, (u) => "lifted the ban of <@" + u + ">"],
  [/^POST \/guilds\/\d+\/channels$/, () => "created a channel"],
  [/^POST \/channels\/\d+(\/messages\/\d+)?\/threads$/, () => "started a thread"],
  [/^DELETE \/channels\/(\d+)$/, (ch) => "deleted the channel " + ch],
  [/^PUT \/channels\/\d+\/messages\/\d+\/reactions\/([^/]+)\/@me$/, (e) => "reacted " + decodeURIComponent(e)],
  [/^PUT \/channels\/\d+\/messages\/pins\/\d+$/, () => "pinned a message"],
  [/^DELETE \/channels\/\d+\/messages\/pins\/\d+$/, () => "unpinned a message"],
  [/^DELETE \/channels\/\d+\/messages\/(\d+)$/, () => "deleted a message"],
  [/^POST \/channels\/\d+\/messages\/bulk-delete$/, () => "deleted messages"],
];

// What an action changed that the page shows besides its line: a
// reaction under its message; the roles, a timeout, a kick or a ban of the
// member playing ("Playing as").
function shown(route, sent) {
  const me = $("user-id").value;
  const reaction = route.match(/^PUT \/channels\/\d+\/messages\/(\d+)\/reactions\/([^/]+)\/@me$/);
  if (reaction) {
    for (const li of document.querySelectorAll("#messages li[data-id='" + CSS.escape(reaction[1]) + "']")) {
      const r = document.createElement("span");
      r.className = "reaction";
      r.textContent = decodeURIComponent(reaction[2]) + " 1";
      li.append(r);
    }
  }
  const role = route.match(/^(PUT|DELETE) \/guilds\/\d+\/members\/(\d+)\/roles\/(\d+)$/);
  if (role && role[2] === me) {
    const roles = $("user-roles").value.split(",").map((r) => r.trim()).filter((r) => r && r !== role[3]);
    if (role[1] === "PUT") roles.push(role[3]);
    $("user-roles").value = roles.join(", ");
  }
  const state = $("who-state");
  const on = (re) => { const m = route.match(re); return m && m[1] === me; };
  if (on(/^PATCH \/guilds\/\d+\/members\/(\d+)$/) && "communication_disabled_until" in sent) {
    state.textContent = sent.communication_disabled_until ? "(timed out until " + sent.communication_disabled_until + ")" : "";
  } else if (on(/^DELETE \/guilds\/\d+\/members\/(\d+)$/)) state.textContent = "(kicked)";
  else if (on(/^PUT \/guilds\/\d+\/bans\/(\d+)$/)) state.textContent = "(banned)";
  else if (on(/^DELETE \/guilds\/\d+\/bans\/(\d+)$/)) state.textContent = "";
}

function acted(c) {
  const route = c.method + " " + c.route.split("?")[0];
  if (c.method === "GET" || route === "POST /users/@me/channels") return;
  const found = ACTIONS.find(([re]) => re.test(route));
  const m = found && route.match(found[0]);
  let said = found ? found[1](...m.slice(1)) : route;
  const made = c.body.answer && c.body.answer.name;
  if (made) said += " #" + made;
  const li = add("action");
  const refused = c.body.status >= 400;
  li.classList.toggle("refused", refused);
  const line = document.createElement("span");
  inline(line, "⚙ The bot " + said + (c.body.reason ? " — reason: " + c.body.reason : ""));
  li.append(line);
  if (refused) {
    const n = document.createElement("div");
    n.className = "note";
    n.textContent = "The platform refused it: " + ((c.body.answer && c.body.answer.message) || c.body.status);
    li.append(n);
    return;
  }
  shown(route, c.body.sent || {});
  const gone = route.startsWith("DELETE /channels/") && route.includes("/messages/") && !route.includes("/pins/")
    ? [c.route.split("/").pop()]
    : route.endsWith("/bulk-delete") ? (c.body.sent && c.body.sent.messages) || [] : [];
  for (const id of gone) for (const old of document.querySelectorAll("#messages li[data-id='" + CSS.escape(id) + "']")) old.remove();
}

// ── the inspector ──────────────────────────────────────────────────────

// One run as serve recorded it: what it was, how it ended and how long it
// took; each request (headers with secrets masked, the start of its
// response), the variables read and saved with their scope, the warnings.
function inspected(run) {
  state.runs = (state.runs || 0) + 1;
  const li = document.createElement("li");
  li.id = "run-" + state.runs;
  li.className = "run " + run.outcome;
  const details = document.createElement("details");
  const summary = document.createElement("summary");
  const what = { command: "/" + run.tree, handler: run.tree + " (handler)", autocomplete: run.tree + " (autocomplete)" }[run.tree_kind]
    || (run.kind === "timer" ? run.name + " (tick)" : run.name);
  summary.textContent = `${what} · ${run.outcome} · ${run.ms} ms`;
  details.append(summary);
  const line = (cls, s) => { const d = document.createElement("div"); d.className = cls; d.textContent = s; details.append(d); return d; };
  if (run.refused) line("refused", "Refused: " + run.refused);
  if (run.error) line("error", "Error: " + run.error);
  for (const e of run.events || []) {
    if (e.event === "request") request(details, e);
    else if (e.event === "read") line("variable", `read ${e.name} (${e.scope}) = ${JSON.stringify(e.value)}` + (e.stored ? "" : " (default)"));
    else if (e.event === "save") line("variable", `saved ${e.name} (${e.scope}) = ${JSON.stringify(e.value)}`);
    else if (e.event === "warning") line("warning", `${e.severity} ${e.code}` + (e.line ? ` at ${e.line}:${e.column}` : "") + `: ${e.message}` + (e.help ? `\n  help: ${e.help}` : ""));
    else if (e.event === "reply" || e.event === "form" || e.event === "choice") line("said", e.event);
  }
  if (run.left_out) line("said", `and ${run.left_out} more`);
  li.append(details);
  $("runs").append(li);
  if (run.interaction) {
    state.runOf.set(run.interaction, details);
    const message = state.byInteraction.get(run.interaction);
    if (message && message.dataset.interaction === run.interaction) linkRun(message);
  }
}

// A message's "Inspect" button: it opens the run of the interaction that
// drew it last (when its record has come).
function linkRun(li) {
  const old = li.querySelector(".inspect");
  if (old) old.remove();
  const details = li.dataset.interaction && state.runOf.get(li.dataset.interaction);
  if (!details) return;
  const b = document.createElement("button");
  b.type = "button"; b.className = "inspect secondary"; b.textContent = "Inspect";
  b.setAttribute("aria-label", "Inspect the run that drew this message");
  b.addEventListener("click", () => {
    details.open = true;
    details.scrollIntoView({ block: "nearest" });
    details.querySelector("summary").focus();
  });
  (li.querySelector(":scope > .note") || li).append(b);
}

function request(details, e) {
  const box = document.createElement("details");
  box.className = "request";
  const s = document.createElement("summary");
  const how = (e.offline ? " (its sample)" : "") + (e.cached ? " (kept in the store)" : "")
    + (e.retries ? ` after ${e.retries} ${e.retries === 1 ? "retry" : "retries"}` : "");
  s.textContent = `${e.block}: ${e.method} ${e.url} → ${e.status}${how}` + (e.duration_ms != null ? ` in ${e.duration_ms} ms` : e.offline ? " (offline: answered from its sample)" : "");
  const pre = document.createElement("pre");
  const headers = (h) => (h || []).map(([k, v]) => `${k}: ${v}`).join("\n");
  pre.textContent = [headers(e.request_headers), e.request_body || "", "", headers(e.response_headers), e.response_body || ""]
    .filter((p, i) => p || i === 2).join("\n");
  box.append(s, pre);
  details.append(box);
}

// ── the composer ───────────────────────────────────────────────────────

function leaves(command) {
  // A command, or each of its subcommands by its whole name.
  const subs = (command.options || []).filter((o) => o.type === 1 || o.type === 2);
  if (!subs.length) return [{ path: [command.name], options: command.options || [], description: command.description }];
  const out = [];
  for (const s of subs) {
    if (s.type === 1) out.push({ path: [command.name, s.name], options: s.options || [], description: s.description });
    else for (const t of s.options || []) out.push({ path: [command.name, s.name, t.name], options: t.options || [], description: t.description });
  }
  return out;
}

function chosen() {
  const name = $("command").value.replace(/^\//, "").trim();
  return state.commands.find((l) => l.path.join(" ") === name);
}

function showOptions() {
  const box = $("options");
  box.replaceChildren();
  const leaf = chosen();
  if (!leaf) return;
  for (const o of leaf.options) {
    const label = document.createElement("label");
    text(label, o.name + (o.required ? " *" : "") + " ");
    let field;
    if (o.choices) {
      field = document.createElement("select");
      for (const c of o.choices) { const opt = document.createElement("option"); opt.value = JSON.stringify(c.value); opt.textContent = c.name; field.append(opt); }
    } else {
      field = document.createElement("input");
      if (o.type === 4 || o.type === 10) field.inputMode = "decimal";
    }
    field.name = o.name;
    field.dataset.type = o.type;
    field.required = !!o.required;
    field.title = o.description || "";
    label.append(field);
    if (o.autocomplete) complete(field, leaf, label);
    box.append(label);
  }
}

// An option with `autocomplete`: each pause in typing asks the bot for
// choices (an interaction of type 4, as the platform's client sends one),
// offered in the field's list; the value sent is the choice's.
function complete(field, leaf, label) {
  const list = document.createElement("datalist");
  list.id = "choices-" + field.name;
  field.setAttribute("list", list.id);
  label.append(list);
  let timer;
  field.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const asked = { type: 4, data: data(leaf, field.name) };
      const result = await post(asked);
      list.replaceChildren();
      for (const c of (result.answer && result.answer.data && result.answer.data.choices) || []) {
        const o = document.createElement("option");
        o.value = c.value;
        o.label = c.name;
        o.textContent = c.name;
        list.append(o);
      }
    }, 250);
  });
}

// The command's data, as the platform sends it: its options, in its
// subcommand (and group) when it is one; `focused`, the option being typed
// for an autocomplete (sent as typed so far, a number's text too).
// A context-menu command's data, as the platform resolves what it was
// chosen on: the member playing, or the newest message shown (none: null).
function menuData(leaf) {
  if (leaf.menu === 2) {
    const m = member();
    return { type: 2, name: leaf.path[0], target_id: m.id, resolved: { users: { [m.id]: { id: m.id, username: m.name, global_name: m.name } } } };
  }
  const li = [...document.querySelectorAll("#messages li")].reverse().find((l) => l.payload && l.dataset.message);
  if (!li) return null;
  const id = li.dataset.message;
  const author = { id: state.bot, username: "bot", global_name: "bot" };
  return { type: 3, name: leaf.path[0], target_id: id, resolved: { messages: { [id]: { id, content: li.payload.content || "", author } } } };
}

function data(leaf, focused) {
  if (leaf.menu) return menuData(leaf);
  const given = [...$("options").querySelectorAll("[name]")].filter((f) => f.value !== "" || f.name === focused).map((f) => {
    const type = Number(f.dataset.type);
    let value = f.tagName === "SELECT" ? JSON.parse(f.value) : f.value;
    if (focused) return Object.assign({ type, name: f.name, value }, f.name === focused ? { focused: true } : {});
    if (type === 4 || type === 10) value = Number(value);
    if (type === 5) value = value === "true";
    return { type, name: f.name, value };
  });
  let options = given;
  if (leaf.path.length === 3) options = [{ type: 2, name: leaf.path[1], options: [{ type: 1, name: leaf.path[2], options: given }] }];
  else if (leaf.path.length === 2) options = [{ type: 1, name: leaf.path[1], options: given }];
  return { type: 1, name: leaf.path[0], options };
}

// The file as `play` read it last: its commands, and its diagnostics
// (a file with errors keeps the last good commands, as the bot keeps its
// plan). Read again every two seconds, so a save shows at once.
// The file's events, fired as the platform's Gateway would send them; the
// bot's replies come back as channel messages.
function events(kinds, timers, fields, webhooks) {
  const select = $("event-kind");
  const all = kinds.concat(timers.map((t) => "tick:" + t));
  const shown = [...select.options].map((o) => o.value).join();
  state.eventFields = fields;
  state.webhooks = webhooks;
  if (shown !== all.join()) {
    select.replaceChildren(...all.map((k) => {
      const o = document.createElement("option");
      o.value = k;
      o.textContent = k.startsWith("tick:") ? k.slice(5) + " (tick now)" : k;
      return o;
    }));
    eventFields();
  }
  $("events").hidden = all.length === 0;
}

// The values that matter to the chosen event, each editable (who fires it
// and where are the page's own): a message's text, a reaction's emoji, a
// role's id; a webhook's body, its sample to begin with.
const FIELD_DEFAULTS = { content: "hello", emoji: "👍", channel_name: "new-channel", role_name: "New role" };
function eventFields() {
  const kind = $("event-kind").value;
  const box = $("event-fields");
  const hook = (state.webhooks || []).find((h) => h.name === kind);
  const names = hook ? ["body"] : ((state.eventFields || {})[kind] || []);
  box.replaceChildren(...names.map((n) => {
    const label = document.createElement("label");
    label.textContent = n.replaceAll("_", " ") + " ";
    const input = document.createElement(n === "body" ? "textarea" : "input");
    input.name = n;
    input.value = n === "body" ? JSON.stringify(hook.sample, null, 2) : (FIELD_DEFAULTS[n] || "");
    if (n !== "body") input.size = 12;
    label.append(input);
    return label;
  }));
}

// A poll as the client shows it: its question, and its answers as votes
// the member casts (a `poll_vote_add` event, as the platform dispatches
// one); a click on a chosen answer takes the vote back. The counts are
// the page's own; an ended poll shows the platform's results.
function drawPoll(p, messageId, channel, flags) {
  const box = document.createElement("div");
  box.className = "poll";
  const q = document.createElement("div");
  q.className = "question"; q.textContent = (p.question && p.question.text) || "";
  box.append(q);
  const counts = {};
  for (const c of (p.results && p.results.answer_counts) || []) counts[c.id] = c.count;
  (p.answers || []).forEach((a, i) => {
    const id = a.answer_id || i + 1;
    const b = document.createElement("button");
    b.type = "button"; b.className = "answer"; b.dataset.answer = id;
    const count = document.createElement("span");
    count.className = "count"; count.textContent = String(counts[id] || 0);
    const media = a.poll_media || {};
    b.append(document.createTextNode((media.emoji && media.emoji.name ? media.emoji.name + " " : "") + (media.text || "") + " "), count);
    b.disabled = !!(p.results && p.results.is_finalized) || !messageId;
    b.addEventListener("click", async () => {
      const taking = b.classList.contains("chosen");
      if (!taking && !p.allow_multiselect) for (const o of box.querySelectorAll("button.chosen")) o.click();
      const m = member();
      const given = { user_id: m.id, user_name: m.name, server_id: $("server").value, channel_id: channel || $("channel-id").value, message_id: messageId, answer_id: String(id) };
      const kind = taking ? "poll_vote_remove" : "poll_vote_add";
      const r = await fetch("/play/event", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ kind, given }) });
      if (!r.ok) return;
      b.classList.toggle("chosen", !taking);
      count.textContent = String(Number(count.textContent) + (taking ? -1 : 1));
    });
    box.append(b);
  });
  const hours = p.duration ? p.duration + "h" : "";
  const n = document.createElement("div");
  n.className = "note"; n.textContent = [p.allow_multiselect ? "Select one or more answers" : "Select one answer", hours && "open " + hours, p.results && p.results.is_finalized ? "ended" : ""].filter(Boolean).join(" · ");
  box.append(n);
  return box;
}

async function say(content) {
  said(content);
  $("command").value = "";
  const m = member();
  const given = { user_id: m.id, user_name: m.name, server_id: $("server").value, channel_id: $("channel-id").value, content };
  const r = await fetch("/play/event", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ kind: "message_create", given }) });
  if (!r.ok) add("message").textContent = "Not sent: " + ((await r.json()).error || r.status);
}

async function fire(e) {
  e.preventDefault();
  const kind = $("event-kind").value;
  const m = member();
  const given = { user_id: m.id, user_name: m.name, server_id: $("server").value, channel_id: $("channel-id").value };
  for (const f of $("event-fields").querySelectorAll("[name]")) if (f.value !== "") given[f.name] = f.value;
  const li = add("message");
  li.textContent = kind.startsWith("tick:") ? `${kind.slice(5)} ticked` : `${m.name} fired ${kind}`;
  const r = await fetch("/play/event", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ kind, given }) });
  if (!r.ok) li.textContent += ": " + ((await r.json()).error || r.status);
}

// The servers the bot is in: choosing one plays in its #general.
function servers(list) {
  const select = $("server");
  if (select.options.length === list.length) return;
  select.replaceChildren(...list.map((g) => { const o = document.createElement("option"); o.value = g.id; o.textContent = g.name; o.dataset.channel = g.channel; return o; }));
  select.addEventListener("change", () => { $("channel-id").value = select.selectedOptions[0].dataset.channel; });
}

async function file() {
  const f = await (await fetch("/play/file")).json();
  servers(f.servers || []);
  events(f.events || [], f.timers || [], f.fields || {}, f.webhooks || []);
  $("file").textContent = f.name || "";
  // A context-menu command is chosen by its name too: on a user's (the
  // member playing) or a message's (the newest shown), as the client
  // opens it from their menu.
  state.commands = (f.commands || []).flatMap((c) => (c.type === 1 ? leaves(c) : [{ path: [c.name], options: [], menu: c.type }]));
  state.bot = f.bot || "";
  state.name = f.name || "";
  state.names = f.names || {};
  picker.refresh();
  // (What serve refused is shown too: a file can check clean and still be
  // refused, a secret without a value.)
  const shown = (f.diagnostics || []).concat(f.refused || []).map((d) =>
    `${d.severity} ${d.code} at ${d.file ? d.file + ":" : ""}${d.line}:${d.column}: ${d.message}` + (d.help ? `\n  help: ${d.help}` : ""));
  $("diagnostics").textContent = shown.join("\n");
}

// The work waiting to run, and the bot's clock (which the page can move
// forward, so that a reminder comes now).
async function waiting() {
  const w = await (await fetch("/play/waiting")).json();
  $("clock-now").textContent = w.now || "";
  if (typeof w.now_ms === "number") state.clockOffset = w.now_ms - Date.now();
  $("waiting").replaceChildren(...(w.waiting || []).map((p) => {
    const li = document.createElement("li");
    li.textContent = `${p.due}  ${p.tree}` + (p.key ? `  key "${p.key}"` : "") + (p.note ? `  ${p.note}` : "");
    return li;
  }));
}

async function moveClock(e) {
  e.preventDefault();
  const by = $("clock-by").value;
  const r = await fetch("/play/clock", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ forward: by }) });
  const answer = await r.json();
  const li = add("message");
  li.textContent = r.ok ? `The clock moved forward by ${by}: ${answer.now}` : `The clock did not move: ${answer.error || r.status}`;
  await waiting();
}

// What came before the page opened is not its conversation: where it
// starts is known before a command can be sent (else a quick command's
// edit could be taken for one of those).
async function opened() {
  for (;;) {
    try { state.after = (await (await fetch("/play/calls?after=now")).json()).next; return; }
    catch (e) { await new Promise((ok) => setTimeout(ok, 1000)); }
  }
}

// The slash-command picker, as the client's: typing `/` lists the
// bot's commands (a context-menu command by its menu) with their
// descriptions and options; arrows move, Tab or a click takes one, Enter
// takes one or, once taken, sends it.
const picker = {
  active: 0,
  shown: [],
  list() { return $("picker"); },
  open() { return !this.list().hidden; },
  close() { this.list().hidden = true; $("command").setAttribute("aria-expanded", "false"); },
  refresh() { if (this.open()) this.show(); },
  show() {
    const typed = $("command").value;
    const box = this.list();
    if (!typed.startsWith("/") || chosen()) { this.close(); return; }
    const want = typed.slice(1).toLowerCase();
    this.shown = state.commands.filter((l) => l.path.join(" ").toLowerCase().includes(want));
    if (!this.shown.length) { this.close(); return; }
    this.active = Math.min(this.active, this.shown.length - 1);
    box.replaceChildren(...this.shown.map((l, k) => this.entry(l, k)));
    box.hidden = false;
    $("command").setAttribute("aria-expanded", "true");
  },
  entry(l, k) {
    const li = document.createElement("li");
    li.id = "pick-" + k;
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", String(k === this.active));
    const name = document.createElement("span");
    name.className = "pick-name";
    name.textContent = "/" + l.path.join(" ");
    li.append(name);
    for (const o of l.options) {
      const chip = document.createElement("span");
      chip.className = "pick-option" + (o.required ? " required" : "");
      chip.textContent = o.name;
      li.append(chip);
    }
    const about = document.createElement("span");
    about.className = "pick-description";
    about.textContent = l.menu ? (l.menu === 2 ? "Apps menu on a user: you" : "Apps menu on a message: the newest") : l.description || "";
    const app = document.createElement("span");
    app.className = "pick-app";
    app.textContent = bot().name;
    li.append(about, app);
    li.addEventListener("mousedown", (e) => { e.preventDefault(); this.take(k); });
    return li;
  },
  take(k) {
    const l = this.shown[k];
    if (!l) return;
    $("command").value = "/" + l.path.join(" ");
    this.close();
    showOptions();
    const first = $("options").querySelector("[name]");
    (first || $("command")).focus();
  },
  key(e) {
    if (!this.open()) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const n = this.shown.length;
      this.active = (this.active + (e.key === "ArrowDown" ? 1 : n - 1)) % n;
      this.show();
      $("command").setAttribute("aria-activedescendant", "pick-" + this.active);
    } else if (e.key === "Tab" || (e.key === "Enter" && !chosen())) {
      e.preventDefault();
      this.take(this.active);
    } else if (e.key === "Escape") {
      this.close();
    }
  },
};

// The client's dark theme unless light was chosen (kept in this browser).
function theme() {
  const saved = localStorage.getItem("blkc-play-theme") === "light" ? "light" : "dark";
  const set = (t) => {
    document.documentElement.dataset.theme = t;
    $("theme").textContent = t === "dark" ? "☀ Light" : "☾ Dark";
    $("theme").setAttribute("aria-label", t === "dark" ? "Use the light theme" : "Use the dark theme");
  };
  set(saved);
  $("theme").addEventListener("click", () => {
    const next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
    localStorage.setItem("blkc-play-theme", next);
    set(next);
  });
}

async function start() {
  theme();
  followNewest();
  await opened();
  await file();
  await waiting().catch(() => {});
  setInterval(() => { file().catch(() => {}); waiting().catch(() => {}); }, 2000);
  $("clock").addEventListener("submit", moveClock);
  $("command").addEventListener("input", () => { picker.active = 0; picker.show(); showOptions(); });
  $("command").addEventListener("keydown", (e) => picker.key(e));
  $("command").addEventListener("blur", () => picker.close());
  $("user-name").addEventListener("input", () => { $("who-name").textContent = $("user-name").value; });
  $("events").addEventListener("submit", fire);
  $("event-kind").addEventListener("change", eventFields);
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const typed = $("command").value;
    // Text that is no command is the member's message in the channel (an
    // `await` of theirs takes it; `message_create` events run on it).
    if (!typed.trim().startsWith("/") && !chosen()) { say(typed); return; }
    const leaf = chosen();
    if (!leaf) { add("message").textContent = "No command " + $("command").value; return; }
    const given = [...$("options").querySelectorAll("[name]")].filter((f) => f.value !== "")
      .map((f) => `${f.name}: ${f.tagName === "SELECT" ? f.selectedOptions[0].textContent : f.value}`);
    const asked = data(leaf);
    if (!asked) { add("message").textContent = "No message to use " + $("command").value + " on: send one first"; return; }
    picker.close();
    if (follow.toEnd) follow.toEnd();
    send({ type: 2, data: asked, used: ["/" + leaf.path.join(" ")].concat(given).join("  ") });
  });
  poll();
}

start();
