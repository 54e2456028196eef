/**
 * A big organization on PostgreSQL, and a sweep of every operation of the
 * URL table against it: what `bench/big-realm.ts` measures and
 * `stress/big-realm.stress.ts` holds to "no 5xx".
 *
 * The realm: the demo realm plus 10,000 people (full members), 1,000
 * channels (`big-1` has 5,000 members, each of the others about 30), 200,000
 * messages (20,180 in `big-1`, 100 topics; 180 in each other channel). The
 * caller (iago, an administrator) is subscribed to `big-1`..`big-20` and has
 * their messages, the older half read; other people's copies of messages
 * are not written (the sweep reads as the caller).
 */
import { Client } from "pg";
import { request } from "undici";
import { createSeededDatabase, insertChannels } from "./dataset";

export const BIG_PEOPLE = 10_000;
export const BIG_CHANNELS = 1_000;
export const BIG_CHANNEL_MEMBERS = 5_000;
export const BIG_MESSAGES = 200_000;
/** big-1's share: the rest is 180 in each other channel. */
const BIG_CHANNEL_MESSAGES = BIG_MESSAGES - 180 * (BIG_CHANNELS - 1);

/** The big realm's database, its caller and the ids the sweep fills paths with. */
export interface BigRealm {
  url: string;
  caller: { email: string; apiKey: string; id: number };
  ids: {
    bigChannel: number;
    smallChannel: number;
    person: number;
    group: number;
    message: number;
  };
  drop(): Promise<void>;
}

/** Creates and fills the big realm's database on the server `adminUrl` points to. */
export async function createBigRealm(adminUrl: string): Promise<BigRealm> {
  const { url, drop } = await createSeededDatabase(adminUrl, "chat_big");
  const db = new Client({ connectionString: url });
  await db.connect();
  const q = async <T extends Record<string, unknown>>(text: string, params: unknown[] = []) =>
    (await db.query<T>(text, params)).rows;
  try {
    const [caller] = await q<{ id: number; email: string; api_key: string; realm_id: number }>(
      "SELECT id, email, api_key, realm_id FROM users WHERE email = 'iago@example.com'",
    );
    if (caller === undefined) throw new Error("the demo realm has no iago");
    const realm = caller.realm_id;
    const [members] = await q<{ id: number }>(
      "SELECT id FROM user_groups WHERE realm_id = $1 AND name = 'role:fullmembers'",
      [realm],
    );
    if (members === undefined) throw new Error("the demo realm changed");
    await q(
      `INSERT INTO users (realm_id, email, delivery_email, full_name, api_key)
       SELECT $1, 'big' || n || '@example.com', 'big' || n || '@example.com', 'Person ' || n,
              substr(md5('big-key-' || n), 1, 32)
       FROM generate_series(1, $2::int) AS n ORDER BY n`,
      [realm, BIG_PEOPLE],
    );
    await q(
      `INSERT INTO user_group_members (group_id, user_id)
       SELECT $1, id FROM users WHERE realm_id = $2 AND email LIKE 'big%@example.com'`,
      [members.id, realm],
    );
    await insertChannels(db, realm, "big", BIG_CHANNELS);
    // big-1: the first 5,000 people; every person in three other channels; the caller in big-1..20.
    await q(
      `INSERT INTO subscriptions (user_id, channel_id, color)
       SELECT DISTINCT u.id, c.id, '#76ce90'
       FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM users
             WHERE realm_id = $1 AND email LIKE 'big%@example.com') u
       CROSS JOIN LATERAL (VALUES (1), (2 + (u.n * 7) % 999), (2 + (u.n * 13) % 999),
                                  (2 + (u.n * 31) % 999)) AS pick(k)
       JOIN channels c ON c.realm_id = $1 AND c.name = 'big-' || pick.k
       WHERE pick.k <> 1 OR u.n <= $2
       UNION
       SELECT $3, c.id, '#76ce90' FROM channels c
       WHERE c.realm_id = $1 AND c.name IN (SELECT 'big-' || k FROM generate_series(1, 20) AS k)`,
      [realm, BIG_CHANNEL_MEMBERS, caller.id],
    );
    const [big] = await q<{ id: number }>(
      "SELECT id FROM channels WHERE realm_id = $1 AND name = 'big-1'",
      [realm],
    );
    const [small] = await q<{ id: number }>(
      "SELECT id FROM channels WHERE realm_id = $1 AND name = 'big-2'",
      [realm],
    );
    const [firstPerson] = await q<{ id: number }>(
      "SELECT min(id) AS id FROM users WHERE realm_id = $1 AND email LIKE 'big%'",
      [realm],
    );
    if (big === undefined || small === undefined || firstPerson === undefined)
      throw new Error("the big realm is incomplete");
    // 20,180 messages in big-1 (100 topics), 180 in each other channel.
    await q(
      `INSERT INTO messages (realm_id, sender_id, channel_id, topic, content, rendered_content, date_sent)
       SELECT $1, $2 + n % $3, $4, 'topic ' || n % 100, 'message ' || n, '<p>message ' || n || '</p>',
              now() - (($5::int - n) || ' seconds')::interval
       FROM generate_series(1, $5::int) AS n`,
      [realm, firstPerson.id, BIG_PEOPLE, big.id, BIG_CHANNEL_MESSAGES],
    );
    await q(
      `INSERT INTO messages (realm_id, sender_id, channel_id, topic, content, rendered_content, date_sent)
       SELECT $1, $2 + n % $3, c.id, 'topic ' || n % 10, 'message ' || n, '<p>message ' || n || '</p>',
              now() - ((n * 7) || ' seconds')::interval
       FROM channels c, generate_series(1, $4::int) AS n
       WHERE c.realm_id = $1 AND c.name LIKE 'big-%' AND c.id <> $5`,
      [
        realm,
        firstPerson.id,
        BIG_PEOPLE,
        (BIG_MESSAGES - BIG_CHANNEL_MESSAGES) / (BIG_CHANNELS - 1),
        big.id,
      ],
    );
    await q(
      `INSERT INTO user_messages (user_id, message_id, flags)
       SELECT $1, m.id, CASE WHEN m.id % 2 = 0 THEN 1 ELSE 0 END
       FROM messages m JOIN subscriptions s ON s.channel_id = m.channel_id AND s.user_id = $1
       ON CONFLICT DO NOTHING`,
      [caller.id],
    );
    const [group] = await q<{ id: number }>(
      "SELECT id FROM user_groups WHERE realm_id = $1 AND name = 'role:members'",
      [realm],
    );
    const [message] = await q<{ id: number }>(
      "SELECT max(id) AS id FROM messages WHERE channel_id = $1",
      [big.id],
    );
    if (group === undefined || message === undefined) throw new Error("the big realm changed");
    await q("ANALYZE");
    return {
      url,
      caller: { email: caller.email, apiKey: caller.api_key, id: caller.id },
      ids: {
        bigChannel: big.id,
        smallChannel: small.id,
        person: firstPerson.id,
        group: group.id,
        message: message.id,
      },
      drop,
    };
  } finally {
    await db.end();
  }
}

