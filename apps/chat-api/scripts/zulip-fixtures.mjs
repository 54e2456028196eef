// Regenerates test/fixtures/zulip-openapi/*.json from Zulip's OpenAPI excerpts:
//
//   node scripts/zulip-fixtures.mjs <folder holding zulip-openapi-{subset,companions,session}.yaml
//                                     and zulip-openapi-10.2-full.yaml>
//
// Keeps what a validator reads (paths, parameters, request bodies, responses,
// schemas) and drops Zulip's prose (descriptions, summaries, examples, the
// documentation's x-* keys). The tests read only the fixtures, never the source.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

/** Each fixture and the document it is made from. */
const FILES = {
  subset: "zulip-openapi-subset.yaml",
  companions: "zulip-openapi-companions.yaml",
  session: "zulip-openapi-session.yaml",
  full: "zulip-openapi-10.2-full.yaml",
};
/** Keys of prose or documentation tooling, dropped wherever they are keywords (not property names). */
const PROSE = new Set([
  "description",
  "summary",
  "example",
  "examples",
  "x-curl-examples-parameters",
  "x-parameter-description",
  "x-python-examples-extra-imports",
  "x-response-description",
]);
/** Maps whose keys are names chosen by the document, never keywords. */
const NAMED_MAPS = new Set([
  "properties",
  "paths",
  "schemas",
  "parameters",
  "responses",
  "content",
  "encoding",
  "securitySchemes",
  "requestBodies",
  "variables",
]);

function strip(node, parentKey) {
  if (Array.isArray(node)) return node.map((item) => strip(item, undefined));
  if (node === null || typeof node !== "object") return node;
  const named = NAMED_MAPS.has(parentKey) && !Array.isArray(node);
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (!named && PROSE.has(key)) continue;
    out[key] = strip(value, named ? undefined : key);
  }
  return out;
}

const source = process.argv[2];
if (source === undefined) {
  console.error("usage: node scripts/zulip-fixtures.mjs <folder of zulip-openapi-*.yaml>");
  process.exit(2);
}
const target = join(import.meta.dirname, "../test/fixtures/zulip-openapi");
for (const [name, file] of Object.entries(FILES)) {
  const document = parse(readFileSync(join(source, file), "utf8"));
  const { openapi, paths, components } = document;
  const kept = strip({ openapi, paths, components }, undefined);
  writeFileSync(join(target, `${name}.json`), `${JSON.stringify(kept, null, 1)}\n`);
  console.log(`${name}.json: ${Object.keys(paths).length} paths`);
}
