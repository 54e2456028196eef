import { setTimeout as sleep } from "node:timers/promises";
import { readdir } from "node:fs/promises";
import { connect } from "node:net";
import path from "node:path";
import { request } from "undici";
import {
  type Cast,
  type TestServer,
  ROOT_HOST,
  apiError,
  loadCast,
  startTestServer,
} from "./support/server";
import { type S3Mock, startS3Mock } from "./support/s3-mock";
import { zulipResponseSchema } from "./support/zulip-schema";
import { BOUNDARY, type Part, multipart } from "./support/multipart";

/**
 * Uploads: POST /user_uploads receives one file into the store (a directory,
 * or an S3-compatible bucket), within its size limit and the user's quota;
 * the file is served at its URL only to those who may see it (its uploader,
 * the readers of a message that links it), and through a temporary URL for a
 * minute; GET and DELETE /attachments list and remove one's own files.
 */
const validate = {
  upload: zulipResponseSchema("session", "/user_uploads", "post"),
  temporary: zulipResponseSchema("session", "/user_uploads/{realm_id_str}/{filename}", "get"),
};

const file = (filename: string, data: string | Buffer, type = "text/plain"): Part => ({
  name: "file",
  filename,
  type,
  data,
});

let server: TestServer;
let cast: Cast;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["hamlet", "othello", "cordelia", "polonius", "iago"]);
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);

/** The Authorization header of `who` of `c`. */
const basic = (who: string, c: Cast = cast): string => {
  const { email, apiKey } = c.person(who);
  return `Basic ${Buffer.from(`${email}:${apiKey}`).toString("base64")}`;
};

async function upload(s: TestServer, who: string, parts: readonly Part[], c: Cast = cast) {
  const { body, headers } = multipart(parts);
  return s.call("POST", "/api/v1/user_uploads", { ...c.as(who), body, headers });
}

/** GET of a file URL (outside /api/v1) as `who`, or without authentication. */
const fetchFile = (url: string, who?: string) =>
  request(`${server.url}${url}`, {
    headers: {
      host: ROOT_HOST,
      ...(who === undefined
        ? {}
        : {
            authorization: basic(who),
          }),
    },
  }).then(async (r) => ({ status: r.statusCode, headers: r.headers, text: await r.body.text() }));

const send = (who: string, form: Record<string, string>) =>
  server.call("POST", "/api/v1/messages", { ...as(who), form });

const incoming = (s: TestServer) =>
  readdir(path.join(s.services.config.CHAT_DATA_DIR, "uploads", ".incoming")).catch(() => []);

