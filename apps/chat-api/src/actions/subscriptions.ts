import { realmById } from "../db/queries/realms";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { ErrorCode, JsonableError } from "@repo/envelope";
import type { Channel } from "../gen/prisma/client";
import type { AuthedUser } from "../caches/auth";
import { isAdministrator, isGuest } from "../lib/roles";
import { type NewChannel, checkChannelName, createChannel } from "./channel-create";
import { canSee, channelByName } from "./channels";
import { announceSubscriptions, announceUnsubscriptions } from "./subscription-events";
import { isGroupMember } from "./user-groups";
import { sendEvent } from "../realtime/queue";
import { findUsers } from "./user-lookup";
import { existingChannelNames } from "../db/queries/channels";
import {
  activateSubscriptions,
  deactivateSubscriptions,
  isSubscribed,
  updateSubscription,
} from "../db/queries/subscriptions";
import { RENDER_TIMEOUT_MESSAGE } from "../lib/markdown/context";
import { type RenderedAhead, renderAhead } from "./render-context";

/** What POST /users/me/subscriptions asks for, parsed. */
export interface SubscribeRequest {
  /** Channel names, each with the description a new channel gets. */
  channels: readonly { name: string; description: string }[];
  /** Users to subscribe (ids or emails); the caller when absent. */
  principals: readonly (number | string)[] | undefined;
  authorizationErrorsFatal: boolean;
  /** Options of channels this request creates. */
  creation: Omit<NewChannel, "name" | "description" | "subscribers">;
}

/** Zulip's answer: per user id, the channel names newly and already subscribed. */
export interface SubscribeResult {
  subscribed: Record<string, string[]>;
  already_subscribed: Record<string, string[]>;
  unauthorized?: string[];
}

/**
 * Subscribes users to channels by name in one transaction, creating the
 * channels that do not exist (with the creation rules of POST
 * /channels/create). Subscribing oneself needs access to the channel
 * (public for non-guests, or `can_subscribe_group`); subscribing others needs
 * `can_add_subscribers_group` (the realm's for public channels, the
 * channel's) or channel administration; administrators may do both anywhere.
 */
export async function doSubscribe(
  db: Database,
  user: AuthedUser,
  request: SubscribeRequest,
  options: { webPublicStreamsEnabled: boolean },
): Promise<SubscribeResult> {
  for (const { name } of request.channels) checkChannelName(name);
  const descriptions = await renderNewDescriptions(db, user, request.channels);
  return db.transaction((tx) => subscribeIn(tx, user, request, descriptions, options));
}

/**
 * The descriptions of the channels a subscription request would create,
 * rendered before its transaction, one at a time: by name (lower-cased), each
 * channel that did not exist when asked. Renders stop at the first that
 * fails, which the transaction then reports if it still creates that channel.
 */
async function renderNewDescriptions(
  db: Database,
  user: AuthedUser,
  channels: SubscribeRequest["channels"],
): Promise<Map<string, RenderedAhead>> {
  const rendered = new Map<string, RenderedAhead>();
  const existing = await existingChannelNames(
    db,
    user.realm_id,
    channels.map((c) => c.name),
  );
  for (const { name, description } of channels) {
    const key = name.toLowerCase();
    if (existing.has(key) || rendered.has(key)) continue;
    const ahead = await renderAhead(db, { realm_id: user.realm_id }, description, user.id);
    rendered.set(key, ahead);
    try {
      ahead();
    } catch {
      break;
    }
  }
  return rendered;
}

