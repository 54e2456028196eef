/**
 * Missed-message e-mails, as Zulip sends them: a direct message or a mention
 * that its recipient has not read `delay` after it was sent, while none of
 * their clients was polling, is e-mailed to them (their
 * `enable_offline_email_notifications`, `wildcard_mentions_notify` and
 * `message_content_in_email_notifications` settings followed), one e-mail per
 * conversation with every message they missed in it, with a link to stop
 * them.
 *
 * One replica at a time scans the messages once each, in order, holding the
 * scan's row; the e-mails go to the outbox in the transaction that moves the
 * scan on, so each is queued once across replicas and restarts.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Database } from "../db/database";
import type { Tx } from "../db/kysely";
import type { Realm } from "../gen/prisma/client";
import {
  type MissedMessage,
  advanceMissedMessageScan,
  claimMissedMessageScan,
  missedMessages,
  nextScanEnd,
} from "../db/queries/missed-messages";
import { type OutboxEmailRow, emailsQueuedSince, queueEmails } from "../db/queries/outbox";
import { realmById } from "../db/queries/realms";
import { SECRET_NAMES, serverSecret } from "../db/queries/server-secrets";
import { peopleNamed, userById } from "../db/queries/users";
import type { DatabaseAndBus } from "../caches/cache-bus";
import { doUpdateSettings } from "./settings";

/**
 * Missed-message e-mails one address receives in an hour, at most, counting
 * every e-mail queued to it: someone who starts many conversations with a
 * person cannot flood their mailbox. Past it, the conversations are left to
 * the person's next visit.
 */
export const MISSED_EMAILS_PER_HOUR = 12;
/** Messages one scan looks at, at most (a transaction of bounded size). */
const SCAN_SLICE = 1000;
/** Messages older than this are never e-mailed (a scan that fell far behind catches up without). */
const MAX_AGE_MS = 24 * 3_600_000;
/**
 * A client that polled this long before a message's delay began still counts
 * as connected: a held long-poll polls again only at Zulip's heartbeat
 * (about a minute), and polls are written down every few seconds.
 */
const POLL_MARGIN_MS = 70_000;
/** Messages one e-mail shows; it says how many more there are. */
const MESSAGES_PER_EMAIL = 20;
/** The characters of a message an e-mail shows. */
const CONTENT_CHARS = 2_000;

/** Where the e-mails' links point: each realm's URL. */
export type RealmUrlOf = (realm: Pick<Realm, "subdomain">) => string;

/**
 * Queues the missed-message e-mails of the next slice of messages sent at
 * least `delayMs` before `now`; answers how many e-mails were queued (0 when
 * another replica is scanning or nothing is due).
 */
export async function queueMissedMessageEmails(
  db: Database,
  realmUrlOf: RealmUrlOf,
  delayMs: number,
  now = new Date(),
): Promise<number> {
  const secret = await unsubscribeSecret(db);
  return db.transaction(async (tx) => {
    const last = await claimMissedMessageScan(tx);
    if (last === undefined) return 0;
    const sentBefore = new Date(now.getTime() - delayMs);
    const upTo = await nextScanEnd(tx, last, sentBefore, SCAN_SLICE);
    if (upTo === undefined) return 0;
    const missed = await missedMessages(
      tx,
      last,
      upTo,
      new Date(now.getTime() - MAX_AGE_MS),
      new Date(sentBefore.getTime() - POLL_MARGIN_MS),
    );
    const emails = await withinHourlyCap(
      tx,
      await composeEmails(tx, missed, realmUrlOf, secret),
      new Date(now.getTime() - 3_600_000),
    );
    await queueEmails(tx, emails);
    await advanceMissedMessageScan(tx, upTo);
    return emails.length;
  });
}

