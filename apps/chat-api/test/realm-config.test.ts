import {
  type Cast,
  type Person,
  type TestServer,
  apiError,
  createOtherRealm,
  loadCast,
  startTestServer,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validateAddLinkifier = zulipResponseSchema("companions", "/realm/filters", "post");
const validateRemoveLinkifier = zulipResponseSchema(
  "companions",
  "/realm/filters/{filter_id}",
  "delete",
);
const validateLinkifiers = zulipResponseSchema("companions", "/realm/linkifiers", "get");
const validateAddField = zulipResponseSchema("companions", "/realm/profile_fields", "post");
const validateFields = zulipResponseSchema("companions", "/realm/profile_fields", "get");

let server: TestServer;
let cast: Cast;
let outsider: Person;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, [
    "desdemona",
    "iago",
    "prospero",
    "hamlet",
    "polonius",
    "hamlet-bot",
  ]);
  ({ outsider } = await createOtherRealm(server, 200));
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);

const error = apiError;

describe("POST /api/v1/realm/filters and DELETE /api/v1/realm/filters/{id}", () => {
  const add = (who: string, pattern: string, url_template: string) =>
    server.call("POST", "/api/v1/realm/filters", { ...as(who), form: { pattern, url_template } });

  it("adds a linkifier at the end of the order and removes it", async () => {
    const reply = await add("iago", "ZUL-(?P<id>\\d+)", "https://example.com/ticket/{id}");
    expect(reply.status).toBe(200);
    expect(validateAddLinkifier(reply.body)).toEqual([]);
    const listed = await server.call("GET", "/api/v1/realm/linkifiers", as("hamlet"));
    expect(validateLinkifiers(listed.body)).toEqual([]);
    const linkifiers = listed.body.linkifiers as { id: number; pattern: string }[];
    expect(linkifiers.at(-1)).toEqual({
      id: reply.body.id,
      pattern: "ZUL-(?P<id>\\d+)",
      url_template: "https://example.com/ticket/{id}",
    });
    const removed = await server.call(
      "DELETE",
      `/api/v1/realm/filters/${String(reply.body.id)}`,
      as("iago"),
    );
    expect(validateRemoveLinkifier(removed.body)).toEqual([]);
    const after = await server.call("GET", "/api/v1/realm/linkifiers", as("hamlet"));
    expect((after.body.linkifiers as { id: number }[]).map((l) => l.id)).not.toContain(
      reply.body.id,
    );
  });

  it.each([
    ["(?P<id>\\d+", "https://example.com/{id}", /^Bad regular expression: /],
    ["X-(?P<id>\\d+)", "https://example.com/{id", /^Invalid URL template\.$/],
    [
      "X-(?P<id>\\d+)",
      "https://example.com/{hello}",
      /^Group 'hello' in URL template is not present in linkifier pattern\.$/,
    ],
    [
      "X-(?P<id>\\d+)-(?P<hello>\\d+)",
      "https://example.com/{hello}",
      /^Group 'id' in linkifier pattern is not present in URL template\.$/,
    ],
    [
      "#(?P<id>[0-9]+)",
      "https://example.com/{id}",
      /^Linkifier with this Pattern and Realm already exists\.$/,
    ],
  ])("refuses %s -> %s", async (pattern, template, msg) => {
    const before = await server.db.prisma.linkifier.count();
    const reply = await add("iago", pattern, template);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ result: "error", code: "BAD_REQUEST" });
    expect(reply.body.msg).toMatch(msg);
    expect(await server.db.prisma.linkifier.count()).toBe(before);
  });

  it("is for administrators only", async () => {
    for (const who of ["prospero", "hamlet", "polonius", "hamlet-bot"]) {
      const reply = await add(who, "Q-(?P<id>\\d+)", "https://example.com/{id}");
      expect([reply.status, reply.body]).toEqual([
        400,
        error("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
      ]);
    }
  });

  it("answers Linkifier not found for an unknown id and another realm's", async () => {
    const foreign = await server.call("POST", "/api/v1/realm/filters", {
      auth: [outsider.email, outsider.apiKey],
      host: "lear.chat.test",
      form: { pattern: "L-(?P<id>\\d+)", url_template: "https://example.com/{id}" },
    });
    expect(foreign.status).toBe(200);
    for (const id of [999_999, foreign.body.id as number]) {
      const reply = await server.call("DELETE", `/api/v1/realm/filters/${id}`, as("iago"));
      expect(reply.body).toEqual(error("Linkifier not found."));
    }
  });
});

