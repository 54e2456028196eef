import {
  type Cast,
  type TestServer,
  apiError,
  createOtherRealm,
  loadCast,
  startTestServer,
  channelIds,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validateList = zulipResponseSchema("companions", "/drafts", "get");
const validateCreate = zulipResponseSchema("companions", "/drafts", "post");
const validateEdit = zulipResponseSchema("subset", "/drafts/{draft_id}", "patch");
const validateDelete = zulipResponseSchema("companions", "/drafts/{draft_id}", "delete");
const validateSnippets = zulipResponseSchema("companions", "/saved_snippets", "get");
const validateSnippetCreate = zulipResponseSchema("companions", "/saved_snippets", "post");
const validateSnippetEdit = zulipResponseSchema(
  "subset",
  "/saved_snippets/{saved_snippet_id}",
  "patch",
);

let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["hamlet", "othello", "cordelia", "polonius", "hamlet-bot"]);
  channels = await channelIds(server);
  await createOtherRealm(server);
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const id = (who: string) => cast.id(who);
const error = apiError;

async function createDraft(who: string, draft: Record<string, unknown>): Promise<number> {
  const reply = await server.call("POST", "/api/v1/drafts", {
    ...as(who),
    form: { drafts: [draft] },
  });
  expect(reply.status).toBe(200);
  return (reply.body.ids as number[])[0] ?? 0;
}

