import { type Expression, type ExpressionBuilder, type SqlBool, sql } from "kysely";
import type { DB } from "../../gen/kysely/tables";
import type { Tx } from "../kysely";

/** One narrow term, resolved to ids: what `GET /messages` filters a user's messages by. */
export type NarrowCondition = { negated: boolean } & (
  | { kind: "channel"; channelId: number }
  | { kind: "public-channels" }
  | { kind: "topic"; topic: string }
  | { kind: "sender"; userId: number }
  | { kind: "direct" }
  | { kind: "conversation"; dmKey: string }
  | { kind: "direct-including"; userId: number }
  | { kind: "flag"; bits: bigint }
  | { kind: "unread"; read: bigint }
  | { kind: "followed"; policy: number }
  | { kind: "resolved"; prefix: string }
  | { kind: "search"; text: string }
  | { kind: "has"; what: "link" | "image" | "attachment" }
  | { kind: "id"; id: number }
  | { kind: "ids"; ids: readonly number[] }
);

type Scope = ExpressionBuilder<DB & { um: DB["user_messages"]; m: DB["messages"] }, "um" | "m">;

/** The SQL test of one condition on a row of `user_messages um` joined to `messages m`. */
function test(eb: Scope, userId: number, c: NarrowCondition): Expression<SqlBool> {
  switch (c.kind) {
    case "channel":
      return eb("m.channel_id", "=", c.channelId);
    case "public-channels":
      return eb.exists(
        eb
          .selectFrom("channels as c")
          .select("c.id")
          .whereRef("c.id", "=", "m.channel_id")
          .where("c.invite_only", "=", false),
      );
    case "topic":
      return eb(eb.fn("lower", ["m.topic"]), "=", c.topic.toLowerCase());
    case "sender":
      return eb("m.sender_id", "=", c.userId);
    case "direct":
      return eb("m.dm_key", "is not", null);
    case "conversation":
      return eb("m.dm_key", "=", c.dmKey);
    case "direct-including":
      return sql<SqlBool>`(',' || ${eb.ref("m.dm_key")} || ',') like ${`%,${c.userId},%`}`;
    case "flag":
      return eb(eb("um.flags", "&", eb.val(c.bits.toString())), "!=", "0");
    case "unread":
      return eb(eb("um.flags", "&", eb.val(c.read.toString())), "=", "0");
    case "followed":
      return eb.exists(
        eb
          .selectFrom("user_topics as ut")
          .select("ut.id")
          .where("ut.user_id", "=", userId)
          .whereRef("ut.channel_id", "=", "m.channel_id")
          .where((inner) =>
            inner(inner.fn("lower", ["ut.topic_name"]), "=", inner.fn("lower", ["m.topic"])),
          )
          .where("ut.visibility_policy", "=", c.policy),
      );
    case "resolved":
      return eb.and([eb("m.channel_id", "is not", null), eb("m.topic", "like", `${c.prefix}%`)]);
    case "search":
      return sql<SqlBool>`to_tsvector('simple', ${eb.ref("m.content")}) @@ websearch_to_tsquery('simple', ${c.text})`;
    case "has":
      return c.what === "link"
        ? eb("m.content", "~*", "https?://")
        : c.what === "image"
          ? eb("m.rendered_content", "like", "%<img %")
          : eb.exists(
              eb
                .selectFrom("attachment_messages as am")
                .select("am.message_id")
                .whereRef("am.message_id", "=", "m.id"),
            );
    case "id":
      return eb("m.id", "=", c.id);
    case "ids":
      return c.ids.length === 0 ? eb.lit(false) : eb("m.id", "in", [...c.ids]);
  }
}

/** The SQL test of a whole narrow: every condition, each negated where the term says. */
function matchesAll(
  eb: Scope,
  userId: number,
  conditions: readonly NarrowCondition[],
): Expression<SqlBool> {
  return eb.and(
    conditions.map((c) => (c.negated ? eb.not(test(eb, userId, c)) : test(eb, userId, c))),
  );
}

/** Which side of the anchor to read, and how many. */
export interface NarrowWindow {
  /** `<`/`<=` read older messages (newest first); `>=`/`>` newer ones (oldest first). */
  op: "<" | "<=" | ">=" | ">";
  anchor: number;
  limit: number;
}

/**
 * User `userId`'s messages that meet every condition, on one side of the
 * anchor: their ids and the user's flags, nearest the anchor first.
 */
export async function narrowedMessages(
  tx: Tx,
  userId: number,
  conditions: readonly NarrowCondition[],
  window: NarrowWindow,
): Promise<{ message_id: number; flags: bigint; bytes: number }[]> {
  if (window.limit <= 0) return [];
  const rows = await tx.q
    .selectFrom("user_messages as um")
    .innerJoin("messages as m", "m.id", "um.message_id")
    .select(["um.message_id", "um.flags"])
    // What the message's texts weigh (read from the stored sizes: nothing is decompressed).
    .select(sql<number>`octet_length(m.content) + octet_length(m.rendered_content)`.as("bytes"))
    .where("um.user_id", "=", userId)
    .where("um.message_id", window.op, window.anchor)
    .where((eb) => matchesAll(eb, userId, conditions))
    .orderBy("um.message_id", window.op.startsWith("<") ? "desc" : "asc")
    .limit(window.limit)
    .execute();
  return rows.map((r) => ({
    message_id: r.message_id,
    flags: BigInt(r.flags),
    bytes: r.bytes,
  }));
}

/** The first of user `userId`'s messages in the narrow sent at or after `date`, if any. */
export async function firstMessageSince(
  tx: Tx,
  userId: number,
  conditions: readonly NarrowCondition[],
  date: Date,
): Promise<number | undefined> {
  const row = await tx.q
    .selectFrom("user_messages as um")
    .innerJoin("messages as m", "m.id", "um.message_id")
    .select("um.message_id")
    .where("um.user_id", "=", userId)
    .where("m.date_sent", ">=", date)
    .where((eb) => matchesAll(eb, userId, conditions))
    .orderBy("um.message_id", "asc")
    .limit(1)
    .executeTakeFirst();
  return row?.message_id;
}
