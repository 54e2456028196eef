import { type Person, type TestServer, startTestServer } from "./support/server";
import { testApi } from "./support/test-api";

let server: TestServer;
let hamlet: Person;

beforeAll(async () => {
  server = await startTestServer({ api: testApi });
  hamlet = await server.person("hamlet");
});

afterAll(() => server.close());

const post = (form: Record<string, unknown>, query?: Record<string, unknown>) =>
  server.call("POST", "/api/v1/test/params", {
    auth: [hamlet.email, hamlet.apiKey],
    form,
    ...(query === undefined ? {} : { query }),
  });

const valid = { name: "Yorik" };

describe("parameters", () => {
  it("reads declared fields and fills defaults", async () => {
    const reply = await post({
      ...valid,
      count: 3,
      flag: true,
      color: "red",
      draft: { to: [1], topic: "t", content: "c" },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      result: "success",
      msg: "",
      got: {
        name: "Yorik",
        count: 3,
        flag: true,
        color: "red",
        draft: { to: [1], topic: "t", content: "c" },
      },
    });
  });

  it("falls back to the query string for a POST, the body winning when both have a field", async () => {
    const reply = await post({ name: "body" }, { name: "query", count: "4" });
    expect(reply.body.got).toEqual({ name: "body", count: 4, flag: false });
  });

  it("reads multipart form bodies too", async () => {
    const boundary = "----chat-test-boundary";
    const body = [
      `--${boundary}`,
      'Content-Disposition: form-data; name="name"',
      "",
      "Ophel",
      `--${boundary}`,
      'Content-Disposition: form-data; name="count"',
      "",
      "7",
      `--${boundary}--`,
      "",
    ].join("\r\n");
    const reply = await server.call("POST", "/api/v1/test/params", {
      auth: [hamlet.email, hamlet.apiKey],
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(reply.body.got).toEqual({ name: "Ophel", count: 7, flag: false });
  });

  it("takes the last value of a repeated field, as Django does", async () => {
    const reply = await server.call("POST", "/api/v1/test/params", {
      auth: [hamlet.email, hamlet.apiKey],
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "name=first&name=last",
    });
    expect((reply.body.got as Record<string, unknown>).name).toBe("last");
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    [
      "a missing argument",
      {},
      { msg: "Missing 'name' argument", code: "REQUEST_VARIABLE_MISSING", var_name: "name" },
    ],
    ["not an integer", { ...valid, count: "three" }, { msg: "count is not an integer" }],
    ["a fractional integer", { ...valid, count: "1.5" }, { msg: "count is not an integer" }],
    ["not a boolean", { ...valid, flag: "yes" }, { msg: "flag is not a boolean" }],
    ["a value outside an enum", { ...valid, color: "blue" }, { msg: "Invalid color" }],
    ["too long", { name: "Polonius" }, { msg: "name is too long (limit: 5 characters)" }],
    ["blank", { name: "   " }, { msg: "name cannot be blank" }],
    ["too small", { ...valid, count: -1 }, { msg: "count is too small" }],
    ["too large", { ...valid, count: 11 }, { msg: "count is too large" }],
    ["not valid JSON", { ...valid, draft: "{nope" }, { msg: "draft is not valid JSON" }],
    ["not a dict", { ...valid, draft: [1] }, { msg: "draft is not a dict" }],
    ["not a list", { ...valid, ids: { a: 1 } }, { msg: "ids is not a list" }],
    [
      "a list item of the wrong type",
      { ...valid, ids: [1, "2"] },
      { msg: "ids[1] is not an integer" },
    ],
    [
      "a nested string of the wrong type",
      { ...valid, draft: { to: [], topic: 5, content: "c" } },
      { msg: 'draft["topic"] is not a string' },
    ],
    [
      "a nested key that is missing",
      { ...valid, draft: { to: [], topic: "t" } },
      { msg: 'draft["content"] field is missing: Field required' },
    ],
    [
      "an unexpected key",
      { ...valid, draft: { to: [], topic: "t", content: "c", extra: 1 } },
      { msg: 'Argument "extra" at draft is unexpected' },
    ],
    [
      "an unexpected key deeper down",
      { ...valid, draft: { to: [], topic: "t", content: "c", meta: { kind: "k", x: 1 } } },
      { msg: 'Argument "x" at draft["meta"] is unexpected' },
    ],
    [
      "a nested string that is too long",
      { ...valid, draft: { to: [], topic: "x".repeat(61), content: "c" } },
      { msg: 'draft["topic"] is too long (limit: 60 characters)' },
    ],
    [
      "a nested string that is blank",
      { ...valid, draft: { to: [], topic: "", content: "" } },
      { msg: 'draft["content"] cannot be blank' },
    ],
    ["a NUL byte in a string", { name: "a\u0000b" }, { msg: "name must not contain null bytes" }],
    [
      "a NUL byte inside JSON",
      { ...valid, draft: { to: [], topic: "t", content: "c\u0000" } },
      { msg: 'draft["content"] must not contain null bytes' },
    ],
    [
      "a NUL byte in a JSON key",
      { ...valid, settings: { "k\u0000": true } },
      { msg: "settings must not contain null bytes" },
    ],
    [
      "a record value of the wrong type",
      { ...valid, settings: { a: true, b: "no" } },
      { msg: 'settings["b"] is not a boolean' },
    ],
  ])("rejects %s with the contract's message", async (_what, form, expected) => {
    const reply = await post(form);
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ result: "error", code: "BAD_REQUEST", ...expected });
  });

  it("counts characters as code points, as Zulip does", async () => {
    expect((await post({ name: "😀😀😀😀😀" })).status).toBe(200);
  });

  it("accepts an alias, and refuses both names at once", async () => {
    expect(
      ((await post({ ...valid, subject: "s" })).body.got as Record<string, unknown>).topic,
    ).toBe("s");
    const both = await post({ ...valid, topic: "t", subject: "s" });
    expect([both.status, both.body]).toEqual([
      400,
      {
        result: "error",
        msg: "Can't decide between 'topic' and 'subject' arguments",
        code: "REQUEST_CONFUSING_VAR",
      },
    ]);
  });

  it("lists the fields it did not read, sorted, from body and query, never the credentials", async () => {
    const reply = await post({ ...valid, zeta: "1", alpha: "2" }, { mid: "3" });
    expect(reply.body.ignored_parameters_unsupported).toEqual(["alpha", "mid", "zeta"]);
    expect(Object.keys(reply.body).at(-1)).toBe("ignored_parameters_unsupported");
  });

  it("omits ignored_parameters_unsupported when every field was read", async () => {
    expect(await post(valid)).toMatchObject({
      body: { result: "success", got: { name: "Yorik", flag: false } },
    });
    expect((await post(valid)).body).not.toHaveProperty("ignored_parameters_unsupported");
  });

  it("does not list ignored fields on an error", async () => {
    const reply = await post({ name: "", junk: "x" });
    expect(reply.body).not.toHaveProperty("ignored_parameters_unsupported");
  });
});
