// Drives `blkc lsp` with the JSON-RPC and protocol libraries VS Code's
// language client is built on (vscode-jsonrpc, vscode-languageserver-
// protocol), the way VS Code does: initialize, open, hover, completion,
// definition, code action, formatting, change, shutdown, exit.
//
// node lsp-client.js BLKC FOLDER   (FOLDER holds bot.blk and its samples)
// Prints a JSON summary on standard output; exits 1 on any failure.
"use strict";
const assert = require("assert");
const fs = require("fs");
const path = require("path");
const { spawn } = require("child_process");
const rpc = require("vscode-jsonrpc/node");
const p = require("vscode-languageserver-protocol");

const [blkc, folder] = process.argv.slice(2);
const file = path.join(folder, "bot.blk");
const uri = "file://" + file.split(path.sep).map(encodeURIComponent).join("/");
const text = fs.readFileSync(file, "utf8");

function at(needle, shift) {
  const offset = text.indexOf(needle) + shift;
  const before = text.slice(0, offset);
  const line = before.split("\n").length - 1;
  return { line, character: offset - (before.lastIndexOf("\n") + 1) };
}

async function main() {
  const server = spawn(blkc, ["lsp"], { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => server.on("exit", resolve));
  const connection = p.createProtocolConnection(
    new rpc.StreamMessageReader(server.stdout),
    new rpc.StreamMessageWriter(server.stdin)
  );
  const published = [];
  let notify;
  connection.onNotification(p.PublishDiagnosticsNotification.type, (params) => {
    published.push(params);
    if (notify) notify();
  });
  const nextDiagnostics = () => new Promise((resolve) => { notify = resolve; });
  connection.listen();

  const init = await connection.sendRequest(p.InitializeRequest.type, {
    processId: process.pid,
    rootUri: null,
    workspaceFolders: null,
    capabilities: {
      textDocument: {
        hover: { contentFormat: ["markdown", "plaintext"] },
        completion: { completionItem: { snippetSupport: false } },
        publishDiagnostics: { relatedInformation: true },
        codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ["quickfix"] } } },
      },
      workspace: { didChangeWatchedFiles: { dynamicRegistration: false } },
    },
  });
  assert.strictEqual(init.serverInfo.name, "blkc");
  assert.ok(init.capabilities.hoverProvider && init.capabilities.documentFormattingProvider);
  await connection.sendNotification(p.InitializedNotification.type, {});

  let waiting = nextDiagnostics();
  await connection.sendNotification(p.DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "blk", version: 1, text },
  });
  await waiting;
  const opened = published[published.length - 1];
  const errors = opened.diagnostics.filter((d) => d.severity === p.DiagnosticSeverity.Error);
  assert.deepStrictEqual(errors.map((d) => d.code), ["B103"]);

  const hover = await connection.sendRequest(p.HoverRequest.type, {
    textDocument: { uri }, position: at("response.main.temp", 14),
  });
  assert.ok(hover.contents.value.includes("21.4"), hover.contents.value);

  const completion = await connection.sendRequest(p.CompletionRequest.type, {
    textDocument: { uri }, position: at("response.main.temp", 14),
  });
  const labels = (Array.isArray(completion) ? completion : completion.items).map((i) => i.label);
  assert.deepStrictEqual(labels.sort(), ["humidity", "temp"]);

  const definition = await connection.sendRequest(p.DefinitionRequest.type, {
    textDocument: { uri }, position: at("api_forecast[response.main", 6),
  });
  assert.strictEqual(definition.range.start.line, at("api forecast", 0).line);

  const actions = await connection.sendRequest(p.CodeActionRequest.type, {
    textDocument: { uri }, range: errors[0].range, context: { diagnostics: errors },
  });
  assert.strictEqual(actions[0].edit.changes[uri][0].newText, "GET");

  // Apply the fix as VS Code would, and send the new text.
  const fixed = text.replace("method get", "method GET");
  waiting = nextDiagnostics();
  await connection.sendNotification(p.DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 2 }, contentChanges: [{ text: fixed }],
  });
  await waiting;
  const changed = published[published.length - 1];
  assert.strictEqual(changed.version, 2);
  assert.deepStrictEqual(changed.diagnostics.filter((d) => d.severity === 1), []);

  const formatting = await connection.sendRequest(p.DocumentFormattingRequest.type, {
    textDocument: { uri }, options: { tabSize: 4, insertSpaces: true },
  });

  await connection.sendRequest(p.ShutdownRequest.type);
  await connection.sendNotification(p.ExitNotification.type);
  const code = await exited;
  assert.strictEqual(code, 0);
  process.stdout.write(JSON.stringify({
    opened: opened.diagnostics.map((d) => d.code),
    hover: hover.contents.value.split("\n")[0],
    completion: labels,
    quickfix: actions[0].title,
    formatting: formatting.length,
    exit: code,
  }) + "\n");
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
