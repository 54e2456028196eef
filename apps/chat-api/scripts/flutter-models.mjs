#!/usr/bin/env node
// Transcribes the facts Zulip's mobile app (zulip-flutter) requires of the
// JSON it parses into test/fixtures/zulip-flutter/models.json: for each model
// of lib/api/ with generated parsing code (`*.g.dart`), its JSON keys, their
// JSON types, which are required (parsed with a non-nullable cast and no
// default), the values of its enums; and, from `Event.fromJson`, which model
// parses each event type and op. Only these facts are kept, as JSON Schema, no
// code. Run from apps/chat-api with a checkout of zulip-flutter:
//
//   node scripts/flutter-models.mjs <zulip-flutter checkout> <commit>
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [repo, commit] = process.argv.slice(2);
if (repo === undefined || commit === undefined) {
  console.error("usage: node scripts/flutter-models.mjs <zulip-flutter checkout> <commit>");
  process.exit(2);
}
const git = (...args) => execFileSync("git", ["-C", repo, ...args], { encoding: "utf8" });
const files = git("ls-tree", "-r", "--name-only", commit, "lib/api")
  .split("\n")
  .filter((f) => f.endsWith(".dart"));
const read = (file) => git("show", `${commit}:${file}`);
const generated = files
  .filter((f) => f.endsWith(".g.dart"))
  .map(read)
  .join("\n");

/** Enum maps: `const _$NameEnumMap = { Name.a: 'x', Name.b: 2 };`. */
const enums = {};
for (const m of generated.matchAll(/const _\$(\w+)EnumMap = \{([^}]*)\};/g)) {
  enums[m[1]] = [...m[2].matchAll(/:\s*('([^']*)'|-?\d+)\s*(?:,|$)/g)].map((v) =>
    v[2] !== undefined ? v[2] : Number(v[1]),
  );
}

/** The text of a call's arguments from `(` at `open` to its matching `)`. */
function balanced(text, open) {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") {
      depth--;
      if (depth === 0) return text.slice(open + 1, i);
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      i = end;
    }
  }
  throw new Error(`unbalanced at ${open}`);
}

/** A constructor call's arguments: `name: expression` pairs, or positional expressions. */
function namedArguments(args) {
  const out = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= args.length; i++) {
    const c = args[i];
    if (c === "'") {
      i = args.indexOf("'", i + 1);
      continue;
    }
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    if ((c === "," && depth === 0) || i === args.length) {
      const part = args.slice(start, i).trim();
      start = i + 1;
      const named = /^(\w+):\s*([\s\S]*)$/.exec(part);
      if (named !== null) out.push([named[1], named[2]]);
      else if (part !== "") out.push(["", part]);
    }
  }
  return out;
}

const ANY = {};

/** The schema of an element expression (`e as String`, `X.fromJson(e as ...)`...). */
function elementSchema(expr) {
  const model = /^(\w+)\.fromJson\(\s*e as Map<String, dynamic>\s*\)$/.exec(expr);
  if (model !== null) return { $ref: `#/$defs/${model[1]}` };
  const enumCall = /^\$enumDecode\(\s*_\$(\w+)EnumMap,\s*e\b/.exec(expr);
  if (enumCall !== null) return expr.includes("unknownValue") ? ANY : { enum: enums[enumCall[1]] };
  if (/^e as String$/.test(expr)) return { type: "string" };
  if (/^\(e as num\)\.toInt\(\)$/.test(expr)) return { type: "integer" };
  if (/^e as bool$/.test(expr)) return { type: "boolean" };
  return ANY;
}

/** The top-level comma-separated parts of a call's arguments. */
const parts = (args) => {
  const out = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= args.length; i++) {
    const c = args[i];
    if (c === "(" || c === "[" || c === "{" || c === "<") depth++;
    else if (c === ")" || c === "]" || c === "}" || c === ">") depth--;
    if ((c === "," && depth === 0) || i === args.length) {
      const part = args.slice(start, i).trim();
      if (part !== "") out.push(part);
      start = i + 1;
    }
  }
  return out;
};

