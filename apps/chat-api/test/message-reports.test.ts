import {
  type Cast,
  type TestServer,
  apiError,
  channelIds,
  createOtherRealm,
  listenAs,
  loadCast,
  startTestServer,
} from "./support/server";

/**
 * Reporting a message to the realm's moderators (POST /messages/{id}/report,
 * feature level 382) and the setting that turns it on (PATCH /realm's
 * `moderation_request_channel_id`), as the mobile app uses them (issue 47).
 */
let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;
let moderation: number;
let names: Map<number, string>;

const REPORTS_PER_HOUR = 4;

beforeAll(async () => {
  server = await startTestServer({
    env: { CHAT_MAX_REPORTS_PER_HOUR: String(REPORTS_PER_HOUR) },
  });
  cast = await loadCast(server, ["iago", "hamlet", "othello", "cordelia", "prospero"]);
  channels = await channelIds(server);
  const people = await server.db.prisma.user.findMany({ select: { id: true, full_name: true } });
  names = new Map(people.map((p) => [p.id, p.full_name]));
  const created = await call("iago", "POST", "/channels/create", {
    name: "moderation",
    invite_only: "true",
    subscribers: JSON.stringify([cast.id("iago")]),
  });
  expect(created.status).toBe(200);
  moderation = created.body.id as number;
});

afterAll(() => server.close());

function call(who: string, method: string, path: string, form: Record<string, unknown> = {}) {
  return server.call(method, `/api/v1${path}`, { ...cast.as(who), form });
}

const silent = (who: string) => `@_**${names.get(cast.id(who)) ?? ""}|${String(cast.id(who))}**`;

async function send(who: string, form: Record<string, unknown>): Promise<number> {
  const reply = await call(who, "POST", "/messages", form);
  expect(reply.status).toBe(200);
  return reply.body.id as number;
}

const report = (who: string, messageId: number, form: Record<string, unknown>) =>
  call(who, "POST", `/messages/${String(messageId)}/report`, form);

/** The newest message of the moderation channel. */
const newestReport = () =>
  server.db.prisma.message.findFirstOrThrow({
    where: { channel_id: moderation },
    orderBy: { id: "desc" },
  });

describe("turning reporting on", () => {
  it("is off at first: register says -1, reports are refused, the report types are listed", async () => {
    const state = await call("hamlet", "POST", "/register", {
      fetch_event_types: JSON.stringify(["realm"]),
    });
    expect(state.body.realm_moderation_request_channel_id).toBe(-1);
    expect(state.body.server_report_message_types).toEqual([
      { key: "spam", name: "Spam" },
      { key: "harassment", name: "Harassment" },
      { key: "inappropriate", name: "Inappropriate content" },
      { key: "norms", name: "Violates community norms" },
      { key: "other", name: "Other reason" },
    ]);
    const id = await send("othello", {
      type: "stream",
      to: String(channels.Denmark),
      topic: "off",
      content: "not yet",
    });
    expect((await report("hamlet", id, { report_type: "spam" })).body).toEqual(
      apiError("Message reporting is not enabled in this organization."),
    );
  });

  it("takes a private channel of the realm, from an administrator, and tells everyone", async () => {
    const { outsider } = await createOtherRealm(server);
    const foreign = await server.call("POST", "/api/v1/channels/create", {
      auth: [outsider.email, outsider.apiKey],
      host: "lear.chat.test",
      form: {
        name: "their moderators",
        invite_only: "true",
        subscribers: JSON.stringify([outsider.id]),
      },
    });
    expect(foreign.status).toBe(200);
    const cases: [string, Record<string, unknown>, unknown][] = [
      [
        "hamlet",
        { moderation_request_channel_id: moderation },
        apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
      ],
      [
        "iago",
        { moderation_request_channel_id: channels.Denmark },
        apiError("Moderation request channel must be private."),
      ],
      ["iago", { moderation_request_channel_id: foreign.body.id }, apiError("Invalid channel ID")],
      ["iago", { moderation_request_channel_id: 999_999 }, apiError("Invalid channel ID")],
    ];
    for (const [who, form, error] of cases)
      expect((await call(who, "PATCH", "/realm", form)).body).toEqual(error);

    const listen = await listenAs(server, cast.as("cordelia"), ["realm"]);
    const set = await call("iago", "PATCH", "/realm", {
      moderation_request_channel_id: moderation,
    });
    expect(set.body).toEqual({
      result: "success",
      msg: "",
      moderation_request_channel_id: moderation,
    });
    expect(await listen()).toEqual([
      {
        type: "realm",
        op: "update",
        property: "moderation_request_channel_id",
        value: moderation,
      },
    ]);
    const state = await call("hamlet", "POST", "/register", {
      fetch_event_types: JSON.stringify(["realm"]),
    });
    expect(state.body.realm_moderation_request_channel_id).toBe(moderation);
  });
});

