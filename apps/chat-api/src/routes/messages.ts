import { JsonableError, RequestVariableMissingError } from "@repo/envelope";
import { z } from "zod";
import { doSendMessage } from "../actions/message-send";
import { MAX_LOCAL_ID_LENGTH, checkContent } from "../actions/message-checks";
import {
  MAX_MATCH_IDS,
  fetchMessage,
  fetchMessages,
  matchesNarrow,
  parseAnchor,
} from "../actions/message-fetch";
import { doSendEditTyping, doSendTyping } from "../actions/typing";
import { doDeleteMessage, doEditMessage } from "../actions/message-edit";
import { messageHistory, readReceipts } from "../actions/message-history";
import { renderPreview } from "../actions/render-context";
import { MAX_SUBMESSAGE_LENGTH, doAddSubmessage } from "../actions/widgets";
import {
  MAX_REPORT_DESCRIPTION_LENGTH,
  REPORT_TYPES,
  doReportMessage,
} from "../actions/message-reports";
import { MAX_USERS_PER_REQUEST } from "../actions/user-lookup";
import { MAX_TOPIC_LENGTH } from "../actions/channel-settings";
import { narrowSchema, narrowTerm } from "../lib/narrow";
import { INT32_MAX, bool, int, isoDate, json, oneOf, str } from "../http/params";
import { realmUrl } from "../lib/realm-url";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** JSON text of `to`, or the contract's error. */
function parseTo(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new JsonableError("to is not valid JSON");
  }
}

/** An id given as digits: a number if it fits the id columns (int32), else undefined. */
function idOf(digits: string): number | undefined {
  const value = Number(digits);
  return value <= INT32_MAX ? value : undefined;
}

/** `to` of a direct message: a JSON list of ids or emails, or comma-separated emails. */
function directRecipients(raw: string): (number | string)[] {
  if (raw.includes("\u0000")) throw new JsonableError("to must not contain null bytes");
  const trimmed = raw.trim();
  if (trimmed.startsWith("[")) {
    const parsed = z.union([z.array(z.int32()), z.array(z.string())]).safeParse(parseTo(trimmed));
    if (!parsed.success) throw new JsonableError("Invalid user ID or email in 'to'");
    return parsed.data;
  }
  if (/^\d+$/.test(trimmed)) {
    const id = idOf(trimmed);
    if (id === undefined) throw new JsonableError("Invalid user ID or email in 'to'");
    return [id];
  }
  return trimmed
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
}

/** `to` of a channel message: an id, a name, or a JSON list of one of them. */
function channelRecipient(raw: string): number | string {
  if (raw.includes("\u0000")) throw new JsonableError("to must not contain null bytes");
  const trimmed = raw.trim();
  if (/^\d+$/.test(trimmed)) {
    const id = idOf(trimmed);
    if (id === undefined) throw new JsonableError("Invalid channel in 'to'");
    return id;
  }
  if (trimmed.startsWith("[")) {
    const parsed = z.tuple([z.union([z.int32(), z.string()])]).safeParse(parseTo(trimmed));
    if (!parsed.success) throw new JsonableError("Invalid channel in 'to'");
    return parsed.data[0];
  }
  return raw;
}

