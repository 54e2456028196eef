import { activeUserIds, peopleNamed } from "../db/queries/users";
import { notificationBot } from "../db/queries/bots";
import { insertMessageReport, reportTimesSince } from "../db/queries/message-reports";
import { messageWithSenderAndChannel } from "../db/queries/messages";
import { liveChannelInRealm } from "../db/queries/channels";
import { realmWithModerationChannel, updateRealm } from "../db/queries/realms";
import { JsonableError, RateLimitedError } from "@repo/envelope";
import type { Database } from "../db/database";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import type { CacheBus } from "../caches/cache-bus";
import { codePoints } from "../lib/text";
import { sendBotMessage } from "./message-send";
import { MAX_MESSAGE_LENGTH } from "./message-checks";
import { narrowedMessages } from "../db/queries/message-narrow";

/** Zulip's report types, in its order: `report_type` values and `server_report_message_types`. */
export const REPORT_TYPES = [
  { key: "spam", name: "Spam" },
  { key: "harassment", name: "Harassment" },
  { key: "inappropriate", name: "Inappropriate content" },
  { key: "norms", name: "Violates community norms" },
  { key: "other", name: "Other reason" },
] as const;

/** Longest explanation of a report, in code points (Zulip's). */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;

/** How much of the reported message the report quotes (Zulip's: room for the rest). */
const MAX_REPORTED_SNIPPET_LENGTH = MAX_MESSAGE_LENGTH - MAX_REPORT_DESCRIPTION_LENGTH - 500;

/**
 * PATCH /realm's `moderation_request_channel_id`: -1 turns reporting off;
 * otherwise a private channel of the realm that is not archived. The realm
 * hears of it in a `realm` `update` event, as Zulip sends it (also when -1
 * is set again).
 */
export async function doSetModerationChannel(
  db: Database,
  bus: CacheBus,
  actor: AuthedUser,
  channelId: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    if (channelId >= 0) {
      const channel = await liveChannelInRealm(tx, actor.realm_id, channelId);
      if (channel === null) throw new JsonableError("Invalid channel ID");
      if (!channel.invite_only)
        throw new JsonableError("Moderation request channel must be private.");
    }
    await updateRealm(tx, actor.realm_id, {
      moderation_request_channel_id: channelId >= 0 ? channelId : null,
    });
    await sendEvent(tx, await activeUserIds(tx, actor.realm_id), {
      type: "realm",
      op: "update",
      property: "moderation_request_channel_id",
      value: channelId >= 0 ? channelId : -1,
    });
    // Every replica's cached realm row carries the setting.
    await bus.announce(tx, { realm: actor.realm_id });
  });
  bus.apply({ realm: actor.realm_id });
}

/** A report as POST /messages/{message_id}/report gives it. */
export interface MessageReportRequest {
  messageId: number;
  reportType: string;
  description: string;
}

/**
 * POST /messages/{message_id}/report, as Zulip: a known report type, an
 * explanation for "other"; reporting on in the realm; a message the
 * reporter can read. The notification bot posts the report in the
 * moderation channel, in the topic of the reported person's requests, and
 * the report is recorded: one transaction. At most `perHour` reports per
 * person per hour (429 past it).
 */
