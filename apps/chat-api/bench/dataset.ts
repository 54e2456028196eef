/**
 * The benchmark's data: a PostgreSQL database of its own with the demo realm,
 * migrated and seeded by the service itself (a development start on an empty
 * database does both), then enlarged in SQL to
 * 10,000 users and 100,000 messages, with what each measured operation needs.
 */
import { join } from "node:path";
import { freePort, serve } from "@repo/bench-kit";
import { Client } from "pg";
import { insertChannelCopies } from "./channel-copies";

export const USERS = 10_000;
export const MESSAGES = 100_000;
export const PRESENT_USERS = 200;
export const CHAIN_DEPTH = 6;

/** What the loads need to know about the enlarged realm. */
export interface Dataset {
  url: string;
  /** The caller of every authenticated operation (the demo realm's hamlet). */
  caller: { id: number; email: string; apiKey: string };
  /** The top of the subgroup chain, and a user who is a direct member of its bottom only. */
  chainTop: number;
  chainMember: number;
  draftId: number;
  /** A channel the caller is subscribed to (the draft's channel). */
  channelId: number;
  /** Drops the database. */
  drop(): Promise<void>;
}

/**
 * Creates `<prefix>_<time>` on the server `adminUrl` points to, with the demo
 * realm (a development start of the service migrates and seeds it); `drop`
 * removes it.
 */
export async function createSeededDatabase(
  adminUrl: string,
  prefix: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${Date.now()}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const port = await freePort();
  const seeding = await serve("node", [join(__dirname, "../dist/index.js")], port, {
    DATABASE_URL: url.href,
    NODE_ENV: "development",
    PORT: String(port),
    CHAT_HOST: "127.0.0.1",
    CHAT_METRICS_PORT: String(await freePort()),
    CHAT_LOG_LEVEL: "warn",
  });
  await seeding.stop();
  return {
    url: url.href,
    drop: async () => {
      const end = new Client({ connectionString: adminUrl });
      await end.connect();
      await end.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await end.end();
    },
  };
}

