import { deflateSync } from "node:zlib";
import { request } from "undici";
import { type Part, multipart } from "./support/multipart";
import {
  type Cast,
  type TestServer,
  apiError,
  ROOT_HOST,
  channelIds,
  listenAs,
  loadCast,
  startTestServer,
} from "./support/server";

/**
 * Custom emoji (issue 48): POST /realm/emoji/{name} with one image checked
 * by its bytes, GET /realm/emoji and register's `realm_emoji`, DELETE
 * (deactivation), `realm_emoji` events, the images served at `source_url`,
 * reactions and Markdown with them.
 */
let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["iago", "hamlet", "othello", "polonius"]);
  channels = await channelIds(server);
});

afterAll(() => server.close());

/** A real PNG of `width` x `height` (grey), made here. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4); // Readers check it; image headers alone are read here.
    return Buffer.concat([length, Buffer.from(type), data, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8); // bit depth
  header.writeUInt8(0, 9); // greyscale
  const rows = Buffer.alloc(Math.min(height, 64) * (Math.min(width, 64) + 1), 0x80);
  return Buffer.concat([
    Buffer.from("89504e470d0a1a0a", "hex"),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A GIF header of `width` x `height` with an empty image. */
const gif = (width: number, height: number): Buffer => {
  const screen = Buffer.alloc(7);
  screen.writeUInt16LE(width, 0);
  screen.writeUInt16LE(height, 2);
  return Buffer.concat([Buffer.from("GIF89a"), screen, Buffer.from([0x3b])]);
};

const image = (data: Buffer | string, filename = "emoji.png", type = "image/png"): Part => ({
  name: "file",
  filename,
  type,
  data,
});

async function upload(who: string, name: string, parts: readonly Part[]) {
  const { body, headers } = multipart(parts);
  return server.call("POST", `/api/v1/realm/emoji/${encodeURIComponent(name)}`, {
    ...cast.as(who),
    body,
    headers,
  });
}

const call = (who: string, method: string, path: string, form: Record<string, string> = {}) =>
  server.call(method, `/api/v1${path}`, { ...cast.as(who), form });

async function realmEmoji(who = "othello"): Promise<Record<string, Record<string, unknown>>> {
  const reply = await call(who, "GET", "/realm/emoji");
  expect(reply.status).toBe(200);
  return reply.body.emoji as Record<string, Record<string, unknown>>;
}

/** GET of a file URL (outside /api/v1), without logging in. */
const fetchFile = (url: string) =>
  request(`${server.url}${url}`, { headers: { host: ROOT_HOST } }).then(async (r) => ({
    status: r.statusCode,
    headers: r.headers,
    bytes: Buffer.from(await r.body.arrayBuffer()),
  }));

const live = async (name: string) =>
  Object.values(await realmEmoji()).find((e) => e.name === name && e.deactivated === false);