/** One operation's answers in a sweep. */
export interface SweepResult {
  operation: string;
  statuses: number[];
  /** Each call's time, in ms. */
  times: number[];
}

/** The parameters of the operations whose work depends on them; the others get none. */
function paramsOf(method: string, path: string, realm: BigRealm): Record<string, string> {
  const { bigChannel, person, message } = realm.ids;
  const inBig = JSON.stringify([{ operator: "channel", operand: bigChannel }]);
  const key = `${method} ${path}`;
  const table: Record<string, Record<string, string>> = {
    "GET /messages": { anchor: "newest", num_before: "100", num_after: "0", narrow: inBig },
    "GET /messages/matches_narrow": { msg_ids: JSON.stringify([message]), narrow: inBig },
    "POST /messages": {
      type: "stream",
      to: String(bigChannel),
      topic: "sweep",
      content: "Hello @**Person 1** and #**big-2**",
    },
    "POST /messages/flags": {
      messages: JSON.stringify([message]),
      op: "add",
      flag: "starred",
    },
    "POST /messages/flags/narrow": {
      anchor: "newest",
      num_before: "1000",
      num_after: "0",
      narrow: inBig,
      op: "add",
      flag: "read",
    },
    "POST /messages/render": { content: "**bold** @**Person 2**" },
    "PATCH /messages/{message_id}": { topic: "topic 1 renamed", propagate_mode: "change_all" },
    "GET /users": {},
    "GET /streams": { include_all: "true" },
    "GET /users/me/subscriptions": { include_subscribers: "true" },
    "POST /users/me/subscriptions": {
      subscriptions: JSON.stringify([{ name: "big-1" }, { name: "big-500" }]),
    },
    "DELETE /users/me/subscriptions": { subscriptions: JSON.stringify(["big-500"]) },
    "POST /typing": { op: "start", type: "stream", stream_id: String(bigChannel), topic: "sweep" },
    "POST /mark_stream_as_read": { stream_id: String(bigChannel) },
    "POST /mark_topic_as_read": { stream_id: String(bigChannel), topic_name: "topic 2" },
    "GET /users/{user_id}/subscriptions/{stream_id}": {},
    "POST /users/me/presence": { status: "active" },
    "GET /messages/{message_id}": {},
    "POST /messages/{message_id}/reactions": { emoji_name: "octopus" },
    "POST /user_groups/create": {
      name: "Sweepers",
      description: "The sweep",
      members: JSON.stringify([person, person + 1]),
    },
  };
  return table[key] ?? {};
}

