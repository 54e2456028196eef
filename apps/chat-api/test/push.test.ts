import { createHash } from "node:crypto";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type Cast,
  type TestServer,
  apiError,
  listenAs,
  loadCast,
  startTestServer,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validateRemove = zulipResponseSchema("subset", "/remove_client_device", "post");

/** What the stand-in bouncer does with a path. */
type Behaviour = "ok" | "fail" | "slow" | "garbage";

/** A local HTTP server standing in for the push bouncer: records calls, answers as told. */
class FakeBouncer {
  readonly calls: { path: string; fields: Record<string, string>; auth: string | undefined }[] = [];
  readonly behaviour = new Map<string, Behaviour>();
  private server: Server | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  url = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        const path = (req.url ?? "").replace(/^\/api\/v1\/remotes\/push\//, "");
        this.calls.push({
          path,
          fields: Object.fromEntries(new URLSearchParams(body)),
          auth: req.headers.authorization,
        });
        const behaviour = this.behaviour.get(path) ?? "ok";
        if (behaviour === "fail") res.writeHead(500).end('{"result":"error","msg":"down"}');
        else if (behaviour === "garbage") res.writeHead(200).end("<html>proxy error</html>");
        else if (behaviour === "slow") {
          const timer = setTimeout(() => {
            this.timers.delete(timer);
            res.writeHead(200).end('{"result":"success","msg":""}');
          }, 2000);
          this.timers.add(timer);
        } else
          res
            .writeHead(200, { "content-type": "application/json" })
            .end('{"result":"success","msg":""}');
      });
    });
    this.server.listen(0, "127.0.0.1");
    await new Promise((resolve) => this.server?.once("listening", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  reset(): void {
    this.calls.length = 0;
    this.behaviour.clear();
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const bouncer = new FakeBouncer();
let server: TestServer;
let unconfigured: TestServer;
let cast: Cast;

const KEY = Buffer.concat([Buffer.from([0x31]), Buffer.alloc(32, 7)]).toString("base64");
const tokenIdOf = (token: string) =>
  createHash("sha256").update(token).digest().subarray(0, 8).toString("base64");
const TOKEN_GROUP = {
  token_kind: "fcm",
  token_id: tokenIdOf("fcm-token-1"),
  bouncer_public_key: Buffer.from("bouncer key 1").toString("base64"),
  encrypted_push_registration: Buffer.from("ciphertext").toString("base64"),
};

beforeAll(async () => {
  await bouncer.start();
  server = await startTestServer({
    env: {
      CHAT_PUSH_BOUNCER_URL: bouncer.url,
      CHAT_PUSH_BOUNCER_TIMEOUT_MS: "300",
      CHAT_PUSH_BOUNCER_ORG_ID: "server-uuid",
      CHAT_PUSH_BOUNCER_ORG_KEY: "secret",
    },
  });
  unconfigured = await startTestServer();
  cast = await loadCast(server, ["hamlet", "othello", "hamlet-bot"]);
});

afterAll(async () => {
  await unconfigured.close();
  await server.close();
  await bouncer.stop();
});

beforeEach(() => {
  bouncer.reset();
});

const as = (who: string) => cast.as(who);
const newDevice = async (who: string, on: TestServer = server): Promise<number> => {
  const reply = await on.call(
    "POST",
    "/api/v1/register_client_device",
    on === server ? as(who) : (await loadCast(on, [who])).as(who),
  );
  expect(reply.status).toBe(200);
  return reply.body.device_id as number;
};
const register = async (who: string, form: Record<string, unknown>, on: TestServer = server) =>
  on.call("POST", "/api/v1/mobile_push/register", {
    ...(on === server ? as(who) : (await loadCast(on, [who])).as(who)),
    form,
  });
const registration = (deviceId: number) =>
  server.db.prisma.pushRegistration.findUnique({ where: { device_id: deviceId } });

describe("client devices", () => {
  it("registers and removes a device, its push registration with it", async () => {
    const deviceId = await newDevice("hamlet");
    expect(
      (
        await register("hamlet", {
          device_id: deviceId,
          push_key: KEY,
          push_key_id: 1,
          ...TOKEN_GROUP,
        })
      ).status,
    ).toBe(200);
    const removed = await server.call("POST", "/api/v1/remove_client_device", {
      ...as("hamlet"),
      form: { device_id: deviceId },
    });
    expect(validateRemove(removed.body)).toEqual([]);
    expect(await registration(deviceId)).toBeNull();
    expect(await server.db.prisma.device.count({ where: { id: deviceId } })).toBe(0);
  });

  it("answers Invalid device ID for an unknown device and another user's", async () => {
    const theirs = await newDevice("othello");
    for (const deviceId of [999_999, theirs]) {
      const reply = await server.call("POST", "/api/v1/remove_client_device", {
        ...as("hamlet"),
        form: { device_id: deviceId },
      });
      expect([reply.status, reply.body]).toEqual([400, apiError("Invalid device ID")]);
      expect(
        (await register("hamlet", { device_id: deviceId, push_key: KEY, push_key_id: 1 })).body,
      ).toEqual(apiError("Invalid device ID"));
    }
    expect(await server.db.prisma.device.count({ where: { id: theirs } })).toBe(1);
  });

  it("is for humans", async () => {
    expect(
      (await server.call("POST", "/api/v1/register_client_device", as("hamlet-bot"))).body,
    ).toEqual(apiError("This endpoint does not accept bot requests."));
  });
});

describe("devices in register and device events (feature level 468)", () => {
  it("tells the user's own queues of each device added, registered, rotated and removed", async () => {
    const mine = await listenAs(server, as("othello"), ["device"]);
    const theirs = await listenAs(server, as("hamlet"), ["device"]);
    const deviceId = await newDevice("othello");
    expect(await mine()).toEqual([{ type: "device", op: "add", device_id: deviceId }]);

    const before = Date.now();
    await register("othello", {
      device_id: deviceId,
      push_key: KEY,
      push_key_id: 4_294_967_295,
      ...TOKEN_GROUP,
    });
    const [registered] = await mine();
    expect(registered).toEqual({
      type: "device",
      op: "update",
      device_id: deviceId,
      push_key_id: 4_294_967_295,
      push_token_id: TOKEN_GROUP.token_id,
      pending_push_token_id: null,
      push_token_last_updated_timestamp: expect.any(Number) as number,
      push_registration_error_code: null,
    });
    const stamp = (registered as { push_token_last_updated_timestamp: number })
      .push_token_last_updated_timestamp;
    expect(stamp).toBeGreaterThanOrEqual(Math.floor(before / 1000));

    const snapshot = await server.call("POST", "/api/v1/register", {
      ...as("othello"),
      form: { fetch_event_types: JSON.stringify(["device"]) },
    });
    expect((snapshot.body.devices as Record<string, unknown>)[String(deviceId)]).toEqual({
      push_key_id: 4_294_967_295,
      push_token_id: TOKEN_GROUP.token_id,
      pending_push_token_id: null,
      push_token_last_updated_timestamp: stamp,
      push_registration_error_code: null,
    });

    // A key rotation tells the new key's id only.
    const newKey = Buffer.concat([Buffer.from([0x31]), Buffer.alloc(32, 5)]).toString("base64");
    await register("othello", { device_id: deviceId, push_key: newKey, push_key_id: 2 });
    expect(await mine()).toEqual([
      { type: "device", op: "update", device_id: deviceId, push_key_id: 2 },
    ]);

    await server.call("POST", "/api/v1/remove_client_device", {
      ...as("othello"),
      form: { device_id: deviceId },
    });
    expect(await mine()).toEqual([{ type: "device", op: "remove", device_id: deviceId }]);
    expect(await theirs()).toEqual([]);
    const after = await server.call("POST", "/api/v1/register", {
      ...as("othello"),
      form: { fetch_event_types: JSON.stringify(["device"]) },
    });
    expect(after.body.devices).not.toHaveProperty(String(deviceId));
  });

  it("shows a device without a push registration with every field null", async () => {
    const deviceId = await newDevice("hamlet");
    const snapshot = await server.call("POST", "/api/v1/register", {
      ...as("hamlet"),
      form: { fetch_event_types: JSON.stringify(["device"]) },
    });
    expect((snapshot.body.devices as Record<string, unknown>)[String(deviceId)]).toEqual({
      push_key_id: null,
      push_token_id: null,
      pending_push_token_id: null,
      push_token_last_updated_timestamp: null,
      push_registration_error_code: null,
    });
  });

  it("sends nothing for a refused registration", async () => {
    const deviceId = await newDevice("othello");
    const mine = await listenAs(server, as("othello"), ["device"]);
    bouncer.behaviour.set("e2ee/register", "fail");
    const refused = await register("othello", {
      device_id: deviceId,
      push_key: KEY,
      push_key_id: 3,
      ...TOKEN_GROUP,
    });
    expect(refused.status).not.toBe(200);
    expect(await mine()).toEqual([]);
  });
});

describe("POST /api/v1/mobile_push/register", () => {
  it("rule 5: PUSH_SERVICE_NOT_CONFIGURED without a bouncer, and server_settings says so", async () => {
    const deviceId = await newDevice("hamlet", unconfigured);
    const reply = await register(
      "hamlet",
      { device_id: deviceId, push_key: KEY, push_key_id: 1, ...TOKEN_GROUP },
      unconfigured,
    );
    expect([reply.status, reply.body]).toEqual([
      400,
      apiError(
        "Server is not configured to use push notification service.",
        "PUSH_SERVICE_NOT_CONFIGURED",
      ),
    ]);
    const settings = await unconfigured.call("GET", "/api/v1/server_settings");
    expect(settings.body.push_notifications_enabled).toBe(false);
    expect(
      (await server.call("GET", "/api/v1/server_settings")).body.push_notifications_enabled,
    ).toBe(true);
  });

  it("rule 1: an initial registration needs both groups; then it is stored and forwarded", async () => {
    const deviceId = await newDevice("hamlet");
    const keyOnly = await register("hamlet", {
      device_id: deviceId,
      push_key: KEY,
      push_key_id: 7,
    });
    expect(keyOnly.body).toEqual({
      result: "error",
      msg: "Missing 'token_kind' argument",
      code: "REQUEST_VARIABLE_MISSING",
      var_name: "token_kind",
    });
    const tokenOnly = await register("hamlet", { device_id: deviceId, ...TOKEN_GROUP });
    expect(tokenOnly.body).toMatchObject({
      msg: "Missing 'push_key' argument",
      var_name: "push_key",
    });
    expect(await registration(deviceId)).toBeNull();
    expect(bouncer.calls).toEqual([]);

    const both = await register("hamlet", {
      device_id: deviceId,
      push_key: KEY,
      push_key_id: 4_294_967_295,
      ...TOKEN_GROUP,
    });
    expect(both.body).toEqual({ result: "success", msg: "" });
    expect(bouncer.calls).toEqual([
      {
        path: "e2ee/register",
        auth: `Basic ${Buffer.from("server-uuid:secret").toString("base64")}`,
        fields: expect.objectContaining({
          ...TOKEN_GROUP,
          device_id: String(deviceId),
          user_id: String(cast.id("hamlet")),
        }) as Record<string, string>,
      },
    ]);
    const row = await registration(deviceId);
    expect(row?.push_key_id).toBe(4_294_967_295n);
    expect(Buffer.from(row?.push_key ?? []).toString("base64")).toBe(KEY);
    expect(Buffer.from(row?.token_id ?? []).toString("base64")).toBe(TOKEN_GROUP.token_id);
  });

  it("rules 2 and 3: a key rotation sends only the key group, a token rotation only the token group", async () => {
    const deviceId = await newDevice("hamlet");
    await register("hamlet", {
      device_id: deviceId,
      push_key: KEY,
      push_key_id: 1,
      ...TOKEN_GROUP,
    });
    bouncer.reset();
    const newKey = Buffer.concat([Buffer.from([0x31]), Buffer.alloc(32, 9)]).toString("base64");
    expect(
      (await register("hamlet", { device_id: deviceId, push_key: newKey, push_key_id: 2 })).status,
    ).toBe(200);
    expect(bouncer.calls).toEqual([]);
    const rotated = await registration(deviceId);
    expect([Buffer.from(rotated?.push_key ?? []).toString("base64"), rotated?.push_key_id]).toEqual(
      [newKey, 2n],
    );
    expect(Buffer.from(rotated?.token_id ?? []).toString("base64")).toBe(TOKEN_GROUP.token_id);

    const newToken = { ...TOKEN_GROUP, token_kind: "apns", token_id: tokenIdOf("apns-token-2") };
    expect((await register("hamlet", { device_id: deviceId, ...newToken })).status).toBe(200);
    expect(bouncer.calls.map((c) => c.path)).toEqual(["e2ee/register"]);
    const retokened = await registration(deviceId);
    expect([retokened?.token_kind, retokened?.push_key_id]).toEqual(["apns", 2n]);

    const neither = await register("hamlet", { device_id: deviceId });
    expect(neither.body).toMatchObject({ msg: "Missing 'push_key' argument" });
    const half = await register("hamlet", { device_id: deviceId, push_key: newKey });
    expect(half.body).toMatchObject({ msg: "Missing 'push_key_id' argument" });
    const halfToken = await register("hamlet", { device_id: deviceId, token_kind: "fcm" });
    expect(halfToken.body).toMatchObject({ msg: "Missing 'token_id' argument" });
  });

  const b64 = (bytes: number[]) => Buffer.from(bytes).toString("base64");
  it.each([
    [{ push_key: "not base64!" }, "Invalid push_key"],
    [{ push_key: b64([0x32, ...Array<number>(32).fill(1)]) }, "Invalid push_key"],
    [{ push_key: b64([0x31, ...Array<number>(31).fill(1)]) }, "Invalid push_key"],
    [{ push_key: b64([0x31, ...Array<number>(33).fill(1)]) }, "Invalid push_key"],
    [
      { push_key: KEY.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") + "-_" },
      "Invalid push_key",
    ],
    [{ push_key_id: -1 }, "push_key_id is too small"],
    [{ push_key_id: 4_294_967_296 }, "push_key_id is too large"],
    [{ push_key_id: "one" }, "push_key_id is not an integer"],
    [{ token_kind: "gcm" }, "Invalid token_kind"],
    [{ token_id: b64([1, 2, 3, 4, 5, 6, 7]) }, "Invalid token_id"],
    [{ token_id: "AAAAAAAAAAA" }, "Invalid token_id"],
    [{ bouncer_public_key: "***" }, "Invalid bouncer_public_key"],
    [{ encrypted_push_registration: "abc" }, "Invalid encrypted_push_registration"],
  ])("refuses %j: %s", async (change, msg) => {
    const deviceId = await newDevice("othello");
    const reply = await register("othello", {
      device_id: deviceId,
      push_key: KEY,
      push_key_id: 5,
      ...TOKEN_GROUP,
      ...change,
    });
    expect([reply.status, reply.body.msg]).toEqual([400, msg]);
    expect(await registration(deviceId)).toBeNull();
    expect(bouncer.calls).toEqual([]);
  });

  it.each(["fail", "slow", "garbage"] as const)(
    "a bouncer that answers %s gives a clear 502 and stores nothing, legacy tokens kept",
    async (behaviour) => {
      await server.call("POST", "/api/v1/users/me/android_gcm_reg_id", {
        ...as("othello"),
        form: { token: "fcm-token-1" },
      });
      bouncer.behaviour.set("e2ee/register", behaviour);
      const deviceId = await newDevice("othello");
      const reply = await register("othello", {
        device_id: deviceId,
        push_key: KEY,
        push_key_id: 5,
        ...TOKEN_GROUP,
      });
      expect([reply.status, reply.body]).toEqual([
        502,
        apiError("The push notification service could not be reached; try again later."),
      ]);
      expect(await registration(deviceId)).toBeNull();
      expect(
        await server.db.prisma.legacyPushToken.count({
          where: { user_id: cast.id("othello"), token: "fcm-token-1" },
        }),
      ).toBe(1);
    },
  );

  it("rule 4: removes the user's legacy registrations with the same token, here and at the bouncer", async () => {
    await server.db.prisma.legacyPushToken.deleteMany();
    for (const token of ["fcm-token-1", "fcm-token-other"]) {
      expect(
        (
          await server.call("POST", "/api/v1/users/me/android_gcm_reg_id", {
            ...as("hamlet"),
            form: { token },
          })
        ).status,
      ).toBe(200);
    }
    await server.call("POST", "/api/v1/users/me/android_gcm_reg_id", {
      ...as("othello"),
      form: { token: "fcm-token-1" },
    });
    bouncer.reset();
    const deviceId = await newDevice("hamlet");
    await register("hamlet", {
      device_id: deviceId,
      push_key: KEY,
      push_key_id: 1,
      ...TOKEN_GROUP,
    });
    const left = await server.db.prisma.legacyPushToken.findMany({ orderBy: { id: "asc" } });
    expect(left.map((t) => [t.user_id, t.token])).toEqual([
      [cast.id("hamlet"), "fcm-token-other"],
      [cast.id("othello"), "fcm-token-1"],
    ]);
    expect(bouncer.calls.map((c) => [c.path, c.fields.token])).toEqual([
      ["e2ee/register", undefined],
      ["unregister", "fcm-token-1"],
    ]);
  });

  it("rule 4, self-hosted: a failed removal at the bouncer stands locally until the last legacy token goes", async () => {
    await server.db.prisma.legacyPushToken.deleteMany();
    for (const token of ["aa11", "bb22"]) {
      await server.call("POST", "/api/v1/users/me/apns_device_token", {
        ...as("hamlet"),
        form: { token, appid: "org.zulip.Zulip" },
      });
    }
    bouncer.reset();
    bouncer.behaviour.set("unregister", "fail");
    const deviceId = await newDevice("hamlet");
    const reply = await register("hamlet", {
      device_id: deviceId,
      push_key: KEY,
      push_key_id: 1,
      ...TOKEN_GROUP,
      token_kind: "apns",
      token_id: tokenIdOf("aa11"),
    });
    expect(reply.body).toEqual({ result: "success", msg: "" });
    expect((await server.db.prisma.legacyPushToken.findMany()).map((t) => t.token)).toEqual([
      "bb22",
    ]);
    expect(server.logs.join("")).toContain(
      "the push bouncer still holds a legacy token removed here",
    );
    bouncer.reset();
    const removed = await server.call("DELETE", "/api/v1/users/me/apns_device_token", {
      ...as("hamlet"),
      form: { token: "bb22" },
    });
    expect(removed.status).toBe(200);
    expect(bouncer.calls.map((c) => [c.path, c.fields.user_id])).toEqual([
      ["unregister/all", String(cast.id("hamlet"))],
    ]);
  });
});

describe("legacy token endpoints", () => {
  it("checks tokens and answers Token does not exist for an unknown one", async () => {
    const bad = await server.call("POST", "/api/v1/users/me/apns_device_token", {
      ...as("othello"),
      form: { token: "not-hex", appid: "org.zulip.Zulip" },
    });
    expect(bad.body).toEqual(apiError("Invalid APNS token"));
    const empty = await server.call("POST", "/api/v1/users/me/android_gcm_reg_id", {
      ...as("othello"),
      form: { token: "" },
    });
    expect(empty.body).toEqual(apiError("Empty or invalid length token"));
    const unknown = await server.call("DELETE", "/api/v1/users/me/android_gcm_reg_id", {
      ...as("othello"),
      form: { token: "never-registered" },
    });
    expect(unknown.body).toEqual(apiError("Token does not exist"));
    const failing = await (async () => {
      bouncer.behaviour.set("register", "fail");
      return server.call("POST", "/api/v1/users/me/android_gcm_reg_id", {
        ...as("othello"),
        form: { token: "fcm-new" },
      });
    })();
    expect(failing.status).toBe(502);
    expect(await server.db.prisma.legacyPushToken.count({ where: { token: "fcm-new" } })).toBe(0);
  });
});

describe("POST /api/v1/mobile_push/test_notification (feature level 217)", () => {
  const validateAnswer = zulipResponseSchema("full", "/mobile_push/test_notification", "post");
  const test = (who: string, form: Record<string, string> = {}, on: TestServer = server) =>
    on.call("POST", "/api/v1/mobile_push/test_notification", { ...as(who), form });

  it("asks the bouncer to notify one device, or all of the caller's", async () => {
    for (const [path, token] of [
      ["android_gcm_reg_id", "fcm-test-1"],
      ["apns_device_token", "abcdef0123"],
    ] as const)
      expect(
        (
          await server.call("POST", `/api/v1/users/me/${path}`, {
            ...as("othello"),
            form: { token, ...(path === "apns_device_token" ? { appid: "org.zulip.Zulip" } : {}) },
          })
        ).status,
      ).toBe(200);
    bouncer.reset();
    const one = await test("othello", { token: "fcm-test-1" });
    expect(one.body).toEqual({ result: "success", msg: "" });
    expect(validateAnswer(one.body)).toEqual([]);
    const all = await test("othello");
    expect(all.status).toBe(200);
    const notified = bouncer.calls.filter((c) => c.path === "notify");
    expect(
      notified.map((c): unknown[] => [
        JSON.parse(c.fields.android_devices ?? "null") as unknown,
        JSON.parse(c.fields.apple_devices ?? "null") as unknown,
      ]),
    ).toEqual([
      [["fcm-test-1"], []],
      [["fcm-test-1"], ["abcdef0123"]],
    ]);
    const payload = JSON.parse(notified[0]?.fields.gcm_payload ?? "{}") as Record<string, unknown>;
    expect(payload).toMatchObject({
      event: "test",
      user_id: cast.id("othello"),
      realm_name: "Demo",
    });
  });

  it("refuses a token the caller did not register, and a server without a bouncer", async () => {
    const unknown = await test("hamlet", { token: "fcm-test-1" });
    expect(unknown.body).toEqual(apiError("Device not recognized", "INVALID_PUSH_DEVICE_TOKEN"));
    expect(bouncer.calls.filter((c) => c.path === "notify")).toEqual([]);
    const bare = await unconfigured.call("POST", "/api/v1/mobile_push/test_notification", {
      ...(await loadCast(unconfigured, ["hamlet"])).as("hamlet"),
    });
    expect(bare.body).toEqual(
      apiError(
        "Server is not configured to use push notification service.",
        "PUSH_SERVICE_NOT_CONFIGURED",
      ),
    );
  });
});
