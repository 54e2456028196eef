import { doDeleteTopic, TOPIC_DELETION_BATCH } from "../src/actions/topic-deletion";
import { insertMessageRows, newMessageId } from "../src/db/queries/messages";
import {
  type TestServer,
  apiError,
  authOf,
  channelIds,
  listenAs,
  startTestServer,
} from "./support/server";
import { fullEventsSchema, zulipResponseSchema } from "./support/zulip-schema";

/**
 * POST /streams/{stream_id}/delete_topic: administrators delete a topic's
 * messages in batches, newest first, each batch its own transaction with its
 * `delete_message` event; `complete: false` when the time runs out, and the
 * next request goes on where it stopped.
 */
let server: TestServer;
let channels: Record<string, number>;
const fullEvents = fullEventsSchema();
const validateAnswer = zulipResponseSchema("full", "/streams/{stream_id}/delete_topic", "post");

beforeAll(async () => {
  server = await startTestServer();
  channels = await channelIds(server);
});
afterAll(() => server.close());

const verona = () => channels.Verona ?? 0;

/** Stores `count` messages from Hamlet in a topic of Verona, held by its subscribers. */
async function fill(topic: string, count: number): Promise<number[]> {
  const hamlet = await server.person("hamlet");
  const subscribers = await server.db.prisma.subscription.findMany({
    where: { channel_id: verona(), active: true },
    select: { user_id: true },
  });
  const readers = subscribers.map((s) => s.user_id);
  const ids: number[] = [];
  await server.db.transaction(async (tx) => {
    const realm = await tx.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } });
    for (let n = 0; n < count; n++) {
      const { id } = await newMessageId(tx, realm.id);
      await insertMessageRows(
        tx,
        {
          id,
          realm_id: realm.id,
          sender_id: hamlet.id,
          channel_id: verona(),
          topic,
          dm_key: null,
          content: `line ${n}`,
          rendered_content: `<p>line ${n}</p>`,
          date_sent: new Date(),
        },
        readers,
        readers.map(() => 0n),
        [],
      );
      ids.push(id);
    }
  });
  return ids;
}

const inTopic = (topic: string) =>
  server.db.prisma.message.count({ where: { channel_id: verona(), topic } });

it("deletes a topic in batches, newest first, telling those who had the messages", async () => {
  const ids = await fill("doomed", TOPIC_DELETION_BATCH + 50);
  await fill("spared", 3);
  const listen = await listenAs(server, authOf(await server.person("othello")), ["delete_message"]);
  const reply = await server.call("POST", `/api/v1/streams/${verona()}/delete_topic`, {
    ...authOf(await server.person("iago")),
    form: { topic_name: "DOOMED" },
  });
  expect(reply.body).toEqual({ result: "success", msg: "", complete: true });
  expect(validateAnswer(reply.body)).toEqual([]);
  expect(await inTopic("doomed")).toBe(0);
  expect(await inTopic("spared")).toBe(3);
  const events = await listen();
  expect(fullEvents({ events: events.map((e, n) => ({ id: n, ...e })) })).toEqual([]);
  // Clients without bulk deletion get one event per message; newest batch first.
  const deleted = events.map((e) => e.message_id as number);
  expect(new Set(deleted)).toEqual(new Set(ids));
  expect(deleted.slice(0, TOPIC_DELETION_BATCH)).toEqual(
    ids.slice(-TOPIC_DELETION_BATCH).sort((a, b) => a - b),
  );
});

it("stops when its time runs out, and the next request finishes", async () => {
  await fill("long", TOPIC_DELETION_BATCH * 2 + 10);
  const iago = await server.person("iago");
  const user = await server.services.auth.lookup(iago.apiKey);
  if (user === undefined) throw new Error("iago");
  // A budget already spent: nothing is deleted, and the answer says so.
  expect(await doDeleteTopic(server.db, user, verona(), "long", 0)).toEqual({ complete: false });
  expect(await inTopic("long")).toBe(TOPIC_DELETION_BATCH * 2 + 10);
  expect(await doDeleteTopic(server.db, user, verona(), "long", 60_000)).toEqual({
    complete: true,
  });
  expect(await inTopic("long")).toBe(0);
});

it("is for administrators only, and only in channels they can see", async () => {
  await fill("kept", 2);
  const byMember = await server.call("POST", `/api/v1/streams/${verona()}/delete_topic`, {
    ...authOf(await server.person("hamlet")),
    form: { topic_name: "kept" },
  });
  expect(byMember.body).toEqual(
    apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
  );
  const unknown = await server.call("POST", "/api/v1/streams/999999/delete_topic", {
    ...authOf(await server.person("iago")),
    form: { topic_name: "kept" },
  });
  expect(unknown.body).toEqual(apiError("Invalid channel ID"));
  expect(await inTopic("kept")).toBe(2);
});
