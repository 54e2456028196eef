import {
  type ScheduledDestination,
  doCreateScheduledMessage,
  doDeleteScheduledMessage,
  doUpdateScheduledMessage,
  listScheduledMessages,
} from "../actions/scheduled-messages";
import { MAX_USERS_PER_REQUEST } from "../actions/user-lookup";
import { JsonableError } from "@repo/envelope";
import { z } from "zod";
import { bool, int, json, oneOf, str } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** `type`: a channel message (`stream`, `channel`) or a direct one (`direct`, `private`). */
const typeParam = () => oneOf(["direct", "channel", "stream", "private"]);
/** `to`: a channel id, or a list of user ids (JSON). */
const toParam = () => json(z.union([z.int32(), z.array(z.int32()).max(MAX_USERS_PER_REQUEST)]));
/** A delivery time: a UNIX timestamp in seconds, up to the year 9999. */
const timestampParam = () => int({ min: 0, max: 253_402_300_799 });

const kindOf = (type: string): "channel" | "direct" =>
  type === "stream" || type === "channel" ? "channel" : "direct";

/** The destination `type`, `to` and `topic` name. */
function destinationOf(
  type: string,
  to: number | readonly number[],
  topic: string | undefined,
): ScheduledDestination {
  if (kindOf(type) === "direct") return { kind: "direct", to: typeof to === "number" ? [to] : to };
  if (typeof to !== "number") throw new JsonableError("Invalid data type for channel");
  return { kind: "channel", to, topic: topic ?? "" };
}

/** Scheduled messages: messages the server sends for their sender at a set time. */
export function scheduledMessageRoutes({ db, config }: Services) {
  return {
    getScheduledMessages: userEndpoint(
      {
        operationId: "get-scheduled-messages",
        summary: "Get scheduled messages",
        tag: "scheduled_messages",
        params: {},
      },
      async ({ user }) => ({ scheduled_messages: await listScheduledMessages(db, user.id) }),
    ),
    createScheduledMessage: userEndpoint(
      {
        operationId: "create-scheduled-message",
        summary: "Create a scheduled message",
        tag: "scheduled_messages",
        params: {
          type: typeParam(),
          to: toParam(),
          content: str({ ownNulCheck: true }),
          topic: str({ ownNulCheck: true }).optional(),
          scheduled_delivery_timestamp: timestampParam(),
          read_by_sender: bool().optional(),
        },
      },
      async ({ user, params }) => ({
        scheduled_message_id: await doCreateScheduledMessage(
          db,
          user,
          {
            destination: destinationOf(params.type, params.to, params.topic),
            content: params.content,
            deliverAt: params.scheduled_delivery_timestamp,
            readBySender: params.read_by_sender,
          },
          config.CHAT_MAX_OBJECTS_PER_USER,
        ),
      }),
    ),
    updateScheduledMessage: userEndpoint(
      {
        pathParams: ["scheduled_message_id"],
        operationId: "update-scheduled-message",
        summary: "Edit a scheduled message",
        tag: "scheduled_messages",
        params: {
          type: typeParam().optional(),
          to: toParam().optional(),
          content: str({ ownNulCheck: true }).optional(),
          topic: str({ ownNulCheck: true }).optional(),
          scheduled_delivery_timestamp: timestampParam().optional(),
        },
      },
      async ({ user, path, params }) => {
        await doUpdateScheduledMessage(db, user, path.scheduled_message_id, {
          type: params.type === undefined ? undefined : kindOf(params.type),
          to: params.to,
          topic: params.topic,
          content: params.content,
          deliverAt: params.scheduled_delivery_timestamp,
        });
        return {};
      },
    ),
    deleteScheduledMessage: userEndpoint(
      {
        pathParams: ["scheduled_message_id"],
        operationId: "delete-scheduled-message",
        summary: "Delete a scheduled message",
        tag: "scheduled_messages",
        params: {},
      },
      async ({ user, path }) => {
        await doDeleteScheduledMessage(db, user, path.scheduled_message_id);
        return {};
      },
    ),
  };
}
