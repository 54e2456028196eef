import {
  doUpdatePresence,
  MAX_HISTORY_DAYS,
  legacyPresence,
  realmPresenceTimes,
  realmPresences,
  userPresence,
} from "../actions/presence";
import { bool, int, oneOf } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** Presence: report one's own, read the realm's. */
export function presenceRoutes({ db, config, presence }: Services) {
  const limitToAccessible = config.CHAT_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE;
  return {
    updatePresence: userEndpoint(
      {
        operationId: "update-presence",
        summary: "Update your presence",
        tag: "users",
        access: { bots: false },
        params: {
          status: oneOf(["active", "idle"]),
          ping_only: bool().default(false),
          new_user_input: bool().default(false),
          slim_presence: bool().default(false),
          // A bigint number (presences.last_update_id), within what JSON numbers hold exactly.
          last_update_id: int({ min: -1, max: Number.MAX_SAFE_INTEGER }).optional(),
          history_limit_days: int({ min: 1, max: MAX_HISTORY_DAYS }).optional(),
        },
      },
      async ({ user, params }) => {
        await doUpdatePresence(db, user, params.status, {
          limitToAccessible,
          eventsUserLimit: config.CHAT_PRESENCE_EVENTS_USER_LIMIT,
        });
        if (params.ping_only) return {};
        const lastUpdateId = params.last_update_id;
        const query = {
          limitToAccessible,
          ...(params.history_limit_days === undefined
            ? {}
            : { historyDays: params.history_limit_days }),
        };
        const serverTimestamp = Date.now() / 1000;
        // The modern form for `last_update_id`, and for the deprecated `slim_presence`.
        if (lastUpdateId !== undefined || params.slim_presence) {
          const { presences, lastUpdateId: newest } = await realmPresenceTimes(db, presence, user, {
            ...query,
            ...(lastUpdateId !== undefined && lastUpdateId >= 0
              ? { afterUpdateId: lastUpdateId }
              : {}),
          });
          return { presence_last_update_id: newest, server_timestamp: serverTimestamp, presences };
        }
        const rows = await realmPresences(db, user, query);
        return {
          server_timestamp: serverTimestamp,
          presences: Object.fromEntries(rows.map((p) => [p.email, legacyPresence(p)])),
        };
      },
    ),
    getPresence: userEndpoint(
      {
        operationId: "get-presence",
        summary: "Get presence of all users",
        tag: "users",
        params: {},
      },
      async ({ user }) => {
        const rows = await realmPresences(db, user, { limitToAccessible });
        return {
          presences: Object.fromEntries(rows.map((p) => [p.email, legacyPresence(p)])),
          server_timestamp: Date.now() / 1000,
        };
      },
    ),
    getUserPresence: userEndpoint(
      {
        pathParams: ["user_id_or_email"],
        operationId: "get-user-presence",
        summary: "Get a user's presence",
        tag: "users",
        params: {},
      },
      async ({ user, path }) => userPresence(db, user, path.user_id_or_email, limitToAccessible),
    ),
  };
}