describe("POST /api/v1/user_uploads", () => {
  it("stores the file and answers its URL as Zulip does; the uploader gets the same bytes back", async () => {
    const reply = await upload(server, "hamlet", [
      file("notes from Elsinore.txt", "To be, or not to be"),
    ]);
    expect(reply.status).toBe(200);
    expect(validate.upload(reply.body)).toEqual([]);
    const realmId = (await server.db.prisma.realm.findFirstOrThrow({ where: { subdomain: "" } }))
      .id;
    expect(reply.body.url).toMatch(
      new RegExp(`^/user_uploads/${realmId}/[0-9a-f]{2}/[\\w-]{24}/notes-from-Elsinore\\.txt$`),
    );
    expect(reply.body.uri).toBe(reply.body.url);
    expect(reply.body.filename).toBe("notes from Elsinore.txt");

    const served = await fetchFile(String(reply.body.url), "hamlet");
    expect(served.status).toBe(200);
    expect(served.text).toBe("To be, or not to be");
    expect(served.headers["content-type"]).toBe("text/plain");
    expect(served.headers["content-length"]).toBe("19");
    expect(served.headers["content-disposition"]).toBe(
      "inline; filename*=UTF-8''notes-from-Elsinore.txt",
    );
    expect(served.headers["x-content-type-options"]).toBe("nosniff");
    expect(await incoming(server)).toEqual([]);
  });

  it("serves a type a browser would run (HTML) as a download, never in place", async () => {
    const reply = await upload(server, "hamlet", [
      file("page.html", "<script>alert(1)</script>", "text/html"),
    ]);
    const served = await fetchFile(String(reply.body.url), "hamlet");
    expect(served.status).toBe(200);
    expect(served.headers["content-type"]).toBe("application/octet-stream");
    expect(served.headers["content-disposition"]).toBe("attachment; filename*=UTF-8''page.html");
  });

  it("keeps binary content byte for byte, and answers HEAD with the headers only", async () => {
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 256));
    const reply = await upload(server, "hamlet", [file("noise.png", bytes, "image/png")]);
    expect(reply.status).toBe(200);
    const got = await request(`${server.url}${String(reply.body.url)}`, {
      headers: {
        host: ROOT_HOST,
        authorization: basic("hamlet"),
      },
    });
    expect(Buffer.from(await got.body.arrayBuffer()).equals(bytes)).toBe(true);
    const head = await request(`${server.url}${String(reply.body.url)}`, {
      method: "HEAD",
      headers: {
        host: ROOT_HOST,
        authorization: basic("hamlet"),
      },
    });
    expect(head.statusCode).toBe(200);
    expect(head.headers["content-length"]).toBe("70000");
    expect(await head.body.text()).toBe("");
  });

  it("refuses a body without a file, with two files, and a request without a key; nothing is stored", async () => {
    const before = await server.db.prisma.attachment.count();
    const none = await upload(server, "hamlet", [{ name: "note", data: "no file" }]);
    expect(none.status).toBe(400);
    expect(none.body).toEqual(apiError("You must specify a file to upload"));
    const urlencoded = await server.call("POST", "/api/v1/user_uploads", {
      ...as("hamlet"),
      form: { file: "text" },
    });
    expect(urlencoded.body).toEqual(apiError("You must specify a file to upload"));
    const two = await upload(server, "hamlet", [file("a.txt", "a"), file("b.txt", "b")]);
    expect(two.status).toBe(400);
    expect(two.body).toEqual(apiError("You may only upload one file at a time"));
    const { body, headers } = multipart([file("a.txt", "a")]);
    const anonymous = await server.call("POST", "/api/v1/user_uploads", { body, headers });
    expect(anonymous.status).toBe(401);
    const malformed = await server.call("POST", "/api/v1/user_uploads", {
      ...as("hamlet"),
      body: "--nothing",
      headers: { "content-type": "multipart/form-data" },
    });
    expect(malformed.status).toBe(400);
    expect(await server.db.prisma.attachment.count()).toBe(before);
    expect(await incoming(server)).toEqual([]);
  });

  it("reports its size limit in register", async () => {
    const reply = await server.call("POST", "/api/v1/register", {
      ...as("hamlet"),
      form: { fetch_event_types: JSON.stringify(["realm"]) },
    });
    expect(reply.body.max_file_upload_size_mib).toBe(25);
  });
});

