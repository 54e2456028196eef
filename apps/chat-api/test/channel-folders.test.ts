import {
  type Cast,
  type TestServer,
  apiError,
  createOtherRealm,
  listenAs,
  loadCast,
  startTestServer,
} from "./support/server";

/**
 * Changing and reordering channel folders (PATCH /channel_folders/{id} and
 * PATCH /channel_folders), with the `channel_folder` `update` and `reorder`
 * events the mobile app parses (issue 47).
 */
let server: TestServer;
let cast: Cast;
let realmId: number;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["iago", "hamlet", "othello"]);
  realmId = (await server.db.prisma.user.findUniqueOrThrow({ where: { id: cast.id("iago") } }))
    .realm_id;
});

afterAll(() => server.close());

const call = (who: string, method: string, path: string, form: Record<string, unknown> = {}) =>
  server.call(method, `/api/v1${path}`, { ...cast.as(who), form });

async function newFolder(name: string, description = ""): Promise<number> {
  const reply = await call("iago", "POST", "/channel_folders/create", { name, description });
  expect(reply.status).toBe(200);
  return reply.body.channel_folder_id as number;
}

const folderRow = (id: number) => server.db.prisma.channelFolder.findUnique({ where: { id } });

describe("PATCH /api/v1/channel_folders/{id}", () => {
  it("renames, redescribes and archives, one event per kind of change", async () => {
    const folderId = await newFolder("Drafts", "old");
    const listen = await listenAs(server, cast.as("hamlet"), ["channel_folder"]);
    const reply = await call("iago", "PATCH", `/channel_folders/${String(folderId)}`, {
      name: " Manuscripts ",
      description: "Work in **progress**",
      is_archived: true,
    });
    expect(reply.body).toEqual({ result: "success", msg: "" });
    expect(await listen()).toEqual([
      {
        type: "channel_folder",
        op: "update",
        channel_folder_id: folderId,
        data: { name: "Manuscripts" },
      },
      {
        type: "channel_folder",
        op: "update",
        channel_folder_id: folderId,
        data: {
          description: "Work in **progress**",
          rendered_description: "<p>Work in <strong>progress</strong></p>",
        },
      },
      {
        type: "channel_folder",
        op: "update",
        channel_folder_id: folderId,
        data: { is_archived: true },
      },
    ]);
    expect(await folderRow(folderId)).toMatchObject({
      name: "Manuscripts",
      description: "Work in **progress**",
      is_archived: true,
    });
    // The same values again change nothing and tell nobody.
    await call("iago", "PATCH", `/channel_folders/${String(folderId)}`, {
      name: "Manuscripts",
      is_archived: true,
    });
    expect(await listen()).toEqual([]);
  });

  it("refuses to archive a folder that holds a channel, and a name in use", async () => {
    const folderId = await newFolder("Holding");
    await newFolder("Taken");
    const channel = await call("iago", "POST", "/channels/create", {
      name: "held channel",
      subscribers: JSON.stringify([cast.id("iago")]),
      folder_id: folderId,
    });
    expect(channel.status).toBe(200);
    const archive = await call("iago", "PATCH", `/channel_folders/${String(folderId)}`, {
      is_archived: true,
    });
    expect(archive.body).toEqual(
      apiError("You need to remove all the channels from this folder to archive it."),
    );
    const rename = await call("iago", "PATCH", `/channel_folders/${String(folderId)}`, {
      name: "TAKEN",
      description: "not stored either",
    });
    expect(rename.body).toEqual(apiError("Channel folder name already in use"));
    expect(await folderRow(folderId)).toMatchObject({
      name: "Holding",
      description: "",
      is_archived: false,
    });
  });

  it("is for administrators of the folder's realm", async () => {
    const folderId = await newFolder("Guarded");
    const member = await call("hamlet", "PATCH", `/channel_folders/${String(folderId)}`, {
      name: "Mine",
    });
    expect(member.body).toEqual(
      apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
    );
    const { outsider } = await createOtherRealm(server);
    const foreign = await server.call("PATCH", `/api/v1/channel_folders/${String(folderId)}`, {
      auth: [outsider.email, outsider.apiKey],
      host: "lear.chat.test",
      form: { name: "Taken over" },
    });
    expect(foreign.body).toEqual(apiError("Invalid channel folder ID"));
    expect((await folderRow(folderId))?.name).toBe("Guarded");
  });
});

describe("PATCH /api/v1/channel_folders", () => {
  it("puts the folders in the order given and tells everyone", async () => {
    const ids = (
      await server.db.prisma.channelFolder.findMany({
        where: { realm_id: realmId },
        orderBy: { order: "asc" },
      })
    ).map((f) => f.id);
    const reversed = [...ids].reverse();
    const listen = await listenAs(server, cast.as("othello"), ["channel_folder"]);
    const reply = await call("iago", "PATCH", "/channel_folders", {
      order: JSON.stringify(reversed),
    });
    expect(reply.body).toEqual({ result: "success", msg: "" });
    expect(await listen()).toEqual([{ type: "channel_folder", op: "reorder", order: reversed }]);
    const listed = await server.call("GET", "/api/v1/channel_folders", {
      ...cast.as("hamlet"),
      query: { include_archived: "true" },
    });
    expect((listed.body.channel_folders as { id: number }[]).map((f) => f.id)).toEqual(reversed);
  });

  it.each([
    ["a folder left out", (ids: number[]) => ids.slice(1)],
    ["a folder twice", (ids: number[]) => [...ids, ids[0] ?? 0]],
    ["a folder of no one", (ids: number[]) => [...ids, 999_999]],
  ])("refuses %s and changes nothing", async (_what, order) => {
    const before = await server.db.prisma.channelFolder.findMany({
      where: { realm_id: realmId },
      orderBy: { id: "asc" },
    });
    const ids = before.map((f) => f.id);
    const reply = await call("iago", "PATCH", "/channel_folders", {
      order: JSON.stringify(order(ids)),
    });
    expect(reply.body).toEqual(apiError("Invalid order mapping."));
    expect(
      await server.db.prisma.channelFolder.findMany({
        where: { realm_id: realmId },
        orderBy: { id: "asc" },
      }),
    ).toEqual(before);
  });
});
