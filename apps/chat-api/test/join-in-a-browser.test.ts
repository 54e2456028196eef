import { existsSync } from "node:fs";
import http from "node:http";
import type { LookupFunction } from "node:net";
import { type Browser, type Page, chromium } from "playwright-core";
import zulipInit from "zulip-js";
import { runAdmin } from "../src/cli/admin";
import { type Mailbox, linkIn, startMailingServer } from "./support/mailbox";
import { ROOT_HOST, type TestServer } from "./support/server";

/**
 * A team from nothing to chatting, as its people would do it: the operator
 * creates the organization with one command; its owner follows the e-mailed
 * link in Chromium (Debian's, driven by playwright-core) and chooses a
 * password; logs in with zulip-js (POST /fetch_api_key) and invites a
 * colleague by the API; the colleague follows the invitation e-mail's link,
 * signs up on the page and logs in with zulip-js; a direct message they have
 * not read reaches them by e-mail; a forgotten password is reset through the
 * pages. E-mails go through a real SMTP server on loopback.
 *
 * The organization's host, `troupe.chat.test`, resolves to the server for
 * both clients: Chromium through its host-resolver rules, zulip-js (which
 * connects through Node's global HTTP agent) through that agent's lookup.
 */
const CHROMIUM = "/usr/bin/chromium";
const HOST = `troupe.${ROOT_HOST}`;
const STRONG = "the lion roars, then the moon shines";

let server: TestServer;
let mailbox: Mailbox;
let stop: () => Promise<void>;
let browser: Browser;
let page: Page;
let origin: string;
const defaultAgent = http.globalAgent;

/** Names under the test's domain are this machine. */
const loopback: LookupFunction = (hostname, options, callback) => {
  const name = hostname.toLowerCase();
  if (name === ROOT_HOST || name.endsWith(`.${ROOT_HOST}`)) {
    if (options.all === true) callback(null, [{ address: "127.0.0.1", family: 4 }]);
    else callback(null, "127.0.0.1", 4);
    return;
  }
  callback(new Error(`${hostname} is not resolved in this test`), "", 4);
};

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)`);
  ({
    server,
    mailbox,
    close: stop,
  } = await startMailingServer({
    CHAT_MISSED_EMAIL_DELAY_SECONDS: "1",
    CHAT_MISSED_EMAIL_POLL_SECONDS: "0.2",
  }));
  origin = `http://${HOST}:${String(server.port)}`;
  http.globalAgent = new http.Agent({ lookup: loopback });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--host-resolver-rules=MAP ${ROOT_HOST} 127.0.0.1, MAP *.${ROOT_HOST} 127.0.0.1`,
    ],
  });
  page = await browser.newPage();
});

afterAll(async () => {
  http.globalAgent = defaultAgent;
  await browser.close();
  await stop();
});

/** An e-mailed link, on the test server's port. */
const onServer = (link: string) => link.replace(`http://${HOST}`, origin);

const login = (username: string, password: string) =>
  zulipInit({ realm: origin, username, password });

describe("a team joins, in Chromium and zulip-js", () => {
  it("goes from a new organization to a missed direct message by e-mail", async () => {
    const out: string[] = [];
    const created = await runAdmin(
      [
        "create-realm",
        "--subdomain",
        "troupe",
        "--name",
        "The Troupe",
        "--owner-email",
        "quince@troupe.example",
        "--owner-name",
        "Peter Quince",
      ],
      (text) => out.push(text),
      (text) => out.push(text),
      { ...process.env, CHAT_EXTERNAL_URL: `http://${ROOT_HOST}` },
      server.db,
    );
    expect([created, out.join("\n")]).toEqual([0, expect.stringContaining(HOST)]);

    // The owner chooses a password on the page the e-mail links to.
    const [welcome] = await mailbox.mailFor("quince@troupe.example");
    expect(welcome?.subject).toBe("Your new organization The Troupe");
    await page.goto(onServer(linkIn(welcome, "/accounts/password/reset/")));
    expect(await page.title()).toBe("Choose a new password");
    await page.getByLabel("Password", { exact: true }).fill(STRONG);
    await page.getByLabel("The password again").fill(STRONG);
    await page.getByRole("button", { name: "Set the password" }).click();
    await page.getByRole("heading", { name: "Your password is set" }).waitFor();
    expect(await page.textContent("main")).toContain(`http://${HOST}`);

    // The owner logs in from a Zulip client and invites a colleague.
    const owner = await login("quince@troupe.example", STRONG);
    const invited = await owner.callEndpoint("/invites", "POST", {
      invitee_emails: "bottom@troupe.example",
      stream_ids: JSON.stringify([]),
    });
    expect([invited.result, invited.msg]).toEqual(["success", ""]);

    // The colleague signs up on the invitation's page, then logs in.
    const [invitation] = await mailbox.mailFor("bottom@troupe.example");
    expect(invitation?.subject).toBe("Peter Quince has invited you to join The Troupe");
    await page.goto(onServer(linkIn(invitation, "/join/")));
    expect(await page.textContent("main")).toContain("bottom@troupe.example");
    await page.getByLabel("Full name").fill("Nick Bottom");
    // Too weak first: the form says so and keeps the name.
    await page.getByLabel("Password", { exact: true }).fill("bottom");
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toBe("The password is too weak.");
    expect(await page.getByLabel("Full name").inputValue()).toBe("Nick Bottom");
    await page.getByLabel("Password", { exact: true }).fill(STRONG);
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByRole("heading", { name: "Your account is ready" }).waitFor();
    const bottom = await login("bottom@troupe.example", STRONG);
    const me = await bottom.users.me.getProfile();
    expect([me.result, me.full_name, me.role]).toEqual(["success", "Nick Bottom", 400]);

    // A direct message Bottom does not read arrives by e-mail.
    const sent = await owner.messages.send({
      type: "direct",
      to: JSON.stringify([me.user_id]),
      content: "Rehearsal at the Duke's oak, tomorrow night.",
    });
    expect(sent.result).toBe("success");
    const missed = (await mailbox.mailFor("bottom@troupe.example", 2))[1];
    expect(missed?.subject).toBe("DMs with Peter Quince");
    expect(missed?.text).toContain("Rehearsal at the Duke's oak, tomorrow night.");
  });

  it("resets a forgotten password through the pages", async () => {
    await page.goto(`${origin}/accounts/password/reset/`);
    await page.getByLabel("E-mail address").fill("bottom@troupe.example");
    await page.getByRole("button", { name: "Send the link" }).click();
    await page.getByRole("heading", { name: "Check your e-mail" }).waitFor();
    const reset = (await mailbox.mailFor("bottom@troupe.example", 3))[2];
    expect(reset?.subject).toBe("Password reset request for The Troupe");
    await page.goto(onServer(linkIn(reset, "/accounts/password/reset/")));
    const renewed = "translated, bless thee, thou art translated";
    await page.getByLabel("Password", { exact: true }).fill(renewed);
    await page.getByLabel("The password again").fill(renewed);
    await page.getByRole("button", { name: "Set the password" }).click();
    await page.getByRole("heading", { name: "Your password is set" }).waitFor();
    const again = await login("bottom@troupe.example", renewed);
    expect(again.config.apiKey).toMatch(/^[A-Za-z0-9]{32}$/);
    // The old password no longer logs in (zulip-js is left without a key).
    expect((await login("bottom@troupe.example", STRONG)).config.apiKey).toBeUndefined();
  });
});
