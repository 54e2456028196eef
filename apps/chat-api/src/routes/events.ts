import { CHAT_FEATURE_LEVEL } from "@repo/feature-levels";
import { z } from "zod";
import {
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  MAX_CHANNEL_NAME_LENGTH,
  MAX_TOPIC_LENGTH,
} from "../actions/channel-settings";
import { listDrafts } from "../actions/drafts";
import { legacyPresence, realmPresences } from "../actions/presence";
import { listLinkifiers, listProfileFields } from "../actions/realm-config";
import { listSavedSnippets } from "../actions/saved-snippets";
import { listUserGroups } from "../actions/user-groups";
import { createQueue, deleteQueue, pollEvents } from "../events/queue";
import { bool, int, json, str } from "../lib/params";
import type { Api } from "../lib/typed-endpoint";
import { CHAT_MERGE_BASE, CHAT_VERSION } from "../lib/version";
import type { Services } from "../services";

/** `max_message_length` of this server (the contract's content limit). */
const MAX_MESSAGE_LENGTH = 10_000;

const eventTypes = z.array(z.string().max(100)).max(100);

/** The real-time events system: register a queue with the initial state, poll it, delete it. */
export function eventRoutes(api: Api, { db, config, events }: Services): void {
  api.user(
    "POST",
    "/register",
    {
      operationId: "register-queue",
      summary: "Register an event queue",
      tag: "real_time_events",
      params: {
        event_types: json(eventTypes)
          .optional()
          .describe("Event types to receive; all when absent"),
        fetch_event_types: json(eventTypes)
          .optional()
          .describe("State to fetch; event_types when absent"),
        apply_markdown: bool().default(false),
        client_gravatar: bool().default(true),
        slim_presence: bool().default(false),
        include_subscribers: bool().default(false),
        all_public_streams: bool().default(false),
        presence_history_limit_days: int({ min: 1 }).optional(),
        client_capabilities: json(z.record(z.string(), z.unknown())).default({}),
        narrow: json(z.array(z.unknown())).default([]),
      },
    },
    async ({ realm, user, params }) => {
      // The queue first: whatever changes after this point reaches it as events.
      const queueId = await createQueue(db.prisma, user, {
        eventTypes: params.event_types,
        options: {
          apply_markdown: params.apply_markdown,
          client_gravatar: params.client_gravatar,
          slim_presence: params.slim_presence,
        },
      });
      const wanted = params.fetch_event_types ?? params.event_types;
      const wants = (type: string) => wanted === undefined || wanted.includes(type);
      const state: Record<string, unknown> = {};
      if (wants("custom_profile_fields"))
        state.custom_profile_fields = await listProfileFields(db.prisma, realm.id);
      if (wants("drafts")) {
        const row = await db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
        state.drafts = row.enable_drafts_synchronization
          ? await listDrafts(db.prisma, user.id)
          : [];
      }
      if (wants("presence")) {
        const rows = await realmPresences(db, user, {
          limitToAccessible: config.CHAT_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE,
          ...(params.presence_history_limit_days === undefined
            ? {}
            : { historyDays: params.presence_history_limit_days }),
        });
        state.presences = Object.fromEntries(
          rows.map((p) => [params.slim_presence ? String(p.user_id) : p.email, legacyPresence(p)]),
        );
        state.server_timestamp = Date.now() / 1000;
      }
      if (wants("realm_linkifiers"))
        state.realm_linkifiers = await listLinkifiers(db.prisma, realm.id);
      if (wants("realm_user_groups"))
        state.realm_user_groups = await listUserGroups(db.prisma, realm.id, true);
      if (wants("saved_snippets"))
        state.saved_snippets = await listSavedSnippets(db.prisma, user.id);
      if (wants("user_topic")) {
        const topics = await db.prisma.userTopic.findMany({
          where: { user_id: user.id },
          orderBy: { id: "asc" },
        });
        state.user_topics = topics.map((t) => ({
          stream_id: t.channel_id,
          topic_name: t.topic_name,
          last_updated: Math.floor(t.last_updated.getTime() / 1000),
          visibility_policy: t.visibility_policy,
        }));
      }
      return {
        queue_id: queueId,
        last_event_id: -1,
        chat_feature_level: CHAT_FEATURE_LEVEL,
        chat_version: CHAT_VERSION,
        chat_merge_base: CHAT_MERGE_BASE,
        max_stream_name_length: MAX_CHANNEL_NAME_LENGTH,
        max_stream_description_length: MAX_CHANNEL_DESCRIPTION_LENGTH,
        max_topic_length: MAX_TOPIC_LENGTH,
        max_message_length: MAX_MESSAGE_LENGTH,
        ...state,
      };
    },
  );

  api.user(
    "GET",
    "/events",
    {
      operationId: "get-events",
      summary: "Get events from an event queue",
      tag: "real_time_events",
      params: {
        queue_id: str(),
        last_event_id: int({ min: -1 }).optional(),
        dont_block: bool().default(false),
      },
    },
    async ({ user, params, request }) => {
      const release = events.admitPoll(user.id, config.CHAT_MAX_POLLS_PER_USER);
      try {
        return {
          events: await pollEvents(db.prisma, events, user.id, {
            queueId: params.queue_id,
            lastEventId: params.last_event_id,
            dontBlock: params.dont_block,
            heartbeatMs: config.CHAT_EVENT_HEARTBEAT_SECONDS * 1000,
            signal: request.signal,
          }),
          queue_id: params.queue_id,
        };
      } finally {
        release();
      }
    },
  );

  api.user(
    "DELETE",
    "/events",
    {
      operationId: "delete-queue",
      summary: "Delete an event queue",
      tag: "real_time_events",
      params: { queue_id: str() },
    },
    async ({ user, params }) => {
      await deleteQueue(db.prisma, user.id, params.queue_id);
      return {};
    },
  );
}
