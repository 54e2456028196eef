import { z } from "zod";
import { MAX_HISTORY_DAYS } from "../actions/presence";
import { fetchInitialState } from "../register/initial-state";
import { createQueue, deleteQueue, pollEvents, queueTimeoutSeconds } from "../realtime/queue";
import { jsonArray } from "../lib/json-text";
import { bool, int, json, str } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import { InFlightByUser } from "../lib/concurrency";
import { VERSION_FIELDS } from "../lib/version";
import type { Services } from "../http/context";

const eventTypes = z.array(z.string().max(100)).max(100);

/** The real-time events system: register a queue with the initial state, poll it, delete it. */
export function eventRoutes({ db, config, events, presence }: Services) {
  // Registrations one user has running on this replica: each holds pool connections.
  const registering = new InFlightByUser("event queue registrations");
  return {
    registerQueue: userEndpoint(
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
          presence_history_limit_days: int({ min: 1, max: MAX_HISTORY_DAYS }).optional(),
          client_capabilities: json(z.record(z.string(), z.unknown())).default({}),
          narrow: json(z.array(z.unknown())).default([]),
          idle_queue_timeout: str({ maxLength: 20 })
            .optional()
            .describe('"mobile" (12 hours), or seconds (at most 7 days)'),
        },
      },
      async ({ realm, user, params }) => {
        const release = registering.admit(user.id, config.CHAT_MAX_REGISTERS_PER_USER);
        try {
          const capability = (name: string) => params.client_capabilities[name] === true;
          const idleTimeout = queueTimeoutSeconds(params.idle_queue_timeout);
          // The queue first: whatever changes after this point reaches it as events.
          const queueId = await createQueue(db, events, user, {
            maxPerUser: config.CHAT_MAX_QUEUES_PER_USER,
            eventTypes: params.event_types,
            options: {
              apply_markdown: params.apply_markdown,
              client_gravatar: params.client_gravatar,
              slim_presence: params.slim_presence,
              bulk_message_deletion: capability("bulk_message_deletion"),
              include_deactivated_groups: capability("include_deactivated_groups"),
              ...(idleTimeout === undefined ? {} : { idle_timeout_seconds: idleTimeout }),
            },
          });
          const state = await fetchInitialState(db, config, realm, user, {
            wanted: params.fetch_event_types ?? params.event_types,
            slimPresence: params.slim_presence,
            presenceBoards: presence,
            presenceHistoryDays: params.presence_history_limit_days,
            limitPresenceToAccessible: config.CHAT_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE,
            clientGravatar: params.client_gravatar,
            includeSubscribers: params.include_subscribers,
            capabilities: {
              notificationSettingsNull: capability("notification_settings_null"),
              emptyTopicName: capability("empty_topic_name"),
              includeDeactivatedGroups: capability("include_deactivated_groups"),
            },
          });
          return {
            queue_id: queueId,
            last_event_id: -1,
            ...VERSION_FIELDS,
            ...state,
          };
        } finally {
          release();
        }
      },
    ),
    getEvents: userEndpoint(
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
        const release = events.polls.admit(user.id, config.CHAT_MAX_POLLS_PER_USER);
        try {
          return {
            events: jsonArray(
              await pollEvents(db, events, user.id, {
                queueId: params.queue_id,
                lastEventId: params.last_event_id,
                dontBlock: params.dont_block,
                heartbeatMs: config.CHAT_EVENT_HEARTBEAT_SECONDS * 1000,
                client: request.client,
              }),
            ),
            queue_id: params.queue_id,
          };
        } finally {
          release();
        }
      },
    ),
    deleteQueue: userEndpoint(
      {
        operationId: "delete-queue",
        summary: "Delete an event queue",
        tag: "real_time_events",
        params: { queue_id: str() },
      },
      async ({ user, params }) => {
        await deleteQueue(db, events, user.id, params.queue_id);
        return {};
      },
    ),
  };
}
