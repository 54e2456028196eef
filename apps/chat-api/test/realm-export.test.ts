import { setTimeout as sleep } from "node:timers/promises";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { gunzipSync, gzipSync } from "node:zlib";
import { extract, pack } from "tar-stream";
import { request } from "undici";
import {
  type Person,
  type TestServer,
  ROOT_HOST,
  apiError,
  authOf,
  listenAs,
  startTestServer,
} from "./support/server";
import { multipart } from "./support/multipart";
import { freshDatabase } from "./support/database";
import { runAdmin } from "../src/cli/admin";
import { fullEventsSchema, zulipResponseSchema } from "./support/zulip-schema";

/**
 * POST and GET /export/realm: an administrator's data export, written in the
 * background as a tar.gz in the upload store with the realm's rows and the
 * files its exported messages link to; public (1) or standard (2, owners:
 * private data of those who consent). The archive is read back here.
 */
let server: TestServer;
const fullEvents = fullEventsSchema();
const validateStart = zulipResponseSchema("full", "/export/realm", "post");
const validateList = zulipResponseSchema("full", "/export/realm", "get");

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

interface ExportView {
  id: number;
  pending: boolean;
  export_url: string | null;
  failed_timestamp: number | null;
  export_type: number;
}

const startExport = async (who: string, exportType?: number) =>
  server.call("POST", "/api/v1/export/realm", {
    ...authOf(await server.person(who)),
    form: exportType === undefined ? {} : { export_type: String(exportType) },
  });

/** Polls GET /export/realm until export `id` is no longer pending. */
async function finished(who: string, id: number): Promise<ExportView> {
  for (let waited = 0; waited < 60_000; waited += 100) {
    const reply = await server.call(
      "GET",
      "/api/v1/export/realm",
      authOf(await server.person(who)),
    );
    expect(validateList(reply.body)).toEqual([]);
    const found = (reply.body.exports as ExportView[]).find((e) => e.id === id);
    if (found !== undefined && !found.pending) return found;
    await sleep(100);
  }
  throw new Error(`export ${String(id)} still pending`);
}

/** Downloads `url` as `person`. */
async function download(url: string, person: Person) {
  const { pathname } = new URL(url);
  const reply = await request(`${server.url}${pathname}`, {
    headers: {
      host: ROOT_HOST,
      authorization: `Basic ${Buffer.from(`${person.email}:${person.apiKey}`).toString("base64")}`,
    },
  });
  return { status: reply.statusCode, body: Buffer.from(await reply.body.arrayBuffer()) };
}

/** The entries of a tar.gz archive, by name. */
async function entriesOf(archive: Buffer): Promise<Map<string, Buffer>> {
  const entries = new Map<string, Buffer>();
  const reader = extract();
  reader.on("entry", (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: unknown) => chunks.push(chunk as Buffer));
    stream.on("end", () => {
      entries.set(header.name, Buffer.concat(chunks));
      next();
    });
  });
  const ended = new Promise<void>((resolve, reject) => {
    reader.on("finish", () => resolve());
    reader.on("error", reject);
  });
  Readable.from([gunzipSync(archive)]).pipe(reader);
  await ended;
  return entries;
}

const json = (entries: Map<string, Buffer>, name: string): unknown =>
  JSON.parse(entries.get(name)?.toString() ?? "null");

interface ExportedMessage {
  id: number;
  channel_id: number | null;
  content: string;
}

