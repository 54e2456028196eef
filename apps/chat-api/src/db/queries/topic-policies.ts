import { sql } from "kysely";
import type { Tx } from "../kysely";
import { sameText } from "./text";

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

/**
 * Removes a user's policy `policy` of a topic (any policy when undefined;
 * the topic's name compared case-insensitively).
 */
export async function clearTopicPolicy(
  tx: Tx,
  userId: number,
  channelId: number,
  topic: string,
  policy: number | undefined,
): Promise<void> {
  const query = tx.q
    .deleteFrom("user_topics")
    .where("user_id", "=", userId)
    .where("channel_id", "=", channelId)
    .where((eb) => sameText(eb, "topic_name", topic));
  await (policy === undefined ? query : query.where("visibility_policy", "=", policy)).execute();
}

/** Whether user `userId` has a policy for a topic of channel `channelId` (any case). */
export async function topicPolicyExists(
  tx: Tx,
  userId: number,
  channelId: number,
  topic: string,
): Promise<boolean> {
  const row = await tx.q
    .selectFrom("user_topics")
    .select("id")
    .where("user_id", "=", userId)
    .where("channel_id", "=", channelId)
    .where((eb) => sameText(eb, "topic_name", topic))
    .executeTakeFirst();
  return row !== undefined;
}

/** How many topics user `userId` has a visibility policy for. */
export function topicPolicyCount(tx: Tx, userId: number): Promise<number> {
  return tx.prisma.userTopic.count({ where: { user_id: userId } });
}

/** User `userId`'s topic visibility policies (only those of `policy` if given), by id, with their channels' names. */
export function topicPoliciesOf(tx: Tx, userId: number, policy?: number) {
  return tx.prisma.userTopic.findMany({
    where: { user_id: userId, ...(policy === undefined ? {} : { visibility_policy: policy }) },
    include: { channel: { select: { name: true } } },
    orderBy: { id: "asc" },
  });
}
