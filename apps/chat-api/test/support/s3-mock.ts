import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** An object the mock holds. */
export interface MockObject {
  body: Buffer;
  contentType: string;
}

/** A running mock of an S3-compatible store (path-style: `/{bucket}/{key}`). */
export interface S3Mock {
  url: string;
  /** Objects by `bucket/key`. */
  objects: Map<string, MockObject>;
  /** Every request, as `METHOD /path`. */
  requests: string[];
  close(): Promise<void>;
}

const xmlError = (code: string, message: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;

/**
 * The S3 boundary as a real local HTTP server (we do not own S3): PUT, GET,
 * HEAD and DELETE of objects in path-style URLs, each request required to be
 * signed with AWS Signature Version 4 (its Authorization header's form; the
 * signature itself is S3's to check). Enough for chat-api's upload store.
 */
export async function startS3Mock(): Promise<S3Mock> {
  const objects = new Map<string, MockObject>();
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const key = decodeURIComponent((req.url ?? "/").split("?")[0]?.slice(1) ?? "");
    requests.push(`${req.method ?? ""} /${key}`);
    const refuse = (status: number, code: string, message: string): void => {
      res.writeHead(status, { "content-type": "application/xml" }).end(xmlError(code, message));
    };
    if (
      !/^AWS4-HMAC-SHA256 Credential=\S+, SignedHeaders=\S+, Signature=[0-9a-f]{64}$/.test(
        req.headers.authorization ?? "",
      )
    ) {
      req.resume();
      refuse(403, "AccessDenied", "Access Denied");
      return;
    }
    if (req.method === "PUT") {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        if (req.headers["content-length"] !== String(body.length)) {
          refuse(400, "IncompleteBody", "The body does not match its Content-Length");
          return;
        }
        objects.set(key, {
          body,
          contentType: req.headers["content-type"] ?? "binary/octet-stream",
        });
        res.writeHead(200, { etag: '"mock"' }).end();
      });
      return;
    }
    req.resume();
    const object = objects.get(key);
    if (req.method === "DELETE") {
      objects.delete(key);
      res.writeHead(204).end();
      return;
    }
    if (req.method === "GET" || req.method === "HEAD") {
      if (object === undefined) {
        refuse(404, "NoSuchKey", "The specified key does not exist.");
        return;
      }
      res.writeHead(200, {
        "content-type": object.contentType,
        "content-length": String(object.body.length),
      });
      res.end(req.method === "GET" ? object.body : undefined);
      return;
    }
    refuse(405, "MethodNotAllowed", "The specified method is not allowed");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}`,
    objects,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