/** Messages: sending, and fetching with anchors and narrows. */
export function messageRoutes({ db, config }: Services) {
  return {
    sendMessage: userEndpoint(
      {
        operationId: "send-message",
        summary: "Send a message",
        tag: "messages",
        params: {
          type: oneOf(["stream", "channel", "private", "direct"]),
          to: str({ ownNulCheck: true }),
          topic: str({ ownNulCheck: true }).alias("subject").default(""),
          content: str({ ownNulCheck: true }),
          queue_id: str({ maxLength: 100 })
            .optional()
            .describe("The sender's event queue, whose message event carries local_id"),
          local_id: str({ maxLength: MAX_LOCAL_ID_LENGTH })
            .optional()
            .describe("The sender's id for its local echo, as local_message_id"),
          read_by_sender: bool()
            .optional()
            .describe("Accepted for compatibility; the sender has read it"),
        },
      },
      async ({ user, params }) => {
        const isChannel = params.type === "stream" || params.type === "channel";
        if (params.queue_id !== undefined && params.local_id === undefined)
          throw new RequestVariableMissingError("local_id");
        const echo =
          params.queue_id === undefined || params.local_id === undefined
            ? {}
            : { echo: { queue_id: params.queue_id, local_id: params.local_id } };
        const id = await doSendMessage(
          db,
          user,
          isChannel
            ? {
                kind: "channel",
                to: channelRecipient(params.to),
                topic: params.topic,
                content: params.content,
                ...echo,
              }
            : {
                kind: "direct",
                to: directRecipients(params.to),
                content: params.content,
                ...echo,
              },
        );
        return { id };
      },
    ),
    setEditTypingStatus: userEndpoint(
      {
        pathParams: ["message_id"],
        operationId: "set-typing-status-for-message-edit",
        summary: "Set typing status for message editing",
        tag: "messages",
        params: { op: oneOf(["start", "stop"]) },
      },
      async ({ user, path, params }) => {
        await doSendEditTyping(db, user, path.message_id, params.op);
        return {};
      },
    ),
    getMessages: userEndpoint(
      {
        operationId: "get-messages",
        summary: "Get messages",
        tag: "messages",
        params: {
          anchor: str()
            .default("newest")
            .describe("A message id (up to 10^16), newest, oldest, first_unread or date"),
          anchor_date: isoDate()
            .optional()
            .describe("With anchor=date: the first message sent at or after this time"),
          num_before: int({ min: 0 }).default(0),
          num_after: int({ min: 0 }).default(0),
          include_anchor: bool().default(true),
          narrow: json(narrowSchema).default([]),
          client_gravatar: bool().default(true),
          apply_markdown: bool().default(true),
          use_first_unread_anchor: bool().default(false),
          allow_empty_topic_name: bool().default(false),
        },
      },
      async ({ user, params }) => {
        const anchor = parseAnchor(
          params.use_first_unread_anchor ? "first_unread" : params.anchor,
          params.anchor_date,
        );
        return fetchMessages(db, user, {
          anchor,
          numBefore: params.num_before,
          numAfter: params.num_after,
          includeAnchor: params.include_anchor,
          narrow: params.narrow.map(narrowTerm),
          view: { clientGravatar: params.client_gravatar, applyMarkdown: params.apply_markdown },
          maxBytes: config.CHAT_MAX_FETCH_MIB * 1024 * 1024,
        });
      },
    ),
    matchesNarrow: userEndpoint(
      {
        operationId: "check-messages-match-narrow",
        summary: "Check if messages match a narrow",
        tag: "messages",
        params: {
          msg_ids: json(z.array(z.int32()).max(MAX_MATCH_IDS)),
          narrow: json(narrowSchema),
        },
      },
      async ({ user, params }) =>
        matchesNarrow(
          db,
          user,
          params.msg_ids,
          params.narrow.map(narrowTerm),
          { clientGravatar: true, applyMarkdown: true },
          config.CHAT_MAX_FETCH_MIB * 1024 * 1024,
        ),
    ),
    getMessage: userEndpoint(
      {
        pathParams: ["message_id"],
        operationId: "get-message",
        summary: "Fetch a single message",
        tag: "messages",
        params: {
          apply_markdown: bool().default(true),
          allow_empty_topic_name: bool().default(false),
        },
      },
      async ({ user, path, params }) =>
        fetchMessage(db, user, path.message_id, {
          clientGravatar: false,
          applyMarkdown: params.apply_markdown,
        }),
    ),
    setTypingStatus: userEndpoint(
      {
        operationId: "set-typing-status",
        summary: "Set typing status",
        tag: "users",
        params: {
          type: oneOf(["direct", "private", "stream", "channel"]).default("direct"),
          op: oneOf(["start", "stop"]),
          to: json(
            z.union([
              z.array(z.int32()).max(MAX_USERS_PER_REQUEST),
              z.array(z.string().max(254)).max(MAX_USERS_PER_REQUEST),
              z
                .string()
                .max(254)
                .transform((email) => [email]),
            ]),
          )
            .optional()
            .describe("User ids (or, as older clients send, addresses)"),
          stream_id: int({ min: 1 }).optional(),
          topic: str({ maxLength: MAX_TOPIC_LENGTH }).optional(),
        },
      },
      async ({ user, params }) => {
        if (params.type === "stream" || params.type === "channel") {
          if (params.stream_id === undefined) throw new RequestVariableMissingError("stream_id");
          if (params.topic === undefined) throw new RequestVariableMissingError("topic");
          await doSendTyping(
            db,
            user,
            { kind: "channel", channelId: params.stream_id, topic: params.topic },
            params.op,
          );
        } else {
          if (params.to === undefined) throw new RequestVariableMissingError("to");
          await doSendTyping(db, user, { kind: "direct", to: params.to }, params.op);
        }
        return {};
      },
    ),
    updateMessage: userEndpoint(
      {
        pathParams: ["message_id"],
        operationId: "update-message",
        summary: "Edit a message",
        tag: "messages",
        params: {
          content: str({ ownNulCheck: true }).optional(),
          topic: str({ ownNulCheck: true }).alias("subject").optional(),
          stream_id: int({ min: 1 }).optional(),
          propagate_mode: oneOf(["change_one", "change_later", "change_all"]).default("change_one"),
          send_notification_to_old_thread: bool().default(false),
          send_notification_to_new_thread: bool().default(true),
          prev_content_sha256: str({ maxLength: 64 })
            .optional()
            .describe(
              "SHA-256 (hex) of the content the client edited; refused if it changed since",
            ),
        },
      },
      async ({ realm, user, path, params }) => {
        await doEditMessage(db, user, path.message_id, {
          content: params.content,
          prevContentSha256: params.prev_content_sha256,
          topic: params.topic,
          channelId: params.stream_id,
          propagateMode: params.propagate_mode,
          notifyOldThread: params.send_notification_to_old_thread,
          notifyNewThread: params.send_notification_to_new_thread,
          realmUrl: realmUrl(config, realm),
          settings: realm,
        });
        return {};
      },
    ),
    deleteMessage: userEndpoint(
      {
        pathParams: ["message_id"],
        operationId: "delete-message",
        summary: "Delete a message",
        tag: "messages",
        params: {},
      },
      async ({ realm, user, path }) => {
        await doDeleteMessage(db, user, path.message_id, realm);
        return {};
      },
    ),
    getMessageHistory: userEndpoint(
      {
        pathParams: ["message_id"],
        operationId: "get-message-history",
        summary: "Get a message's edit history",
        tag: "messages",
        params: { allow_empty_topic_name: bool().default(false) },
      },
      async ({ user, path }) => messageHistory(db, user, path.message_id),
    ),
    getReadReceipts: userEndpoint(
      {
        pathParams: ["message_id"],
        operationId: "get-read-receipts",
        summary: "Get a message's read receipts",
        tag: "messages",
        params: {},
      },
      async ({ user, path }) => readReceipts(db, user, path.message_id),
    ),
    renderMessage: userEndpoint(
      {
        operationId: "render-message",
        summary: "Render a message",
        tag: "messages",
        params: { content: str({ ownNulCheck: true }) },
      },
      async ({ user, params }) => ({
        rendered: await renderPreview(db, user, checkContent(params.content)),
      }),
    ),
    addSubmessage: userEndpoint(
      {
        operationId: "add-submessage",
        summary: "Change a message's widget",
        tag: "messages",
        params: {
          message_id: int({ min: 1 }),
          msg_type: str({ maxLength: 32 }).describe('"widget"'),
          content: str({ maxLength: MAX_SUBMESSAGE_LENGTH }).describe(
            "The change, a JSON object (a vote, an option, a task...)",
          ),
        },
      },
      async ({ user, params }) => {
        await doAddSubmessage(db, user, params.message_id, params.msg_type, params.content);
        return {};
      },
    ),
    reportMessage: userEndpoint(
      {
        pathParams: ["message_id"],
        operationId: "report-message",
        summary: "Report a message",
        tag: "messages",
        params: {
          report_type: str({ maxLength: 32 }).describe(
            REPORT_TYPES.map((t) => `"${t.key}"`).join(", "),
          ),
          description: str({ maxLength: MAX_REPORT_DESCRIPTION_LENGTH * 4 })
            .default("")
            .describe(
              `Why (required for "other"), at most ${String(MAX_REPORT_DESCRIPTION_LENGTH)} characters`,
            ),
        },
      },
      async ({ user, path, params }) => {
        await doReportMessage(
          db,
          user,
          {
            messageId: path.message_id,
            reportType: params.report_type,
            description: params.description,
          },
          config.CHAT_MAX_REPORTS_PER_HOUR,
        );
        return {};
      },
    ),
  };
}
