import { Router, type Request, type Response } from "express";
import { EMOJI_DATA_PATH, emojiDataFile } from "../lib/emoji";
import { exchangeOf } from "../http/exchange";

/**
 * Files every client may fetch without logging in, outside `/api/v1` (they
 * are files, not API answers): Zulip's emoji data file (`{"code_to_names":
 * {...}}`) at its versioned URL, cached for a year as immutable, and at its
 * plain URL, revalidated with its ETag.
 */
export function staticRoutes(): Router {
  const router = Router();
  const sendEmojiData = (req: Request, res: Response, immutable: boolean) => {
    const file = emojiDataFile();
    const etag = `"${file.hash}"`;
    res.setHeader(
      "Cache-Control",
      immutable ? "public, max-age=31536000, immutable" : "public, no-cache",
    );
    res.setHeader("ETag", etag);
    if (req.headers["if-none-match"] === etag) {
      res.status(304).end();
      return;
    }
    res.status(200).type("application/json").send(file.json);
  };
  router.get(`${EMOJI_DATA_PATH}.json`, (req, res) => {
    exchangeOf(res).route = `${EMOJI_DATA_PATH}.json`;
    sendEmojiData(req, res, false);
  });
  router.get(/^\/static\/generated\/emoji\/emoji_api\.([0-9a-f]{12})\.json$/, (req, res, next) => {
    exchangeOf(res).route = `${EMOJI_DATA_PATH}.{hash}.json`;
    // Another version's URL (an old client's) is not this file: 404.
    if ((req.params as Record<string, string>)[0] !== emojiDataFile().hash) next();
    else sendEmojiData(req, res, true);
  });
  return router;
}