describe("PATCH /api/v1/realm/filters/{id}", () => {
  const validateUpdate = zulipResponseSchema("full", "/realm/filters/{filter_id}", "patch");
  const update = (who: string, id: number, pattern: string, url_template: string) =>
    server.call("PATCH", `/api/v1/realm/filters/${id}`, {
      ...as(who),
      form: { pattern, url_template },
    });

  it("changes a linkifier in place, its order kept, and messages render with it", async () => {
    const added = await server.call("POST", "/api/v1/realm/filters", {
      ...as("iago"),
      form: { pattern: "OLD-(?P<id>\\d+)", url_template: "https://old.example.com/{id}" },
    });
    const id = added.body.id as number;
    const order = async () =>
      (
        (await server.call("GET", "/api/v1/realm/linkifiers", as("hamlet"))).body.linkifiers as {
          id: number;
        }[]
      ).map((l) => l.id);
    const before = await order();
    const reply = await update("iago", id, "NEW-(?P<num>\\d+)", "https://new.example.com/{num}");
    expect(reply.body).toEqual({ result: "success", msg: "" });
    expect(validateUpdate(reply.body)).toEqual([]);
    expect(await order()).toEqual(before);
    const row = await server.db.prisma.linkifier.findUniqueOrThrow({ where: { id } });
    expect([row.pattern, row.url_template]).toEqual([
      "NEW-(?P<num>\\d+)",
      "https://new.example.com/{num}",
    ]);
    const rendered = await server.call("POST", "/api/v1/messages/render", {
      ...as("hamlet"),
      form: { content: "see NEW-42" },
    });
    expect(rendered.body.rendered).toContain('href="https://new.example.com/42"');
  });

  it("refuses what an add refuses, an unknown or foreign id, and members, changing nothing", async () => {
    const [first] = await server.db.prisma.linkifier.findMany({
      where: { realm: { subdomain: "" } },
      orderBy: { id: "asc" },
    });
    const id = first?.id ?? 0;
    const before = await server.db.prisma.linkifier.findMany({ orderBy: { id: "asc" } });
    expect((await update("iago", id, "X-(?P<id>\\d+)", "javascript:alert({id})")).body.msg).toMatch(
      /^Invalid URL template/,
    );
    expect((await update("iago", 999_999, "Y-(?P<id>\\d+)", "https://e.com/{id}")).body).toEqual(
      error("Linkifier not found."),
    );
    expect((await update("hamlet", id, "Y-(?P<id>\\d+)", "https://e.com/{id}")).body).toEqual(
      error("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
    );
    expect(await server.db.prisma.linkifier.findMany({ orderBy: { id: "asc" } })).toEqual(before);
  });
});

describe("POST /api/v1/realm/profile_fields", () => {
  const create = (who: string, form: Record<string, unknown>) =>
    server.call("POST", "/api/v1/realm/profile_fields", { ...as(who), form });

  it("creates fields of each kind at the end of the order", async () => {
    const text = await create("iago", { name: " Pronoun style ", hint: "How", field_type: 1 });
    expect(text.status).toBe(200);
    expect(validateAddField(text.body)).toEqual([]);
    const select = await create("iago", {
      name: "Team",
      field_type: 3,
      field_data: { a: { text: "Alpha", order: "1" }, b: { text: "Beta", order: "2" } },
      display_in_profile_summary: true,
    });
    const github = await create("iago", { field_type: 7, field_data: { subtype: "github" } });
    const listed = await server.call("GET", "/api/v1/realm/profile_fields", as("hamlet"));
    expect(validateFields(listed.body)).toEqual([]);
    const fields = listed.body.custom_fields as Record<string, unknown>[];
    expect(fields.slice(-3)).toEqual([
      expect.objectContaining({ id: text.body.id, name: "Pronoun style", hint: "How", type: 1 }),
      expect.objectContaining({
        id: select.body.id,
        name: "Team",
        type: 3,
        display_in_profile_summary: true,
        field_data: JSON.stringify({
          a: { text: "Alpha", order: "1" },
          b: { text: "Beta", order: "2" },
        }),
      }),
      expect.objectContaining({ id: github.body.id, name: "GitHub", type: 7 }),
    ]);
    const orders = fields.map((f) => f.order as number);
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
  });

  it.each([
    [{ name: "X", field_type: 99 }, "Invalid field type."],
    [{ name: " ", field_type: 1 }, "Label cannot be blank."],
    [{ name: "x".repeat(41), field_type: 1 }, "name is too long (limit: 40 characters)"],
    [{ name: "X", hint: "h".repeat(81), field_type: 1 }, "hint is too long (limit: 80 characters)"],
    [{ name: "Phone number", field_type: 1 }, "A field with that label already exists."],
    [{ name: "Choice", field_type: 3, field_data: {} }, "Field must have at least one choice."],
    [
      { name: "Bio2", field_type: 2, display_in_profile_summary: true },
      "Field type not supported for display in profile summary.",
    ],
    [{ field_type: 7, field_data: { subtype: "myspace" } }, "Invalid external account type."],
    [{ name: "X" }, "Missing 'field_type' argument"],
  ])("refuses %j: %s", async (form, msg) => {
    const before = await server.db.prisma.customProfileField.count();
    const reply = await create("iago", form);
    expect(reply.status).toBe(400);
    expect(reply.body.msg).toBe(msg);
    expect(await server.db.prisma.customProfileField.count()).toBe(before);
  });

  it("allows two fields in the profile summary, not three", async () => {
    await create("iago", { name: "Shown", field_type: 1, display_in_profile_summary: true });
    const third = await create("iago", {
      name: "Also shown",
      field_type: 1,
      display_in_profile_summary: true,
    });
    expect(third.body).toEqual(
      error("Only 2 custom profile fields can be displayed in the profile summary."),
    );
  });

  it("is for administrators only", async () => {
    for (const who of ["prospero", "hamlet", "polonius"]) {
      const reply = await create(who, { name: "Nope", field_type: 1 });
      expect(reply.body).toEqual(
        error("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
      );
    }
  });
});