describe("who may fetch a file", () => {
  it("only its uploader, until a message links it; then that message's readers", async () => {
    const uploaded = await upload(server, "hamlet", [file("private.txt", "for Othello")]);
    const url = String(uploaded.body.url);
    expect((await fetchFile(url, "othello")).status).toBe(403);
    expect((await fetchFile(url, "othello")).text).toBe(
      "<p>You are not authorized to view this file.</p>",
    );
    const sent = await send("hamlet", {
      type: "direct",
      to: JSON.stringify([cast.id("othello")]),
      content: `[private.txt](${url})`,
    });
    expect(sent.status).toBe(200);
    expect((await fetchFile(url, "othello")).text).toBe("for Othello");
    expect((await fetchFile(url, "cordelia")).status).toBe(403);
    expect((await fetchFile(url)).status).toBe(401);
    // Another user cannot claim it for their own message.
    const claim = await send("cordelia", {
      type: "direct",
      to: JSON.stringify([cast.id("iago")]),
      content: `see ${url}`,
    });
    expect(claim.status).toBe(200);
    expect((await fetchFile(url, "iago")).status).toBe(403);
  });

  it("in a public channel, every member but guests who did not get the message", async () => {
    const uploaded = await upload(server, "hamlet", [file("minutes.txt", "the minutes")]);
    const url = String(uploaded.body.url);
    const created = await server.call("POST", "/api/v1/users/me/subscriptions", {
      ...as("hamlet"),
      form: { subscriptions: JSON.stringify([{ name: "Elsinore" }]) },
    });
    expect(created.status).toBe(200);
    const sent = await send("hamlet", {
      type: "stream",
      to: "Elsinore",
      topic: "minutes",
      content: `Here: ${server.url.replace("127.0.0.1", "chat.test")}${url}.`,
    });
    expect(sent.status).toBe(200);
    // Othello, Cordelia and Iago are not in Elsinore either, but may read a public channel.
    for (const who of ["othello", "cordelia", "iago"])
      expect((await fetchFile(url, who)).status).toBe(200);
    // Polonius, a guest, did not get the message (he is not in Elsinore).
    const polonius = await server.db.prisma.userMessage.count({
      where: { user_id: cast.id("polonius"), message_id: Number(sent.body.id) },
    });
    expect(polonius).toBe(0);
    expect((await fetchFile(url, "polonius")).status).toBe(403);
  });

  it("an edit that removes the link takes the file back from its readers", async () => {
    const uploaded = await upload(server, "hamlet", [file("draft.txt", "draft")]);
    const url = String(uploaded.body.url);
    const sent = await send("hamlet", {
      type: "direct",
      to: JSON.stringify([cast.id("cordelia")]),
      content: url,
    });
    expect((await fetchFile(url, "cordelia")).status).toBe(200);
    const narrowed = await server.call("GET", "/api/v1/messages", {
      ...as("cordelia"),
      query: {
        anchor: "newest",
        num_before: 5,
        num_after: 0,
        narrow: [{ operator: "has", operand: "attachment" }],
      },
    });
    expect((narrowed.body.messages as { id: number }[]).map((m) => m.id)).toContain(sent.body.id);
    const edit = await server.call("PATCH", `/api/v1/messages/${String(sent.body.id)}`, {
      ...as("hamlet"),
      form: { content: "never mind" },
    });
    expect(edit.status).toBe(200);
    expect((await fetchFile(url, "cordelia")).status).toBe(403);
    expect((await fetchFile(url, "hamlet")).status).toBe(200);
  });

  it("a path of no file is 404; another realm's path is 404", async () => {
    expect((await fetchFile("/user_uploads/1/ab/nothing-here/x.txt", "hamlet")).status).toBe(404);
    expect((await fetchFile("/user_uploads/999/ab/cd/x.txt", "hamlet")).text).toBe(
      "<p>File not found.</p>",
    );
  });
});

describe("GET /api/v1/user_uploads/{realm_id_str}/{filename}: temporary URLs", () => {
  it("answers a URL that serves the file without authentication for a minute", async () => {
    const uploaded = await upload(server, "hamlet", [file("temp.txt", "brief")]);
    const url = String(uploaded.body.url);
    const reply = await server.call("GET", `/api/v1${url}`, as("hamlet"));
    expect(reply.status).toBe(200);
    expect(validate.temporary(reply.body)).toEqual([]);
    const temporary = String(reply.body.url);
    expect(temporary).toMatch(/^\/user_uploads\/temporary\/[\w.-]+\/temp\.txt$/);
    const served = await fetchFile(temporary);
    expect(served.status).toBe(200);
    expect(served.text).toBe("brief");

    const token = temporary.split("/")[3] ?? "";
    const forged = `${token.slice(0, -2)}${token.endsWith("AA") ? "BB" : "AA"}`;
    expect((await fetchFile(temporary.replace(token, forged))).status).toBe(404);
    expect((await fetchFile(temporary.replace("temp.txt", "other.txt"))).status).toBe(404);

    const now = Date.now();
    const later = jest.spyOn(Date, "now").mockReturnValue(now + 61_000);
    try {
      expect((await fetchFile(temporary)).status).toBe(404);
    } finally {
      later.mockRestore();
    }
  });

  it("is refused for a file the caller may not see", async () => {
    const uploaded = await upload(server, "hamlet", [file("mine.txt", "mine")]);
    const reply = await server.call("GET", `/api/v1${String(uploaded.body.url)}`, as("othello"));
    expect(reply.status).toBe(403);
    expect(reply.body).toEqual(apiError("You are not authorized to view this file."));
    const missing = await server.call(
      "GET",
      "/api/v1/user_uploads/1/zz/none/none.txt",
      as("othello"),
    );
    expect(missing.status).toBe(404);
  });
});

