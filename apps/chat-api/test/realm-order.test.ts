import {
  type Person,
  type TestServer,
  createOtherRealm,
  startTestServer,
  authOf,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validatePatchLinkifiers = zulipResponseSchema("subset", "/realm/linkifiers", "patch");
const validatePatchFields = zulipResponseSchema("subset", "/realm/profile_fields", "patch");
const validateLinkifiers = zulipResponseSchema("companions", "/realm/linkifiers", "get");
const validateFields = zulipResponseSchema("companions", "/realm/profile_fields", "get");

let server: TestServer;
let iago: Person;
let linkifierIds: number[];
let fieldIds: number[];
let outsider: Person;

beforeAll(async () => {
  server = await startTestServer();
  iago = await server.person("iago");
  const realm = await server.db.prisma.realm.findFirstOrThrow();
  await server.db.prisma.linkifier.create({
    data: {
      realm_id: realm.id,
      pattern: "JIRA-(?P<id>\\d+)",
      url_template: "https://jira.example/{id}",
      order: 2,
    },
  });
  linkifierIds = (await server.db.prisma.linkifier.findMany({ orderBy: { order: "asc" } })).map(
    (l) => l.id,
  );
  fieldIds = (
    await server.db.prisma.customProfileField.findMany({ orderBy: { order: "asc" } })
  ).map((f) => f.id);
  ({ outsider } = await createOtherRealm(server));
});

afterAll(() => server.close());

const as = authOf;

describe("PATCH /api/v1/realm/linkifiers", () => {
  it("reorders the realm's linkifiers; GET /realm/linkifiers lists them in the new order", async () => {
    const order = [...linkifierIds].reverse();
    const reply = await server.call("PATCH", "/api/v1/realm/linkifiers", {
      ...as(iago),
      form: { ordered_linkifier_ids: order },
    });
    expect(reply.status).toBe(200);
    expect(validatePatchLinkifiers(reply.body)).toEqual([]);
    expect(reply.body).toEqual({ result: "success", msg: "" });
    const listed = await server.call("GET", "/api/v1/realm/linkifiers", as(iago));
    expect(validateLinkifiers(listed.body)).toEqual([]);
    expect((listed.body.linkifiers as { id: number }[]).map((l) => l.id)).toEqual(order);
  });

  it.each([
    [
      "a duplicate",
      (ids: number[]) => [...ids, ids[0]],
      "The ordered list must not contain duplicated linkifiers",
    ],
    [
      "a missing linkifier",
      (ids: number[]) => ids.slice(1),
      "The ordered list must enumerate all existing linkifiers exactly once",
    ],
    [
      "an unknown linkifier",
      (ids: number[]) => [...ids.slice(1), 999_999],
      "The ordered list must enumerate all existing linkifiers exactly once",
    ],
    [
      "an empty list",
      () => [],
      "The ordered list must enumerate all existing linkifiers exactly once",
    ],
  ])("refuses %s and changes nothing", async (_what, make, msg) => {
    const before = await server.db.prisma.linkifier.findMany({ orderBy: { id: "asc" } });
    const reply = await server.call("PATCH", "/api/v1/realm/linkifiers", {
      ...as(iago),
      form: { ordered_linkifier_ids: make(linkifierIds) },
    });
    expect([reply.status, reply.body]).toEqual([
      400,
      { result: "error", msg, code: "BAD_REQUEST" },
    ]);
    expect(await server.db.prisma.linkifier.findMany({ orderBy: { id: "asc" } })).toEqual(before);
  });

  it("wants a list of integers", async () => {
    const missing = await server.call("PATCH", "/api/v1/realm/linkifiers", as(iago));
    expect(missing.body).toMatchObject({
      code: "REQUEST_VARIABLE_MISSING",
      var_name: "ordered_linkifier_ids",
    });
    const wrong = await server.call("PATCH", "/api/v1/realm/linkifiers", {
      ...as(iago),
      form: { ordered_linkifier_ids: ["a"] },
    });
    expect(wrong.body.msg).toBe("ordered_linkifier_ids[0] is not an integer");
  });
});

describe("PATCH /api/v1/realm/profile_fields", () => {
  it("reorders the fields; GET /realm/profile_fields lists them in the new order", async () => {
    const order = [fieldIds[2], fieldIds[0], fieldIds[1]];
    const reply = await server.call("PATCH", "/api/v1/realm/profile_fields", {
      ...as(iago),
      form: { order },
    });
    expect(validatePatchFields(reply.body)).toEqual([]);
    expect(reply.body).toEqual({ result: "success", msg: "" });
    const listed = await server.call("GET", "/api/v1/realm/profile_fields", as(iago));
    expect(validateFields(listed.body)).toEqual([]);
    expect(
      (listed.body.custom_fields as { id: number; order: number }[]).map((f) => [f.id, f.order]),
    ).toEqual([
      [fieldIds[2], 0],
      [fieldIds[0], 1],
      [fieldIds[1], 2],
    ]);
  });

  it("refuses an order that leaves a field out, and changes nothing", async () => {
    const before = await server.db.prisma.customProfileField.findMany({ orderBy: { id: "asc" } });
    const reply = await server.call("PATCH", "/api/v1/realm/profile_fields", {
      ...as(iago),
      form: { order: fieldIds.slice(1) },
    });
    expect([reply.status, reply.body]).toEqual([
      400,
      { result: "error", msg: "Invalid order mapping.", code: "BAD_REQUEST" },
    ]);
    expect(await server.db.prisma.customProfileField.findMany({ orderBy: { id: "asc" } })).toEqual(
      before,
    );
  });

  it("ignores ids of no field, as Zulip does", async () => {
    const reply = await server.call("PATCH", "/api/v1/realm/profile_fields", {
      ...as(iago),
      form: { order: [999_999, ...fieldIds] },
    });
    expect(reply.status).toBe(200);
    const fields = await server.db.prisma.customProfileField.findMany({
      orderBy: { order: "asc" },
    });
    expect(fields.map((f) => [f.id, f.order])).toEqual(fieldIds.map((id, i) => [id, i + 1]));
  });
});

describe("who may reorder", () => {
  it.each([
    ["desdemona", 200, undefined],
    ["iago", 200, undefined],
    ["prospero", 400, "Must be an organization administrator"],
    ["hamlet", 400, "Must be an organization administrator"],
    ["polonius", 400, "Must be an organization administrator"],
    ["hamlet-bot", 400, "Must be an organization administrator"],
  ])("%s: %d %s", async (who, status, msg) => {
    const person = await server.person(who);
    for (const [path, form] of [
      ["/api/v1/realm/linkifiers", { ordered_linkifier_ids: linkifierIds }],
      ["/api/v1/realm/profile_fields", { order: fieldIds }],
    ] as const) {
      const reply = await server.call("PATCH", path, { ...as(person), form });
      expect(reply.status).toBe(status);
      if (msg !== undefined)
        expect(reply.body).toEqual({ result: "error", msg, code: "UNAUTHORIZED_PRINCIPAL" });
    }
  });

  it("a user of another realm gets the 401 here, and cannot touch this realm's rows from their own", async () => {
    const here = await server.call("PATCH", "/api/v1/realm/linkifiers", {
      ...as(outsider),
      form: { ordered_linkifier_ids: linkifierIds },
    });
    expect([here.status, here.body.msg]).toEqual([
      401,
      "Account is not associated with this subdomain",
    ]);
    const there = await server.call("PATCH", "/api/v1/realm/linkifiers", {
      ...as(outsider),
      host: "lear.chat.test",
      form: { ordered_linkifier_ids: linkifierIds },
    });
    expect(there.body.msg).toBe(
      "The ordered list must enumerate all existing linkifiers exactly once",
    );
  });
});