/** {@link doSubscribe}'s work inside transaction `tx`. */
async function subscribeIn(
  tx: Tx,
  user: AuthedUser,
  request: SubscribeRequest,
  descriptions: Map<string, RenderedAhead>,
  options: { webPublicStreamsEnabled: boolean },
): Promise<SubscribeResult> {
  const targets = await resolvePrincipals(tx, user, request.principals);
  const result: SubscribeResult = { subscribed: {}, already_subscribed: {} };
  const unauthorized: string[] = [];
  const record = (bucket: Record<string, string[]>, userId: number, name: string) => {
    (bucket[String(userId)] ??= []).push(name);
  };
  const seen = new Set<string>();
  // Existing channels' new subscribers, announced together once all are in.
  const added: { channel: Channel; userIds: number[] }[] = [];
  for (const { name, description } of request.channels) {
    if (seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    const existing = await channelByName(tx, user.realm_id, name);
    if (existing === null) {
      // Rendered before, unless the renders stopped at an earlier failure
      // (whose channel another request has created since).
      const rendered =
        descriptions.get(name.toLowerCase()) ??
        (() => {
          throw new JsonableError(RENDER_TIMEOUT_MESSAGE);
        });
      await createChannel(
        tx,
        user,
        { ...request.creation, name, description, subscribers: targets },
        rendered,
        options,
      );
      for (const target of targets) record(result.subscribed, target, name);
      continue;
    }
    if (!(await maySubscribe(tx, user, existing, targets))) {
      if (request.authorizationErrorsFatal)
        throw new JsonableError(`Unable to access channel (${existing.name}).`);
      unauthorized.push(existing.name);
      continue;
    }
    // One statement whatever the number of people.
    const fresh = await activateSubscriptions(tx, existing.id, targets);
    added.push({ channel: existing, userIds: targets.filter((target) => fresh.has(target)) });
    for (const target of targets)
      record(
        fresh.has(target) ? result.subscribed : result.already_subscribed,
        target,
        existing.name,
      );
  }
  await announceSubscriptions(tx, added);
  return request.authorizationErrorsFatal ? result : { ...result, unauthorized };
}

/** The users `principals` names (ids or emails), active and of the caller's realm; else `No such user`. */
async function resolvePrincipals(
  tx: Tx,
  user: AuthedUser,
  principals: readonly (number | string)[] | undefined,
): Promise<number[]> {
  if (principals === undefined) return [user.id];
  const found = await findUsers(tx, user.realm_id, principals, () => {
    throw new JsonableError("No such user");
  });
  if (found.some((target) => !target.is_active)) throw new JsonableError("No such user");
  return found.map((target) => target.id);
}

async function maySubscribe(
  tx: Tx,
  user: AuthedUser,
  channel: Channel,
  targets: readonly number[],
): Promise<boolean> {
  if (isAdministrator(user.role)) return true;
  const inGroup = async (groupId: number | null) =>
    groupId !== null && (await isGroupMember(tx, groupId, user.id, false));
  const others = targets.some((id) => id !== user.id);
  if (others) {
    const realm = await realmById(tx, user.realm_id);
    return (
      (await inGroup(channel.can_add_subscribers_group_id)) ||
      (await inGroup(channel.can_administer_channel_group_id)) ||
      (!channel.invite_only &&
        !isGuest(user.role) &&
        (await inGroup(realm.can_add_subscribers_group_id)))
    );
  }
  if (!channel.invite_only && !isGuest(user.role)) return true;
  return (
    (await inGroup(channel.can_subscribe_group_id)) ||
    (await inGroup(channel.can_add_subscribers_group_id)) ||
    (await inGroup(channel.can_administer_channel_group_id))
  );
}

/** Zulip's answer to an unsubscription: the channel names left and those that were not joined. */
export interface UnsubscribeResult {
  removed: string[];
  not_removed: string[];
}

/**
 * DELETE /users/me/subscriptions: unsubscribes users (the caller, or
 * `principals`) from channels by name, in one transaction. A channel the
 * caller cannot see is answered as missing; removing someone else needs
 * administration or the channel's `can_remove_subscribers_group`.
 */
export async function doUnsubscribe(
  db: Database,
  user: AuthedUser,
  names: readonly string[],
  principals: readonly (number | string)[] | undefined,
): Promise<UnsubscribeResult> {
  return db.transaction((tx) => unsubscribeIn(tx, user, names, principals));
}

/** {@link doUnsubscribe}'s work inside transaction `tx`. */
async function unsubscribeIn(
  tx: Tx,
  user: AuthedUser,
  names: readonly string[],
  principals: readonly (number | string)[] | undefined,
): Promise<UnsubscribeResult> {
  const targets = await resolvePrincipals(tx, user, principals);
  const result: UnsubscribeResult = { removed: [], not_removed: [] };
  const seen = new Set<number>();
  const left: { channel: Channel; userIds: number[] }[] = [];
  for (const name of names) {
    const channel = await channelByName(tx, user.realm_id, name);
    if (
      channel === null ||
      !(await canSee(user, channel, () => isSubscribed(tx, user.id, channel.id)))
    )
      throw new JsonableError(
        `Channel '${name}' does not exist`,
        ErrorCode.STREAM_DOES_NOT_EXIST,
        400,
        { stream: name },
      );
    if (seen.has(channel.id)) continue;
    seen.add(channel.id);
    const others = targets.some((id) => id !== user.id);
    if (
      others &&
      !isAdministrator(user.role) &&
      !(await isGroupMember(tx, channel.can_remove_subscribers_group_id, user.id, false))
    )
      throw new JsonableError("Insufficient permission");
    const leavers = await deactivateSubscriptions(tx, channel.id, targets);
    for (const target of targets)
      (leavers.includes(target) ? result.removed : result.not_removed).push(channel.name);
    left.push({ channel, userIds: leavers });
  }
  await announceUnsubscriptions(tx, left);
  return result;
}

/**
 * PATCH /users/me/subscriptions: the caller joins the channels of `add`
 * (creating missing ones, as POST does) and leaves those of `delete`, all
 * in one transaction; Zulip's answer of both.
 */
export async function doUpdateSubscriptions(
  db: Database,
  user: AuthedUser,
  add: SubscribeRequest,
  remove: readonly string[],
  options: { webPublicStreamsEnabled: boolean },
): Promise<SubscribeResult & UnsubscribeResult> {
  for (const { name } of add.channels) checkChannelName(name);
  const descriptions = await renderNewDescriptions(db, user, add.channels);
  return db.transaction(async (tx) => {
    const joined = await subscribeIn(tx, user, add, descriptions, options);
    const left = await unsubscribeIn(tx, user, remove, undefined);
    return { ...joined, ...left };
  });
}

/** One change of POST /users/me/subscriptions/properties. */
export interface SubscriptionChange {
  stream_id: number;
  property: string;
  value: boolean | string;
}

const NOTIFICATION_PROPERTIES = [
  "desktop_notifications",
  "audible_notifications",
  "push_notifications",
  "email_notifications",
  "wildcard_mentions_notify",
] as const;

/** The column update a change makes, checked as Zulip checks it. */
function propertyUpdate(change: SubscriptionChange): Record<string, boolean | string> {
  const { property, value } = change;
  if (property === "color") {
    if (typeof value !== "string" || !/^#[0-9a-fA-F]{6}$/.test(value))
      throw new JsonableError("color is not a valid hex color code");
    return { color: value.toLowerCase() };
  }
  const known = ["is_muted", "in_home_view", "pin_to_top", ...NOTIFICATION_PROPERTIES];
  if (!known.includes(property))
    throw new JsonableError(`Unknown subscription property: ${property}`);
  if (typeof value !== "boolean") throw new JsonableError(`${property} is not a boolean`);
  if (property === "in_home_view") return { is_muted: !value };
  return { [property]: value };
}

/**
 * POST /users/me/subscriptions/properties: changes settings of the caller's
 * subscriptions (colour, muting, pinning, notifications), all in one
 * transaction with a `subscription` `update` event each (muting also as the
 * legacy `in_home_view`, as Zulip sends it).
 */
export async function doSetSubscriptionProperties(
  db: Database,
  user: AuthedUser,
  changes: readonly SubscriptionChange[],
): Promise<void> {
  const updates = changes.map((change) => ({ change, data: propertyUpdate(change) }));
  await db.transaction(async (tx) => {
    for (const { change, data } of updates) {
      if (!(await updateSubscription(tx, user.id, change.stream_id, data)))
        throw new JsonableError(`Not subscribed to channel ID ${String(change.stream_id)}`);
      const events = Object.entries(data).flatMap(([property, value]) =>
        property === "is_muted"
          ? [
              { property: "in_home_view", value: !value },
              { property: "is_muted", value },
            ]
          : [{ property, value }],
      );
      for (const event of events)
        await sendEvent(tx, [user.id], {
          type: "subscription",
          op: "update",
          stream_id: change.stream_id,
          ...event,
        });
    }
  });
}
