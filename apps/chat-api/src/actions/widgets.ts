import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { sendEvent } from "../realtime/queue";
import { activeHolders } from "../db/queries/user-messages";
import { insertSubmessage, widgetState } from "../db/queries/submessages";
import type { AuthedUser } from "../caches/auth";
import { accessMessage } from "./message-edit";

/**
 * Changes to Zulip's widgets (`lib/widgets.ts`): votes, options and tasks
 * people add with POST /submessage, each a submessage of its own.
 */

/** The longest submessage content, in characters (a change is a small JSON object). */
export const MAX_SUBMESSAGE_LENGTH = 10_000;
/** Most submessages one message keeps: past them its widget takes no more changes. */
export const MAX_SUBMESSAGES_PER_MESSAGE = 10_000;

type Json = Record<string, unknown>;

/** Checks that `data` has exactly `fields` of the given kinds (Zulip's check_dict_only). */
function exactly(
  what: string,
  data: Json,
  fields: Record<string, "string" | "int" | "bool">,
): void {
  for (const [name, kind] of Object.entries(fields)) {
    const value = data[name];
    if (value === undefined) throw new JsonableError(`${what} is missing key '${name}'`);
    const ok =
      kind === "string"
        ? typeof value === "string"
        : kind === "bool"
          ? typeof value === "boolean"
          : Number.isSafeInteger(value);
    if (!ok)
      throw new JsonableError(
        `${what}['${name}'] is not ${kind === "int" ? "an integer" : `a ${kind === "bool" ? "boolean" : "string"}`}`,
      );
  }
  const extra = Object.keys(data).find((name) => !(name in fields));
  if (extra !== undefined) throw new JsonableError(`Unexpected arguments: ${extra}`);
}

/** Zulip's checks of a change to a poll (`vote`, `new_option`, the author's `question`). */
function checkPollChange(data: Json, isAuthor: boolean): void {
  switch (data.type) {
    case "vote":
      exactly("poll data", data, { type: "string", key: "string", vote: "int" });
      if (data.vote !== 1 && data.vote !== -1)
        throw new JsonableError("poll data['vote'] is not allowed");
      return;
    case "question":
      if (!isAuthor)
        throw new JsonableError("You can't edit a question unless you are the author.");
      exactly("poll data", data, { type: "string", question: "string" });
      return;
    case "new_option":
      exactly("poll data", data, { type: "string", option: "string", idx: "int" });
      return;
    default:
      throw new JsonableError(`Unknown type for poll data: ${String(data.type)}`);
  }
}

/** Zulip's checks of a change to a to-do list (`new_task`, `strike`, the author's title). */
function checkTodoChange(data: Json, isAuthor: boolean): void {
  switch (data.type) {
    case "new_task_list_title":
      if (!isAuthor)
        throw new JsonableError("You can't edit the task list title unless you are the author.");
      exactly("todo data", data, { type: "string", title: "string" });
      return;
    case "new_task":
      exactly("todo data", data, {
        type: "string",
        key: "int",
        task: "string",
        desc: "string",
        completed: "bool",
      });
      return;
    case "strike":
      exactly("todo data", data, { type: "string", key: "string" });
      return;
    default:
      throw new JsonableError(`Unknown type for todo data: ${String(data.type)}`);
  }
}

/** The widget type of a widget submessage's content, if it is one. */
function widgetType(content: string): string | undefined {
  try {
    const parsed = JSON.parse(content) as { widget_type?: unknown };
    return typeof parsed.widget_type === "string" ? parsed.widget_type : undefined;
  } catch {
    return undefined;
  }
}

/**
 * POST /submessage: a change to a message's widget by someone who has the
 * message, as Zulip checks it (the JSON, who may change what, each widget's
 * changes), stored with a `submessage` event to everyone who has the
 * message, in one transaction. Returns nothing Zulip does not.
 */
export async function doAddSubmessage(
  db: Database,
  user: AuthedUser,
  messageId: number,
  msgType: string,
  content: string,
): Promise<void> {
  if (msgType !== "widget") throw new JsonableError("Invalid msg_type");
  let data: unknown;
  try {
    data = JSON.parse(content);
  } catch {
    throw new JsonableError("Invalid json for submessage");
  }
  await db.transaction(async (tx) => {
    const message = await accessMessage(tx, user, messageId);
    const { first, count } = await widgetState(tx, message.id);
    // Only the sender may attach the first submessage; others only to the sender's widget.
    if (message.sender_id !== user.id && first?.sender_id !== message.sender_id)
      throw new JsonableError("You cannot attach a submessage to this message.");
    if (count >= MAX_SUBMESSAGES_PER_MESSAGE)
      throw new JsonableError(
        `This widget has too many changes (limit: ${String(MAX_SUBMESSAGES_PER_MESSAGE)}).`,
      );
    const type = first === undefined ? undefined : widgetType(first.content);
    const isAuthor = message.sender_id === user.id;
    if (type === "poll" || type === "todo") {
      if (typeof data !== "object" || data === null || Array.isArray(data))
        throw new JsonableError(`${type} data is not a dict`);
      if (type === "poll") checkPollChange(data as Json, isAuthor);
      else checkTodoChange(data as Json, isAuthor);
    }
    const id = await insertSubmessage(tx, {
      message_id: message.id,
      sender_id: user.id,
      msg_type: msgType,
      content,
    });
    const holders = await activeHolders(tx, [message.id]);
    await sendEvent(
      tx,
      holders.map((h) => h.user_id),
      {
        type: "submessage",
        msg_type: msgType,
        content,
        message_id: message.id,
        sender_id: user.id,
        submessage_id: id,
      },
    );
  });
}
