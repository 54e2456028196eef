import { Readable } from "node:stream";
import { gunzipSync } from "node:zlib";
import { extract } from "tar-stream";
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
    await new Promise((resolve) => setTimeout(resolve, 100));
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
  const events = await listen();
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
  expect(json(entries, "realm.json")).toMatchObject({ name: "Demo", export_type: 1 });
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
