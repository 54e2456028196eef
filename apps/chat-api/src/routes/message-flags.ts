import { z } from "zod";
import {
  doMarkAllAsRead,
  doMarkChannelAsRead,
  doUpdateFlags,
  doUpdateFlagsForNarrow,
} from "../actions/message-flags";
import { MAX_MESSAGES_PER_FETCH, parseAnchor } from "../actions/message-fetch";
import { narrowSchema, narrowTerm } from "../lib/narrow";
import { bool, int, isoDate, json, oneOf, str } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** Message flags: what a user has read, starred or collapsed. */
export function messageFlagRoutes({ db, config }: Services) {
  return {
    updateFlags: userEndpoint(
      {
        operationId: "update-message-flags",
        summary: "Update personal message flags",
        tag: "messages",
        params: {
          messages: json(z.array(z.int32()).max(MAX_MESSAGES_PER_FETCH)),
          op: oneOf(["add", "remove"]),
          flag: str({ maxLength: 100 }),
        },
      },
      async ({ user, params }) => {
        await doUpdateFlags(db, user, params.messages, params.op, params.flag);
        return { messages: params.messages };
      },
    ),
    updateFlagsForNarrow: userEndpoint(
      {
        operationId: "update-message-flags-for-narrow",
        summary: "Update personal message flags for narrow",
        tag: "messages",
        params: {
          anchor: str().describe(
            "A message id (up to 10^16), newest, oldest, first_unread or date",
          ),
          anchor_date: isoDate().optional(),
          include_anchor: bool().default(true),
          num_before: int({ min: 0 }),
          num_after: int({ min: 0 }),
          narrow: json(narrowSchema).default([]),
          op: oneOf(["add", "remove"]),
          flag: str({ maxLength: 100 }),
        },
      },
      async ({ user, params }) =>
        doUpdateFlagsForNarrow(
          db,
          user,
          {
            anchor: parseAnchor(params.anchor, params.anchor_date),
            numBefore: params.num_before,
            numAfter: params.num_after,
            includeAnchor: params.include_anchor,
            narrow: params.narrow.map(narrowTerm),
          },
          params.op,
          params.flag,
        ),
    ),
    markChannelAsRead: userEndpoint(
      {
        operationId: "mark-stream-as-read",
        summary: "Mark messages in a channel as read",
        tag: "messages",
        params: { stream_id: int({ min: 1 }) },
      },
      async ({ user, params }) => {
        await doMarkChannelAsRead(db, user, params.stream_id);
        return {};
      },
    ),
    markTopicAsRead: userEndpoint(
      {
        operationId: "mark-topic-as-read",
        summary: "Mark messages in a topic as read",
        tag: "messages",
        params: {
          stream_id: int({ min: 1 }),
          topic_name: str({ maxLength: 60 }),
        },
      },
      async ({ user, params }) => {
        await doMarkChannelAsRead(db, user, params.stream_id, params.topic_name);
        return {};
      },
    ),
    markAllAsRead: userEndpoint(
      {
        operationId: "mark-all-as-read",
        summary: "Mark all messages as read",
        tag: "messages",
        deprecated: true,
        params: {},
      },
      async ({ user }) => ({
        complete: await doMarkAllAsRead(db, user, config.CHAT_MARK_READ_BUDGET_MS),
      }),
    ),
  };
}