describe("POST /api/v1/messages/{id}/report", () => {
  it("posts a channel message's report in the moderation channel, as Zulip words it", async () => {
    const id = await send("othello", {
      type: "stream",
      to: String(channels.Denmark),
      topic: "insults",
      content: "You are a ```fenced``` fool",
    });
    const moderators = await listenAs(server, cast.as("iago"), ["message"]);
    const reply = await report("hamlet", id, {
      report_type: "harassment",
      description: "Rude to me",
    });
    expect(reply.body).toEqual({ result: "success", msg: "" });
    const posted = await newestReport();
    expect(posted.topic).toBe("Othello, the Moor of Venice's moderation requests");
    expect(posted.content).toBe(
      `${silent("hamlet")} reported #**Denmark>insults@${String(id)}** sent by ${silent("othello")}.\n` +
        "- Reason: **harassment**\n- Notes:\n```quote\nRude to me\n```\n" +
        `\`\`\`\` spoiler **Message sent by ${silent("othello")}**\n` +
        "You are a ```fenced``` fool\n````\n",
    );
    const [event] = await moderators();
    expect(event).toMatchObject({ type: "message", message: { id: posted.id } });
    expect(
      await server.db.prisma.messageReport.count({
        where: { reporter_id: cast.id("hamlet"), message_id: id },
      }),
    ).toBe(1);
  });

  it("names the people of a direct message", async () => {
    const oneToOne = await send("othello", {
      type: "direct",
      to: JSON.stringify([cast.id("cordelia")]),
      content: "just us",
    });
    await report("cordelia", oneToOne, { report_type: "spam" });
    expect((await newestReport()).content).toMatch(
      new RegExp(
        `^${escape(`${silent("cordelia")} reported a DM sent by ${silent("othello")}.`)}\\n`,
      ),
    );
    const group = await send("othello", {
      type: "direct",
      to: JSON.stringify([cast.id("cordelia"), cast.id("prospero")]),
      content: "the three of us",
    });
    await report("prospero", group, { report_type: "norms" });
    const people = ["othello", "cordelia", "prospero"].sort((a, b) => cast.id(a) - cast.id(b));
    const last = people.pop() ?? "";
    expect((await newestReport()).content).toMatch(
      new RegExp(
        `^${escape(
          `${silent("prospero")} reported a DM sent by ${silent("othello")} to ${people
            .map(silent)
            .join(", ")}, and ${silent(last)}.`,
        )}\\n`,
      ),
    );
  });

  it("checks the type, the explanation and the message, and posts nothing it refuses", async () => {
    const id = await send("othello", {
      type: "stream",
      to: String(channels.Denmark),
      topic: "checks",
      content: "checked",
    });
    const theirs = await send("othello", {
      type: "direct",
      to: JSON.stringify([cast.id("cordelia")]),
      content: "private",
    });
    const before = await newestReport();
    const cases: [number, Record<string, unknown>, unknown][] = [
      [id, { report_type: "boring" }, apiError("Invalid report_type")],
      [id, { report_type: "other" }, apiError("An explanation is required.")],
      [
        id,
        { report_type: "spam", description: "x".repeat(1001) },
        apiError("description is too long (limit: 1000 characters)"),
      ],
      [theirs, { report_type: "spam" }, apiError("Invalid message(s)")],
      [999_999, { report_type: "spam" }, apiError("Invalid message(s)")],
    ];
    for (const [messageId, form, error] of cases)
      expect((await report("hamlet", messageId, form)).body).toEqual(error);
    expect((await newestReport()).id).toBe(before.id);
  });

  it(`allows ${String(REPORTS_PER_HOUR)} reports an hour per person, then 429`, async () => {
    const id = await send("hamlet", {
      type: "stream",
      to: String(channels.Denmark),
      topic: "many",
      content: "report me",
    });
    const made = await server.db.prisma.messageReport.count({
      where: { reporter_id: cast.id("othello") },
    });
    for (let i = made; i < REPORTS_PER_HOUR; i++)
      expect((await report("othello", id, { report_type: "spam" })).status).toBe(200);
    const refused = await report("othello", id, { report_type: "spam" });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "RATE_LIMIT_HIT" });
    expect(
      await server.db.prisma.messageReport.count({ where: { reporter_id: cast.id("othello") } }),
    ).toBe(REPORTS_PER_HOUR);
  });

  it("is off again when set to -1", async () => {
    await call("iago", "PATCH", "/realm", { moderation_request_channel_id: -1 });
    const id = await send("othello", {
      type: "stream",
      to: String(channels.Denmark),
      topic: "off again",
      content: "later",
    });
    expect((await report("cordelia", id, { report_type: "spam" })).body).toEqual(
      apiError("Message reporting is not enabled in this organization."),
    );
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
