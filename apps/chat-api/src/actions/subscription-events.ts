import { subscriptionsTo } from "../db/queries/subscriptions";
import type { Tx } from "../db/kysely";
import type { Channel } from "../gen/prisma/client";
import { sendEvent, sendEvents } from "../realtime/queue";
import { subscriptionViews } from "./channel-view";
import { channelAudience } from "./channels";

/**
 * Tells everyone concerned that `userIds` were subscribed to `channel`
 * (inside the transaction that subscribed them): each new subscriber's
 * clients get the subscription (`subscription` `add`, with subscribers),
 * everyone else who can see the channel gets `peer_add`. New subscribers
 * whose subscriptions look alike (the usual case: all of them) share one
 * view and one event row, so the work does not grow with their number
 * squared (each view lists every subscriber).
 */
export async function announceSubscriptions(
  tx: Tx,
  channel: Channel,
  userIds: readonly number[],
): Promise<void> {
  if (userIds.length === 0) return;
  const rows = await subscriptionsTo(tx, channel.id, userIds);
  const alike = new Map<string, { row: (typeof rows)[number]; userIds: number[] }>();
  for (const row of rows) {
    const { id: _id, user_id: userId, date_created: _date, ...own } = row;
    const key = JSON.stringify(own);
    const group = alike.get(key);
    if (group === undefined) alike.set(key, { row, userIds: [userId] });
    else group.userIds.push(userId);
  }
  const groups = [...alike.values()];
  const views = await subscriptionViews(
    tx,
    groups.map((g) => ({ ...g.row, channel })),
    true,
  );
  await sendEvents(
    tx,
    groups.map((group, i) => ({
      userIds: group.userIds,
      event: { type: "subscription", op: "add", subscriptions: [views[i]] },
    })),
  );
  const added = new Set(userIds);
  const peers = (await channelAudience(tx, channel)).filter((id) => !added.has(id));
  await sendEvent(tx, peers, {
    type: "subscription",
    op: "peer_add",
    stream_ids: [channel.id],
    user_ids: [...userIds].sort((a, b) => a - b),
  });
}

/**
 * Tells everyone concerned that `userIds` left `channel`: each one's clients
 * get `subscription` `remove`, the others who can see the channel
 * `peer_remove`.
 */
export async function announceUnsubscriptions(
  tx: Tx,
  channel: Channel,
  userIds: readonly number[],
): Promise<void> {
  if (userIds.length === 0) return;
  await sendEvent(tx, userIds, {
    type: "subscription",
    op: "remove",
    subscriptions: [{ name: channel.name, stream_id: channel.id }],
  });
  const gone = new Set(userIds);
  const peers = (await channelAudience(tx, channel)).filter((id) => !gone.has(id));
  await sendEvent(tx, peers, {
    type: "subscription",
    op: "peer_remove",
    stream_ids: [channel.id],
    user_ids: [...userIds].sort((a, b) => a - b),
  });
}
