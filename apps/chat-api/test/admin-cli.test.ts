import { setTimeout as sleep } from "node:timers/promises";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { passwordApiKey } from "../src/actions/accounts";
import { runAdmin } from "../src/cli/admin";
import type { Database } from "../src/db/database";
import { TEST_DB_KIND, freshDataDir, freshDatabase, type TestDatabase } from "./support/database";
import { startTestServer } from "./support/server";
import { TEST_PGLITE_SHARED_BUFFERS } from "./support/templates";
import { unlimited } from "../src/lib/rate-limit";

/**
 * The admin CLI against this project's database kind. Most commands run on one
 * database this file opens (`admin`); the entry point's own way, opening the
 * database its environment names, migrating it and closing it at the end, is
 * checked with a database of its own (`adminWithEnv`).
 */
let db: TestDatabase;

beforeAll(async () => {
  db = await freshDatabase();
});

afterAll(async () => {
  await db.close();
});

type Result = { code: number; out: string; err: string };

async function run(argv: string[], env: NodeJS.ProcessEnv, database?: Database): Promise<Result> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(
    argv,
    (t) => out.push(t),
    (t) => err.push(t),
    env,
    database,
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/** A command on this file's open database. */
const admin = (...argv: string[]): Promise<Result> => run(argv, {}, db);

/**
 * Commands as the entry point runs them: each opens the database of `env` (a
 * PGlite data directory, or PostgreSQL's URL), migrates and closes it.
 */
async function withEntryPointEnv(
  work: (admin: (...argv: string[]) => Promise<Result>) => Promise<void>,
): Promise<void> {
  if (TEST_DB_KIND === "postgres") {
    const own = await freshDatabase();
    try {
      await work((...argv) => run(argv, { DATABASE_URL: own.url }));
    } finally {
      await own.close();
    }
    return;
  }
  const dataDir = await freshDataDir();
  try {
    await work((...argv) =>
      run(argv, { CHAT_DATA_DIR: dataDir, CHAT_PGLITE_SHARED_BUFFERS: TEST_PGLITE_SHARED_BUFFERS }),
    );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

describe("the admin CLI as its entry point runs it", () => {
  it("opens the database its environment names, and what one command writes the next reads", async () => {
    await withEntryPointEnv(async (admin) => {
      const realm = await admin("create-realm", "--subdomain", "Lear", "--name", "King Lear");
      expect(realm.code).toBe(0);
      expect(realm.out).toMatch(
        /^created realm \d+ "King Lear" \(subdomain "lear"\) at http:\/\/lear\.[a-z.]+(:\d+)?$/,
      );
      const realms = await admin("list-realms");
      expect(realms.code).toBe(0);
      expect(realms.out).toMatch(/^\d+\tlear\tKing Lear\tactive$/m);
    });
  });

  it("fails with exit code 1 and a clear message when its configuration is wrong", async () => {
    const result = await run(["list-realms"], { DATABASE_URL: "mysql://nowhere" });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/DATABASE_URL.*postgresql:\/\//);
    expect(result.out).toBe("");
  });
});

describe("the admin CLI", () => {
  it("creates realms, users and bots, and lists them", async () => {
    const realm = await admin("create-realm", "--subdomain", "Lear", "--name", "King Lear");
    expect(realm.code).toBe(0);
    expect(realm.out).toMatch(
      /^created realm \d+ "King Lear" \(subdomain "lear"\) at http:\/\/lear\.[a-z.]+(:\d+)?$/,
    );
    const user = await admin(
      "create-user",
      "--realm",
      "lear",
      "--email",
      "goneril@example.com",
      "--name",
      "Goneril",
      "--role",
      "administrator",
    );
    expect(user.code).toBe(0);
    expect(user.out).toMatch(
      /^created user \d+ goneril@example\.com \(administrator\); API key: [A-Za-z0-9]{32}$/,
    );
    const bot = await admin(
      "create-bot",
      "--realm",
      "lear",
      "--email",
      "fool-bot@example.com",
      "--name",
      "Fool",
      "--owner",
      "GONERIL@example.com",
    );
    expect(bot.out).toMatch(/^created bot \d+ fool-bot@example\.com; API key: [A-Za-z0-9]{32}$/);
    const realms = await admin("list-realms");
    expect(realms.out).toMatch(/^\d+\tlear\tKing Lear\tactive$/m);
    const users = await admin("list-users", "--realm", "lear");
    expect(users.out.split("\n").map((line) => line.split("\t").slice(1))).toEqual([
      ["goneril@example.com", "Goneril", "administrator", "human", "active"],
      ["fool-bot@example.com", "Fool", "member", "bot", "active"],
    ]);
  });

  it("grants and takes back the permission to create users through the API", async () => {
    const grant = await admin(
      "set-can-create-users",
      "--realm",
      "lear",
      "--email",
      "goneril@example.com",
    );
    expect([grant.code, grant.out]).toEqual([0, "goneril@example.com may create users"]);
    const granted = async () =>
      (await db.prisma.user.findFirstOrThrow({ where: { email: "goneril@example.com" } }))
        .can_create_users;
    expect(await granted()).toBe(true);
    const off = await admin(
      "set-can-create-users",
      "--realm",
      "lear",
      "--email",
      "goneril@example.com",
      "--off",
    );
    expect(off.out).toBe("goneril@example.com may no longer create users");
    expect(await granted()).toBe(false);
  });

  it("prints an API key, and deactivates and reactivates users and realms", async () => {
    const key = await admin("api-key", "--realm", "lear", "--email", "goneril@example.com");
    expect(key.out).toMatch(/^[A-Za-z0-9]{32}$/);
    expect((await admin("deactivate", "user", "fool-bot@example.com", "--realm", "lear")).out).toBe(
      "deactivated fool-bot@example.com",
    );
    expect((await admin("list-users", "--realm", "lear")).out).toMatch(
      /fool-bot@example\.com.*\tdeactivated$/m,
    );
    expect(
      (await admin("reactivate", "user", "fool-bot@example.com", "--realm", "lear")).code,
    ).toBe(0);
    // A user's bots go with it, and stay off when the user comes back (as in Zulip).
    expect((await admin("deactivate", "user", "goneril@example.com", "--realm", "lear")).code).toBe(
      0,
    );
    const both = (await admin("list-users", "--realm", "lear")).out;
    expect(both).toMatch(/goneril@example\.com.*\tdeactivated$/m);
    expect(both).toMatch(/fool-bot@example\.com.*\tdeactivated$/m);
    await admin("reactivate", "user", "goneril@example.com", "--realm", "lear");
    const after = (await admin("list-users", "--realm", "lear")).out;
    expect(after).toMatch(/goneril@example\.com.*\tactive$/m);
    expect(after).toMatch(/fool-bot@example\.com.*\tdeactivated$/m);
    expect((await admin("deactivate", "realm", "lear")).out).toBe('deactivated realm "lear"');
    expect((await admin("list-realms")).out).toMatch(/\tlear\tKing Lear\tdeactivated$/m);
    expect((await admin("reactivate", "realm", "lear")).code).toBe(0);
  });

  it('addresses the root realm as --realm ""', async () => {
    expect((await admin("create-realm", "--subdomain", "", "--name", "Root")).code).toBe(0);
    const created = await admin(
      "create-user",
      "--realm",
      "",
      "--email",
      "kent@example.com",
      "--name",
      "Kent",
    );
    expect(created.code).toBe(0);
    expect((await admin("list-users", "--realm", "")).out).toMatch(/kent@example\.com.*\tactive$/m);
    expect((await admin("deactivate", "user", "kent@example.com", "--realm", "")).out).toBe(
      "deactivated kent@example.com",
    );
    expect((await admin("api-key", "--realm", "", "--email", "kent@example.com")).code).toBe(0);
    const missing = await admin("list-users");
    expect([missing.code, missing.err]).toEqual([2, expect.stringMatching(/--realm is required/)]);
  });

  it.each<[string, string[], number, RegExp]>([
    ["an unknown command", ["explode"], 2, /unknown command "explode"/],
    [
      "a missing option",
      ["create-user", "--realm", "lear", "--email", "x@example.com"],
      2,
      /--name is required/,
    ],
    ["an unknown option", ["list-realms", "--colour"], 2, /Unknown option '--colour'/],
    [
      "a bad role",
      [
        "create-user",
        "--realm",
        "lear",
        "--email",
        "x@example.com",
        "--name",
        "X",
        "--role",
        "king",
      ],
      2,
      /--role must be one of/,
    ],
    [
      "a bad email",
      ["create-user", "--realm", "lear", "--email", "nope", "--name", "X"],
      2,
      /"nope" is not an email address/,
    ],
    [
      "a bad subdomain",
      ["create-realm", "--subdomain", "no way", "--name", "X"],
      2,
      /not a valid subdomain/,
    ],
    [
      "an unknown realm",
      ["list-users", "--realm", "atlantis"],
      1,
      /no realm with subdomain "atlantis"/,
    ],
    [
      "a realm name with a line break",
      ["create-realm", "--subdomain", "evil", "--name", "Evil\nCorp"],
      1,
      /Invalid characters in organization name/,
    ],
    [
      "a taken subdomain",
      ["create-realm", "--subdomain", "lear", "--name", "Again"],
      1,
      /already exists/,
    ],
    [
      "a taken email",
      ["create-user", "--realm", "lear", "--email", "GONERIL@example.com", "--name", "G"],
      1,
      /already taken/,
    ],
    [
      "an unknown user",
      ["deactivate", "user", "edmund@example.com", "--realm", "lear"],
      1,
      /no user edmund@example\.com/,
    ],
    [
      "an unknown owner",
      [
        "create-bot",
        "--realm",
        "lear",
        "--email",
        "b@example.com",
        "--name",
        "B",
        "--owner",
        "x@example.com",
      ],
      1,
      /no user x@example\.com/,
    ],
    ["a vague deactivation", ["deactivate", "everything"], 2, /say what/],
  ])("fails clearly on %s", async (_what, argv, code, message) => {
    const result = await admin(...argv);
    expect(result.code).toBe(code);
    expect(result.err).toMatch(message);
    expect(result.out).toBe("");
  });

  it("sets a password from a file, with which the user then logs in", async () => {
    const folder = await mkdtemp(join(tmpdir(), "chat-password-"));
    const setPassword = (email: string, file: string) =>
      admin("set-password", "--realm", "lear", "--email", email, "--password-file", file);
    try {
      const file = join(folder, "password");
      await writeFile(file, "Nothing will come of nothing\nignored second line\n");
      const set = await setPassword("goneril@example.com", file);
      expect(set).toEqual({ code: 0, out: "password set for goneril@example.com", err: "" });
      const realm = await db.prisma.realm.findUniqueOrThrow({ where: { subdomain: "lear" } });
      const login = (password: string) =>
        passwordApiKey(db, realm, "goneril@example.com", password, unlimited);
      await expect(login("Nothing will come of nothing")).resolves.toMatchObject({
        email: "goneril@example.com",
      });
      await expect(login("ignored second line")).rejects.toThrow(
        "Your username or password is incorrect",
      );
      await writeFile(file, "\n");
      const empty = await setPassword("goneril@example.com", file);
      expect(empty.code).toBe(1);
      expect(empty.err).toBe(`error: ${file}: the first line is empty`);
      const nobody = await setPassword("nobody@example.com", file);
      expect(nobody.code).toBe(1);
      expect((await admin("set-password", "--realm", "lear", "--email", "x@y.z")).code).toBe(2);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it("explains itself with --help", async () => {
    const all = await admin("--help");
    expect(all.code).toBe(0);
    expect(all.out).toContain("create-bot");
    const one = await admin("create-user", "--help");
    expect(one.code).toBe(0);
    expect(one.out).toContain("usage: admin create-user --realm SUB --email EMAIL --name NAME");
  });
});

// PGlite is one process's database: a CLI process and a server cannot share it,
// so this runs in the PostgreSQL project only.
if (TEST_DB_KIND === "postgres") {
  describe("a deactivation through the CLI", () => {
    it("takes effect on a running server at once (PostgreSQL NOTIFY)", async () => {
      const server = await startTestServer({
        db: { ...db, close: () => Promise.resolve() },
      });
      try {
        // The CLI's own connection, as a separate process would have it.
        const cli = (...argv: string[]) => run(argv, { DATABASE_URL: db.url });
        const key = (await cli("api-key", "--realm", "lear", "--email", "goneril@example.com")).out;
        const call = () =>
          server.call("GET", "/api/v1/users/me", {
            host: "lear.chat.test",
            auth: ["goneril@example.com", key],
          });
        expect((await call()).status).toBe(200);
        expect(
          (await cli("deactivate", "user", "goneril@example.com", "--realm", "lear")).code,
        ).toBe(0);
        let status = 200;
        for (let i = 0; i < 100 && status === 200; i++) {
          status = (await call()).status;
          if (status === 200) await sleep(20);
        }
        expect(status).toBe(401);
      } finally {
        await server.close();
      }
    });
  });
}