describe("drafts", () => {
  it("creates, lists, edits and deletes drafts of every type", async () => {
    const created = await server.call("POST", "/api/v1/drafts", {
      ...as("hamlet"),
      form: {
        drafts: [
          {
            type: "stream",
            to: [channels.Denmark],
            topic: "castle",
            content: " To be ",
            timestamp: 1700000000,
          },
          { type: "private", to: [id("othello"), id("cordelia")], topic: "ignored", content: "Hi" },
          { type: "", to: [], topic: "", content: "Unaddressed" },
        ],
      },
    });
    expect(validateCreate(created.body)).toEqual([]);
    const ids = created.body.ids as number[];
    expect(ids).toHaveLength(3);
    const listed = await server.call("GET", "/api/v1/drafts", as("hamlet"));
    expect(validateList(listed.body)).toEqual([]);
    expect(listed.body.count).toBe(3);
    const byId = new Map((listed.body.drafts as { id: number }[]).map((d) => [d.id, d]));
    expect(byId.get(ids[0] ?? 0)).toEqual({
      id: ids[0],
      type: "stream",
      to: [channels.Denmark],
      topic: "castle",
      content: "To be",
      timestamp: 1700000000,
    });
    expect(byId.get(ids[1] ?? 0)).toMatchObject({ type: "private", topic: "", content: "Hi" });
    const edited = await server.call("PATCH", `/api/v1/drafts/${String(ids[2])}`, {
      ...as("hamlet"),
      form: {
        draft: { type: "stream", to: [channels.Verona], topic: "t".repeat(70), content: "Now" },
      },
    });
    expect(validateEdit(edited.body)).toEqual([]);
    const row = await server.db.prisma.draft.findUniqueOrThrow({ where: { id: ids[2] } });
    expect([row.type, row.to, row.topic, row.content]).toEqual([
      "stream",
      [channels.Verona],
      "t".repeat(60),
      "Now",
    ]);
    const deleted = await server.call("DELETE", `/api/v1/drafts/${String(ids[2])}`, as("hamlet"));
    expect(validateDelete(deleted.body)).toEqual([]);
    expect(await server.db.prisma.draft.count({ where: { id: ids[2] } })).toBe(0);
  });

  it.each([
    [{ type: "", to: [], topic: "", content: "   " }, "Message must not be empty"],
    [{ type: "", to: [], topic: "", content: "a\u0000b" }, "Message must not contain null bytes"],
    [
      { type: "stream", to: [1, 2], topic: "x", content: "c" },
      "Must specify exactly 1 channel ID for channel messages",
    ],
    [{ type: "stream", to: [999999], topic: "x", content: "c" }, "Invalid channel ID"],
    [
      { type: "stream", to: "CHANNEL", topic: "x\u0000", content: "c" },
      'draft["to"] is not a list',
    ],
    [
      { type: "", to: [], topic: "", content: "c", timestamp: -5 },
      "Timestamp must not be negative.",
    ],
    [{ type: "email", to: [], topic: "", content: "c" }, 'Invalid draft["type"]'],
    [{ type: "", to: [], topic: "", content: "c", id: 5 }, 'Argument "id" at draft is unexpected'],
    [{ type: "", to: [], content: "c" }, 'draft["topic"] field is missing: Field required'],
  ])("refuses an edit to %j: %s", async (draft, msg) => {
    const draftId = await createDraft("othello", { type: "", to: [], topic: "", content: "Keep" });
    const reply = await server.call("PATCH", `/api/v1/drafts/${draftId}`, {
      ...as("othello"),
      form: { draft },
    });
    expect([reply.status, reply.body]).toEqual([400, error(msg)]);
    const row = await server.db.prisma.draft.findUniqueOrThrow({ where: { id: draftId } });
    expect(row.content).toBe("Keep");
  });

  it("refuses a channel topic with NUL and a private channel the user cannot see", async () => {
    const draftId = await createDraft("othello", { type: "", to: [], topic: "", content: "Keep" });
    const nul = await server.call("PATCH", `/api/v1/drafts/${draftId}`, {
      ...as("othello"),
      form: { draft: { type: "stream", to: [channels.Verona], topic: "a\u0000", content: "c" } },
    });
    expect(nul.body).toEqual(error("Topic must not contain null bytes"));
    const hidden = await server.call("PATCH", `/api/v1/drafts/${draftId}`, {
      ...as("othello"),
      form: { draft: { type: "stream", to: [channels["core team"]], topic: "a", content: "c" } },
    });
    expect(hidden.body).toEqual(error("Invalid channel ID"));
  });

  it("answers 404 Draft does not exist for an unknown draft and another user's, before the content", async () => {
    const theirs = await createDraft("cordelia", { type: "", to: [], topic: "", content: "Mine" });
    for (const draftId of [999_999, theirs]) {
      const reply = await server.call("PATCH", `/api/v1/drafts/${draftId}`, {
        ...as("othello"),
        form: { draft: "not even JSON" },
      });
      expect([reply.status, reply.body]).toEqual([404, error("Draft does not exist")]);
      const deleted = await server.call("DELETE", `/api/v1/drafts/${draftId}`, as("othello"));
      expect([deleted.status, deleted.body]).toEqual([404, error("Draft does not exist")]);
    }
    expect(await server.db.prisma.draft.count({ where: { id: theirs } })).toBe(1);
    const othellos = await server.call("GET", "/api/v1/drafts", as("othello"));
    expect((othellos.body.drafts as { id: number }[]).map((d) => d.id)).not.toContain(theirs);
  });

  it("honours the draft-sync setting first, on every operation", async () => {
    const draftId = await createDraft("polonius", { type: "", to: [], topic: "", content: "Hm" });
    await server.db.prisma.user.update({
      where: { id: id("polonius") },
      data: { enable_drafts_synchronization: false },
    });
    const off = error("User has disabled synchronizing drafts.");
    expect((await server.call("GET", "/api/v1/drafts", as("polonius"))).body).toEqual(off);
    expect(
      (
        await server.call("POST", "/api/v1/drafts", {
          ...as("polonius"),
          form: { drafts: [{ type: "", to: [], topic: "", content: "x" }] },
        })
      ).body,
    ).toEqual(off);
    for (const target of [draftId, 999_999]) {
      expect(
        (
          await server.call("PATCH", `/api/v1/drafts/${target}`, {
            ...as("polonius"),
            form: { draft: { type: "", to: [], topic: "", content: "x" } },
          })
        ).body,
      ).toEqual(off);
    }
    expect((await server.call("DELETE", `/api/v1/drafts/${draftId}`, as("polonius"))).body).toEqual(
      off,
    );
    const registered = await server.call("POST", "/api/v1/register", {
      ...as("polonius"),
      form: { fetch_event_types: ["drafts"] },
    });
    expect(registered.body.drafts).toEqual([]);
  });

  it("creates all drafts of a request or none", async () => {
    const before = await server.db.prisma.draft.count();
    const reply = await server.call("POST", "/api/v1/drafts", {
      ...as("hamlet"),
      form: {
        drafts: [
          { type: "", to: [], topic: "", content: "fine" },
          { type: "private", to: [999_999], topic: "", content: "bad" },
        ],
      },
    });
    expect(reply.body).toEqual(error("Invalid user ID 999999"));
    expect(await server.db.prisma.draft.count()).toBe(before);
  });
});