describe("POST /api/v1/realm/emoji/{emoji_name}", () => {
  it("adds an emoji: listed, in register, served, and told to the realm", async () => {
    const listen = await listenAs(server, cast.as("othello"), ["realm_emoji"]);
    const reply = await upload("hamlet", "party parrot", [image(png(32, 32))]);
    expect(reply.body).toEqual({ result: "success", msg: "" });
    const emoji = await live("party_parrot");
    expect(emoji).toEqual({
      id: expect.stringMatching(/^\d+$/) as string,
      name: "party_parrot",
      source_url: expect.stringMatching(
        /^\/user_avatars\/\d+\/emoji\/images\/[0-9a-f]+\.png$/,
      ) as string,
      still_url: null,
      deactivated: false,
      author_id: cast.id("hamlet"),
    });
    const [event] = await listen();
    expect(event).toMatchObject({ type: "realm_emoji", op: "update" });
    expect((event?.realm_emoji as Record<string, unknown>)[String(emoji?.id)]).toEqual(emoji);
    const state = await call("othello", "POST", "/register", {
      fetch_event_types: JSON.stringify(["realm_emoji"]),
    });
    expect(state.body.realm_emoji).toEqual(await realmEmoji());
    // The image, without logging in, as uploaded, cached for good.
    const served = await fetchFile(String(emoji?.source_url));
    expect([
      served.status,
      served.headers["content-type"],
      served.headers["cache-control"],
    ]).toEqual([200, "image/png", "public, max-age=31536000, immutable"]);
    expect(served.bytes.equals(png(32, 32))).toBe(true);
  });

  it("finds the format from the bytes, not the name or the claimed type", async () => {
    const reply = await upload("hamlet", "disguised_gif", [
      image(gif(16, 16), "sneaky.png", "image/png"),
    ]);
    expect(reply.body).toEqual({ result: "success", msg: "" });
    expect((await live("disguised_gif"))?.source_url).toMatch(/\.gif$/);
  });

  it.each([
    ["an SVG", Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>')],
    ["a script named .png", Buffer.from("<script>alert(1)</script>")],
    ["empty bytes", Buffer.alloc(0)],
  ])("refuses %s as Invalid image format, storing nothing", async (_what, data) => {
    const before = await server.db.prisma.customEmoji.count();
    expect((await upload("hamlet", "bad_image", [image(data)])).body).toEqual(
      apiError("Invalid image format"),
    );
    expect(await server.db.prisma.customEmoji.count()).toBe(before);
  });

  it("refuses huge dimensions from the header alone (a decompression bomb is never decoded)", async () => {
    for (const bomb of [png(100_000, 100_000), gif(65_535, 65_535), png(1025, 8)])
      expect((await upload("hamlet", "huge_image", [image(bomb)])).body).toEqual(
        apiError("Image size exceeds limit."),
      );
    expect(await live("huge_image")).toBeUndefined();
  });

  it("refuses a file over CHAT_MAX_EMOJI_MIB, and two files", async () => {
    const big = Buffer.concat([png(8, 8), Buffer.alloc(1024 * 1024)]);
    expect((await upload("hamlet", "big_file", [image(big)])).body).toEqual(
      apiError("Uploaded file is larger than the allowed limit of 1 MiB"),
    );
    expect(
      (await upload("hamlet", "two_files", [image(png(8, 8), "a.png"), image(png(8, 8), "b.png")]))
        .body,
    ).toEqual(apiError("You may only upload one file at a time"));
  });

  it.each([
    [
      "Emoji-Caps",
      "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.",
    ],
    ["trailing_", "Emoji names must end with either a letter or digit."],
    ["x".repeat(61), "Emoji name is too long (limit: 60 characters)."],
  ])("refuses the name %j: %s", async (name, msg) => {
    expect((await upload("hamlet", name, [image(png(8, 8))])).body).toEqual(apiError(msg));
  });

  it("follows Zulip's rules of who may add what", async () => {
    expect((await upload("polonius", "guest_emoji", [image(png(8, 8))])).body).toEqual(
      apiError("Insufficient permission"),
    );
    expect((await upload("othello", "party_parrot", [image(png(8, 8))])).body).toEqual(
      apiError("A custom emoji with this name already exists."),
    );
    expect((await upload("othello", "smile", [image(png(8, 8))])).body).toEqual(
      apiError("Only administrators can override default emoji."),
    );
    expect((await upload("iago", "octopus", [image(png(8, 8))])).status).toBe(200);
  });

  it("caps a realm's custom emoji", async () => {
    const held = await server.db.prisma.customEmoji.count();
    const realmId = (
      await server.db.prisma.user.findUniqueOrThrow({ where: { id: cast.id("iago") } })
    ).realm_id;
    await server.db.prisma.customEmoji.createMany({
      data: Array.from({ length: 2000 - held }, (_, i) => ({
        realm_id: realmId,
        name: `filler_${String(i)}`,
        path_id: `${String(realmId)}/emoji/images/filler${String(i)}.png`,
        content_type: "image/png",
        deactivated: true,
      })),
    });
    expect((await upload("iago", "one_too_many", [image(png(8, 8))])).body).toEqual(
      apiError("This organization has too many custom emoji (limit: 2000)."),
    );
    await server.db.prisma.customEmoji.deleteMany({ where: { name: { startsWith: "filler_" } } });
  });
});

describe("custom emoji in messages and reactions, and their deactivation", () => {
  it("renders, reacts, deactivates by author or admin, and old messages keep the image", async () => {
    await upload("hamlet", "shipit", [image(png(16, 16))]);
    const emoji = await live("shipit");
    const sent = await call("othello", "POST", "/messages", {
      type: "stream",
      to: String(channels.Denmark),
      topic: "custom emoji",
      content: "Ready :shipit:",
    });
    const messageId = sent.body.id as number;
    const img = `<img alt=":shipit:" class="emoji" src="${String(emoji?.source_url)}" title="shipit">`;
    const stored = await server.db.prisma.message.findUniqueOrThrow({ where: { id: messageId } });
    expect(stored.rendered_content).toBe(`<p>Ready ${img}</p>`);

    const react = (form: Record<string, string>) =>
      call("othello", "POST", `/messages/${String(messageId)}/reactions`, form);
    const listen = await listenAs(server, cast.as("hamlet"), ["reaction"]);
    expect((await react({ emoji_name: "shipit" })).status).toBe(200);
    expect(await listen()).toEqual([
      expect.objectContaining({
        emoji_name: "shipit",
        emoji_code: emoji?.id,
        reaction_type: "realm_emoji",
      }),
    ]);
    expect(
      (
        await react({
          emoji_name: "other",
          emoji_code: String(emoji?.id),
          reaction_type: "realm_emoji",
        })
      ).body,
    ).toEqual(apiError("Invalid custom emoji name."));
    expect(
      (await react({ emoji_name: "shipit", emoji_code: "999999", reaction_type: "realm_emoji" }))
        .body,
    ).toEqual(apiError("Invalid custom emoji."));

    expect((await call("othello", "DELETE", "/realm/emoji/shipit")).body).toEqual(
      apiError("Must be an organization administrator or emoji author"),
    );
    expect((await call("hamlet", "DELETE", "/realm/emoji/shipit")).body).toEqual({
      result: "success",
      msg: "",
    });
    expect(Object.values(await realmEmoji()).find((e) => e.id === emoji?.id)?.deactivated).toBe(
      true,
    );
    expect((await call("hamlet", "DELETE", "/realm/emoji/shipit")).body).toEqual(
      apiError("Emoji 'shipit' does not exist"),
    );
    // The old message keeps its image, still served; new ones and new reactions cannot use it.
    expect(
      (await server.db.prisma.message.findUniqueOrThrow({ where: { id: messageId } }))
        .rendered_content,
    ).toBe(`<p>Ready ${img}</p>`);
    expect((await fetchFile(String(emoji?.source_url))).status).toBe(200);
    const later = await call("othello", "POST", "/messages/render", { content: ":shipit:" });
    expect(later.body.rendered).toBe("<p>:shipit:</p>");
    expect(
      (
        await react({
          emoji_name: "shipit",
          emoji_code: String(emoji?.id),
          reaction_type: "realm_emoji",
        })
      ).body,
    ).toEqual(apiError("This custom emoji has been deactivated."));
    // The name is free again.
    expect((await upload("othello", "shipit", [image(png(8, 8))])).status).toBe(200);
  });

  it("serves nothing for an unknown image", async () => {
    const reply = await fetchFile("/user_avatars/1/emoji/images/0000.png");
    expect(reply.status).toBe(404);
  });
});
