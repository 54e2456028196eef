import type { SettingRule } from "../lib/user-settings";
import { JsonableError } from "@repo/envelope";
import { z } from "zod";
import { codePoints } from "../lib/text";

/** What a parameter's JSON Schema looks like in the OpenAPI document. */
export type JsonSchema = Record<string, unknown>;

export const INT32_MAX = 2_147_483_647;
const INT32_MIN = -2_147_483_648;

/** `NAME["key"][3]`: how Zulip names a value inside a JSON parameter. */
export function pathName(name: string, path: readonly PropertyKey[]): string {
  return (
    name + path.map((key) => (typeof key === "number" ? `[${key}]` : `["${String(key)}"]`)).join("")
  );
}

const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  number: "an integer",
  int: "an integer",
  bigint: "an integer",
  boolean: "a boolean",
  array: "a list",
  object: "a dict",
  record: "a dict",
};

/** The contract's message for one zod issue of parameter `name` (never zod's own text). */
export function describeIssue(name: string, issue: z.core.$ZodIssue): string {
  const at = pathName(name, issue.path);
  switch (issue.code) {
    case "invalid_type": {
      if (issue.input === undefined && issue.path.length > 0)
        return `${at} field is missing: Field required`;
      return `${at} is not ${TYPE_WORDS[issue.expected] ?? `a valid ${issue.expected}`}`;
    }
    case "unrecognized_keys":
      return `Argument "${issue.keys[0] ?? ""}" at ${at} is unexpected`;
    case "too_big":
      if (issue.origin === "string")
        return `${at} is too long (limit: ${Number(issue.maximum)} characters)`;
      return `${at} is too large`;
    case "too_small":
      if (issue.origin === "string" && Number(issue.minimum) === 1) return `${at} cannot be blank`;
      if (issue.origin === "string") return `${at} is too short`;
      return `${at} is too small`;
    case "custom":
      // Our own refinements carry the contract's message already.
      return issue.message;
    default:
      return `Invalid ${at}`;
  }
}

interface ParamSettings<Out> {
  schema: JsonSchema;
  required: boolean;
  fallback: Out | undefined;
  aliases: readonly string[];
  description: string;
  /** The form field holds JSON text (arrays, objects), for the OpenAPI document. */
  jsonEncoded: boolean;
}

/** A declared parameter: how to read its raw form value, and how to describe it. */
export class Param<T, Out = T> {
  private constructor(
    private readonly parseRaw: (raw: string, name: string) => T,
    private readonly settings: ParamSettings<Out>,
  ) {}

  /** A required parameter read by `parseRaw`. */
  static of<T>(
    parseRaw: (raw: string, name: string) => T,
    schema: JsonSchema,
    jsonEncoded = false,
  ): Param<T> {
    return new Param<T>(parseRaw, {
      schema,
      required: true,
      fallback: undefined,
      aliases: [],
      description: "",
      jsonEncoded,
    });
  }

  get schema(): JsonSchema {
    return this.settings.schema;
  }
  get required(): boolean {
    return this.settings.required;
  }
  get fallback(): Out | undefined {
    return this.settings.fallback;
  }
  get aliases(): readonly string[] {
    return this.settings.aliases;
  }
  get description(): string {
    return this.settings.description;
  }
  get jsonEncoded(): boolean {
    return this.settings.jsonEncoded;
  }

  /** Parses the raw value of the field called `name`; throws the contract's error. */
  parse(raw: string, name: string): T {
    return this.parseRaw(raw, name);
  }

  /** Not required; absent = `undefined`. */
  optional(): Param<T, T | undefined> {
    return new Param<T, T | undefined>(this.parseRaw, {
      ...this.settings,
      required: false,
      fallback: undefined,
    });
  }

  /** Not required; absent = `value`. */
  default(value: T): Param<T> {
    return new Param<T, T>(this.parseRaw, {
      ...this.settings,
      schema: { ...this.settings.schema, default: value },
      required: false,
      fallback: value,
    });
  }

  /** Also accepted under these other names (two given at once is an error). */
  alias(...names: string[]): Param<T, Out> {
    return new Param<T, Out>(this.parseRaw, {
      ...this.settings,
      aliases: [...this.settings.aliases, ...names],
    });
  }

  /** A sentence for the OpenAPI document. */
  describe(text: string): Param<T, Out> {
    return new Param<T, Out>(this.parseRaw, { ...this.settings, description: text });
  }
}

/** The value type a handler receives for a parameter. */
export type ParamValue<P> = P extends Param<infer _T, infer Out> ? Out : never;

/** The values a handler receives for a parameter declaration. */
export type ParamValues<Ps extends Record<string, Param<unknown, unknown>>> = {
  [K in keyof Ps]: ParamValue<Ps[K]>;
};

function parseJson(raw: string, name: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new JsonableError(`${name} is not valid JSON`);
  }
}

/** PostgreSQL text cannot hold NUL, so no string parameter may carry one. */
function checkNoNul(value: unknown, name: string, path: readonly PropertyKey[] = []): void {
  if (typeof value === "string") {
    if (value.includes("\u0000"))
      throw new JsonableError(`${pathName(name, path)} must not contain null bytes`);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => {
      checkNoNul(item, name, [...path, i]);
    });
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      checkNoNul(key, name, path);
      checkNoNul(item, name, [...path, key]);
    }
  }
}

/**
 * A plain string (not JSON-encoded), with optional length limits; never with
 * NUL bytes, unless `ownNulCheck` says the operation reports them itself.
 */