/** One e-mail per person and conversation. */
async function composeEmails(
  tx: Tx,
  missed: readonly MissedMessage[],
  realmUrlOf: RealmUrlOf,
  secret: Buffer,
) {
  if (missed.length === 0) return [];
  const conversations = new Map<string, MissedMessage[]>();
  for (const row of missed) {
    const where =
      row.channel_id === null
        ? `d${row.dm_key ?? ""}`
        : `c${String(row.channel_id)}:${row.topic.toLowerCase()}`;
    const key = `${String(row.user_id)}|${where}`;
    const list = conversations.get(key);
    if (list === undefined) conversations.set(key, [row]);
    else list.push(row);
  }
  const dmIds = new Set(
    missed.flatMap((row) => (row.dm_key === null ? [] : row.dm_key.split(",").map(Number))),
  );
  const names = new Map(
    (await peopleNamed(tx, [...dmIds])).map((person) => [person.id, person.full_name]),
  );
  const realms = new Map<number, Realm>();
  for (const realmId of new Set(missed.map((row) => row.realm_id)))
    realms.set(realmId, await realmById(tx, realmId));
  return [...conversations.values()].flatMap((rows) => {
    const [first] = rows;
    const realm = first === undefined ? undefined : realms.get(first.realm_id);
    if (first === undefined || realm === undefined) return [];
    const url = realmUrlOf(realm);
    const others = (first.dm_key ?? "")
      .split(",")
      .map(Number)
      .filter((id) => id !== first.user_id && id > 0)
      .map((id) => names.get(id) ?? "someone");
    const subject =
      first.channel_id !== null
        ? `#${first.channel_name ?? ""} > ${first.topic}`
        : others.length > 1
          ? `Group DMs with ${listOf(others)}`
          : `DMs with ${first.sender_name}`;
    const shown = rows.slice(0, MESSAGES_PER_EMAIL).map((row) => {
      const content = row.with_content
        ? row.content.length > CONTENT_CHARS
          ? `${row.content.slice(0, CONTENT_CHARS)}…`
          : row.content
        : "(The content is not shown: your settings leave it out of e-mails.)";
      return `${row.sender_name}:\n${content}`;
    });
    const more =
      rows.length > MESSAGES_PER_EMAIL
        ? [`… and ${String(rows.length - MESSAGES_PER_EMAIL)} more.`]
        : [];
    const last = rows.at(-1) ?? first;
    const why =
      first.channel_id === null
        ? rows.length === 1
          ? "you were sent a direct message"
          : "you were sent direct messages"
        : "you were mentioned";
    const body = [
      `You have ${rows.length === 1 ? "a new message" : `${String(rows.length)} new messages`} in ${realm.name}:`,
      "",
      ...shown.flatMap((text) => [text, ""]),
      ...more,
      `Read and reply in Zulip: ${url}/${narrowLink(last, first.user_id)}`,
      "",
      "--",
      `You are getting this e-mail because ${why} while you were away.`,
      `To stop these e-mails: ${url}/accounts/unsubscribe/missed_messages/${unsubscribeToken(secret, first.user_id)}/`,
      "",
    ].join("\n");
    // A name or topic with a control character must not stop the scan: it becomes a space.
    // eslint-disable-next-line no-control-regex
    const header = subject.replace(/[\u0000-\u001f\u007f]/g, " ");
    if (/[\r\n]/.test(first.delivery_email)) return [];
    return [
      {
        realm_id: first.realm_id,
        to_address: first.delivery_email,
        subject: header,
        body_text: body,
      },
    ];
  });
}

/** The first of `emails` each address may still receive this hour ({@link MISSED_EMAILS_PER_HOUR}). */
async function withinHourlyCap(
  tx: Tx,
  emails: readonly OutboxEmailRow[],
  hourAgo: Date,
): Promise<OutboxEmailRow[]> {
  const queued = await emailsQueuedSince(
    tx,
    [...new Set(emails.map((email) => email.to_address))],
    hourAgo,
  );
  return emails.filter((email) => {
    const count = queued.get(email.to_address) ?? 0;
    queued.set(email.to_address, count + 1);
    return count < MISSED_EMAILS_PER_HOUR;
  });
}

/** "A", "A and B", "A, B, and C". */
function listOf(names: readonly string[]): string {
  if (names.length <= 2) return names.join(" and ");
  return `${names.slice(0, -1).join(", ")}, and ${names.at(-1) ?? ""}`;
}

/** Zulip's narrow link to a message in its conversation (its hash encoding: `%` as `.`). */
function narrowLink(row: MissedMessage, userId: number): string {
  const encode = (text: string) =>
    encodeURIComponent(text).replaceAll(".", "%2E").replaceAll("%", ".");
  const near = `/near/${String(row.message_id)}`;
  if (row.channel_id !== null)
    return `#narrow/channel/${String(row.channel_id)}-${encode(row.channel_name ?? "")}/topic/${encode(row.topic)}${near}`;
  const ids = (row.dm_key ?? "").split(",").filter((id) => id !== String(userId) && id !== "");
  return `#narrow/dm/${ids.join(",")}-${ids.length > 1 ? "group" : "dm"}${near}`;
}

/** The server's key for unsubscribe links. */
function unsubscribeSecret(db: Database): Promise<Buffer> {
  return serverSecret(db, SECRET_NAMES.unsubscribeLinks);
}

/** A person's unsubscribe token: their id and its HMAC (no row, no expiry). */
export function unsubscribeToken(secret: Buffer, userId: number): string {
  const mac = createHmac("sha256", secret)
    .update(`missed_messages:${String(userId)}`)
    .digest("base64url");
  return `${String(userId)}-${mac}`;
}

/**
 * The person of realm `realmId` an unsubscribe token was made for, or
 * undefined for a token the server did not make (or another realm's).
 */
export async function unsubscribeTokenUser(
  db: Database,
  realmId: number,
  token: string,
): Promise<number | undefined> {
  const found = /^([1-9][0-9]{0,9})-([A-Za-z0-9_-]{43})$/.exec(token);
  if (found === null) return undefined;
  const userId = Number(found[1]);
  const expected = unsubscribeToken(await unsubscribeSecret(db), userId);
  const same =
    expected.length === token.length && timingSafeEqual(Buffer.from(expected), Buffer.from(token));
  if (!same) return undefined;
  return (await userById(db, userId)).realm_id === realmId ? userId : undefined;
}

/**
 * The unsubscribe link's form: turns `enable_offline_email_notifications`
 * off for the token's person (a `user_settings` `update` to their clients).
 */
export async function unsubscribeFromMissedMessages(
  deps: DatabaseAndBus,
  userId: number,
): Promise<void> {
  const user = await userById(deps.db, userId);
  await doUpdateSettings(
    deps,
    { id: user.id, realm_id: user.realm_id },
    { enable_offline_email_notifications: false },
    undefined,
  );
}