/** A path with its parameters filled from the big realm. */
function fill(path: string, realm: BigRealm): string {
  const values: Record<string, string> = {
    stream_id: String(realm.ids.bigChannel),
    channel_id: String(realm.ids.bigChannel),
    user_id: String(realm.ids.person),
    message_id: String(realm.ids.message),
    user_group_id: String(realm.ids.group),
    email: "big1@example.com",
    emoji_name: "octopus",
    fragment: "inbox",
    realm_id_str: "1",
    filename: "missing.txt",
  };
  return path.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? "1");
}

/**
 * Calls every operation of the server's OpenAPI document (its URL table) as
 * the big realm's caller, `rounds` times each: the reads first, then the
 * writes, the deletions, and deactivating the caller last. Answers each
 * operation's statuses and times.
 */
export async function sweepOperations(
  base: string,
  realm: BigRealm,
  rounds: (method: string) => number,
): Promise<SweepResult[]> {
  const document = (await (
    await request(`${base}/api/v1/openapi.json`, { headers: { host: "localhost" } })
  ).body.json()) as { paths: Record<string, Record<string, unknown>> };
  const order = ["get", "post", "patch", "put", "delete"];
  const operations = Object.entries(document.paths)
    .flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((method) => order.includes(method))
        .map((method) => ({ method: method.toUpperCase(), path: path.replace(/^\/api\/v1/, "") })),
    )
    .sort(
      (a, b) =>
        order.indexOf(a.method.toLowerCase()) - order.indexOf(b.method.toLowerCase()) ||
        Number(a.path === "/users/me") - Number(b.path === "/users/me"),
    );
  const authorization = `Basic ${Buffer.from(`${realm.caller.email}:${realm.caller.apiKey}`).toString("base64")}`;
  const results: SweepResult[] = [];
  for (const { method, path } of operations) {
    const form = new URLSearchParams(paramsOf(method, path, realm)).toString();
    const url = `${base}/api/v1${fill(path, realm)}`;
    const result: SweepResult = { operation: `${method} ${path}`, statuses: [], times: [] };
    for (let round = 0; round < rounds(method); round++) {
      const started = performance.now();
      const reply = await request(method === "GET" && form !== "" ? `${url}?${form}` : url, {
        method: method as "GET",
        headers: {
          host: "localhost",
          authorization,
          ...(method === "GET" ? {} : { "content-type": "application/x-www-form-urlencoded" }),
        },
        ...(method === "GET" ? {} : { body: form }),
      });
      await reply.body.arrayBuffer();
      result.times.push(performance.now() - started);
      result.statuses.push(reply.statusCode);
    }
    results.push(result);
  }
  return results;
}

/** POST /register as the caller: the answer's size in bytes and its time in ms. */
export async function registerCost(
  base: string,
  realm: BigRealm,
): Promise<{ bytes: number; ms: number }> {
  const started = performance.now();
  const reply = await request(`${base}/api/v1/register`, {
    method: "POST",
    headers: {
      host: "localhost",
      authorization: `Basic ${Buffer.from(`${realm.caller.email}:${realm.caller.apiKey}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: "",
  });
  const body = Buffer.from(await reply.body.arrayBuffer());
  if (reply.statusCode !== 200) throw new Error(`register answered ${String(reply.statusCode)}`);
  return { bytes: body.length, ms: performance.now() - started };
}
