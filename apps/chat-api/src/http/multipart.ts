import busboy from "busboy";
import type { IncomingMessage } from "node:http";
import type { Request, RequestHandler } from "express";
import { JsonableError } from "@repo/envelope";

/** Fields one multipart body may carry (as `parameterLimit` for urlencoded bodies). */
export const MAX_FORM_FIELDS = 1000;

/**
 * busboy over `req`'s body with `limits`, at most {@link MAX_FORM_FIELDS}
 * fields and parts, and header parameters (a file's name) read as UTF-8, as
 * browsers send them (RFC 7578; busboy's default is Latin-1). Throws for a
 * body it cannot read (no boundary).
 */
export function multipartParser(
  req: Pick<IncomingMessage, "headers">,
  limits: busboy.Limits,
): busboy.Busboy {
  return busboy({
    headers: req.headers,
    defParamCharset: "utf8",
    limits: { fields: MAX_FORM_FIELDS, parts: MAX_FORM_FIELDS, ...limits },
  });
}

/**
 * Reads a `multipart/form-data` body into `req.body` as flat fields, last value
 * wins (as urlencoded bodies, and Django's QueryDict): a name such as `a[5]` is
 * just that name, never an index into a structure. Bounded by `maxBytes` for
 * the whole body (413 at once when Content-Length says more, or as soon as more
 * arrives), and by {@link MAX_FORM_FIELDS} fields. Files are refused (no
 * operation here takes one). An empty body (Content-Length 0, as zulip-js sends
 * a POST without parameters) is no fields. Bodies of upload operations
 * (`isUpload`) are left to the operation, which reads them after authentication.
 */
export function multipartForms(
  maxBytes: number,
  isUpload: (req: Request) => boolean,
): RequestHandler {
  const tooLarge = () => new JsonableError("Request body too large", "BAD_REQUEST", 413);
  return (req, _res, next) => {
    if (req.is("multipart/form-data") !== "multipart/form-data" || isUpload(req)) {
      next();
      return;
    }
    const declared = Number(req.headers["content-length"]);
    if (declared > maxBytes) {
      next(tooLarge());
      return;
    }
    if (declared === 0) {
      req.body = {};
      next();
      return;
    }
    const fields: Record<string, string> = Object.create(null) as Record<string, string>;
    let done = false;
    const finish = (error?: JsonableError): void => {
      if (done) return;
      done = true;
      req.off("data", count);
      if (error !== undefined) {
        req.unpipe(parser);
        parser.removeAllListeners();
        parser.on("error", () => undefined);
        // The rest of the body is not read: the connection closes after the answer.
        req.pause();
        next(error);
        return;
      }
      req.body = fields;
      next();
    };
    let parser: busboy.Busboy;
    try {
      parser = multipartParser(req, { fieldSize: maxBytes, files: 0 });
    } catch {
      // No boundary, or one busboy cannot read.
      next(new JsonableError("Malformed multipart body"));
      return;
    }
    let received = 0;
    const count = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > maxBytes) finish(tooLarge());
    };
    parser.on("field", (name, value, info) => {
      if (info.nameTruncated || info.valueTruncated) finish(tooLarge());
      else fields[name] = value;
    });
    parser.on("file", (_name, stream) => {
      stream.resume();
      finish(new JsonableError("Files are not accepted here"));
    });
    parser.on("filesLimit", () => finish(new JsonableError("Files are not accepted here")));
    const tooMany = () =>
      finish(new JsonableError(`Too many fields (limit: ${String(MAX_FORM_FIELDS)})`));
    parser.on("fieldsLimit", tooMany);
    parser.on("partsLimit", tooMany);
    parser.on("error", () => finish(new JsonableError("Malformed multipart body")));
    parser.on("close", () => finish());
    req.on("data", count);
    req.pipe(parser);
  };
}
