import { request } from "undici";
import { runAdmin } from "../src/cli/admin";
import { type Mailbox, linkIn, startMailingServer } from "./support/mailbox";
import {
  type Cast,
  ROOT_HOST,
  type TestServer,
  channelIds,
  listenAs,
  loadCast,
} from "./support/server";

/**
 * The server's pages, as a browser without scripts uses them: a form is
 * fetched (with its CSRF cookie and token), filled and posted; the e-mails
 * come through a real mail server on loopback, and the accounts made log in
 * with POST /fetch_api_key.
 */
let server: TestServer;
let mailbox: Mailbox;
let stop: () => Promise<void>;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  ({
    server,
    mailbox,
    close: stop,
  } = await startMailingServer({
    CHAT_EMAIL_FROM: "Team Chat <chat@example.org>",
  }));
  cast = await loadCast(server, ["iago", "hamlet", "desdemona"]);
  channels = await channelIds(server);
});

afterAll(async () => {
  await stop();
});

interface Page {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A browser of one person: its cookies, and the last form's token. */
function browser(host = ROOT_HOST) {
  const cookies = new Map<string, string>();
  let token = "";
  const fetchPage = async (method: "GET" | "POST", url: string, body?: string): Promise<Page> => {
    const path = url.replace(/^https?:\/\/[^/]+/, "");
    const reply = await request(`${server.url}${path}`, {
      method,
      headers: {
        host,
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
        ...(body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" }),
      },
      reset: true,
      ...(body === undefined ? {} : { body }),
    });
    const setCookie = reply.headers["set-cookie"];
    for (const line of Array.isArray(setCookie)
      ? setCookie
      : setCookie === undefined
        ? []
        : [setCookie]) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const text = await reply.body.text();
    token = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(text)?.[1] ?? token;
    return { status: reply.statusCode, headers: reply.headers, text };
  };
  return {
    cookies,
    get: (url: string) => fetchPage("GET", url),
    /** Posts the form at `url` (fetched first) with `fields` and the token. */
    async fill(url: string, fields: Record<string, string>): Promise<Page> {
      await fetchPage("GET", url);
      return fetchPage(
        "POST",
        url,
        new URLSearchParams({ csrfmiddlewaretoken: token, ...fields }).toString(),
      );
    },
    post: (url: string, fields: Record<string, string>) =>
      fetchPage("POST", url, new URLSearchParams(fields).toString()),
  };
}

const login = (username: string, password: string, host = ROOT_HOST) =>
  server.call("POST", "/api/v1/fetch_api_key", { host, form: { username, password } });

const STRONG = "elsinore battlements at midnight";

describe("/join/<key>/: an e-mail invitation", () => {
  it("makes the invited account with its role, channels and groups, once", async () => {
    const group = await server.call("POST", "/api/v1/user_groups/create", {
      ...cast.as("iago"),
      form: { name: "players", description: "the troupe", members: JSON.stringify([]) },
    });
    const groupId = group.body.group_id as number;
    const invited = await server.call("POST", "/api/v1/invites", {
      ...cast.as("iago"),
      form: {
        invitee_emails: "player.king@example.com",
        stream_ids: JSON.stringify([channels.Verona]),
        group_ids: JSON.stringify([groupId]),
        invite_as: "300",
      },
    });
    expect(invited.status).toBe(200);
    const [mail] = await mailbox.mailFor("player.king@example.com");
    expect(mail?.subject).toBe("Iago has invited you to join Demo");
    const link = linkIn(mail, "/join/");
    const person = browser();
    const form = await person.get(link);
    expect(form.status).toBe(200);
    expect(form.headers["content-type"]).toMatch(/^text\/html/);
    expect(form.headers["content-security-policy"]).toMatch(
      /^default-src 'none'; style-src 'sha256-/,
    );
    expect(form.headers["cache-control"]).toBe("no-store");
    expect(form.text).toContain("player.king@example.com");
    expect(form.text).toMatch(/<label for="field-full_name">Full name<\/label>/);
    expect([...person.cookies.keys()]).toEqual(["csrftoken"]);

    // Without the token: refused, nothing made.
    const forged = await person.post(link, { full_name: "Player King", password: STRONG });
    expect(forged.status).toBe(403);
    // A weak password: the form again with Zulip's message.
    const weak = await person.fill(link, { full_name: "Player King", password: "password1" });
    expect(weak.status).toBe(400);
    expect(weak.text).toContain("The password is too weak.");
    expect(weak.text).toContain('value="Player King"');
    expect(
      await server.db.prisma.user.count({ where: { delivery_email: "player.king@example.com" } }),
    ).toBe(0);

    const done = await person.fill(link, { full_name: "Player King", password: STRONG });
    expect(done.status).toBe(200);
    expect(done.text).toContain("Your account is ready");
    expect(done.text).toContain(`http://${ROOT_HOST}`);
    const key = await login("player.king@example.com", STRONG);
    expect(key.status).toBe(200);
    const made = await server.db.prisma.user.findFirstOrThrow({
      where: { delivery_email: "player.king@example.com" },
      include: { subscriptions: true, group_memberships: true },
    });
    expect(made.role).toBe(300);
    expect(made.full_name).toBe("Player King");
    expect(made.subscriptions.map((s) => s.channel_id)).toEqual([channels.Verona]);
    expect(made.group_memberships.map((g) => g.group_id)).toContain(groupId);
    // Iago, who invited them, is told by the notification bot (Zulip's words).
    const told = await server.db.prisma.message.findFirst({
      where: { content: { contains: "accepted your invitation to join Zulip!" } },
      orderBy: { id: "desc" },
    });
    expect(told?.content).toBe(
      `@_**Player King|${String(made.id)}** accepted your invitation to join Zulip!`,
    );
    expect(told?.dm_key?.split(",").map(Number)).toContain(cast.id("iago"));

    // The link is used up: the page says so, and a second post (with a valid token) makes nothing.
    expect((await person.get(link)).status).toBe(404);
    const again = await person.fill(link, { full_name: "Impostor", password: STRONG });
    expect(again.status).toBe(404);
    expect(
      await server.db.prisma.user.count({ where: { delivery_email: "player.king@example.com" } }),
    ).toBe(1);
  });

  it("answers a made-up key, and a post from another site, without touching anything", async () => {
    expect((await browser().get("/join/abcdefghijklmnopqrstuvwx/")).status).toBe(404);
    expect((await browser().get("/join/../../etc/passwd/")).status).toBe(404);
    const reply = await request(`${server.url}/accounts/password/reset/`, {
      method: "POST",
      headers: {
        host: ROOT_HOST,
        origin: "https://evil.example",
        cookie: `csrftoken=${"a".repeat(43)}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: `csrfmiddlewaretoken=${"a".repeat(43)}&email=hamlet%40example.com`,
    });
    expect(reply.statusCode).toBe(403);
    await reply.body.text();
  });
});

describe("the CSRF cookie", () => {
  it("is set once per browser, HttpOnly and SameSite=Strict, and kept while it is well-formed", async () => {
    const first = await request(`${server.url}/accounts/password/reset/`, {
      headers: { host: ROOT_HOST },
    });
    await first.body.text();
    const set = String(first.headers["set-cookie"]);
    expect(set).toMatch(
      /^csrftoken=[A-Za-z0-9_-]{43}; Max-Age=31449600; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    const again = await request(`${server.url}/accounts/password/reset/`, {
      headers: { host: ROOT_HOST, cookie: `other=1; ${set.split(";")[0] ?? ""}; x=y` },
    });
    await again.body.text();
    expect(again.headers["set-cookie"]).toBeUndefined();
    const malformed = await request(`${server.url}/accounts/password/reset/`, {
      headers: { host: ROOT_HOST, cookie: "csrftoken=short" },
    });
    await malformed.body.text();
    expect(String(malformed.headers["set-cookie"])).toMatch(/^csrftoken=[A-Za-z0-9_-]{43};/);
  });
});

describe("hostile posts", () => {
  it("makes one account when an invitation is accepted twice at once", async () => {
    await server.call("POST", "/api/v1/invites", {
      ...cast.as("iago"),
      form: { invitee_emails: "twice@example.com", stream_ids: JSON.stringify([]) },
    });
    const [mail] = await mailbox.mailFor("twice@example.com");
    const link = linkIn(mail, "/join/");
    const first = browser();
    const second = browser();
    await Promise.all([first.get(link), second.get(link)]);
    const answers = await Promise.all([
      first.fill(link, { full_name: "First", password: STRONG }),
      second.fill(link, { full_name: "Second", password: STRONG }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404]);
    expect(
      await server.db.prisma.user.count({ where: { delivery_email: "twice@example.com" } }),
    ).toBe(1);
  });

  it("answers a form body with too many fields, or too large, with a page", async () => {
    const person = browser();
    await person.get("/accounts/password/reset/");
    const fields = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`f${String(i)}`, "x"]));
    const many = await person.fill("/accounts/password/reset/", fields);
    expect([many.status, many.headers["content-type"]]).toEqual([
      413,
      expect.stringMatching(/^text\/html/),
    ]);
    const large = await person.fill("/accounts/password/reset/", { email: "x".repeat(20_000) });
    expect([large.status, large.headers["content-type"]]).toEqual([
      413,
      expect.stringMatching(/^text\/html/),
    ]);
  });
});

describe("/accounts/password/reset/", () => {
  it("e-mails a single-use link; an unknown address gets the same page and a note", async () => {
    const hamlet = cast.person("hamlet").email;
    const known = await browser().fill("/accounts/password/reset/", { email: hamlet });
    const unknown = await browser().fill("/accounts/password/reset/", {
      email: "nobody.here@example.com",
    });
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    const strip = (text: string) => text.replace(/<strong>[^<]*<\/strong>/, "");
    expect(strip(unknown.text)).toBe(strip(known.text));
    const [note] = await mailbox.mailFor("nobody.here@example.com");
    expect(note?.subject).toBe("Password reset request for Demo");
    expect(note?.text).toContain("no active account");
    expect(note?.text).not.toContain("/accounts/password/reset/");
    const [mail] = await mailbox.mailFor(hamlet);
    expect(mail?.subject).toBe("Password reset request for Demo");
    const link = linkIn(mail, "/accounts/password/reset/");
    // The key is not in the database, only its hash.
    const key = /reset\/([a-z0-9]+)\//.exec(link)?.[1] ?? "";
    expect(await server.db.prisma.accountConfirmation.count({ where: { key_hash: key } })).toBe(0);

    const person = browser();
    const mismatch = await person.fill(link, { password: STRONG, password_again: "other" });
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toContain("The two passwords are not the same.");
    const done = await person.fill(link, { password: STRONG, password_again: STRONG });
    expect(done.status).toBe(200);
    expect(done.text).toContain("Your password is set");
    expect((await login(hamlet, STRONG)).status).toBe(200);
    expect((await person.get(link)).status).toBe(404);
  });

  it("sends one address at most three links an hour", async () => {
    const desdemona = cast.person("desdemona").email;
    for (let i = 0; i < 3; i++)
      expect((await browser().fill("/accounts/password/reset/", { email: desdemona })).status).toBe(
        200,
      );
    const refused = await browser().fill("/accounts/password/reset/", { email: desdemona });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("too many e-mails");
    expect(await mailbox.mailFor(desdemona, 3)).toHaveLength(3);
  });
});

describe("/register/ and /accounts/do_confirm/<key>/: signing up by e-mail", () => {
  const patchRealm = (form: Record<string, string>) =>
    server.call("PATCH", "/api/v1/realm", { ...cast.as("iago"), form });

  it("follows the realm's rules: an invitation, its domains, no throwaway addresses", async () => {
    const closed = await browser().get("/register/");
    expect(closed.text).toContain("needs an invitation");
    expect((await patchRealm({ invite_required: "false" })).status).toBe(200);
    const throwaway = await browser().fill("/register/", { email: "someone@mailinator.com" });
    expect(throwaway.status).toBe(400);
    expect(throwaway.text).toContain("Please use your real email address.");

    expect((await patchRealm({ emails_restricted_to_domains: "true" })).status).toBe(200);
    // The realm's people hear of each change of its domains.
    const poll = await listenAs(server, cast.as("hamlet"), ["realm_domains"]);
    const domainCommand = async (...args: string[]) => {
      const lines: string[] = [];
      const code = await runAdmin(
        ["realm-domain", "--realm", "", ...args],
        (t) => lines.push(t),
        (t) => lines.push(t),
        process.env,
        server.db,
      );
      return [code, lines];
    };
    expect(await domainCommand("--add", "example.net", "--allow-subdomains")).toEqual([
      0,
      ["added example.net and its subdomains"],
    ]);
    expect(await domainCommand("--add", "example.net")).toEqual([0, ["changed example.net"]]);
    expect(await domainCommand("--add", "example.net")).toEqual([0, ["unchanged example.net"]]);
    expect(await domainCommand("--remove", "example.net")).toEqual([0, ["removed example.net"]]);
    expect(await domainCommand("--add", "example.org")).toEqual([0, ["added example.org"]]);
    expect(await poll()).toEqual([
      {
        type: "realm_domains",
        op: "add",
        realm_domain: { domain: "example.net", allow_subdomains: true },
      },
      {
        type: "realm_domains",
        op: "change",
        realm_domain: { domain: "example.net", allow_subdomains: false },
      },
      { type: "realm_domains", op: "remove", domain: "example.net" },
      {
        type: "realm_domains",
        op: "add",
        realm_domain: { domain: "example.org", allow_subdomains: false },
      },
    ]);
    const elsewhere = await browser().fill("/register/", { email: "someone@example.net" });
    expect(elsewhere.text).toContain("is not in one of the domains");

    const asked = await browser().fill("/register/", { email: "new.member@example.org" });
    expect(asked.status).toBe(200);
    expect(asked.text).toContain("Check your e-mail");
    const [mail] = await mailbox.mailFor("new.member@example.org");
    expect(mail?.subject).toBe("Activate your Zulip account");
    const link = linkIn(mail, "/accounts/do_confirm/");
    const done = await browser().fill(link, { full_name: "New Member", password: STRONG });
    expect(done.status).toBe(200);
    expect((await login("new.member@example.org", STRONG)).status).toBe(200);
    const made = await server.db.prisma.user.findFirstOrThrow({
      where: { delivery_email: "new.member@example.org" },
      include: { subscriptions: true },
    });
    const defaults = await server.db.prisma.channel.findMany({
      where: { is_default_stream: true },
    });
    expect(made.role).toBe(400);
    expect(made.subscriptions.map((s) => s.channel_id).sort()).toEqual(
      defaults.map((c) => c.id).sort(),
    );
    // Register tells clients the realm's rules.
    const state = await server.call("POST", "/api/v1/register", {
      ...cast.as("iago"),
      form: { fetch_event_types: JSON.stringify(["realm", "realm_domains"]) },
    });
    expect(state.body).toMatchObject({
      realm_invite_required: false,
      realm_emails_restricted_to_domains: true,
      realm_domains: [{ domain: "example.org", allow_subdomains: false }],
    });
    await patchRealm({ invite_required: "true", emails_restricted_to_domains: "false" });
  });

  it("signs up through a reusable link with the link's role", async () => {
    const made = await server.call("POST", "/api/v1/invites/multiuse", {
      ...cast.as("iago"),
      form: { invite_as: "600", stream_ids: JSON.stringify([channels.Denmark]) },
    });
    const link = made.body.invite_link as string;
    const asked = await browser().fill(link, { email: "guest.star@example.com" });
    expect(asked.status).toBe(200);
    const [mail] = await mailbox.mailFor("guest.star@example.com");
    const done = await browser().fill(linkIn(mail, "/accounts/do_confirm/"), {
      full_name: "Guest Star",
      password: STRONG,
    });
    expect(done.status).toBe(200);
    const user = await server.db.prisma.user.findFirstOrThrow({
      where: { delivery_email: "guest.star@example.com" },
      include: { subscriptions: true },
    });
    expect(user.role).toBe(600);
    expect(user.subscriptions.map((s) => s.channel_id)).toEqual([channels.Denmark]);
  });
});

describe("admin create-realm with an owner", () => {
  it("makes the organization and e-mails its owner a link to choose a password", async () => {
    const lines: string[] = [];
    const code = await runAdmin(
      [
        "create-realm",
        "--subdomain",
        "globe",
        "--name",
        "The Globe",
        "--owner-email",
        "burbage@globe.example",
        "--owner-name",
        "Richard Burbage",
      ],
      (t) => lines.push(t),
      (t) => lines.push(t),
      { ...process.env, CHAT_EXTERNAL_URL: `http://${ROOT_HOST}` },
      server.db,
    );
    expect(code).toBe(0);
    expect(lines.join("\n")).toContain(`http://globe.${ROOT_HOST}/accounts/password/reset/`);
    const [mail] = await mailbox.mailFor("burbage@globe.example");
    expect(mail?.subject).toBe("Your new organization The Globe");
    const link = linkIn(mail, "/accounts/password/reset/");
    // The link is the new realm's: the root realm's host does not take it.
    expect((await browser().get(link)).status).toBe(404);
    const done = await browser(`globe.${ROOT_HOST}`).fill(link, {
      password: STRONG,
      password_again: STRONG,
    });
    expect(done.status).toBe(200);
    const key = await login("burbage@globe.example", STRONG, `globe.${ROOT_HOST}`);
    expect(key.status).toBe(200);
    const owner = await server.db.prisma.user.findFirstOrThrow({
      where: { delivery_email: "burbage@globe.example" },
    });
    expect(owner.role).toBe(100);
  });
});
