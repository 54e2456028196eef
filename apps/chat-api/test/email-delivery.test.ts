import { setTimeout as sleep } from "node:timers/promises";
import type { ParsedMail } from "mailparser";
import { deliverOutbox } from "../src/actions/outbox";
import { queueEmail } from "../src/db/queries/outbox";
import { type Cast, type TestServer, loadCast, startTestServer } from "./support/server";
import { type Mailbox, type Received, startMailingServer } from "./support/mailbox";

/**
 * E-mail through a real mail server: an SMTP server on loopback receives what
 * the outbox sends, and the test reads each message as a mail client would.
 */
let mailbox: Mailbox;
let stop: () => Promise<void>;
let received: Received[];
let refuseOnce: Set<string>;

let server: TestServer;
let cast: Cast;

beforeAll(async () => {
  ({
    server,
    mailbox,
    close: stop,
  } = await startMailingServer({
    CHAT_EMAIL_FROM: "Team Chat <chat@example.org>",
    CHAT_EMAIL_RETRY_SECONDS: "0.2",
  }));
  ({ received, refuseOnce } = mailbox);
  cast = await loadCast(server, ["iago", "hamlet"]);
});

afterAll(async () => {
  await stop();
});

const rootRealmId = async (): Promise<number> =>
  (await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } })).id;

const mailFor = (address: string, count = 1): Promise<ParsedMail[]> =>
  mailbox.mailFor(address, count);

/** The outbox row of `address`, once it is noted sent (or after 10 s, as it is). */
async function sentRow(address: string) {
  for (let waited = 0; ; waited += 50) {
    const row = await server.db.prisma.outboxEmail.findFirstOrThrow({
      where: { to_address: address },
    });
    if (row.sent_at !== null || waited >= 10_000) return row;
    await sleep(50);
  }
}

describe("the outbox, through a mail server", () => {
  it("sends an invitation with a text and an HTML part, the link in both, and notes it sent", async () => {
    const reply = await server.call("POST", "/api/v1/invites", {
      ...cast.as("iago"),
      form: { invitee_emails: "newcomer@example.net", stream_ids: "[]" },
    });
    expect(reply.status).toBe(200);
    const [mail] = await mailFor("newcomer@example.net");
    expect(mail?.from?.text).toBe('"Team Chat" <chat@example.org>');
    expect(mail?.subject).toMatch(/^Iago has invited you to join /);
    const link = /http:\/\/chat\.test\/join\/[a-z0-9]{24}\//.exec(mail?.text ?? "")?.[0];
    expect(link).toBeDefined();
    expect(mail?.html).toContain(`<a href="${link ?? ""}">`);
    // The postman notes the send once the mail server has answered, a moment
    // after the mail server has the message.
    const row = await sentRow("newcomer@example.net");
    expect(row.sent_at).not.toBeNull();
    expect(row.attempts).toBe(1);
  });

  it("retries an e-mail the mail server refused, and sends it once", async () => {
    refuseOnce.add("busy@example.net");
    const before =
      await server.services.metrics.registry.getSingleMetricAsString("chat_emails_total");
    expect(before).not.toContain('outcome="failed"');
    const realmId = await rootRealmId();
    await server.db.transaction((tx) =>
      queueEmail(tx, {
        realm_id: realmId,
        to_address: "busy@example.net",
        subject: "Try again",
        body_text: "Second time lucky.",
      }),
    );
    const mails = await mailFor("busy@example.net");
    expect(mails.map((m) => m.subject)).toEqual(["Try again"]);
    const row = await sentRow("busy@example.net");
    expect([row.attempts, row.last_error, row.sent_at === null]).toEqual([2, null, false]);
    const after =
      await server.services.metrics.registry.getSingleMetricAsString("chat_emails_total");
    expect(after).toContain('chat_emails_total{outcome="failed"} 1');
  });

  it("sends each e-mail once when two replicas drain the outbox at once", async () => {
    const realmId = await rootRealmId();
    await server.db.transaction(async (tx) => {
      for (let i = 0; i < 30; i++)
        await queueEmail(tx, {
          realm_id: realmId,
          to_address: `crowd${String(i)}@example.net`,
          subject: `Number ${String(i)}`,
          body_text: "Once only.",
        });
    });
    const mailer = server.services.mailer;
    if (mailer === undefined) throw new Error("no mailer");
    const options = { retrySeconds: 1, logger: server.services.logger };
    await Promise.all([
      deliverOutbox(server.db, mailer, options),
      deliverOutbox(server.db, mailer, options),
    ]);
    // The server's own round may have taken some as well.
    for (let i = 0; i < 30; i++) await mailFor(`crowd${String(i)}@example.net`);
    await sleep(300);
    const crowd = received.filter((r) => r.envelopeTo[0]?.startsWith("crowd"));
    expect(crowd.map((r) => r.mail.subject).sort()).toEqual(
      Array.from({ length: 30 }, (_, i) => `Number ${String(i)}`).sort(),
    );
  });

  it("refuses a subject or an address with a line break (header injection), storing nothing", async () => {
    const realmId = await rootRealmId();
    const count = await server.db.prisma.outboxEmail.count();
    for (const [to, subject] of [
      ["victim@example.net", "Hello\r\nBcc: everyone@example.net"],
      ["victim@example.net\nBcc: everyone@example.net", "Hello"],
    ] as const) {
      await expect(
        server.db.transaction((tx) =>
          queueEmail(tx, { realm_id: realmId, to_address: to, subject, body_text: "x" }),
        ),
      ).rejects.toThrow(/may not hold a line break/);
    }
    expect(await server.db.prisma.outboxEmail.count()).toBe(count);
    // A name is where such a subject would come from: it cannot hold one either.
    const renamed = await server.call("PATCH", "/api/v1/settings", {
      ...cast.as("iago"),
      form: { full_name: "Iago\r\nBcc: everyone@example.net" },
    });
    expect(renamed.status).toBe(400);
  });
});

describe("without a mail server", () => {
  it("keeps e-mails in the outbox and says so at start", async () => {
    const quiet = await startTestServer();
    try {
      expect(quiet.services.mailer).toBeUndefined();
      expect(quiet.logs.join("")).toContain(
        "CHAT_SMTP_URL is not set: e-mails are kept in the outbox, not sent",
      );
    } finally {
      await quiet.close();
    }
  });
});