export async function doReportMessage(
  db: Database,
  user: AuthedUser,
  report: MessageReportRequest,
  perHour: number,
): Promise<void> {
  const type = REPORT_TYPES.find((t) => t.key === report.reportType);
  if (type === undefined) throw new JsonableError("Invalid report_type");
  if (codePoints(report.description) > MAX_REPORT_DESCRIPTION_LENGTH)
    throw new JsonableError(
      `description is too long (limit: ${String(MAX_REPORT_DESCRIPTION_LENGTH)} characters)`,
    );
  if (type.key === "other" && report.description === "")
    throw new JsonableError("An explanation is required.");
  const realm = await realmWithModerationChannel(db, user.realm_id);
  const channel = realm.moderation_request_channel;
  if (channel === null || channel.is_archived)
    throw new JsonableError("Message reporting is not enabled in this organization.");
  const [readable] = await narrowedMessages(
    db,
    user.id,
    [{ negated: false, kind: "id", id: report.messageId }],
    { op: ">=", anchor: 0, limit: 1 },
  );
  if (readable === undefined) throw new JsonableError("Invalid message(s)");
  await db.transaction(async (tx) => {
    const hourAgo = new Date(Date.now() - 3_600_000);
    const recent = await reportTimesSince(tx, user.id, hourAgo, perHour);
    const oldest = recent[0];
    if (recent.length >= perHour && oldest !== undefined)
      throw new RateLimitedError((oldest.getTime() + 3_600_000 - Date.now()) / 1000);
    const message = await messageWithSenderAndChannel(tx, report.messageId);
    const bot = await notificationBot(tx, user.realm_id);
    if (bot === null)
      throw new JsonableError("Message reporting is not enabled in this organization.");
    const people =
      message.dm_key === null ? [] : await peopleNamed(tx, message.dm_key.split(",").map(Number));
    await sendBotMessage(
      tx,
      bot,
      {
        kind: "channel",
        channel,
        topic: `${message.sender.full_name}'s moderation requests`.slice(0, 60),
      },
      reportContent({
        reporter: user,
        sender: message.sender,
        where:
          message.channel === null
            ? { kind: "direct", people }
            : { kind: "channel", name: message.channel.name, topic: message.topic, id: message.id },
        type: type.key,
        description: report.description,
        content: message.content,
      }),
    );
    await insertMessageReport(tx, {
      realm_id: user.realm_id,
      reporter_id: user.id,
      message_id: message.id,
      report_type: type.key,
    });
  });
}

type Person = { id: number; full_name: string };

/** A person's silent mention. */
const silent = (person: Person) => `@_**${person.full_name}|${String(person.id)}**`;

/** The report's text, in Zulip's words: who reported what, why, and the message in a spoiler. */
function reportContent(report: {
  reporter: Person;
  sender: Person;
  where:
    | { kind: "direct"; people: readonly Person[] }
    | { kind: "channel"; name: string; topic: string; id: number };
  type: string;
  description: string;
  content: string;
}): string {
  const [reporter, sender] = [silent(report.reporter), silent(report.sender)];
  let header: string;
  if (report.where.kind === "channel") {
    const link = `#**${report.where.name}>${report.where.topic}@${String(report.where.id)}**`;
    header = `${reporter} reported ${link} sent by ${sender}.`;
  } else if (report.where.people.length <= 2) {
    header = `${reporter} reported a DM sent by ${sender}.`;
  } else {
    const mentions = report.where.people.map(silent);
    const last = mentions.pop() ?? "";
    header = `${reporter} reported a DM sent by ${sender} to ${mentions.join(", ")}, and ${last}.`;
  }
  const snippet = truncated(report.content, MAX_REPORTED_SNIPPET_LENGTH);
  const [notes, quoted] = [fenceFor(report.description), fenceFor(snippet)];
  return (
    `${header}\n- Reason: **${report.type}**\n- Notes:\n` +
    `${notes}quote\n${report.description}\n${notes}` +
    `\n${quoted} spoiler **Message sent by ${sender}**\n${snippet}\n${quoted}\n`
  );
}

/** `text` cut to `limit` code points, marked as Zulip marks it. */
function truncated(text: string, limit: number): string {
  if (codePoints(text) <= limit) return text;
  const marker = "\n[message truncated]";
  return Array.from(text)
    .slice(0, limit - marker.length)
    .join("")
    .concat(marker);
}

/** A code fence `text` cannot close: three backticks, or one more than its longest run. */
function fenceFor(text: string): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return "`".repeat(Math.max(3, longest + 1));
}