describe("GET and DELETE /api/v1/attachments", () => {
  it("lists one's files with the messages that link them, and removes one", async () => {
    const uploaded = await upload(server, "othello", [file("list.txt", "listed")]);
    const url = String(uploaded.body.url);
    const sent = await send("othello", {
      type: "direct",
      to: JSON.stringify([cast.id("hamlet")]),
      content: url,
    });
    const listed = await server.call("GET", "/api/v1/attachments", as("othello"));
    expect(listed.status).toBe(200);
    const attachments = listed.body.attachments as {
      id: number;
      name: string;
      path_id: string;
      size: number;
      messages: { id: number }[];
    }[];
    const entry = attachments.find((a) => `/user_uploads/${a.path_id}` === url);
    expect(entry).toMatchObject({ name: "list.txt", size: 6, messages: [{ id: sent.body.id }] });
    expect(listed.body.upload_space_used).toBe(attachments.reduce((t, a) => t + a.size, 0));

    const theirs = await server.call(
      "DELETE",
      `/api/v1/attachments/${String(entry?.id)}`,
      as("hamlet"),
    );
    expect(theirs.body).toEqual(apiError("Invalid attachment"));
    const removed = await server.call(
      "DELETE",
      `/api/v1/attachments/${String(entry?.id)}`,
      as("othello"),
    );
    expect(removed.status).toBe(200);
    expect((await fetchFile(url, "othello")).status).toBe(404);
    expect((await fetchFile(url, "hamlet")).status).toBe(404);
  });
});

