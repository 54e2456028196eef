import { Role } from "../src/lib/roles";
import { type Person, type TestServer, createOtherRealm, startTestServer } from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validate = zulipResponseSchema("subset", "/bots/{bot_id}/api_key/regenerate", "post");

let server: TestServer;
let bot: Person;
let outsider: Person;

beforeAll(async () => {
  server = await startTestServer();
  bot = await server.person("hamlet-bot");
  ({ outsider } = await createOtherRealm(server, Role.ADMINISTRATOR));
});

afterAll(() => server.close());

const regenerate = (caller: Person, botId: number, host?: string) =>
  server.call("POST", `/api/v1/bots/${botId}/api_key/regenerate`, {
    auth: [caller.email, caller.apiKey],
    ...(host === undefined ? {} : { host }),
  });

describe("POST /api/v1/bots/{bot_id}/api_key/regenerate", () => {
  it("gives the owner a new key; the old one stops working at once", async () => {
    const hamlet = await server.person("hamlet");
    const before = await server.person("hamlet-bot");
    expect(
      (await server.call("GET", "/api/v1/users/me", { auth: [before.email, before.apiKey] }))
        .status,
    ).toBe(200);
    const reply = await regenerate(hamlet, bot.id);
    expect(reply.status).toBe(200);
    expect(validate(reply.body)).toEqual([]);
    const key = reply.body.api_key as string;
    expect(key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(key).not.toBe(before.apiKey);
    expect(
      (await server.call("GET", "/api/v1/users/me", { auth: [before.email, before.apiKey] })).body
        .msg,
    ).toBe("Invalid API key");
    expect(
      (await server.call("GET", "/api/v1/users/me", { auth: [before.email, key] })).status,
    ).toBe(200);
    expect((await server.person("hamlet-bot")).apiKey).toBe(key);
  });

  it.each([
    ["desdemona", 200, undefined],
    ["iago", 200, undefined],
    ["prospero", 400, "Insufficient permission"],
    ["othello", 400, "Insufficient permission"],
    ["polonius", 400, "Insufficient permission"],
  ])("answers %s (not the owner) with %d %s", async (who, status, msg) => {
    const reply = await regenerate(await server.person(who), bot.id);
    expect(reply.status).toBe(status);
    if (msg === undefined) expect(validate(reply.body)).toEqual([]);
    else expect(reply.body).toEqual({ result: "error", msg, code: "BAD_REQUEST" });
  });

  it("refuses bots, even the bot itself", async () => {
    const self = await server.person("hamlet-bot");
    const reply = await regenerate(self, bot.id);
    expect(reply.body).toEqual({
      result: "error",
      msg: "This endpoint does not accept bot requests.",
      code: "BAD_REQUEST",
    });
  });

  it.each([
    ["an unknown id", 999_999],
    ["a human", 0],
  ])("answers No such bot for %s", async (_what, id) => {
    const hamlet = await server.person("hamlet");
    const target = id === 0 ? hamlet.id : id;
    const reply = await regenerate(await server.person("iago"), target);
    expect([reply.status, reply.body]).toEqual([
      400,
      { result: "error", msg: "No such bot", code: "BAD_REQUEST" },
    ]);
  });

  it("answers No such bot to an administrator of another realm", async () => {
    const reply = await regenerate(outsider, bot.id, "lear.chat.test");
    expect(reply.body).toEqual({ result: "error", msg: "No such bot", code: "BAD_REQUEST" });
  });

  it("answers 401 to a user of another realm on this realm's host", async () => {
    const reply = await regenerate(outsider, bot.id);
    expect([reply.status, reply.body.msg]).toEqual([
      401,
      "Account is not associated with this subdomain",
    ]);
  });

  it("keeps the notification bot out of reach: not regenerable, its key opens nothing", async () => {
    const system = await server.db.prisma.user.findFirstOrThrow({
      where: { is_system_bot: true },
    });
    const reply = await regenerate(await server.person("iago"), system.id);
    expect(reply.body).toEqual({ result: "error", msg: "No such bot", code: "BAD_REQUEST" });
    const asBot = await server.call("GET", "/api/v1/users/me", {
      auth: [system.email, system.api_key],
    });
    expect([asBot.status, asBot.body.msg]).toEqual([401, "Invalid API key"]);
  });
});