it("writes a public export with the realm's rows and linked files, told to administrators", async () => {
  const hamlet = await server.person("hamlet");
  const iago = await server.person("iago");
  const { body, headers } = multipart([
    { name: "file", filename: "plan.txt", type: "text/plain", data: "To be, or not to be" },
  ]);
  const uploaded = await server.call("POST", "/api/v1/user_uploads", {
    ...authOf(hamlet),
    body,
    headers,
  });
  const fileUrl = uploaded.body.url as string;
  const shared = await server.call("POST", "/api/v1/messages", {
    ...authOf(hamlet),
    form: { type: "stream", to: "Verona", topic: "export", content: `[plan](${fileUrl})` },
  });
  const secret = await server.call("POST", "/api/v1/messages", {
    ...authOf(hamlet),
    form: { type: "direct", to: JSON.stringify([iago.id]), content: "between us" },
  });
  const listen = await listenAs(server, authOf(iago), ["realm_export"]);
  const started = await startExport("iago");
  expect(started.status).toBe(200);
  expect(validateStart(started.body)).toEqual([]);
  const done = await finished("iago", started.body.id as number);
  expect([done.failed_timestamp, done.export_type]).toEqual([null, 1]);
  // The finished export's event reaches the queue once the log numbers it.
  const events: Record<string, unknown>[] = [];
  for (let waited = 0; waited < 10_000; waited += 50) {
    events.push(...(await listen()));
    if ((events.at(-1)?.exports as ExportView[] | undefined)?.at(-1)?.pending === false) break;
    await sleep(50);
  }
  expect(fullEvents({ events: events.map((e, id) => ({ id, ...e })) })).toEqual([]);
  expect(events.length).toBeGreaterThanOrEqual(2);
  expect((events.at(-1)?.exports as ExportView[]).at(-1)).toMatchObject({
    id: started.body.id,
    pending: false,
  });

  const file = await download(done.export_url ?? "", iago);
  expect(file.status).toBe(200);
  const entries = await entriesOf(file.body);
  const users = json(entries, "users.json") as { id: number; email: string }[];
  expect(users.map((u) => u.id)).toContain(hamlet.id);
  // No secrets, and in a public export no delivery addresses.
  for (const user of users)
    expect(["api_key", "password", "delivery_email"].filter((key) => key in user)).toEqual([]);
  const channels = json(entries, "channels.json") as { name: string; invite_only: boolean }[];
  expect(channels.some((c) => c.name === "Verona")).toBe(true);
  expect(channels.every((c) => !c.invite_only)).toBe(true);
  const messages = json(entries, "messages-000001.json") as ExportedMessage[];
  const ids = messages.map((m) => m.id);
  expect(ids).toContain(shared.body.id);
  expect(ids).not.toContain(secret.body.id);
  expect(messages.every((m) => m.channel_id !== null)).toBe(true);
  const pathId = fileUrl.replace(/^\/user_uploads\//, "");
  expect(entries.get(`uploads/${pathId}`)?.toString()).toBe("To be, or not to be");
  expect(json(entries, "realm.json")).toMatchObject({
    format: 2,
    export_type: 1,
    realm: { name: "Demo" },
  });
  // The archive is the administrator's upload: another member cannot fetch it.
  expect((await download(done.export_url ?? "", hamlet)).status).not.toBe(200);
});

it("includes private data of those who consent in a standard export, for owners only", async () => {
  const hamlet = await server.person("hamlet");
  const othello = await server.person("othello");
  await server.call("PATCH", "/api/v1/settings", {
    ...authOf(hamlet),
    form: { allow_private_data_export: "true" },
  });
  const consented = await server.call("POST", "/api/v1/messages", {
    ...authOf(hamlet),
    form: { type: "direct", to: JSON.stringify([othello.id]), content: "you may keep this" },
  });
  const withheld = await server.call("POST", "/api/v1/messages", {
    ...authOf(othello),
    form: { type: "direct", to: JSON.stringify([hamlet.id]), content: "not this" },
  });
  expect((await startExport("iago", 2)).body).toEqual(
    apiError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL"),
  );
  const started = await startExport("desdemona", 2);
  expect(started.status).toBe(200);
  const done = await finished("desdemona", started.body.id as number);
  const entries = await entriesOf(
    (await download(done.export_url ?? "", await server.person("desdemona"))).body,
  );
  const channels = json(entries, "channels.json") as { invite_only: boolean }[];
  expect(channels.some((c) => c.invite_only)).toBe(true);
  const messages = [...entries.keys()]
    .filter((name) => name.startsWith("messages-"))
    .flatMap((name) => json(entries, name) as ExportedMessage[]);
  const ids = messages.map((m) => m.id);
  expect(ids).toContain(consented.body.id);
  expect(ids).not.toContain(withheld.body.id);
});

/**
 * The reads a round trip must answer alike: people, channels, subscriptions,
 * groups, every message a person has (content, HTML, reactions, flags,
 * edit history) and their unread counts, as `who` on `target`.
 */
async function reads(target: TestServer, who: string) {
  const as = authOf(await target.person(who));
  const get = async (path: string, query?: Record<string, unknown>) => {
    const reply = await target.call("GET", `/api/v1${path}`, {
      ...as,
      ...(query ? { query } : {}),
    });
    expect(reply.status).toBe(200);
    return reply.body;
  };
  const register = await target.call("POST", "/api/v1/register", {
    ...as,
    form: { fetch_event_types: JSON.stringify(["message", "update_message_flags", "realm"]) },
  });
  const state = register.body;
  return {
    users: (await get("/users")).members,
    channels: (await get("/streams", { include_all: true })).streams,
    subscriptions: (await get("/users/me/subscriptions")).subscriptions,
    groups: (await get("/user_groups")).user_groups,
    messages: (
      await get("/messages", {
        anchor: "newest",
        num_before: 1000,
        num_after: 0,
        apply_markdown: true,
      })
    ).messages,
    unread: state.unread_msgs,
    realm: [
      state.realm_name,
      state.realm_description,
      state.realm_message_content_edit_limit_seconds,
    ],
  };
}

it("round-trips: an export imported into an empty server answers the same reads", async () => {
  const hamlet = await server.person("hamlet");
  const ophelia = await server.person("othello");
  // What the archive must carry: a file in a message, a reaction, a starred
  // message, a group with a subgroup, an organization setting, and the
  // direct messages of people who consent (here, everyone).
  const { body, headers } = multipart([
    { name: "file", filename: "résumé 日本.txt", type: "text/plain", data: "Words, words, words" },
  ]);
  const fileUrl = (
    await server.call("POST", "/api/v1/user_uploads", { ...authOf(hamlet), body, headers })
  ).body.url as string;
  const sent = await server.call("POST", "/api/v1/messages", {
    ...authOf(hamlet),
    form: {
      type: "stream",
      to: "Denmark",
      topic: "round trip",
      content: `[notes](${fileUrl}) @**Othello**`,
    },
  });
  const messageId = sent.body.id as number;
  await server.call("POST", `/api/v1/messages/${messageId}/reactions`, {
    ...authOf(ophelia),
    form: { emoji_name: "octopus" },
  });
  await server.call("POST", "/api/v1/messages/flags", {
    ...authOf(hamlet),
    form: { messages: JSON.stringify([messageId]), op: "add", flag: "starred" },
  });
  await server.call("PATCH", `/api/v1/messages/${messageId}`, {
    ...authOf(hamlet),
    form: { content: `[notes](${fileUrl}) @**Othello**, edited` },
  });
  const group = await server.call("POST", "/api/v1/user_groups/create", {
    ...authOf(await server.person("iago")),
    form: { name: "Players", description: "The players", members: JSON.stringify([hamlet.id]) },
  });
  expect(group.status).toBe(200);
  await server.call("PATCH", "/api/v1/realm", {
    ...authOf(await server.person("iago")),
    form: { description: "Something is **rotten**", message_content_edit_limit_seconds: "900" },
  });
  await server.db.sql.query(
    `UPDATE users SET settings = settings || '{"allow_private_data_export": true}'::jsonb`,
  );

  const started = await startExport("desdemona", 2);
  const done = await finished("desdemona", started.body.id as number);
  const archive = (await download(done.export_url ?? "", await server.person("desdemona"))).body;
  const folder = await mkdtemp(path.join(tmpdir(), "chat-import-"));
  const archivePath = path.join(folder, "export.tar.gz");
  await writeFile(archivePath, archive);
  const dataDir = path.join(folder, "data");
  const target = await freshDatabase("migrated");
  const out: string[] = [];
  const err: string[] = [];
  const env = { CHAT_DATA_DIR: dataDir, NODE_ENV: "development" };
  expect(
    await runAdmin(
      ["import-realm", archivePath],
      (t) => out.push(t),
      (t) => err.push(t),
      env,
      target,
    ),
  ).toBe(0);
  expect(err).toEqual([]);
  const [people, channels, messages] = await Promise.all([
    server.db.prisma.user.count({ where: { is_bot: false, realm: { subdomain: "" } } }),
    server.db.prisma.channel.count({ where: { realm: { subdomain: "" } } }),
    server.db.prisma.message.count({ where: { realm: { subdomain: "" } } }),
  ]);
  expect(out.join("")).toMatch(
    new RegExp(
      `^imported realm \\d+ \\(subdomain ""\\): ${people} people, ${channels} channels, ${messages} messages, 2 files`,
    ),
  );
  // A second import into a server that now holds the organization is refused, writing nothing.
  expect(
    await runAdmin(
      ["import-realm", archivePath],
      () => undefined,
      (t) => err.push(t),
      env,
      target,
    ),
  ).toBe(1);
  expect(err.join("")).toMatch(/already holds an organization/);

  const imported = await startTestServer({ db: target, env: { CHAT_DATA_DIR: dataDir } });
  try {
    for (const who of ["hamlet", "othello", "iago"])
      expect(await reads(imported, who)).toEqual(await reads(server, who));
    expect(((await reads(imported, "hamlet")).messages as unknown[]).length).toBeGreaterThan(10);
    // The file comes back, to those who may read it.
    const file = await request(`${imported.url}${fileUrl}`, {
      headers: {
        host: ROOT_HOST,
        authorization: `Basic ${Buffer.from(`${hamlet.email}:${(await imported.person("hamlet")).apiKey}`).toString("base64")}`,
      },
    });
    expect(file.statusCode).toBe(200);
    expect(await file.body.text()).toBe("Words, words, words");
    // New ids go on after the imported ones.
    const next = await imported.call("POST", "/api/v1/messages", {
      ...authOf(await imported.person("hamlet")),
      form: { type: "stream", to: "Denmark", topic: "after", content: "the rest is silence" },
    });
    expect(next.body.id).toBeGreaterThan(messageId);
  } finally {
    await imported.close();
    await target.close();
    await rm(folder, { recursive: true, force: true });
  }
});

it("refuses a broken or foreign archive, leaving the server empty", async () => {
  const folder = await mkdtemp(path.join(tmpdir(), "chat-import-"));
  const target = await freshDatabase("migrated");
  const env = { CHAT_DATA_DIR: path.join(folder, "data"), NODE_ENV: "development" };
  const tarOf = async (entries: [string, string][]) => {
    const archive = pack();
    for (const [name, text] of entries) archive.entry({ name }, text);
    archive.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of archive) chunks.push(chunk as Buffer);
    return gzipSync(Buffer.concat(chunks));
  };
  const realm = { format: 2, export_type: 2, realm: { id: 7, subdomain: "", name: "Elsinore" } };
  const cases: [Buffer, RegExp][] = [
    [Buffer.from("not an archive"), /incorrect header check/],
    [await tarOf([["realm.json", JSON.stringify({ format: 1 })]]), /unsupported archive format 1/],
    [await tarOf([["users.json", "[]"]]), /users.json comes before realm.json/],
    [
      await tarOf([
        ["realm.json", JSON.stringify(realm)],
        ["users.json", "{}"],
      ]),
      /not a list of rows/,
    ],
    [
      await tarOf([
        ["realm.json", JSON.stringify(realm)],
        ["attachments.json", JSON.stringify([{ path_id: "7/../../etc/passwd", messages: [] }])],
      ]),
      /is not one of the realm's/,
    ],
    [
      await tarOf([
        ["realm.json", JSON.stringify(realm)],
        ["uploads/7/ab/cd/x.txt", "x"],
      ]),
      /is not one of the archive's attachments/,
    ],
  ];
  try {
    for (const [bytes, message] of cases) {
      const file = path.join(folder, "bad.tar.gz");
      await writeFile(file, bytes);
      const err: string[] = [];
      expect(
        await runAdmin(
          ["import-realm", file],
          () => undefined,
          (t) => err.push(t),
          env,
          target,
        ),
      ).toBe(1);
      expect(err.join("")).toMatch(message);
      expect(await target.prisma.realm.count()).toBe(0);
    }
  } finally {
    await target.close();
    await rm(folder, { recursive: true, force: true });
  }
});

it("refuses members, bad types, and more than five exports a day, storing nothing", async () => {
  const count = () => server.db.prisma.realmExport.count();
  const before = await count();
  expect((await startExport("hamlet")).body).toEqual(
    apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
  );
  expect((await startExport("iago", 3)).status).toBe(400);
  expect(await count()).toBe(before);
  // Two were made above; three more reach the day's five.
  for (let n = before; n < 5; n++) expect((await startExport("iago")).status).toBe(200);
  expect((await startExport("iago")).body).toEqual(apiError("Exceeded rate limit."));
  expect(await count()).toBe(5);
});