describe("saved snippets", () => {
  it("creates, lists, edits and deletes a snippet", async () => {
    const created = await server.call("POST", "/api/v1/saved_snippets", {
      ...as("hamlet"),
      form: { title: "Greeting", content: "Good morrow" },
    });
    expect(validateSnippetCreate(created.body)).toEqual([]);
    const snippetId = created.body.saved_snippet_id as number;
    const edited = await server.call("PATCH", `/api/v1/saved_snippets/${snippetId}`, {
      ...as("hamlet"),
      form: { content: "Good night" },
    });
    expect(validateSnippetEdit(edited.body)).toEqual([]);
    const listed = await server.call("GET", "/api/v1/saved_snippets", as("hamlet"));
    expect(validateSnippets(listed.body)).toEqual([]);
    expect(listed.body.saved_snippets).toEqual([
      {
        id: snippetId,
        title: "Greeting",
        content: "Good night",
        date_created: expect.any(Number) as number,
      },
    ]);
    const unchanged = await server.call(
      "PATCH",
      `/api/v1/saved_snippets/${snippetId}`,
      as("hamlet"),
    );
    expect(unchanged.body).toEqual({ result: "success", msg: "" });
    const deleted = await server.call(
      "DELETE",
      `/api/v1/saved_snippets/${snippetId}`,
      as("hamlet"),
    );
    expect(deleted.body).toEqual({ result: "success", msg: "" });
    expect(
      (await server.call("GET", "/api/v1/saved_snippets", as("hamlet"))).body.saved_snippets,
    ).toEqual([]);
  });

  it.each([
    [{ title: " " }, "title cannot be blank"],
    [{ title: "t".repeat(61) }, "title is too long (limit: 60 characters)"],
    [{ content: "" }, "content cannot be blank"],
    [{ content: "c".repeat(10_001) }, "content is too long (limit: 10000 characters)"],
  ])("refuses the edit %j: %s", async (form, msg) => {
    const created = await server.call("POST", "/api/v1/saved_snippets", {
      ...as("othello"),
      form: { title: "Keep", content: "Kept" },
    });
    const snippetId = created.body.saved_snippet_id as number;
    const reply = await server.call("PATCH", `/api/v1/saved_snippets/${snippetId}`, {
      ...as("othello"),
      form,
    });
    expect([reply.status, reply.body]).toEqual([400, error(msg)]);
    const row = await server.db.prisma.savedSnippet.findUniqueOrThrow({ where: { id: snippetId } });
    expect([row.title, row.content]).toEqual(["Keep", "Kept"]);
  });

  it("answers 404 for an unknown snippet and another user's", async () => {
    const theirs = await server.call("POST", "/api/v1/saved_snippets", {
      ...as("cordelia"),
      form: { title: "Mine", content: "Nothing" },
    });
    for (const snippetId of [999_999, theirs.body.saved_snippet_id as number]) {
      const edit = await server.call("PATCH", `/api/v1/saved_snippets/${snippetId}`, {
        ...as("othello"),
        form: { title: "Stolen" },
      });
      expect([edit.status, edit.body]).toEqual([404, error("Saved snippet does not exist.")]);
      const del = await server.call("DELETE", `/api/v1/saved_snippets/${snippetId}`, as("othello"));
      expect([del.status, del.body]).toEqual([404, error("Saved snippet does not exist.")]);
    }
    const row = await server.db.prisma.savedSnippet.findUniqueOrThrow({
      where: { id: theirs.body.saved_snippet_id as number },
    });
    expect(row.title).toBe("Mine");
  });
});
