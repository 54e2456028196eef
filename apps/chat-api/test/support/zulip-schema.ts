import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv from "ajv";

type Json = Record<string, unknown>;

/** Zulip's response schemas, kept in the repository (see the folder's NOTICE). */
const FIXTURES = join(__dirname, "../fixtures/zulip-openapi");

function load(name: string): Json {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8")) as Json;
}

/**
 * Fields this server adds to an answer of Zulip's, by operation: the password
 * rule in `GET /server_settings` (issue 52), for a client that signs someone
 * up before it has a key (Zulip puts these two in `POST /register` only).
 */
const EXTRA_PROPERTIES: Record<string, Json> = {
  "GET /server_settings": {
    password_min_length: { type: "integer" },
    password_min_guesses: { type: "integer" },
  },
};

/** The version fields the behaviour contract sends under both names. */
const VERSION_NAMES = new Set(["zulip_version", "zulip_feature_level", "zulip_merge_base"]);

/** A version field `zulip_x` and its `chat_x` twin; other names as they are. */
const bothNames = (name: string): string[] =>
  VERSION_NAMES.has(name) ? [name, name.replace(/^zulip_/, "chat_")] : [name];

/**
 * Inlines `$ref`s, and gives each of Zulip's `zulip_*` fields a `chat_*` twin
 * of the same schema, required where it is (this server sends both names).
 */
function normalize(node: unknown, document: Json, seen: readonly string[] = []): unknown {
  if (Array.isArray(node))
    return node.flatMap((item) =>
      typeof item === "string" ? bothNames(item) : [normalize(item, document, seen)],
    );
  if (node === null || typeof node !== "object") return node;
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
      .flatMap(([key, value]) => {
        const normalized = normalize(value, document, seen);
        return bothNames(key).map((name) => [name, normalized]);
      }),
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
  subset: load("subset"),
  companions: load("companions"),
  session: load("session"),
  full: load("full"),
};
allowNewerChannelFields(documents.companions);
const ajv = new Ajv({ strict: false, allErrors: true });

/**
 * A validator of one operation's response against Zulip's own schema (with
 * a `chat_*` twin of each `zulip_*` field); returns the errors, empty when the body conforms.
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
  const schema = content.content["application/json"].schema;
  const extra = EXTRA_PROPERTIES[`${method.toUpperCase()} ${path}`];
  if (extra !== undefined) {
    // The answer's own object (the `allOf` branch naming its properties) takes the extras too.
    const branches = (schema.allOf as Json[] | undefined) ?? [schema];
    const own = branches.find((branch) => typeof branch.properties === "object");
    if (own === undefined) throw new Error(`${path}: no properties to extend`);
    own.properties = { ...(own.properties as Json), ...extra };
  }
  const validate = ajv.compile(schema);
  return (body) => {
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath} ${e.message ?? ""} ${JSON.stringify(e.params)}`,
    );
  };
}

/** `register-state.json`: the state keys of `POST /register` (see the folder's NOTICE). */
const registerState = load("register-state") as {
  properties: Json;
  requiredByFetchType: Record<string, string[]>;
};

/** Every state type register-state.json knows (`fetch_event_types` values). */
export const REGISTER_STATE_TYPES = [
  ...new Set(Object.keys(registerState.requiredByFetchType).flatMap((t) => t.split("+"))),
];

/**
 * A validator of a `POST /register` answer to a request for the state types
 * `fetchTypes`: Zulip's `/register` schema (companions.json) with every
 * state key of register-state.json, no other key, and each key that the
 * types asked for require present (`update_message_flags+message`: both).
 */
