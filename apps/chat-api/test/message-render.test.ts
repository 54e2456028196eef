import {
  type Cast,
  type TestServer,
  channelIds,
  listenAs,
  loadCast,
  startTestServer,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

/**
 * Rendering in the life of a message: a send renders once and stores the
 * HTML; the content's mentions and alert words become the recipients' flags
 * (in user_messages, in their message events, in register's unread
 * mentions); an edit renders again and moves the flags; the realm's
 * linkifiers apply; POST /messages/render and channel descriptions render
 * the same way.
 */
const validate = {
  render: zulipResponseSchema("session", "/messages/render", "post"),
};

let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["hamlet", "othello", "cordelia", "iago", "desdemona"]);
  channels = await channelIds(server);
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);

async function send(who: string, content: string, topic = "render"): Promise<number> {
  const reply = await server.call("POST", "/api/v1/messages", {
    ...as(who),
    form: { type: "stream", to: String(channels.Denmark), topic, content },
  });
  expect(reply.status).toBe(200);
  return reply.body.id as number;
}

/** The flags of message `messageId` for each of `people`. */
async function flagsOf(messageId: number, people: string[]) {
  const out: Record<string, string[]> = {};
  for (const who of people) {
    const reply = await server.call("GET", `/api/v1/messages/${String(messageId)}`, as(who));
    out[who] = (reply.body.message as { flags: string[] }).flags.filter((f) => f !== "read");
  }
  return out;
}

describe("mentions and alert words", () => {
  it("flag the people a message mentions, and tell their clients", async () => {
    const othello = await listenAs(server, as("othello"), ["message"]);
    const messageId = await send("hamlet", "@**Othello, the Moor of Venice** look at **this**");
    const [event] = await othello();
    expect(event).toMatchObject({ flags: ["mentioned"] });
    expect((event?.message as { content: string }).content).toBe(
      "@**Othello, the Moor of Venice** look at **this**",
    );
    expect(await flagsOf(messageId, ["othello", "cordelia", "hamlet"])).toEqual({
      othello: ["mentioned"],
      cordelia: [],
      hamlet: [],
    });
    const stored = await server.db.prisma.message.findUniqueOrThrow({ where: { id: messageId } });
    expect(stored.rendered_content).toBe(
      `<p><span class="user-mention" data-user-id="${String(id("othello"))}">@Othello, the Moor of Venice</span> look at <strong>this</strong></p>`,
    );
    const state = await server.call("POST", "/api/v1/register", {
      ...as("othello"),
      form: { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) },
    });
    expect((state.body.unread_msgs as { mentions: number[] }).mentions).toContain(messageId);
  });

  it("flag everyone for @**all**, the topic's participants for @**topic**", async () => {
    await send("cordelia", "I was here first", "wildcards");
    const all = await send("hamlet", "@**all** meeting", "wildcards");
    expect(await flagsOf(all, ["othello", "cordelia", "iago"])).toEqual({
      othello: ["wildcard_mentioned"],
      cordelia: ["wildcard_mentioned"],
      iago: ["wildcard_mentioned"],
    });
    const topic = await send("hamlet", "@**topic** who is in?", "wildcards");
    expect(await flagsOf(topic, ["othello", "cordelia"])).toEqual({
      othello: [],
      cordelia: ["wildcard_mentioned"],
    });
  });

  it("flag a mentioned group's members, and the owners of alert words", async () => {
    const group = await server.call("POST", "/api/v1/user_groups/create", {
      ...as("iago"),
      form: {
        name: "players",
        description: "The players",
        members: JSON.stringify([id("cordelia"), id("iago")]),
      },
    });
    expect(group.status).toBe(200);
    const words = await server.call("POST", "/api/v1/users/me/alert_words", {
      ...as("othello"),
      form: { alert_words: JSON.stringify(["handkerchief"]) },
    });
    expect(words.status).toBe(200);
    const messageId = await send("hamlet", "@*players* find the Handkerchief (not handkerchiefs)");
    expect(await flagsOf(messageId, ["othello", "cordelia", "iago", "desdemona"])).toEqual({
      othello: ["has_alert_word"],
      cordelia: ["mentioned"],
      iago: ["mentioned"],
      desdemona: [],
    });
  });

  it("flag every subscriber with one of their several alert words, and a direct message's recipients", async () => {
    for (const [who, words] of [
      ["desdemona", ["willow", "Song"]],
      ["cordelia", ["storm"]],
    ] as const) {
      const added = await server.call("POST", "/api/v1/users/me/alert_words", {
        ...as(who),
        form: { alert_words: JSON.stringify(words) },
      });
      expect(added.status).toBe(200);
    }
    const inChannel = await send("hamlet", "Sing a SONG of willow, not a storm-free night");
    expect(await flagsOf(inChannel, ["desdemona", "cordelia", "iago"])).toEqual({
      desdemona: ["has_alert_word"],
      cordelia: ["has_alert_word"],
      iago: [],
    });
    const direct = await server.call("POST", "/api/v1/messages", {
      ...as("hamlet"),
      form: {
        type: "direct",
        to: JSON.stringify([id("desdemona"), id("iago")]),
        content: "a song",
      },
    });
    expect(direct.status).toBe(200);
    expect(await flagsOf(direct.body.id as number, ["desdemona", "iago"])).toEqual({
      desdemona: ["has_alert_word"],
      iago: [],
    });
  });

  it("follow an edit: a mention removed is no longer flagged, one added is", async () => {
    const messageId = await send("hamlet", "@**Othello, the Moor of Venice** hi");
    const edit = await server.call("PATCH", `/api/v1/messages/${String(messageId)}`, {
      ...as("hamlet"),
      form: { content: "@**Cordelia, Lear's daughter** hi" },
    });
    expect(edit.status).toBe(200);
    expect(await flagsOf(messageId, ["othello", "cordelia"])).toEqual({
      othello: [],
      cordelia: ["mentioned"],
    });
    const stored = await server.db.prisma.message.findUniqueOrThrow({ where: { id: messageId } });
    expect(stored.rendered_content).toContain(`data-user-id="${String(id("cordelia"))}"`);
  });
});

