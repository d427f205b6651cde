// Discord's own example stack (express + discord-interactions, as in
// discord/discord-example-app), answering the same signed interactions with
// the same replies as the .blk file of benches/serve.rs. Started by that
// benchmark: node server.js PORT API_BASE, with PUBLIC_KEY set.
//
// A click on a button is examples/poll.blk's vote, as an express author
// would write it: a per-user cooldown of 10 s in memory, the channel's count
// persisted with better-sqlite3 (one statement a click; WAL and
// synchronous=NORMAL, as blkc's store), the message updated with the counts.
// The database is STORE (a path), made when first needed.
import express from 'express';
import { InteractionType, InteractionResponseType, verifyKeyMiddleware } from 'discord-interactions';

const port = Number(process.argv[2]);
const api = process.argv[3];
const app = express();

let vote = null;
async function votes() {
  if (vote === null) {
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(process.env.STORE);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE IF NOT EXISTS counts (channel TEXT PRIMARY KEY, coffee INTEGER NOT NULL, tea INTEGER NOT NULL)');
    vote = db.prepare(`INSERT INTO counts (channel, coffee, tea) VALUES (?, ?, ?)
      ON CONFLICT(channel) DO UPDATE SET coffee = coffee + excluded.coffee, tea = tea + excluded.tea
      RETURNING coffee, tea`);
  }
  return vote;
}
const cooling = new Map();

app.post('/interactions', verifyKeyMiddleware(process.env.PUBLIC_KEY), async (req, res) => {
  const { type, data } = req.body;
  if (type === InteractionType.PING) {
    return res.send({ type: InteractionResponseType.PONG });
  }
  if (type === InteractionType.MESSAGE_COMPONENT) {
    const user = req.body.member?.user ?? req.body.user;
    const now = Date.now();
    const until = cooling.get(user.id) ?? 0;
    if (until > now) {
      return res.send({
        type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE,
        data: { content: `You can use this again in ${Math.ceil((until - now) / 1000)} seconds.`, flags: 64 },
      });
    }
    cooling.set(user.id, now + 10_000);
    const coffee = data.custom_id.endsWith('coffee') ? 1 : 0;
    const counts = (await votes()).get(req.body.channel_id, coffee, 1 - coffee);
    return res.send({
      type: InteractionResponseType.UPDATE_MESSAGE,
      data: {
        content: `**Coffee or tea?** ☕ ${counts.coffee} · 🍵 ${counts.tea} (last vote by ${user.username})`,
        allowed_mentions: { parse: [] },
      },
    });
  }
  const word = (data.options || []).find((o) => o.name === 'word')?.value ?? '';
  const answer = (content) =>
    res.send({
      type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE,
      data: { content, allowed_mentions: { parse: [] } },
    });
  if (data.name === 'fast') {
    return answer(`pong ${word}`);
  }
  if (data.name === 'lookup') {
    const response = await fetch(`${api}/item/${encodeURIComponent(word)}`);
    const item = await response.json();
    return answer(`${word}: ${item.name}`);
  }
  return res.status(400).send({ error: 'unknown command' });
});

app.listen(port, '127.0.0.1', () => console.log(`listening ${port}`));