export function registerSchema(fetchTypes: readonly string[]): (body: unknown) => string[] {
  const document = documents.companions;
  const operation = ((document.paths as Json)["/register"] as Json).post as Json;
  const response = ((operation.responses as Json)["200"] as Json).content as Json;
  const [base, own] = ((response["application/json"] as Json).schema as Json).allOf as Json[];
  const required = Object.entries(registerState.requiredByFetchType)
    .filter(([types]) => types.split("+").every((type) => fetchTypes.includes(type)))
    .flatMap(([, keys]) => keys);
  const schema = normalize(
    {
      allOf: [
        base,
        {
          ...own,
          additionalProperties: false,
          properties: { ...(own?.properties as Json), ...registerState.properties },
          required: [
            "queue_id",
            "last_event_id",
            "zulip_feature_level",
            "zulip_version",
            ...required,
          ],
        },
      ],
    },
    document,
  ) as Json;
  allowNewerChannelFields(schema);
  const validate = ajv.compile(schema);
  return (body) => {
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath} ${e.message ?? ""} ${JSON.stringify(e.params)}`,
    );
  };
}

/** events-extra.json: the event types companions.json does not describe (see the NOTICE). */
const extraEvents = load("events-extra") as { events: Json[] };

/**
 * A validator of a `GET /events` answer in which every event must be one that
 * Zulip describes: a branch of companions.json's `/events` schema, of
 * events-extra.json, or of the whole 10.2 document's (full.json). Answers the
 * errors, empty when the body conforms.
 */
export function eventsSchema(): (body: unknown) => string[] {
  return eventsOf([
    [documents.companions, extraEvents.events],
    [documents.full, []],
  ]);
}

/**
 * A validator of a poll's events against Zulip 10.2's whole API document
 * alone (full.json): each event must be one it describes, as it describes it.
 * The tests of the operations added from that document check their events
 * with it.
 */
export function fullEventsSchema(): (body: unknown) => string[] {
  return eventsOf([[documents.full, []]]);
}

/** The event schemas of `document`'s `/events` answer, with `extra`, their `$ref`s inlined. */
function eventBranches(document: Json, extra: readonly Json[]): Json[] {
  const operation = ((document.paths as Json)["/events"] as Json).get as Json;
  const response = ((operation.responses as Json)["200"] as Json).content as Json;
  const [, own] = ((response["application/json"] as Json).schema as Json).allOf as Json[];
  const described = ((((own?.properties as Json).events as Json).items as Json).oneOf ??
    []) as Json[];
  return normalize([...described, ...extra], document) as Json[];
}

/** The event type a branch of an `/events` schema describes (its `type`'s enum), or undefined. */
function branchType(branch: Json): string | undefined {
  const parts = [branch, ...((branch.allOf as Json[] | undefined) ?? [])];
  for (const part of parts) {
    const type = (part.properties as Json | undefined)?.type as Json | undefined;
    if (type === undefined) continue;
    const found = JSON.stringify(type).match(/"enum":\["([^"]+)"\]/);
    if (found?.[1] !== undefined) return found[1];
  }
  return undefined;
}

/**
 * A validator of `/events` answers: each event one of the documents' (each
 * with its extra ones). The branches are grouped by event type and each
 * group compiled when an event of its type first comes (a test file compiles
 * the few it meets, not the whole document's).
 */
function eventsOf(sources: readonly [Json, readonly Json[]][]): (body: unknown) => string[] {
  const byType = new Map<string, Json[]>();
  for (const [document, extra] of sources)
    for (const branch of eventBranches(document, extra)) {
      allowNewerChannelFields(branch);
      const type = branchType(branch) ?? "*";
      byType.set(type, [...(byType.get(type) ?? []), branch]);
    }
  const compiled = new Map<string, (event: unknown) => boolean>();
  const validatorOf = (type: string) => {
    let validate = compiled.get(type);
    if (validate === undefined) {
      const branches = [...(byType.get(type) ?? []), ...(byType.get("*") ?? [])];
      validate = branches.length === 0 ? () => false : ajv.compile({ anyOf: branches });
      compiled.set(type, validate);
    }
    return validate;
  };
  return (body) => {
    const events = (body as { events?: unknown }).events;
    if (!Array.isArray(events)) return ["/events is not an array"];
    return events.flatMap((event: unknown, i) => {
      const type = String((event as { type?: unknown }).type);
      return validatorOf(type)(event) ? [] : [`/events/${i} (${type}) matches no described event`];
    });
  };
}

/** A validator of one state key of `POST /register` against the whole 10.2 document's schema of it. */
export function fullRegisterProperty(name: string): (value: unknown) => string[] {
  const document = documents.full;
  const operation = ((document.paths as Json)["/register"] as Json).post as Json;
  const response = ((operation.responses as Json)["200"] as Json).content as Json;
  const [, own] = ((response["application/json"] as Json).schema as Json).allOf as Json[];
  const property = (own?.properties as Json)[name];
  if (property === undefined) throw new Error(`full.json's register has no ${name}`);
  const validate = ajv.compile(normalize(property, document) as Json);
  return (value) => {
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath} ${e.message ?? ""} ${JSON.stringify(e.params)}`,
    );
  };
}

/**
 * A validator of one state key of `POST /register` against register-state.json
 * (the keys of features newer than 10.2 are typed only there).
 */
export function registerStateProperty(name: string): (value: unknown) => string[] {
  const property = registerState.properties[name];
  if (property === undefined) throw new Error(`register-state.json has no ${name}`);
  const validate = ajv.compile(normalize(property, documents.companions) as Json);
  return (value) => {
    if (validate(value)) return [];
    return (validate.errors ?? []).map(
      (e) => `${e.instancePath} ${e.message ?? ""} ${JSON.stringify(e.params)}`,
    );
  };
}
