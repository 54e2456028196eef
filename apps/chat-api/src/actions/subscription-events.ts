import { subscribersByChannel, subscriptionsTo } from "../db/queries/subscriptions";
import type { Tx } from "../db/kysely";
import type { Channel, Subscription } from "../gen/prisma/client";
import { channelViewersByChannel } from "../db/queries/channels";
import { sendEvents } from "../realtime/queue";
import { subscriptionViews } from "./channel-view";

/**
 * Tells everyone concerned that people were subscribed to channels (inside
 * the transaction that subscribed them), for any number of channels in a few
 * statements: each new subscriber's clients get the subscription
 * (`subscription` `add`, with subscribers), everyone else who can see the
 * channel gets `peer_add`. New subscribers of a channel whose subscriptions
 * look alike (the usual case: all of them) share one view and one event row,
 * so the work does not grow with their number squared (each view lists every
 * subscriber).
 */
export async function announceSubscriptions(
  tx: Tx,
  added: readonly { channel: Channel; userIds: readonly number[] }[],
): Promise<void> {
  const changed = added.filter((entry) => entry.userIds.length > 0);
  if (changed.length === 0) return;
  const groups: { row: Subscription & { channel: Channel }; userIds: number[] }[] = [];
  for (const { channel, userIds } of changed) {
    const alike = new Map<
      string,
      { row: Subscription & { channel: Channel }; userIds: number[] }
    >();
    for (const row of await subscriptionsTo(tx, channel.id, userIds)) {
      const { id: _id, user_id: userId, date_created: _date, ...own } = row;
      const key = JSON.stringify(own);
      const group = alike.get(key);
      if (group === undefined) alike.set(key, { row: { ...row, channel }, userIds: [userId] });
      else group.userIds.push(userId);
    }
    groups.push(...alike.values());
  }
  // Read once for both the views (each lists its channel's subscribers) and the audiences.
  const subscribers = await subscribersByChannel(
    tx,
    changed.map((entry) => entry.channel.id),
  );
  const views = await subscriptionViews(
    tx,
    groups.map((g) => g.row),
    true,
    subscribers,
  );
  const audiences = await channelViewersByChannel(
    tx,
    changed.map((entry) => entry.channel),
    subscribers,
  );
  // One `add` per set of new subscribers, with all their subscriptions; one
  // `peer_add` per set of people told of the same newcomers (in a realm of
  // public channels: one for all of them), as Zulip's events allow.
  const adds = new Map<string, { userIds: number[]; subscriptions: unknown[] }>();
  groups.forEach((group, i) => {
    const key = [...group.userIds].sort((a, b) => a - b).join(",");
    const entry = adds.get(key);
    if (entry === undefined) adds.set(key, { userIds: group.userIds, subscriptions: [views[i]] });
    else entry.subscriptions.push(views[i]);
  });
  const peers = new Map<string, { userIds: number[]; joined: number[]; streamIds: number[] }>();
  for (const { channel, userIds } of changed) {
    const joined = [...new Set(userIds)].sort((a, b) => a - b);
    const newcomers = new Set(joined);
    const told = (audiences.get(channel.id) ?? [])
      .filter((id) => !newcomers.has(id))
      .sort((a, b) => a - b);
    const key = `${joined.join(",")}|${told.join(",")}`;
    const entry = peers.get(key);
    if (entry === undefined) peers.set(key, { userIds: told, joined, streamIds: [channel.id] });
    else entry.streamIds.push(channel.id);
  }
  await sendEvents(tx, [
    ...[...adds.values()].map(({ userIds, subscriptions }) => ({
      userIds,
      event: { type: "subscription", op: "add", subscriptions },
    })),
    ...[...peers.values()].map(({ userIds, joined, streamIds }) => ({
      userIds,
      event: { type: "subscription", op: "peer_add", stream_ids: streamIds, user_ids: joined },
    })),
  ]);
}

/**
 * Tells everyone concerned that people left channels (inside the transaction
 * that unsubscribed them), for any number of channels in a few statements:
 * the leavers' clients get `subscription` `remove`, the others who can see a
 * channel `peer_remove`; channels with the same leavers (and the same people
 * told) share one event.
 */
export async function announceUnsubscriptions(
  tx: Tx,
  removed: readonly { channel: Channel; userIds: readonly number[] }[],
): Promise<void> {
  const changed = removed.filter((entry) => entry.userIds.length > 0);
  if (changed.length === 0) return;
  const audiences = await channelViewersByChannel(
    tx,
    changed.map((entry) => entry.channel),
  );
  const removes = new Map<string, { userIds: number[]; subscriptions: object[] }>();
  const peers = new Map<string, { userIds: number[]; left: number[]; streamIds: number[] }>();
  for (const { channel, userIds } of changed) {
    const left = [...new Set(userIds)].sort((a, b) => a - b);
    const leftKey = left.join(",");
    const subscription = { name: channel.name, stream_id: channel.id };
    const remove = removes.get(leftKey);
    if (remove === undefined)
      removes.set(leftKey, { userIds: left, subscriptions: [subscription] });
    else remove.subscriptions.push(subscription);
    const gone = new Set(left);
    const told = (audiences.get(channel.id) ?? [])
      .filter((id) => !gone.has(id))
      .sort((a, b) => a - b);
    const key = `${leftKey}|${told.join(",")}`;
    const peer = peers.get(key);
    if (peer === undefined) peers.set(key, { userIds: told, left, streamIds: [channel.id] });
    else peer.streamIds.push(channel.id);
  }
  await sendEvents(tx, [
    ...[...removes.values()].map(({ userIds, subscriptions }) => ({
      userIds,
      event: { type: "subscription", op: "remove", subscriptions },
    })),
    ...[...peers.values()].map(({ userIds, left, streamIds }) => ({
      userIds,
      event: { type: "subscription", op: "peer_remove", stream_ids: streamIds, user_ids: left },
    })),
  ]);
}
