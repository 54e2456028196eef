import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv, { type ValidateFunction } from "ajv";

/**
 * The second oracle (issue 47): what Zulip's mobile app requires of the JSON
 * it parses, transcribed from its model code into
 * `test/fixtures/zulip-flutter/models.json` (see the NOTICE beside it). A key
 * it reads with a non-nullable type must be there with that JSON type; an
 * enum must hold one of its values. Zulip's OpenAPI document is looser.
 */
interface Models {
  $defs: Record<string, unknown>;
  /** Event `type` or `type/op` to the model that parses it. */
  events: Record<string, string>;
}

const models = JSON.parse(
  readFileSync(path.join(__dirname, "../fixtures/zulip-flutter/models.json"), "utf8"),
) as Models;

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addSchema({ $id: "flutter", $defs: models.$defs });

const compiled = new Map<string, ValidateFunction>();
function validator(model: string): ValidateFunction {
  let validate = compiled.get(model);
  if (validate === undefined) {
    validate = ajv.compile({ $ref: `flutter#/$defs/${model}` });
    compiled.set(model, validate);
  }
  return validate;
}

const problems = (validate: ValidateFunction, where: string): string[] =>
  (validate.errors ?? []).map(
    (e) => `${where}${e.instancePath} ${e.message ?? ""} ${JSON.stringify(e.params)}`,
  );

/** What the app finds wrong in `value` parsed as `model`: nothing when it parses. */
export function flutterProblems(model: string, value: unknown, where = model): string[] {
  const validate = validator(model);
  return validate(value) ? [] : problems(validate, where);
}

/** A full `register` answer (no `fetch_event_types`), as the app parses it. */
export const snapshotProblems = (body: unknown): string[] =>
  flutterProblems("InitialSnapshot", body, "register");

/**
 * Each event of a poll answer as the app parses it: by the model its `type`
 * (and `op`) names; a `message` event's message with the event's flags in
 * it. Event types the app does not know it skips, and so does this. A queue
 * registered without the app's `bulk_message_deletion` gets deletions in the
 * legacy shape the app never sees: those are not checked.
 */
export function eventProblems(body: unknown, bulkMessageDeletion = true): string[] {
  const events = (body as { events?: unknown }).events;
  if (!Array.isArray(events)) return ["/events is not an array"];
  return events.flatMap((raw: unknown, i) => {
    const event = raw as Record<string, unknown>;
    const type = typeof event.type === "string" ? event.type : "";
    const op = typeof event.op === "string" ? event.op : undefined;
    const model = models.events[`${type}/${op ?? ""}`] ?? models.events[type];
    if (model === undefined || (type === "delete_message" && !bulkMessageDeletion)) return [];
    const where = `/events/${String(i)} (${type}${op === undefined ? "" : `/${op}`})`;
    const found = flutterProblems(model, event, where);
    if (type === "message")
      found.push(
        ...flutterProblems(
          "Message",
          { ...(event.message as object), flags: event.flags },
          `${where}/message`,
        ),
      );
    return found;
  });
}

/** `registerQueue` of lib/api/route/events.dart: every parameter the app sends. */
export const APP_REGISTER = {
  idle_queue_timeout: "mobile",
  apply_markdown: "true",
  client_gravatar: "false",
  slim_presence: "true",
  client_capabilities: JSON.stringify({
    notification_settings_null: true,
    bulk_message_deletion: true,
    user_avatar_url_field_optional: true,
    stream_typing_notifications: true,
    user_settings_object: true,
    include_deactivated_groups: true,
    empty_topic_name: true,
    individual_emoji_changes: true,
  }),
};
