import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv from "ajv";
import { parse } from "yaml";

type Json = Record<string, unknown>;

const REFERENCE = join(__dirname, "../../../../../shared/reference");

function load(file: string): Json {
  return parse(readFileSync(join(REFERENCE, file), "utf8")) as Json;
}

/** Inlines `$ref`s, and renames Zulip's `zulip_*` fields to this server's `chat_*`. */
function normalize(node: unknown, document: Json, seen: readonly string[] = []): unknown {
  if (Array.isArray(node)) return node.map((item) => normalize(item, document, seen));
  if (node === null || typeof node !== "object")
    return typeof node === "string" ? node.replace(/^zulip_/, "chat_") : node;
  const object = node as Json;
  const ref = object.$ref;
  if (typeof ref === "string") {
    if (seen.includes(ref)) return {};
    const target = ref
      .replace(/^#\//, "")
      .split("/")
      .reduce<unknown>((at, key) => (at as Json)[key], document);
    return normalize(target, document, [...seen, ref]);
  }
  return Object.fromEntries(
    Object.entries(object)
      .filter(([key]) => key !== "example" && key !== "examples")
      .map(([key, value]) => [key.replace(/^zulip_/, "chat_"), normalize(value, document, seen)]),
  );
}

const documents = {
  subset: load("zulip-openapi-subset.yaml"),
  companions: load("zulip-openapi-companions.yaml"),
};
const ajv = new Ajv({ strict: false, allErrors: true });

/**
 * A validator of one operation's response against Zulip's own schema (with
 * `chat_*` for `zulip_*`); returns the errors, empty when the body conforms.
 */
export function zulipResponseSchema(
  file: keyof typeof documents,
  path: string,
  method: string,
  status = "200",
): (body: unknown) => string[] {
  const document = documents[file];
  const operation = ((document.paths as Json)[path] as Json)[method] as Json;
  const response = (operation.responses as Json)[status] as Json;
  const content = normalize(response, document) as {
    content: { "application/json": { schema: Json } };
  };
  const validate = ajv.compile(content.content["application/json"].schema);
  return (body) => {
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath} ${e.message ?? ""} ${JSON.stringify(e.params)}`,
    );
  };
}
