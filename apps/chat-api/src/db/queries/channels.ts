import { type Kysely, sql } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Tx } from "../kysely";
import { sameText } from "./text";

/** The id of realm `realmId`'s channel named `name`, compared case-insensitively as Zulip does. */
export async function channelIdByName(
  tx: Tx,
  realmId: number,
  name: string,
): Promise<number | undefined> {
  const row = await tx.q
    .selectFrom("channels")
    .select("id")
    .where("realm_id", "=", realmId)
    .where((eb) => sameText(eb, "name", name))
    .executeTakeFirst();
  return row?.id;
}

/** Whether the channel has a message in `topic` (compared case-insensitively). */
export async function topicExists(tx: Tx, channelId: number, topic: string): Promise<boolean> {
  const row = await tx.q
    .selectFrom("messages")
    .select("id")
    .where("channel_id", "=", channelId)
    .where((eb) => sameText(eb, "topic", topic))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Sets a user's visibility policy of a topic (the topic's name compared case-insensitively). */
export async function setTopicPolicy(
  tx: Tx,
  userId: number,
  channelId: number,
  topic: string,
  policy: number,
): Promise<void> {
  await tx.q
    .insertInto("user_topics")
    .values({
      user_id: userId,
      channel_id: channelId,
      topic_name: topic,
      visibility_policy: policy,
      last_updated: sql<Date>`now()`,
    })
    .onConflict((oc) =>
      // The unique index user_topics_user_id_channel_id_lower_topic_name_key (in the migrations).
      oc
        .expression(sql`user_id, channel_id, lower(topic_name)`)
        .doUpdateSet({ visibility_policy: policy, last_updated: sql<Date>`now()` }),
    )
    .execute();
}

/** Removes a user's policy `policy` of a topic (the topic's name compared case-insensitively). */
export async function clearTopicPolicy(
  tx: Tx,
  userId: number,
  channelId: number,
  topic: string,
  policy: number,
): Promise<void> {
  await tx.q
    .deleteFrom("user_topics")
    .where("user_id", "=", userId)
    .where("channel_id", "=", channelId)
    .where((eb) => sameText(eb, "topic_name", topic))
    .where("visibility_policy", "=", policy)
    .execute();
}

/** Channel `channelId`'s visibility columns and user `userId`'s subscription to it (null: none). */
export function channelVisibilityQuery(q: Kysely<DB>, channelId: number, userId: number) {
  return q
    .selectFrom("channels as c")
    .leftJoin("subscriptions as s", (join) =>
      join.onRef("s.channel_id", "=", "c.id").on("s.user_id", "=", userId),
    )
    .select(["c.realm_id", "c.is_web_public", "c.invite_only", "s.active as subscribed"])
    .where("c.id", "=", channelId);
}

/** {@link channelVisibilityQuery}, run on `tx`. */
export function channelVisibility(tx: Tx, channelId: number, userId: number) {
  return channelVisibilityQuery(tx.q, channelId, userId).executeTakeFirst();
}
