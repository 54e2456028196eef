/**
 * A real mail server for tests: an SMTP server on loopback (the `smtp-server`
 * package) that keeps what it receives, read as a mail client would
 * (`mailparser`). Recipients in `refuseOnce` are refused once each (451).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { type TestServer, startTestServer } from "./server";

export interface Received {
  envelopeTo: string[];
  mail: ParsedMail;
}

export interface Mailbox {
  port: number;
  /** `smtp://` URL of the server, for CHAT_SMTP_URL. */
  url: string;
  received: Received[];
  refuseOnce: Set<string>;
  /** The messages received for `address`, once there are `count` of them (or after 10 s). */
  mailFor(address: string, count?: number): Promise<ParsedMail[]>;
  close(): Promise<void>;
}

export async function startMailbox(): Promise<Mailbox> {
  const received: Received[] = [];
  const refuseOnce = new Set<string>();
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (refuseOnce.delete(address.address)) {
        callback(Object.assign(new Error("mailbox busy, try later"), { responseCode: 451 }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          received.push({ envelopeTo: session.envelope.rcptTo.map((r) => r.address), mail });
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  const mine = (address: string) =>
    received.filter((r) => r.envelopeTo.includes(address)).map((r) => r.mail);
  return {
    port,
    url: `smtp://127.0.0.1:${String(port)}`,
    received,
    refuseOnce,
    async mailFor(address, count = 1) {
      for (let waited = 0; waited < 10_000; waited += 50) {
        if (mine(address).length >= count) break;
        await sleep(50);
      }
      return mine(address);
    },
    close: () => new Promise<void>((resolve) => smtp.close(resolve)),
  };
}

/** The first link in a message's text under `path` (`/join/`, `/accounts/...`). */
export function linkIn(mail: ParsedMail | undefined, path: string): string {
  if (mail === undefined) throw new Error(`no message with a ${path} link`);
  const escaped = path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const found = new RegExp(`https?://[^\\s]*${escaped}[A-Za-z0-9_-]+/`).exec(mail.text ?? "");
  if (found === null) throw new Error(`no ${path} link in: ${mail.text ?? ""}`);
  return found[0];
}

/** A test server whose e-mail goes to a mailbox of its own, sent as soon as it is written. */
export interface MailingServer {
  server: TestServer;
  mailbox: Mailbox;
  close: () => Promise<void>;
}

/** Starts a mailbox and a test server sending to it (the outbox read every 0.1 s), with `env` besides. */
export async function startMailingServer(env: Record<string, string> = {}): Promise<MailingServer> {
  const mailbox = await startMailbox();
  const server = await startTestServer({
    env: { CHAT_SMTP_URL: mailbox.url, CHAT_EMAIL_POLL_SECONDS: "0.1", ...env },
  });
  return {
    server,
    mailbox,
    close: async () => {
      await server.close();
      await mailbox.close();
    },
  };
}
