import { checkPassword } from "../src/lib/passwords";
import {
  type Cast,
  type TestServer,
  apiError,
  listenAs,
  loadCast,
  startTestServer,
} from "./support/server";

/**
 * POST /users (Zulip's create-user: administrators with the server-granted
 * `can_create_users`, as the demo owner has) and the legacy pointer that
 * zulip-js still calls (GET and POST /users/me/pointer).
 */
let server: TestServer;
let cast: Cast;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["desdemona", "iago", "hamlet", "othello"]);
});

afterAll(() => server.close());

const create = (who: string, form: Record<string, string>) =>
  server.call("POST", "/api/v1/users", { ...cast.as(who), form });

describe("POST /api/v1/users", () => {
  it("creates a member with a password, subscribed to the default channels, and tells the realm", async () => {
    const othello = await listenAs(server, cast.as("othello"), ["realm_user"]);
    const reply = await create("desdemona", {
      email: "horatio@example.com",
      password: "a friend to this ground",
      full_name: "Horatio",
    });
    expect(reply.status).toBe(200);
    // Zulip's answer (its API documentation's create-user example; the schema files here lack it).
    const userId = reply.body.user_id as number;
    expect(reply.body).toEqual({ result: "success", msg: "", user_id: userId });
    expect(Number.isInteger(userId)).toBe(true);
    const row = await server.db.prisma.user.findUniqueOrThrow({
      where: { id: userId },
      include: { subscriptions: { include: { channel: true } } },
    });
    expect(row).toMatchObject({ email: "horatio@example.com", full_name: "Horatio", role: 400 });
    expect(await checkPassword("a friend to this ground", row.password)).toBe(true);
    const defaults = await server.db.prisma.channel.findMany({
      where: { is_default_stream: true },
      select: { id: true },
      orderBy: { id: "asc" },
    });
    expect(row.subscriptions.map((s) => s.channel_id).sort((a, b) => a - b)).toEqual(
      defaults.map((c) => c.id),
    );
    const told = (await othello()).map((e) => {
      const person = e.person as { user_id: number; full_name: string };
      return [e.type, e.op, person.user_id, person.full_name];
    });
    expect(told).toEqual([["realm_user", "add", userId, "Horatio"]]);
    // The new account logs in with its password.
    const login = await server.call("POST", "/api/v1/fetch_api_key", {
      form: { username: "horatio@example.com", password: "a friend to this ground" },
    });
    expect(login.status).toBe(200);
  });

  it("refuses without the permission, and bad names, addresses and passwords; creates nothing", async () => {
    const before = await server.db.prisma.user.count();
    const good = { email: "rosencrantz@example.com", password: "s3cret-enough", full_name: "Ros" };
    const cases: [string, Record<string, string>, Record<string, unknown>][] = [
      ["hamlet", good, apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL")],
      ["iago", good, apiError("User not authorized to create users")],
      ["desdemona", { ...good, full_name: "  " }, apiError("Name too short!")],
      ["desdemona", { ...good, email: "not an address" }, apiError("Bad name or username")],
      [
        "desdemona",
        { ...good, email: "hamlet@example.com" },
        apiError("Email 'hamlet@example.com' already in use"),
      ],
      ["desdemona", { ...good, password: "short" }, apiError("The password is too weak.")],
      ["desdemona", { ...good, password: "password1" }, apiError("The password is too weak.")],
    ];
    for (const [who, form, body] of cases) {
      const refused = await create(who, form);
      expect([who, form, refused.status, refused.body]).toEqual([who, form, 400, body]);
    }
    expect(await server.db.prisma.user.count()).toBe(before);
  });
});

describe("GET and POST /api/v1/users/me/pointer (legacy)", () => {
  it("moves forward to one of the user's messages, never back, never to another's", async () => {
    const read = async () =>
      (await server.call("GET", "/api/v1/users/me/pointer", cast.as("hamlet"))).body.pointer;
    expect(await read()).toBe(-1);
    const mine = await server.db.prisma.userMessage.findMany({
      where: { user_id: cast.id("hamlet") },
      orderBy: { message_id: "asc" },
      select: { message_id: true },
    });
    const [older, newer] = [mine.at(-2)?.message_id ?? 0, mine.at(-1)?.message_id ?? 0];
    const move = (pointer: number) =>
      server.call("POST", "/api/v1/users/me/pointer", {
        ...cast.as("hamlet"),
        form: { pointer: String(pointer) },
      });
    expect((await move(newer)).status).toBe(200);
    expect(await read()).toBe(newer);
    expect((await move(older)).status).toBe(200);
    expect(await read()).toBe(newer);
    const theirs = await server.call("POST", "/api/v1/messages", {
      ...cast.as("othello"),
      form: { type: "direct", to: JSON.stringify([cast.id("iago")]), content: "not for Hamlet" },
    });
    expect((await move(theirs.body.id as number)).body).toEqual(apiError("Invalid message ID"));
    expect(await read()).toBe(newer);
  });
});