/** The element of `.map((e) => ELEMENT)` in `text`, or of `MapEntry(key, ELEMENT)`. */
function mapped(text) {
  const entry = text.indexOf("MapEntry(");
  if (entry >= 0) return parts(balanced(text, entry + "MapEntry".length))[1];
  const map = text.indexOf(".map(");
  if (map < 0) return undefined;
  const body = balanced(text, map + ".map".length).trim();
  return /^\(e\)\s*=>\s*([\s\S]+?),?$/.exec(body)?.[1]?.trim();
}

/** A field's JSON key, schema and whether it is required; undefined when not read from `json[...]`. */
function field(expr) {
  const keyMatch = /json\['([^']+)'\]/.exec(expr);
  if (keyMatch === null) return undefined;
  const key = keyMatch[1];
  const access = `json['${key}']`;
  const after = expr.slice(expr.indexOf(access) + access.length);
  const cast = /^\s*as\s+([\w<>, ]*[\w>])(\?)?[\s),;.]/.exec(`${after} `);
  // A value handed uncast to a hand-written helper (`X._fooFromJson(json['k'])`):
  // the helper decides, and most accept null; those that do not are written out below.
  const byHelper =
    cast === null &&
    !new RegExp(`(\\$enumDecode|\\.fromJson\\(\\s*json\\['${key}'\\] as)`).test(expr);
  const optional =
    byHelper ||
    cast?.[2] === "?" ||
    /\?\?/.test(expr) ||
    expr.includes(`${access} == null`) ||
    expr.includes("$enumDecodeNullable") ||
    /JsonConverterFromJson|JsonNullable/.test(expr);
  let schema = ANY;
  const type = cast?.[1];
  const enumCall = new RegExp(
    `\\$enumDecode(?:Nullable)?\\(\\s*_\\$(\\w+)EnumMap,\\s*json\\['${key}'\\]`,
  ).exec(expr);
  const modelCall = new RegExp(
    `^(\\w+)\\.fromJson\\(\\s*json\\['${key}'\\] as Map<String, dynamic>`,
  ).exec(expr);
  if (enumCall !== null) {
    schema = expr.includes("unknownValue") ? ANY : { enum: enums[enumCall[1]] ?? [] };
  } else if (modelCall !== null) {
    schema = { $ref: `#/$defs/${modelCall[1]}` };
  } else if (type === "String") {
    schema = { type: "string" };
  } else if (type === "num") {
    schema = after.includes(".toInt()") ? { type: "integer" } : { type: "number" };
  } else if (type === "bool") {
    schema = { type: "boolean" };
  } else if (type === "List<dynamic>") {
    const element = mapped(after);
    schema = { type: "array", items: element === undefined ? ANY : elementSchema(element) };
  } else if (type === "Map<String, dynamic>") {
    const value = mapped(after);
    schema = {
      type: "object",
      additionalProperties: value === undefined ? ANY : elementSchema(value),
    };
  }
  if (optional && schema !== ANY) {
    // Absent or null: json_serializable reads both as null.
    schema = { anyOf: [schema, { type: "null" }] };
  }
  return { key, schema, required: !optional };
}