describe("limits", () => {
  let small: TestServer;
  let smallCast: Cast;

  beforeAll(async () => {
    small = await startTestServer({
      env: {
        CHAT_MAX_UPLOAD_MIB: "1",
        CHAT_UPLOAD_QUOTA_MIB_PER_USER: "2",
        CHAT_MAX_OBJECTS_PER_USER: "3",
      },
    });
    smallCast = await loadCast(small, ["hamlet", "othello"]);
  });

  afterAll(() => small.close());

  it("refuses a file past the size limit, while it streams in; nothing is kept", async () => {
    const big = await upload(
      small,
      "hamlet",
      [file("big.bin", Buffer.alloc(1024 * 1024 + 1))],
      smallCast,
    );
    expect(big.status).toBe(400);
    expect(big.body).toEqual(apiError("Uploaded file is larger than the allowed limit of 1 MiB"));
    expect(await small.db.prisma.attachment.count()).toBe(0);
    expect(await incoming(small)).toEqual([]);
    const exact = await upload(
      small,
      "hamlet",
      [file("exact.bin", Buffer.alloc(1024 * 1024))],
      smallCast,
    );
    expect(exact.status).toBe(200);
  });

  it("refuses a body whose declared length is past the limit before reading it", async () => {
    const head = [
      "POST /api/v1/user_uploads HTTP/1.1",
      `Host: ${ROOT_HOST}`,
      `Authorization: ${basic("hamlet", smallCast)}`,
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}`,
      `Content-Length: ${String(50 * 1024 * 1024)}`,
      "",
      "",
    ].join("\r\n");
    // Sends the head and 10 bytes of a 50 MiB body, then waits for the answer.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(small.port, "127.0.0.1", () => {
        socket.write(head + "0123456789");
      });
      let text = "";
      socket.on("data", (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes("\r\n\r\n{")) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on("error", reject);
      socket.on("close", () => resolve(text));
    });
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request");
    expect(answer).toContain('"msg":"Uploaded file is larger than the allowed limit of 1 MiB"');
  });

  it("removes the partial file of a client that goes away mid-upload", async () => {
    const { body } = multipart([file("cut.bin", Buffer.alloc(600 * 1024))]);
    const socket = connect(small.port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    socket.write(
      [
        "POST /api/v1/user_uploads HTTP/1.1",
        `Host: ${ROOT_HOST}`,
        `Authorization: ${basic("hamlet", smallCast)}`,
        `Content-Type: multipart/form-data; boundary=${BOUNDARY}`,
        `Content-Length: ${String(body.length)}`,
        "",
        "",
      ].join("\r\n"),
    );
    socket.write(body.subarray(0, 300 * 1024));
    // The partial file appears, then goes with the connection.
    const seen = async (want: (names: string[]) => boolean): Promise<boolean> => {
      for (let i = 0; i < 200; i += 1) {
        if (want(await incoming(small))) return true;
        await sleep(10);
      }
      return false;
    };
    expect(await seen((names) => names.length === 1)).toBe(true);
    socket.destroy();
    expect(await seen((names) => names.length === 0)).toBe(true);
    expect(await small.db.prisma.attachment.count({ where: { file_name: "cut.bin" } })).toBe(0);
  });

  it("keeps each user within their quota of bytes and of files", async () => {
    const one = await upload(
      small,
      "othello",
      [file("1.bin", Buffer.alloc(900 * 1024))],
      smallCast,
    );
    const two = await upload(
      small,
      "othello",
      [file("2.bin", Buffer.alloc(900 * 1024))],
      smallCast,
    );
    const three = await upload(
      small,
      "othello",
      [file("3.bin", Buffer.alloc(900 * 1024))],
      smallCast,
    );
    expect([one.status, two.status, three.status]).toEqual([200, 200, 400]);
    expect(three.body).toEqual(apiError("Upload would exceed your maximum quota."));
    const four = await upload(small, "othello", [file("4.txt", "x")], smallCast);
    expect(four.status).toBe(200);
    const five = await upload(small, "othello", [file("5.txt", "x")], smallCast);
    expect(five.body).toEqual(apiError("You have too many uploaded files (limit: 3)."));
    expect(
      await small.db.prisma.attachment.count({ where: { owner_id: smallCast.id("othello") } }),
    ).toBe(3);
  });
});

describe("an S3-compatible store", () => {
  let s3: S3Mock;
  let bucketed: TestServer;
  let bucketCast: Cast;

  beforeAll(async () => {
    s3 = await startS3Mock();
    bucketed = await startTestServer({
      env: {
        CHAT_S3_BUCKET: "chat-uploads",
        CHAT_S3_ENDPOINT: s3.url,
        CHAT_S3_ACCESS_KEY_ID: "test-key",
        CHAT_S3_SECRET_ACCESS_KEY: "test-secret",
      },
    });
    bucketCast = await loadCast(bucketed, ["hamlet"]);
  });

  afterAll(async () => {
    await bucketed.close();
    await s3.close();
  });

  it("keeps files in the bucket, serves them from it, and removes them from it", async () => {
    const reply = await upload(bucketed, "hamlet", [file("s3.txt", "in a bucket")], bucketCast);
    expect(reply.status).toBe(200);
    const pathId = String(reply.body.url).replace("/user_uploads/", "");
    expect(s3.objects.get(`chat-uploads/${pathId}`)).toEqual({
      body: Buffer.from("in a bucket"),
      contentType: "text/plain",
    });
    const served = await request(`${bucketed.url}${String(reply.body.url)}`, {
      headers: {
        host: ROOT_HOST,
        authorization: basic("hamlet", bucketCast),
      },
    });
    expect(served.statusCode).toBe(200);
    expect(await served.body.text()).toBe("in a bucket");
    const [attachment] = (
      await bucketed.call("GET", "/api/v1/attachments", bucketCast.as("hamlet"))
    ).body.attachments as { id: number }[];
    const removed = await bucketed.call(
      "DELETE",
      `/api/v1/attachments/${String(attachment?.id)}`,
      bucketCast.as("hamlet"),
    );
    expect(removed.status).toBe(200);
    expect(s3.objects.has(`chat-uploads/${pathId}`)).toBe(false);
    expect(s3.requests).toContain(`DELETE /chat-uploads/${pathId}`);
  });
});
