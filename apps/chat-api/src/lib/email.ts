import nodemailer from "nodemailer";
import type { Config } from "./config";
import { escapeHtml } from "./render";

/** One e-mail as it is sent: a plain-text part and an HTML part. */
export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Sends e-mails through the operator's mail server. */
export interface Mailer {
  /** Sends one e-mail; rejects with the server's or the connection's error. */
  send(email: OutgoingEmail): Promise<void>;
  close(): void;
}

/** What may not be in a header's value: a line break would start another header. */
const HEADER_BREAK = /[\r\n\0]/;

/** Throws for a header value (subject, address) that holds a line break or NUL. */
export function checkHeaderValue(name: string, value: string): void {
  if (HEADER_BREAK.test(value)) throw new Error(`an e-mail's ${name} may not hold a line break`);
}

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"]+/g;

/** The HTML part of a plain-text e-mail: its paragraphs, escaped, with its links made links. */
export function htmlOfText(text: string): string {
  const paragraphs = text
    .trim()
    .split(/\n{2,}/)
    .map((paragraph) => {
      let html = "";
      let at = 0;
      for (const match of paragraph.matchAll(URL_IN_TEXT)) {
        const url = match[0];
        html += escapeHtml(paragraph.slice(at, match.index));
        html += `<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>`;
        at = match.index + url.length;
      }
      html += escapeHtml(paragraph.slice(at));
      return `<p>${html.replaceAll("\n", "<br>\n")}</p>`;
    });
  return `<!DOCTYPE html>\n<html><body>\n${paragraphs.join("\n")}\n</body></html>\n`;
}

/** The default sender: `Zulip <noreply@HOST>`, HOST that of the server's external URL. */
export function defaultSender(config: Pick<Config, "CHAT_EXTERNAL_URL">): string {
  return `Zulip <noreply@${config.CHAT_EXTERNAL_URL.hostname}>`;
}

/**
 * The mailer of `CHAT_SMTP_URL` (nodemailer's SMTP transport, one pooled
 * connection), or undefined when none is set. It never reads files or URLs
 * named in a message, and gives up on a silent server within seconds.
 */
export function createMailer(
  config: Pick<Config, "CHAT_SMTP_URL" | "CHAT_EMAIL_FROM" | "CHAT_EXTERNAL_URL">,
): Mailer | undefined {
  if (config.CHAT_SMTP_URL === undefined) return undefined;
  const from = config.CHAT_EMAIL_FROM ?? defaultSender(config);
  const url = new URL(config.CHAT_SMTP_URL);
  const transport = nodemailer.createTransport({
    host: url.hostname,
    port: url.port === "" ? (url.protocol === "smtps:" ? 465 : 587) : Number(url.port),
    secure: url.protocol === "smtps:",
    ...(url.username === ""
      ? {}
      : {
          auth: {
            user: decodeURIComponent(url.username),
            pass: decodeURIComponent(url.password),
          },
        }),
    pool: true,
    maxConnections: 1,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    async send(email) {
      checkHeaderValue("recipient", email.to);
      checkHeaderValue("subject", email.subject);
      await transport.sendMail({ from, ...email });
    },
    close() {
      transport.close();
    },
  };
}
