import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import { until } from "@repo/bench-kit";
import { MISSED_EMAILS_PER_HOUR } from "../src/actions/missed-messages";
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
 * Missed-message e-mails: a direct message or a mention left unread for the
 * delay (1 s here) by someone with no client connected reaches them through a
 * real mail server, once, one e-mail per conversation; their settings and a
 * connected client hold it back; its link stops them.
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
    CHAT_MISSED_EMAIL_DELAY_SECONDS: "1",
    CHAT_MISSED_EMAIL_POLL_SECONDS: "0.2",
  }));
  cast = await loadCast(server, ["hamlet", "othello", "cordelia", "iago", "prospero", "polonius"]);
  channels = await channelIds(server);
});

afterAll(async () => {
  await stop();
});

const send = (who: string, form: Record<string, unknown>) =>
  server.call("POST", "/api/v1/messages", { ...cast.as(who), form });
const email = (who: string) => cast.person(who).email;
const settle = () => sleep(2_500);
/** How many e-mails `who` has received so far. */
const receivedBy = (who: string) =>
  mailbox.received.filter((r) => r.envelopeTo.includes(email(who))).length;

describe("missed-message e-mails", () => {
  it("e-mails a direct message left unread, with its content and a link to stop them", async () => {
    const sent = await send("hamlet", {
      type: "direct",
      to: JSON.stringify([cast.id("othello")]),
      content: "Meet me on the **battlements** at midnight.",
    });
    expect(sent.status).toBe(200);
    const [mail] = await mailbox.mailFor(email("othello"));
    expect(mail?.subject).toBe("DMs with King Hamlet");
    expect(mail?.text).toContain("King Hamlet:\nMeet me on the **battlements** at midnight.");
    expect(mail?.text).toContain(
      `http://${ROOT_HOST}/#narrow/dm/${String(cast.id("hamlet"))}-dm/near/${String(sent.body.id)}`,
    );
    expect(mail?.html).toContain("battlements");
    // Once: a later scan does not send it again.
    await settle();
    expect(receivedBy("othello")).toBe(1);

    // The link stops them: a page with a button, then the setting is off.
    const link = linkIn(mail, "/accounts/unsubscribe/missed_messages/");
    const page = await request(`${server.url}${link.replace(/^https?:\/\/[^/]+/, "")}`, {
      headers: { host: ROOT_HOST },
    });
    const text = await page.body.text();
    expect(page.statusCode).toBe(200);
    expect(text).toContain("Stop these e-mails");
    const cookie = String(page.headers["set-cookie"]).split(";")[0] ?? "";
    const token = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(text)?.[1] ?? "";
    const stopped = await request(`${server.url}${link.replace(/^https?:\/\/[^/]+/, "")}`, {
      method: "POST",
      headers: { host: ROOT_HOST, cookie, "content-type": "application/x-www-form-urlencoded" },
      body: `csrfmiddlewaretoken=${token}`,
    });
    expect(stopped.statusCode).toBe(200);
    await stopped.body.text();
    // (Read from the database: a register would connect a client, which holds e-mails back too.)
    const row = await server.db.prisma.user.findUniqueOrThrow({
      where: { id: cast.id("othello") },
    });
    expect(row.settings).toMatchObject({ enable_offline_email_notifications: false });
    await send("hamlet", {
      type: "direct",
      to: JSON.stringify([cast.id("othello")]),
      content: "Are you there?",
    });
    await settle();
    expect(receivedBy("othello")).toBe(1);
    // A forged token is refused.
    const forged = await request(
      `${server.url}/accounts/unsubscribe/missed_messages/${String(cast.id("iago"))}-${"A".repeat(43)}/`,
      { headers: { host: ROOT_HOST } },
    );
    expect(forged.statusCode).toBe(404);
    await forged.body.text();
  });

  it("e-mails a mention per topic, and nothing for what was read or for a connected person", async () => {
    const poll = await listenAs(server, cast.as("cordelia"), ["message"]);
    const mention = await send("hamlet", {
      type: "stream",
      to: String(channels.Denmark),
      topic: "the play",
      content:
        "@**Prospero from The Tempest** and @**Cordelia, Lear's daughter**, the play's the thing",
    });
    expect(mention.status).toBe(200);
    const read = await send("hamlet", {
      type: "direct",
      to: JSON.stringify([cast.id("polonius")]),
      content: "Words, words, words.",
    });
    await server.call("POST", "/api/v1/messages/flags", {
      ...cast.as("polonius"),
      form: { messages: JSON.stringify([read.body.id]), op: "add", flag: "read" },
    });
    const [mail] = await mailbox.mailFor(email("prospero"));
    expect(mail?.subject).toBe("#Denmark > the play");
    expect(mail?.text).toContain("the play's the thing");
    await settle();
    await poll();
    // Cordelia's client was connected; Polonius read his.
    expect(receivedBy("cordelia")).toBe(0);
    expect(receivedBy("polonius")).toBe(0);
  });

  it(`sends one person at most ${String(MISSED_EMAILS_PER_HOUR)} in an hour, however many conversations`, async () => {
    const topics = MISSED_EMAILS_PER_HOUR + 5;
    for (let n = 0; n < topics; n++) {
      const sent = await send("hamlet", {
        type: "stream",
        to: String(channels.Denmark),
        topic: `plot ${String(n)}`,
        content: `@**Iago|${String(cast.id("iago"))}**, scene ${String(n)}`,
      });
      expect(sent.status).toBe(200);
    }
    // Every mention was scanned: the scan's watermark passed the last one.
    const last = await server.db.prisma.message.findFirstOrThrow({ orderBy: { id: "desc" } });
    await until(
      async () =>
        ((await server.db.prisma.missedMessageScan.findUnique({ where: { id: 1 } }))
          ?.last_message_id ?? 0) >= last.id,
      20_000,
      "the scan's watermark to pass the last mention",
    );
    await mailbox.mailFor(email("iago"));
    await settle();
    expect(receivedBy("iago")).toBe(MISSED_EMAILS_PER_HOUR);
    expect(await server.db.prisma.outboxEmail.count({ where: { to_address: email("iago") } })).toBe(
      MISSED_EMAILS_PER_HOUR,
    );
  });
});
