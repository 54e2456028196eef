import { type TestServer, apiError, authOf, listenAs, startTestServer } from "./support/server";
import { fullEventsSchema, zulipResponseSchema } from "./support/zulip-schema";

/**
 * POST /messages/{message_id}/typing (feature level 351): the sender of a
 * message tells its conversation they started or stopped editing it, as
 * `typing_edit_message` events checked against Zulip 10.2's whole document.
 */
let server: TestServer;
const fullEvents = fullEventsSchema();
const simpleSuccess = zulipResponseSchema("full", "/messages/{message_id}/typing", "post");

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const send = async (who: string, form: Record<string, string>) =>
  (await server.call("POST", "/api/v1/messages", { ...authOf(await server.person(who)), form }))
    .body.id as number;

const editTyping = async (who: string, messageId: number, op: string) =>
  server.call("POST", `/api/v1/messages/${messageId}/typing`, {
    ...authOf(await server.person(who)),
    form: { op },
  });

async function described(listen: () => Promise<Record<string, unknown>[]>) {
  const events = await listen();
  expect(fullEvents({ events: events.map((e, id) => ({ id, ...e })) })).toEqual([]);
  return events;
}

it("tells a channel's other subscribers, and a direct conversation's people", async () => {
  const hamlet = await server.person("hamlet");
  const othello = await server.person("othello");
  const inChannel = await send("hamlet", {
    type: "stream",
    to: "Verona",
    topic: "edits",
    content: "first",
  });
  const direct = await send("hamlet", {
    type: "direct",
    to: JSON.stringify([othello.id]),
    content: "psst",
  });
  const verona = await server.db.prisma.channel.findFirstOrThrow({ where: { name: "Verona" } });
  const listenOthello = await listenAs(server, authOf(othello), ["typing_edit_message"]);
  const listenHamlet = await listenAs(server, authOf(hamlet), ["typing_edit_message"]);
  const started = await editTyping("hamlet", inChannel, "start");
  expect(started.body).toEqual({ result: "success", msg: "" });
  expect(simpleSuccess(started.body)).toEqual([]);
  expect((await editTyping("hamlet", direct, "stop")).status).toBe(200);
  expect(await described(listenOthello)).toEqual([
    {
      type: "typing_edit_message",
      op: "start",
      sender_id: hamlet.id,
      message_id: inChannel,
      recipient: { type: "channel", channel_id: verona.id, topic: "edits" },
    },
    {
      type: "typing_edit_message",
      op: "stop",
      sender_id: hamlet.id,
      message_id: direct,
      recipient: { type: "direct", user_ids: [hamlet.id, othello.id].sort((a, b) => a - b) },
    },
  ]);
  // The editor hears their own direct notice (as for typing), not the channel's.
  expect((await described(listenHamlet)).map((e) => e.message_id)).toEqual([direct]);
});

it("refuses others' messages, unknown ones and a bad op", async () => {
  const mine = await send("hamlet", {
    type: "stream",
    to: "Verona",
    topic: "edits",
    content: "mine",
  });
  expect((await editTyping("othello", mine, "start")).body).toEqual(
    apiError("You don't have permission to edit this message"),
  );
  expect((await editTyping("hamlet", 999_999, "start")).body).toEqual(
    apiError("Invalid message(s)"),
  );
  expect((await editTyping("hamlet", mine, "pause")).status).toBe(400);
});
