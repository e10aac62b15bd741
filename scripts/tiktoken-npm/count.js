// Counts the documents of a corpusgen corpus (JSON Lines on stdin) with
// OpenAI's tiktoken from npm (the Rust core compiled to WASM).
//
//   node count.js ids ENCODING     one line per document: the count, then the token ids
//   node count.js bench ENCODING   MB/s of encode_ordinary on one core
//
// encode_ordinary treats special tokens such as <|endoftext|> as text, as
// sessctl's counter does.
"use strict";
const fs = require("fs");
const path = require("path");
const { get_encoding } = require("tiktoken");

const [mode, encName] = process.argv.slice(2);
if (!["ids", "bench"].includes(mode) || !encName) {
  process.stderr.write("usage: node count.js ids|bench ENCODING < corpus.jsonl\n");
  process.exit(2);
}
const docs = fs
  .readFileSync(0, "utf8")
  .split("\n")
  .filter((l) => l !== "")
  .map((l) => JSON.parse(l).text);
const enc = get_encoding(encName);

if (mode === "ids") {
  const out = [];
  for (const d of docs) {
    const ids = enc.encode_ordinary(d);
    out.push(ids.length + (ids.length ? " " + Array.from(ids).join(" ") : ""));
  }
  process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
} else {
  const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d, "utf8"), 0);
  // Warm up on about a megabyte, then time one full pass.
  for (let i = 0, n = 0; i < docs.length && n < 1e6; i++) {
    enc.encode_ordinary(docs[i]);
    n += docs[i].length;
  }
  const start = process.hrtime.bigint();
  for (const d of docs) enc.encode_ordinary(d);
  const secs = Number(process.hrtime.bigint() - start) / 1e9;
  const pad = (s, n) => s + " ".repeat(Math.max(0, n - s.length));
  process.stdout.write(
    `${pad(encName, 12)} ${pad("npm tiktoken " + tiktokenVersion(), 26)}   1 core(s) ${(bytes / 1e6 / secs).toFixed(2).padStart(8)} MB/s\n`
  );
}
enc.free();

// The package's exports hide its package.json from require.
function tiktokenVersion() {
  const dir = path.dirname(require.resolve("tiktoken"));
  return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
}
