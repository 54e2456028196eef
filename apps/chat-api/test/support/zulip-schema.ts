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
  // `nullable` beside no `type` (an allOf branch restating a property) means
  // nothing on its own; the branch that types the property says it.
  const typed = "type" in object;
  return Object.fromEntries(
    Object.entries(object)
      .filter(([key]) => key !== "example" && key !== "examples")
      .filter(([key]) => typed || key !== "nullable")
      .map(([key, value]) => [key.replace(/^zulip_/, "chat_"), normalize(value, document, seen)]),
  );
}

const groupSetting = {
  oneOf: [
    { type: "integer" },
    {
      type: "object",
      additionalProperties: false,
      required: ["direct_members", "direct_subgroups"],
      properties: {
        direct_members: { type: "array", items: { type: "integer" } },
        direct_subgroups: { type: "array", items: { type: "integer" } },
      },
    },
  ],
};

/**
 * Channel fields of the newest feature level (this server's, 496) that the
 * companions file predates: it lists channel objects with
 * `additionalProperties: false` as of an older level. The spec names these
 * settings (`can_create_topic_group` level 441, `folder_id` 389,
 * `topics_policy` 392...); they are allowed, typed, wherever a channel
 * object is described.
 */
const NEWER_CHANNEL_FIELDS: Json = {
  folder_id: { type: "integer", nullable: true },
  topics_policy: {
    type: "string",
    enum: ["inherit", "allow_empty_topic", "disable_empty_topic", "empty_topic_only"],
  },
  subscriber_count: { type: "integer" },
  can_create_topic_group: groupSetting,
  can_delete_any_message_group: groupSetting,
  can_delete_own_message_group: groupSetting,
  can_move_messages_out_of_channel_group: groupSetting,
  can_move_messages_within_channel_group: groupSetting,
  can_resolve_topics_group: groupSetting,
};

/** Adds {@link NEWER_CHANNEL_FIELDS} to every closed channel object schema of `node`. */
function allowNewerChannelFields(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(allowNewerChannelFields);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const object = node as Json;
  const properties = object.properties as Json | undefined;
  if (
    object.additionalProperties === false &&
    properties !== undefined &&
    "stream_id" in properties &&
    "can_subscribe_group" in properties
  ) {
    Object.assign(properties, NEWER_CHANNEL_FIELDS);
  }
  Object.values(object).forEach(allowNewerChannelFields);
}

const documents = {
  subset: load("zulip-openapi-subset.yaml"),
  companions: load("zulip-openapi-companions.yaml"),
};
allowNewerChannelFields(documents.companions);
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
