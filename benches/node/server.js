// Discord's own example stack (express + discord-interactions, as in
// discord/discord-example-app), answering the same signed interactions with
// the same replies as the .blk file of benches/serve.rs. Started by that
// benchmark: node server.js PORT API_BASE, with PUBLIC_KEY set.
import express from 'express';
import { InteractionType, InteractionResponseType, verifyKeyMiddleware } from 'discord-interactions';

const port = Number(process.argv[2]);
const api = process.argv[3];
const app = express();

app.post('/interactions', verifyKeyMiddleware(process.env.PUBLIC_KEY), async (req, res) => {
  const { type, data } = req.body;
  if (type === InteractionType.PING) {
    return res.send({ type: InteractionResponseType.PONG });
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
