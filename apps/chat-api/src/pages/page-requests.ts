/**
 * What every page of the server shares: its headers, its realm (from the
 * Host), its form body, CSRF protection and the per-address rate limit.
 *
 * CSRF: a page with a form sets a random `csrftoken` cookie (HttpOnly,
 * SameSite=Strict) and puts the same token in the form; a post is taken only
 * when the two match and, if the browser names an Origin, it is this host.
 * Another site can neither read the token nor send the cookie with its post.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { parse, serialize } from "cookie";
import { JsonableError, RateLimitedError } from "@repo/envelope";
import express, { type Request, type RequestHandler, type Response } from "express";
import type { Realm } from "../gen/prisma/client";
import type { Services } from "../http/context";
import { type Html, PAGE_CSP, markup, page, paragraph } from "../lib/html-page";

const CSRF_COOKIE = "csrftoken";
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** A page's form body: small, flat, a few fields. */
export const readForm: RequestHandler = express.urlencoded({
  extended: false,
  limit: "16kb",
  parameterLimit: 20,
});

/** The fields of a posted form, as strings (anything else: empty). */
export function field(req: Request, name: string): string {
  const body = req.body as Record<string, unknown> | undefined;
  const value = body?.[name];
  return typeof value === "string" ? value : "";
}

/** Writes a page: its headers (its own CSP, never cached) and its HTML. */
export function sendPage(res: Response, status: number, title: string, content: Html) {
  res.setHeader("Content-Security-Policy", PAGE_CSP);
  res.setHeader("Cache-Control", "no-store");
  // A link's key never leaves the site in a Referer; the page's own form
  // posts keep their Origin (with no-referrer, Chromium sends `Origin: null`).
  res.setHeader("Referrer-Policy", "same-origin");
  res.status(status).type("html").send(page(title, content));
}

/** The realm the Host names, or a 404 page and undefined. */
export async function pageRealm(
  services: Services,
  req: Request,
  res: Response,
): Promise<Realm | undefined> {
  const { realm } = await services.realms.fromHost(req.headers.host);
  if (realm === undefined || realm.deactivated) {
    sendPage(
      res,
      404,
      "No organization here",
      paragraph("There is no Zulip organization at this address."),
    );
    return undefined;
  }
  return realm;
}

/** This browser's CSRF token: the cookie's, or a new one set now. */
export function csrfToken(services: Services, req: Request, res: Response): string {
  const current = cookie(req, CSRF_COOKIE);
  if (current !== undefined && TOKEN.test(current)) return current;
  const token = randomBytes(32).toString("base64url");
  res.append(
    "Set-Cookie",
    serialize(CSRF_COOKIE, token, {
      path: "/",
      httpOnly: true,
      sameSite: "strict",
      maxAge: 31_449_600,
      secure: services.config.CHAT_EXTERNAL_URL.protocol === "https:",
    }),
  );
  return token;
}

/**
 * Whether a post carries this browser's token and comes from this host;
 * when not, the 403 page is written.
 */
export function checkCsrf(req: Request, res: Response): boolean {
  const expected = cookie(req, CSRF_COOKIE);
  const sent = field(req, "csrfmiddlewaretoken");
  const origin = req.headers.origin;
  const sameOrigin =
    origin === undefined || (URL.canParse(origin) && new URL(origin).host === req.headers.host);
  const matches =
    expected !== undefined &&
    TOKEN.test(expected) &&
    sent.length === expected.length &&
    timingSafeEqual(Buffer.from(sent), Buffer.from(expected));
  if (matches && sameOrigin) return true;
  sendPage(
    res,
    403,
    "Forbidden",
    paragraph(
      "This form could not be checked (CSRF verification failed). Reload the page and send it again.",
    ),
  );
  return false;
}

function cookie(req: Request, name: string): string | undefined {
  return parse(req.headers.cookie ?? "")[name];
}

/**
 * Counts a post against its address's requests (the API's per-address
 * limit); past it, the 429 page is written and false answered.
 */
export async function withinRateLimit(
  services: Services,
  req: Request,
  res: Response,
): Promise<boolean> {
  try {
    await services.rateLimiter.consume("ip", req.socket.remoteAddress ?? "");
    return true;
  } catch (error) {
    if (!(error instanceof RateLimitedError)) throw error;
    const retry = error.headers["Retry-After"];
    if (retry !== undefined) res.setHeader("Retry-After", retry);
    sendPage(
      res,
      429,
      "Too many requests",
      paragraph("Too many requests. Wait a minute, then try again."),
    );
    return false;
  }
}

/** The message of an action's refusal, for the form; anything else goes on to the error handler. */
export function refusal(error: unknown): string {
  if (error instanceof RateLimitedError) return "The server is busy. Try again in a moment.";
  if (error instanceof JsonableError) return error.message;
  throw error;
}

/** The page after a sign-up or a new password: how to log in from Zulip's apps. */
export function loggedInHint(realmUrl: string, email: string) {
  return markup`<p>You can now log in as <strong>${email}</strong> with your password.</p>
    <p>
      In Zulip's mobile, desktop or terminal app, add the organization <code>${realmUrl}</code> and
      log in with your e-mail address and password. In a browser, go to
      <a href="${realmUrl}">${realmUrl}</a>.
    </p>`;
}
