// The client: starts `blkc lsp` for .blk files and their tests (.blkt). Every feature (diagnostics,
// hover, completion, quick fixes, formatting, …) comes from the server.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("blkc").get("path") || "blkc";
  const serverOptions = { command, args: ["lsp"] };
  const clientOptions = {
    documentSelector: [
      { scheme: "file", language: "blk" },
      { scheme: "file", language: "blkt" },
    ],
    // Samples live in JSON files beside the .blk files: the server reads
    // them again when they change (after `blkc test --save`).
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.json") },
  };
  client = new LanguageClient("blkc", "blkc", serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("blkc.path")) {
        vscode.window.showInformationMessage("blkc: reload the window to start the new `blkc.path`.");
      }
    })
  );
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