/** Creates `chat_bench_<time>` on the server `adminUrl` points to, and fills it. */
export async function createDataset(adminUrl: string): Promise<Dataset> {
  const { url, drop } = await createSeededDatabase(adminUrl, "chat_bench");
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    const q = async <T extends Record<string, unknown>>(text: string, params: unknown[] = []) =>
      (await db.query<T>(text, params)).rows;
    const [caller] = await q<{ id: number; email: string; api_key: string; realm_id: number }>(
      "SELECT id, email, api_key, realm_id FROM users WHERE email = 'hamlet@example.com'",
    );
    if (caller === undefined) throw new Error("the demo realm has no hamlet");
    const realm = caller.realm_id;
    const [members] = await q<{ id: number }>(
      "SELECT id FROM user_groups WHERE realm_id = $1 AND name = 'role:fullmembers'",
      [realm],
    );
    const [channel] = await q<{ id: number }>(
      "SELECT id FROM channels WHERE realm_id = $1 AND name = 'Denmark'",
      [realm],
    );
    if (members === undefined || channel === undefined) throw new Error("the demo realm changed");
    const [{ count } = { count: 0 }] = await q<{ count: number }>(
      "SELECT count(*)::int AS count FROM users WHERE realm_id = $1",
      [realm],
    );
    // Users, each a full member (as an account made by the service would be).
    await q(
      `INSERT INTO users (realm_id, email, delivery_email, full_name, api_key)
       SELECT $1, 'user' || n || '@example.com', 'user' || n || '@example.com', 'User ' || n,
              substr(md5('bench-key-' || n), 1, 32)
       FROM generate_series(1, $2::int) AS n`,
      [realm, USERS - count],
    );
    await q(
      `INSERT INTO user_group_members (group_id, user_id)
       SELECT $1, id FROM users WHERE realm_id = $2 AND email LIKE 'user%@example.com'`,
      [members.id, realm],
    );
    // Messages in Denmark from the new users, each unread by the caller.
    await q(
      `INSERT INTO messages (realm_id, sender_id, channel_id, topic, content, rendered_content, date_sent)
       SELECT $1, (SELECT min(id) FROM users WHERE realm_id = $1 AND email LIKE 'user%') + n % 1000,
              $2, 'topic ' || n % 50, 'message ' || n, '<p>message ' || n || '</p>',
              now() - (($3::int - n) || ' seconds')::interval
       FROM generate_series(1, $3::int) AS n`,
      [realm, channel.id, MESSAGES],
    );
    // The missed-message e-mails start after these (as after an upgrade's history).
    await q(`UPDATE missed_message_scans SET last_message_id = (SELECT max(id) FROM messages)`, []);
    await q(
      `INSERT INTO user_messages (user_id, message_id, flags)
       SELECT $1, id, 0 FROM messages WHERE channel_id = $2
       ON CONFLICT (user_id, message_id) DO UPDATE SET flags = 0`,
      [caller.id, channel.id],
    );
    // A chain of six groups, each the only subgroup of the one above; one user in the bottom one.
    const chain: number[] = [];
    for (let level = 1; level <= CHAIN_DEPTH; level += 1) {
      const [group] = await q<{ id: number }>(
        `INSERT INTO user_groups (realm_id, name, description,
           can_add_members_group_id, can_join_group_id, can_leave_group_id,
           can_manage_group_id, can_mention_group_id, can_remove_members_group_id)
         SELECT $1, $2, 'Level ' || $3, g.can_add_members_group_id, g.can_join_group_id,
                g.can_leave_group_id, g.can_manage_group_id, g.can_mention_group_id,
                g.can_remove_members_group_id
         FROM user_groups g WHERE g.id = $4 RETURNING id`,
        [realm, `chain level ${level}`, String(level), members.id],
      );
      if (group === undefined) throw new Error("could not create a group");
      const above = chain.at(-1);
      if (above !== undefined)
        await q("INSERT INTO user_group_subgroups (supergroup_id, subgroup_id) VALUES ($1, $2)", [
          above,
          group.id,
        ]);
      chain.push(group.id);
    }
    const [member] = await q<{ id: number }>(
      "SELECT id FROM users WHERE email = 'user4242@example.com'",
    );
    if (member === undefined) throw new Error("no user4242");
    await q("INSERT INTO user_group_members (group_id, user_id) VALUES ($1, $2)", [
      chain.at(-1),
      member.id,
    ]);
    // 200 users present in the last minutes, half of them active.
    await q(
      `INSERT INTO presences (user_id, realm_id, last_connected_time, last_active_time, last_update_id)
       SELECT id, $1, now() - (id % 120 || ' seconds')::interval,
              CASE WHEN id % 2 = 0 THEN now() - (id % 120 || ' seconds')::interval END,
              nextval('presence_update_id_seq')
       FROM users WHERE realm_id = $1 AND email LIKE 'user%@example.com' ORDER BY id LIMIT $2`,
      [realm, PRESENT_USERS],
    );
    const [draft] = await q<{ id: number }>(
      `INSERT INTO drafts (user_id, type, "to", topic, content, last_edit_time)
       VALUES ($1, 'stream', ARRAY[$2::int], 'plans', 'a first draft', now()) RETURNING id`,
      [caller.id, channel.id],
    );
    if (draft === undefined) throw new Error("could not create the draft");
    await q("ANALYZE");
    return {
      url,
      caller: { id: caller.id, email: caller.email, apiKey: caller.api_key },
      chainTop: chain[0] ?? 0,
      chainMember: member.id,
      draftId: draft.id,
      channelId: channel.id,
      drop,
    };
  } finally {
    await db.end();
  }
}

/** Marks every one of the caller's messages unread again (before each mark_all_as_read). */
export async function markAllUnread(dataset: Dataset): Promise<void> {
  const client = new Client({ connectionString: dataset.url });
  await client.connect();
  try {
    await client.query("UPDATE user_messages SET flags = 0 WHERE user_id = $1", [
      dataset.caller.id,
    ]);
    await client.query("VACUUM ANALYZE user_messages");
  } finally {
    await client.end();
  }
}

/**
 * Creates `count` channels `PREFIX-1`..`PREFIX-count` in realm `realmId`,
 * each with the permission settings of its `Denmark` (as the service makes a
 * channel); answers their ids in order.
 */
export function insertChannels(
  db: Client,
  realmId: number,
  prefix: string,
  count: number,
): Promise<number[]> {
  return insertChannelCopies(
    async (sql, params) => (await db.query<{ id: number }>(sql, [...params])).rows,
    realmId,
    prefix,
    count,
  );
}
