import type { Tx } from "../db/kysely";
import type { Realm } from "../gen/prisma/client";
import { listDrafts } from "../actions/drafts";
import { legacyPresence, realmPresences } from "../actions/presence";
import { listLinkifiers, listProfileFields } from "../actions/realm-config";
import { listSavedSnippets } from "../actions/saved-snippets";
import { listUserGroups } from "../actions/user-groups";
import type { AuthedUser } from "../lib/auth";

/** What `POST /register` asks the initial state for. */
export interface StateRequest {
  /** The state types to fetch (`fetch_event_types`, else `event_types`); all when undefined. */
  wanted: readonly string[] | undefined;
  /** Presence keyed by user id instead of email. */
  slimPresence: boolean;
  presenceHistoryDays: number | undefined;
  /** CHAT_CAN_ACCESS_ALL_USERS_GROUP_LIMITS_PRESENCE. */
  limitPresenceToAccessible: boolean;
}

/**
 * The initial state of `POST /register` for each state type asked for (Zulip's
 * `fetch_initial_state_data`): read after the queue exists, so that whatever
 * changes later reaches the client as an event.
 */
export async function fetchInitialState(
  db: Tx,
  realm: Realm,
  user: AuthedUser,
  request: StateRequest,
): Promise<Record<string, unknown>> {
  const { wanted } = request;
  const wants = (type: string) => wanted === undefined || wanted.includes(type);
  const state: Record<string, unknown> = {};
  if (wants("custom_profile_fields"))
    state.custom_profile_fields = await listProfileFields(db, realm.id);
  if (wants("drafts")) {
    const row = await db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    state.drafts = row.enable_drafts_synchronization ? await listDrafts(db, user.id) : [];
  }
  if (wants("presence")) {
    const rows = await realmPresences(db, user, {
      limitToAccessible: request.limitPresenceToAccessible,
      ...(request.presenceHistoryDays === undefined
        ? {}
        : { historyDays: request.presenceHistoryDays }),
    });
    state.presences = Object.fromEntries(
      rows.map((p) => [request.slimPresence ? String(p.user_id) : p.email, legacyPresence(p)]),
    );
    state.server_timestamp = Date.now() / 1000;
  }
  if (wants("realm_linkifiers")) state.realm_linkifiers = await listLinkifiers(db, realm.id);
  if (wants("realm_user_groups"))
    state.realm_user_groups = await listUserGroups(db, realm.id, true);
  if (wants("saved_snippets")) state.saved_snippets = await listSavedSnippets(db, user.id);
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
  return state;
}
