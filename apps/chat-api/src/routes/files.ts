import { pipeline } from "node:stream/promises";
import { Router, type Response } from "express";
import { fileHeaders, fileOfToken, lookupFile, viewerOf } from "../actions/uploads";
import { customEmojiFile } from "../actions/custom-emoji";
import { authenticate } from "../caches/auth";
import { decodeSegment } from "../http/typed-endpoint";
import { exchangeOf } from "../http/exchange";
import type { Services } from "../http/context";

/** Zulip's answers when there is no such file, or it is not the viewer's to see (HTML, as Zulip's). */
const REFUSALS = {
  403: "<p>You are not authorized to view this file.</p>",
  404: "<p>File not found.</p>",
} as const;

function refuse(res: Response, status: 403 | 404): void {
  res.status(status).type("html").send(REFUSALS[status]);
}

/**
 * Uploaded files, served at their URLs outside `/api/v1` (they are files,
 * not API answers, so they are not rows of the URL table):
 *
 * - `GET /user_uploads/{path_id}`, with the viewer's API key (HTTP Basic), to
 *   those who may see the file (`actions/uploads.ts`);
 * - `GET /user_uploads/temporary/{token}/{filename}`, without authentication,
 *   for the minute a temporary URL lasts;
 * - `GET /user_avatars/{realm_id}/emoji/images/{file}`, custom emoji images,
 *   without authentication.
 *
 * The file streams from the store to the client (never whole in memory);
 * HEAD answers the headers.
 */
export function fileRoutes(services: Services): Router {
  const { db, uploads, realms, auth, rateLimiter } = services;
  const router = Router();

  const send = async (
    res: Response,
    file: { path_id: string; content_type: string },
    headersOf: typeof fileHeaders = fileHeaders,
  ): Promise<void> => {
    const stored = await uploads.open(file.path_id);
    if (stored === undefined) {
      refuse(res, 404);
      return;
    }
    // setHeaders, not res.set: Express would add a charset to the stored type.
    res.status(200).setHeaders(new Map(Object.entries(headersOf(file, stored))));
    if (res.req.method === "HEAD") {
      stored.body.destroy();
      res.end();
      return;
    }
    try {
      await pipeline(stored.body, res);
    } catch {
      // The client went away, or the store failed mid-file: the connection is cut.
      res.destroy();
    }
  };

  router.get("/user_uploads/temporary/:token/:filename", async (req, res) => {
    exchangeOf(res).route = "/user_uploads/temporary/{token}/{filename}";
    res.set(await rateLimiter.consume("ip", req.ip ?? ""));
    const context = await realms.fromHost(req.headers.host);
    const file =
      context.realm === undefined
        ? undefined
        : await fileOfToken(db, context.realm.id, req.params.token, req.params.filename);
    if (file === undefined) refuse(res, 404);
    else await send(res, file);
  });

  // Custom emoji images: public (clients show them without credentials), and
  // immutable (a new image is a new path).
  router.get(
    /^\/user_avatars\/(\d+\/emoji\/images\/[0-9a-f]+\.(?:png|gif|jpg|webp))$/,
    async (req, res) => {
      exchangeOf(res).route = "/user_avatars/{realm_id}/emoji/images/{file}";
      res.set(await rateLimiter.consume("ip", req.ip ?? ""));
      const emoji = await customEmojiFile(db, (req.params as Record<string, string>)[0] ?? "");
      if (emoji === undefined) refuse(res, 404);
      else
        await send(res, emoji, (file, stored) => ({
          "Content-Type": file.content_type,
          "Content-Length": String(stored.size),
          "Cache-Control": "public, max-age=31536000, immutable",
        }));
    },
  );

  router.get(/^\/user_uploads\/(\d+\/.+)$/, async (req, res) => {
    exchangeOf(res).route = "/user_uploads/{path_id}";
    const context = await realms.fromHost(req.headers.host);
    let user;
    try {
      user = await authenticate(req.headers.authorization, context, auth);
    } catch (error) {
      res.set(await rateLimiter.consume("ip", req.ip ?? ""));
      throw error;
    }
    res.set(await rateLimiter.consume("user", String(user.id)));
    const pathId = decodeSegment((req.params as Record<string, string>)[0] ?? "");
    const found = pathId === undefined ? undefined : await lookupFile(db, viewerOf(user), pathId);
    if (found === undefined || found.status !== 200) refuse(res, found?.status ?? 404);
    else await send(res, found.file);
  });

  return router;
}