const defs = {};
for (const m of generated.matchAll(
  /^(\w+) _\$(\w+)FromJson\(\s*Map<String, dynamic> json,?\s*\)\s*(=>|\{)/gm,
)) {
  const [, , name, form] = m;
  const from = m.index + m[0].length;
  let body = generated.slice(from);
  const checks = {};
  if (form === "{") {
    body = body.slice(0, body.indexOf("\n}"));
    // `$checkKeys`: keys that must be present, and must not be null.
    for (const k of ["requiredKeys", "disallowNullValues"]) {
      const list = new RegExp(`${k}: const \\[([^\\]]*)\\]`).exec(body);
      checks[k] = list === null ? [] : [...list[1].matchAll(/'([^']+)'/g)].map((x) => x[1]);
    }
  }
  const call = new RegExp(`(?:return\\s+)?${name}\\(`).exec(body);
  if (call === null) throw new Error(`no constructor call for ${name}`);
  const args = balanced(body, call.index + call[0].length - 1);
  const properties = {};
  const required = new Set();
  for (const [, expr] of namedArguments(args)) {
    const f = field(expr);
    if (f === undefined || f.key.includes(".")) continue;
    let { schema } = f;
    if (checks.disallowNullValues?.includes(f.key) && schema.anyOf !== undefined)
      schema = schema.anyOf[0];
    properties[f.key] = schema;
    if (f.required || checks.requiredKeys?.includes(f.key)) required.add(f.key);
  }
  defs[name] = { type: "object", properties, required: [...required].sort() };
}

/**
 * What the app's hand-written parsing requires, read from its code
 * (lib/api/model/model.dart and events.dart): a message's model by its
 * `type`; its flags and reactions (lists its own helpers read); a channel
 * message's conversation, read from the message itself; a direct message's
 * `display_recipient`, the people's ids; a `message` event's message, with
 * the event's `flags` put in it before parsing.
 */
const listOf = (items) => ({ type: "array", items });
for (const name of ["StreamMessage", "DmMessage"]) {
  Object.assign(defs[name].properties, {
    flags: listOf({ type: "string" }),
    reactions: listOf({ $ref: "#/$defs/Reaction" }),
    submessages: { anyOf: [listOf({ type: "object" }), { type: "null" }] },
  });
  defs[name].required = [...new Set([...defs[name].required, "flags", "reactions"])].sort();
}
defs.DmMessage.required = [...new Set([...defs.DmMessage.required, "display_recipient"])].sort();
defs.DmMessage.properties.display_recipient = listOf({
  type: "object",
  properties: { id: { type: "integer" } },
  required: ["id"],
});
defs.StreamMessage = { allOf: [defs.StreamMessage, { $ref: "#/$defs/StreamConversation" }] };
defs.Message = {
  type: "object",
  required: ["type"],
  oneOf: [
    { properties: { type: { const: "stream" } }, allOf: [{ $ref: "#/$defs/StreamMessage" }] },
    { properties: { type: { const: "private" } }, allOf: [{ $ref: "#/$defs/DmMessage" }] },
  ],
};
defs.MessageEvent.properties.message = { type: "object" };
defs.MessageEvent.required.push("flags", "message");
defs.MessageEvent.properties.flags = listOf({ type: "string" });
defs.GetMessagesResult.properties.messages = listOf({ $ref: "#/$defs/Message" });

/** Models the app parses by hand (no generated code): nothing is checked of them here. */
const handWritten = new Set();
const withRefs = JSON.stringify(defs);
for (const m of withRefs.matchAll(/"#\/\$defs\/(\w+)"/g)) {
  if (defs[m[1]] === undefined) handWritten.add(m[1]);
}
for (const name of handWritten) defs[name] = {};

/** `Event.fromJson`: which model parses each `type` (and `op`). */
const eventsSource = read("lib/api/model/events.dart");
const dispatch = eventsSource.slice(eventsSource.indexOf("factory Event.fromJson"));
const events = {};
let type;
for (const line of dispatch.split("\n")) {
  const typeCase = /^ {6}case '([^']+)':(?: return (\w+)\.fromJson)?/.exec(line);
  if (typeCase !== null) {
    type = typeCase[1];
    if (typeCase[2] !== undefined) events[type] = typeCase[2];
    continue;
  }
  const opCase = /^ {10}case '([^']+)': return (\w+)\.fromJson/.exec(line);
  if (opCase !== null && type !== undefined) events[`${type}/${opCase[1]}`] = opCase[2];
  if (/^ {2}\}/.test(line)) break;
}
for (const model of Object.values(events)) if (defs[model] === undefined) defs[model] = {};

const out = join("test", "fixtures", "zulip-flutter");
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, "models.json"),
  `${JSON.stringify(
    {
      source: `zulip/zulip-flutter ${commit}, lib/api (Apache-2.0); transcribed by scripts/flutter-models.mjs`,
      $defs: Object.fromEntries(Object.entries(defs).sort(([a], [b]) => a.localeCompare(b))),
      events: Object.fromEntries(Object.entries(events).sort(([a], [b]) => a.localeCompare(b))),
      unchecked: [
        ...handWritten,
        ...Object.values(events).filter((m) => Object.keys(defs[m]).length === 0),
      ]
        .filter((v, i, all) => all.indexOf(v) === i)
        .sort(),
    },
    null,
    1,
  )}\n`,
);
console.log(
  `${Object.keys(defs).length} models, ${Object.keys(events).length} event types and ops, ${handWritten.size} parsed by hand`,
);