describe("the realm's linkifiers, previews and descriptions", () => {
  it("apply linkifiers added by an administrator to later messages", async () => {
    const added = await server.call("POST", "/api/v1/realm/filters", {
      ...as("iago"),
      form: { pattern: "PR(?P<id>[0-9]+)", url_template: "https://tracker.example/pull/{id}" },
    });
    expect(added.status).toBe(200);
    // The demo realm's own linkifiers (#id, RFCid) come first, in their order.
    const messageId = await send("hamlet", "fixed in PR42, see #7 and RFC2119");
    const stored = await server.db.prisma.message.findUniqueOrThrow({ where: { id: messageId } });
    expect(stored.rendered_content).toBe(
      '<p>fixed in <a href="https://tracker.example/pull/42">PR42</a>, see ' +
        '<a href="https://github.com/zulip/zulip/issues/7">#7</a> and ' +
        '<a href="https://www.rfc-editor.org/rfc/rfc2119">RFC2119</a></p>',
    );
  });

  it("renders a preview (POST /messages/render) and a channel's description the same way", async () => {
    const preview = await server.call("POST", "/api/v1/messages/render", {
      ...as("hamlet"),
      form: { content: "*to be* and #**Denmark**" },
    });
    expect(validate.render(preview.body)).toEqual([]);
    expect(preview.body.rendered).toBe(
      `<p><em>to be</em> and <a class="stream" data-stream-id="${String(channels.Denmark)}" href="/#narrow/channel/${String(channels.Denmark)}-Denmark">#Denmark</a></p>`,
    );
    const changed = await server.call("PATCH", `/api/v1/streams/${String(channels.Denmark)}`, {
      ...as("iago"),
      form: { description: "Something is **rotten**" },
    });
    expect(changed.status).toBe(200);
    const denmark = await server.call(
      "GET",
      `/api/v1/streams/${String(channels.Denmark)}`,
      as("hamlet"),
    );
    expect((denmark.body.stream as { rendered_description: string }).rendered_description).toBe(
      "<p>Something is <strong>rotten</strong></p>",
    );
  });
});
