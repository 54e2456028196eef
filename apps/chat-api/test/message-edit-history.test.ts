import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import {
  type Cast,
  type TestServer,
  channelIds,
  loadCast,
  startTestServer,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

/**
 * `edit_history` in message objects (the terminal client marks edited
 * messages by it): the newest 20 edits, newest first, without the content
 * they replaced, which GET /messages/{id}/history still gives (issue 47).
 */
const validateMessage = zulipResponseSchema("session", "/messages/{message_id}", "get");

let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["hamlet", "iago"]);
  channels = await channelIds(server);
});

afterAll(() => server.close());

async function send(topic: string, content: string): Promise<number> {
  const reply = await server.call("POST", "/api/v1/messages", {
    ...cast.as("hamlet"),
    form: { type: "stream", to: String(channels.Denmark), topic, content },
  });
  return reply.body.id as number;
}

async function edit(who: string, id: number, form: Record<string, string>): Promise<void> {
  const reply = await server.call("PATCH", `/api/v1/messages/${String(id)}`, {
    ...cast.as(who),
    form,
  });
  expect(reply.status).toBe(200);
}

async function messageObject(id: number): Promise<Record<string, unknown>> {
  const reply = await server.call("GET", `/api/v1/messages/${String(id)}`, cast.as("hamlet"));
  expect(validateMessage(reply.body)).toEqual([]);
  return reply.body.message as Record<string, unknown>;
}

describe("edit_history in message objects", () => {
  it("lists edits newest first, without content, and is absent before any edit", async () => {
    const id = await send("history", "first words");
    expect(await messageObject(id)).not.toHaveProperty("edit_history");
    await edit("hamlet", id, { content: "second words" });
    await edit("iago", id, { topic: "history moved", propagate_mode: "change_one" });
    const message = await messageObject(id);
    expect(message.edit_history).toEqual([
      {
        user_id: cast.id("iago"),
        timestamp: expect.any(Number) as number,
        prev_topic: "history",
        topic: "history moved",
      },
      { user_id: cast.id("hamlet"), timestamp: expect.any(Number) as number },
    ]);
    // The same in a message list.
    const listed = await server.call("GET", "/api/v1/messages", {
      ...cast.as("hamlet"),
      query: {
        anchor: String(id),
        num_before: "0",
        num_after: "0",
        narrow: JSON.stringify([{ operator: "id", operand: id }]),
      },
    });
    expect((listed.body.messages as Record<string, unknown>[])[0]?.edit_history).toEqual(
      message.edit_history,
    );
  });

  it("keeps the newest 20 edits in message objects, every one in the history", async () => {
    const id = await send("many edits", "version 0");
    for (let i = 1; i <= 25; i++) await edit("hamlet", id, { content: `version ${String(i)}` });
    const shown = (await messageObject(id)).edit_history as { timestamp: number }[];
    expect(shown).toHaveLength(20);
    const history = await server.call(
      "GET",
      `/api/v1/messages/${String(id)}/history`,
      cast.as("hamlet"),
    );
    const versions = history.body.message_history as { content: string }[];
    expect(versions).toHaveLength(26);
    expect(versions.map((v) => v.content).at(-1)).toBe("version 25");
    const stored = await server.db.prisma.message.findUniqueOrThrow({ where: { id } });
    expect(JSON.stringify(stored.edit_summary)).not.toContain("version");
  });

  it("is filled for messages edited before it existed, by the migration", async () => {
    const id = await send("old edits", "original");
    const history = Array.from({ length: 23 }, (_, i) => ({
      user_id: cast.id("hamlet"),
      timestamp: 1_700_000_000 + i,
      prev_content: `text ${String(i)}`,
      prev_rendered_content: `<p>text ${String(i)}</p>`,
      ...(i === 22 ? { prev_topic: "older", topic: "old edits" } : {}),
    }));
    await server.db.prisma.message.update({
      where: { id },
      data: { edit_history: history, edit_summary: undefined, last_edit_time: new Date() },
    });
    await sql`UPDATE messages SET edit_summary = NULL WHERE id = ${id}`.execute(server.db.q);
    const migration = readFileSync(
      join(__dirname, "../prisma/migrations/20261204000000_reports_and_edit_summary/migration.sql"),
      "utf8",
    );
    const backfill = migration.slice(migration.indexOf('UPDATE "messages"'));
    await sql.raw(backfill).execute(server.db.q);
    const shown = (await messageObject(id)).edit_history as Record<string, unknown>[];
    expect(shown).toHaveLength(20);
    expect(shown[0]).toEqual({
      user_id: cast.id("hamlet"),
      timestamp: 1_700_000_022,
      prev_topic: "older",
      topic: "old edits",
    });
    expect(shown.at(-1)).toEqual({ user_id: cast.id("hamlet"), timestamp: 1_700_000_003 });
  });
});
