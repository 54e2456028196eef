import { randomUuid } from "../lib/random-key";
import { once } from "node:events";
import { type WriteStream, createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import busboy from "busboy";
import type { IncomingMessage } from "node:http";
import typeis from "type-is";
import { JsonableError } from "@repo/envelope";
import { MAX_FORM_FIELDS, multipartParser } from "./multipart";
import { type ReceivedFile, removeFile } from "../lib/upload-store";

export type { ReceivedFile };

/** A request body with at most one file: its form fields and the file. */
export interface UploadBody {
  fields: Record<string, string>;
  file: ReceivedFile | undefined;
}

/** Limits of one upload body. */
export interface UploadLimits {
  /** Largest file, in bytes. */
  fileBytes: number;
  /** Largest total of the other fields, in bytes. */
  fieldBytes: number;
  /** Where the file is written while it arrives. */
  directory: string;
  /** The answer to a file past `fileBytes` (by default {@link tooLargeError}). */
  overLimit?: () => JsonableError;
}

const mib = (bytes: number): string => String(Math.floor(bytes / (1024 * 1024)));

/** Zulip's answer to a file over the limit. */
export const tooLargeError = (fileBytes: number): JsonableError =>
  new JsonableError(`Uploaded file is larger than the allowed limit of ${mib(fileBytes)} MiB`);

/**
 * Reads a `multipart/form-data` body holding one file (POST /user_uploads),
 * writing the file to a temporary file as it arrives, so that memory holds at
 * most a chunk of it. Refused, with the temporary file removed: no file
 * (`You must specify a file to upload`), a second one (`You may only upload
 * one file at a time`), a file past `fileBytes` (as soon as the body's
 * Content-Length or its bytes say so), a malformed body, a client that goes
 * away. The rest of a refused body is not read: the connection closes after
 * the answer.
 */
export async function receiveUpload(
  req: IncomingMessage,
  limits: UploadLimits,
): Promise<UploadBody> {
  if (typeis(req, ["multipart/form-data"]) !== "multipart/form-data")
    throw new JsonableError("You must specify a file to upload");
  // A body may exceed its file by the multipart framing and the fields.
  const bodyLimit = limits.fileBytes + limits.fieldBytes + 64 * 1024;
  const overLimit = limits.overLimit ?? (() => tooLargeError(limits.fileBytes));
  if (Number(req.headers["content-length"]) > bodyLimit) throw overLimit();
  await mkdir(limits.directory, { recursive: true });

  let parser: busboy.Busboy;
  try {
    parser = multipartParser(req, {
      // busboy signals a file that reaches its limit: one byte more tells "past it".
      fileSize: limits.fileBytes + 1,
      fieldSize: limits.fieldBytes,
      files: 1,
    });
  } catch {
    throw new JsonableError("Malformed multipart body");
  }

  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  let file: ReceivedFile | undefined;
  let writing: Promise<void> | undefined;
  let incoming: Readable | undefined;
  let sink: WriteStream | undefined;
  let fieldBytes = 0;

  return new Promise<UploadBody>((resolve, reject) => {
    let settled = false;
    const fail = (error: JsonableError): void => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      parser.removeAllListeners();
      parser.on("error", () => undefined);
      req.pause();
      // Ends the file's streams (a pipeline does not always settle when its
      // source is destroyed mid-part), then removes what was written.
      incoming?.destroy();
      const closed = sink === undefined || sink.closed ? Promise.resolve() : once(sink, "close");
      sink?.destroy();
      const written = file?.tempPath;
      void closed
        .catch(() => undefined)
        .then(() => (written === undefined ? undefined : removeFile(written)))
        .finally(() => {
          reject(error);
        });
    };
    parser.on("field", (name, value, info) => {
      fieldBytes += name.length + value.length;
      if (info.nameTruncated || info.valueTruncated || fieldBytes > limits.fieldBytes)
        fail(new JsonableError("Request body too large", "BAD_REQUEST", 413));
      else fields[name] = value;
    });
    parser.on("file", (_name, stream, info) => {
      const tempPath = path.join(limits.directory, randomUuid());
      const received: ReceivedFile = {
        tempPath,
        name: info.filename ?? "",
        contentType: info.mimeType,
        size: 0,
      };
      file = received;
      incoming = stream;
      stream.on("data", (chunk: Buffer) => {
        received.size += chunk.length;
      });
      stream.on("limit", () => {
        fail(overLimit());
      });
      sink = createWriteStream(tempPath);
      writing = pipeline(stream, sink);
      writing.catch(() => {
        fail(new JsonableError("The upload could not be received"));
      });
    });
    parser.on("filesLimit", () => {
      fail(new JsonableError("You may only upload one file at a time"));
    });
    const tooMany = () => {
      fail(new JsonableError(`Too many fields (limit: ${String(MAX_FORM_FIELDS)})`));
    };
    parser.on("fieldsLimit", tooMany);
    parser.on("partsLimit", tooMany);
    parser.on("error", () => {
      fail(new JsonableError("Malformed multipart body"));
    });
    parser.on("close", () => {
      void (writing ?? Promise.resolve()).then(
        () => {
          if (settled) return;
          if (file === undefined) {
            fail(new JsonableError("You must specify a file to upload"));
            return;
          }
          settled = true;
          resolve({ fields, file });
        },
        () => undefined,
      );
    });
    req.once("close", () => {
      if (!req.complete) fail(new JsonableError("The upload was interrupted"));
    });
    req.pipe(parser);
  });
}
