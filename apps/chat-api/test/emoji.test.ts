import { flutterProblems } from "./support/flutter-models";
import {
  type Cast,
  type TestServer,
  apiError,
  channelIds,
  listenAs,
  loadCast,
  startTestServer,
} from "./support/server";

/**
 * Emoji as Zulip's clients name them (issue 48): Zulip's names and aliases
 * for reactions, status emoji and Markdown, the emoji data file at
 * register's `server_emoji_data_url`, and emoticons for those who translate
 * them.
 */
let server: TestServer;
let cast: Cast;
let messageId: number;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["hamlet", "othello"]);
  const channels = await channelIds(server);
  const sent = await call("hamlet", "POST", "/messages", {
    type: "stream",
    to: String(channels.Denmark),
    topic: "emoji",
    content: "react to me",
  });
  messageId = sent.body.id as number;
});

afterAll(() => server.close());

function call(who: string, method: string, path: string, form: Record<string, string> = {}) {
  return server.call(method, `/api/v1${path}`, { ...cast.as(who), form });
}

const react = (who: string, form: Record<string, string>) =>
  call(who, "POST", `/messages/${String(messageId)}/reactions`, form);

/** The emoji data file, fetched as a client fetches it: from register's URL, without logging in. */
async function emojiData(): Promise<{ url: string; codeToNames: Record<string, string[]> }> {
  const state = await call("othello", "POST", "/register", {
    fetch_event_types: JSON.stringify(["realm"]),
  });
  const url = new URL(state.body.server_emoji_data_url as string);
  const reply = await server.call("GET", url.pathname);
  expect(reply.status).toBe(200);
  expect(flutterProblems("ServerEmojiData", reply.body)).toEqual([]);
  return { url: url.pathname, codeToNames: reply.body.code_to_names as Record<string, string[]> };
}

describe("Zulip's emoji names", () => {
  it.each([
    ["thumbs_up", "1f44d"],
    ["like", "1f44d"],
    ["+1", "1f44d"],
    ["working_on_it", "1f6e0"],
    ["check", "2705"],
    ["thinking", "1f914"],
    ["smile", "1f642"],
  ])("reacts with %s, stored with Zulip's code %s and the name given", async (name, code) => {
    const listen = await listenAs(server, cast.as("othello"), ["reaction"]);
    const reply = await react("hamlet", { emoji_name: name });
    expect(reply.body).toEqual({ result: "success", msg: "" });
    expect(await listen()).toEqual([
      expect.objectContaining({ op: "add", emoji_name: name, emoji_code: code }),
    ]);
    await call("hamlet", "DELETE", `/messages/${String(messageId)}/reactions`, {
      emoji_name: name,
    });
  });

  it("takes the mobile app's six quick reactions by the data file's first name and code", async () => {
    const { codeToNames } = await emojiData();
    for (const code of ["1f44d", "1f389", "1f642", "2764", "1f6e0", "1f419"]) {
      const name = codeToNames[code]?.[0] ?? "";
      const reply = await react("othello", {
        emoji_name: name,
        emoji_code: code,
        reaction_type: "unicode_emoji",
      });
      expect([code, name, reply.status]).toEqual([code, name, 200]);
    }
  });

  it("refuses names Zulip does not have, and a name with another emoji's code", async () => {
    expect((await react("hamlet", { emoji_name: "thinking_face" })).body).toEqual(
      apiError("Emoji 'thinking_face' does not exist"),
    );
    expect(
      (
        await react("hamlet", {
          emoji_name: "smile",
          emoji_code: "1f604",
          reaction_type: "unicode_emoji",
        })
      ).body,
    ).toEqual(apiError("Invalid emoji name."));
  });

  it("sets a status emoji by an alias, and renders names as Zulip renders them", async () => {
    const status = await call("hamlet", "POST", "/users/me/status", {
      status_text: "Busy",
      emoji_name: "working_on_it",
    });
    expect(status.status).toBe(200);
    const row = await server.db.prisma.user.findUniqueOrThrow({ where: { id: cast.id("hamlet") } });
    expect([row.status_emoji_name, row.status_emoji_code]).toEqual(["working_on_it", "1f6e0"]);
    const rendered = await call("hamlet", "POST", "/messages/render", { content: ":smile: 🙂" });
    const span =
      '<span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span>';
    expect(rendered.body.rendered).toBe(`<p>${span} ${span}</p>`);
  });
});

describe("the emoji data file", () => {
  it("is Zulip's code_to_names, canonical name first, without emoji newer than Zulip's set", async () => {
    const { codeToNames } = await emojiData();
    expect(codeToNames["1f642"]?.[0]).toBe("smile");
    expect(codeToNames["1f44d"]).toEqual(expect.arrayContaining(["thumbs_up", "like", "+1"]));
    // Lime (Emoji 15.1) is not in Zulip's set.
    expect(codeToNames["1f34b-200d-1f7e9"]).toBeUndefined();
    expect(Object.keys(codeToNames).length).toBeGreaterThan(1800);
  });

  it("is cached for a year at its versioned URL, revalidated at the plain one", async () => {
    const { url } = await emojiData();
    expect(url).toMatch(/^\/static\/generated\/emoji\/emoji_api\.[0-9a-f]{12}\.json$/);
    const versioned = await server.call("GET", url);
    expect(versioned.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    const etag = versioned.headers.etag as string;
    expect(etag).toMatch(/^"[0-9a-f]{12}"$/);
    const again = await server.call("GET", url, { headers: { "if-none-match": etag } });
    expect([again.status, again.text]).toEqual([304, ""]);
    const plain = await server.call("GET", "/static/generated/emoji/emoji_api.json");
    expect([plain.status, plain.headers["cache-control"], plain.headers.etag]).toEqual([
      200,
      "public, no-cache",
      etag,
    ]);
    expect(plain.text).toBe(versioned.text);
    const stale = await server.call("GET", "/static/generated/emoji/emoji_api.000000000000.json");
    expect(stale.status).toBe(404);
  });
});

describe("emoticons", () => {
  it("become emoji in the messages of people who turned translate_emoticons on", async () => {
    const before = await call("othello", "POST", "/messages/render", { content: "Hi :)" });
    expect(before.body.rendered).toBe("<p>Hi :)</p>");
    expect(
      (await call("othello", "PATCH", "/settings", { translate_emoticons: "true" })).status,
    ).toBe(200);
    const after = await call("othello", "POST", "/messages/render", { content: "Hi :) <3" });
    expect(after.body.rendered).toBe(
      '<p>Hi <span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span> ' +
        '<span aria-label="heart" class="emoji emoji-2764" role="img" title="heart">:heart:</span></p>',
    );
    // Hamlet's setting is off: his :) stays text.
    const hamlet = await call("hamlet", "POST", "/messages/render", { content: "Hi :)" });
    expect(hamlet.body.rendered).toBe("<p>Hi :)</p>");
  });
});
