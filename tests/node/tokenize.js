// Tokenises files with the extension's TextMate grammar through
// vscode-textmate and vscode-oniguruma, the engine VS Code itself uses, and
// prints each token with its scopes (the grammar's root scope left out).
//
// node tokenize.js GRAMMAR FILE…
"use strict";
const fs = require("fs");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

async function main() {
  const [grammarPath, ...files] = process.argv.slice(2);
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm")).buffer;
  await oniguruma.loadWASM(wasm);
  const root = JSON.parse(fs.readFileSync(grammarPath, "utf8")).scopeName;
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) =>
      scopeName === root ? vsctm.parseRawGrammar(fs.readFileSync(grammarPath, "utf8"), grammarPath) : null,
  });
  const grammar = await registry.loadGrammar(root);
  let out = "";
  for (const file of files) {
    let stack = vsctm.INITIAL;
    const lines = fs.readFileSync(file, "utf8").split("\n");
    lines.forEach((line, n) => {
      const result = grammar.tokenizeLine(line, stack);
      for (const t of result.tokens) {
        const text = line.slice(t.startIndex, t.endIndex);
        if (text.trim() === "") continue;
        out += `${n + 1}: ${JSON.stringify(text)} ${t.scopes.slice(1).join(" ")}\n`;
      }
      stack = result.ruleStack;
    });
  }
  process.stdout.write(out);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