export function str(
  options: { maxLength?: number; notBlank?: boolean; ownNulCheck?: boolean } = {},
): Param<string> {
  const { maxLength, notBlank = false, ownNulCheck = false } = options;
  return Param.of(
    (raw, name) => {
      if (!ownNulCheck) checkNoNul(raw, name);
      if (notBlank && raw.trim() === "") throw new JsonableError(`${name} cannot be blank`);
      if (maxLength !== undefined && codePoints(raw) > maxLength) {
        throw new JsonableError(`${name} is too long (limit: ${maxLength} characters)`);
      }
      return raw;
    },
    { type: "string", ...(maxLength === undefined ? {} : { maxLength }) },
  );
}

/** One of a fixed set of strings; anything else is `Invalid NAME`. */
export function oneOf<const V extends string>(values: readonly V[]): Param<V> {
  return Param.of(
    (raw, name) => {
      if (!(values as readonly string[]).includes(raw)) throw new JsonableError(`Invalid ${name}`);
      return raw as V;
    },
    { type: "string", enum: [...values] },
  );
}

/** An integer, sent as JSON text (`5`); 32-bit unless bounds say otherwise. */
export function int(options: { min?: number; max?: number } = {}): Param<number> {
  const { min = INT32_MIN, max = INT32_MAX } = options;
  return Param.of(
    (raw, name) => {
      const trimmed = raw.trim();
      const value: unknown = /^-?\d+$/.test(trimmed) ? Number(trimmed) : parseJsonQuietly(trimmed);
      if (typeof value !== "number" || !Number.isInteger(value))
        throw new JsonableError(`${name} is not an integer`);
      if (value < min) throw new JsonableError(`${name} is too small`);
      if (value > max) throw new JsonableError(`${name} is too large`);
      return value;
    },
    { type: "integer", minimum: min, maximum: max },
  );
}

function parseJsonQuietly(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** A point in time as ISO 8601 text (`2026-01-01T09:00:00Z`); `Invalid NAME` otherwise. */
export function isoDate(): Param<Date> {
  return Param.of(
    (raw, name) => {
      const trimmed = raw.trim();
      const date = new Date(trimmed);
      if (!/^\d{4}-\d{2}-\d{2}/.test(trimmed) || Number.isNaN(date.getTime()))
        throw new JsonableError(`Invalid ${name}`);
      return date;
    },
    { type: "string", format: "date-time" },
  );
}

/** A boolean, sent as JSON text (`true` / `false`). */
export function bool(): Param<boolean> {
  return Param.of(
    (raw, name) => {
      const trimmed = raw.trim();
      // JSON's two literals, as JSON.parse reads them, without a parse for the common case.
      const value =
        trimmed === "true" ? true : trimmed === "false" ? false : parseJsonQuietly(trimmed);
      if (typeof value !== "boolean") throw new JsonableError(`${name} is not a boolean`);
      return value;
    },
    { type: "boolean" },
  );
}

/**
 * A JSON value sent as text inside the field (`subscribers=[1,2]`), checked
 * by a zod schema whose issues become the contract's messages.
 */
export function json<S extends z.ZodType>(schema: S): Param<z.output<S>> {
  return Param.of(
    (raw, name) => parseJsonValue(schema, raw, name),
    z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }),
    true,
  );
}

/**
 * A JSON parameter whose parse waits for the handler: for an operation whose
 * own checks come first in Zulip's order of errors (editing a draft checks the
 * sync setting and the draft before the draft's text). The handler receives a
 * typed getter that parses, and throws the contract's error, when called.
 */
export function jsonLater<S extends z.ZodType>(schema: S): Param<() => z.output<S>> {
  return Param.of(
    (raw, name) => () => parseJsonValue(schema, raw, name),
    z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }),
    true,
  );
}

/** What {@link json} does with a field's text. */
function parseJsonValue<S extends z.ZodType>(schema: S, raw: string, name: string): z.output<S> {
  const result = schema.safeParse(parseJson(raw, name), { reportInput: true });
  if (!result.success) {
    const [issue] = result.error.issues;
    throw new JsonableError(issue === undefined ? `Invalid ${name}` : describeIssue(name, issue));
  }
  // After the schema, so that an operation's own message about NUL comes first.
  checkNoNul(result.data, name);
  return result.data;
}

/** How deeply the arrays and objects of JSON `text` nest (strings skipped), without parsing it. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "[" || c === "{") deepest = Math.max(deepest, ++depth);
    else if (c === "]" || c === "}") depth--;
  }
  return deepest;
}

/** A path segment that must be a non-negative 32-bit integer; anything else is an unknown path. */
export const INT_PATH = /^(0|[1-9]\d{0,9})$/;

/** Whether a path segment is an id this API can hold (digits, within 32 bits). */
export function isIntPath(segment: string): boolean {
  return INT_PATH.test(segment) && Number(segment) <= INT32_MAX;
}

/** A group-setting value on the wire: a group id, or a set of users and groups. */
const groupSettingValue = z.union([
  z.int32(),
  z.object({ direct_members: z.array(z.int32()), direct_subgroups: z.array(z.int32()) }).strict(),
]);

/** A group-setting parameter (JSON: an integer, or `{direct_members, direct_subgroups}`). */
export function groupSettingParam() {
  return json(groupSettingValue);
}

/** A group-setting change parameter (JSON `{new, old}`: the value to set, and the one believed current). */
export function groupSettingUpdateParam() {
  return json(z.object({ new: groupSettingValue, old: groupSettingValue.optional() }).strict());
}

/** Parameters of the settings `rules` names (PATCH /settings and the realm's defaults), each optional. */
export function settingParams(rules: Readonly<Record<string, SettingRule>>) {
  return Object.fromEntries(
    Object.entries(rules).map(([name, rule]) => [
      name,
      (rule.kind === "bool"
        ? bool()
        : rule.kind === "int"
          ? int()
          : str({ maxLength: rule.maxLength })
      ).optional(),
    ]),
  );
}
