import { APP_REGISTER, eventProblems, snapshotProblems } from "./support/flutter-models";
import { type Cast, type TestServer, loadCast, startTestServer } from "./support/server";
import { eventsSchema } from "./support/zulip-schema";

/**
 * Two people's mobile apps keep the state issue 47 added (channel folders,
 * devices, user groups with their members and deactivation, the moderation
 * channel) from the events they receive, while an administrator and the
 * people change it; at the end each app's state equals what a fresh
 * register gives. Every snapshot and event is parsed as the app's models
 * parse it (test/fixtures/zulip-flutter) and checked against Zulip's schemas.
 */
let server: TestServer;
let cast: Cast;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["iago", "hamlet", "othello", "cordelia"]);
});

afterAll(() => server.close());

const call = (who: string, method: string, path: string, form: Record<string, string> = {}) =>
  server.call(method, `/api/v1${path}`, { ...cast.as(who), form });

type Json = Record<string, unknown>;
type Folder = Json & { id: number; order: number };
type Group = Json & { id: number; members: number[] };

/** The state an app keeps, in a form a fresh register's can be compared with. */
interface AppState {
  folders: Folder[];
  devices: Record<string, Json>;
  groups: Group[];
  moderationChannel: number;
}

function stateOf(snapshot: Json): AppState {
  const folders = (snapshot.channel_folders as Folder[]).map((f) => ({ ...f }));
  return {
    folders: folders.sort((a, b) => a.order - b.order || a.id - b.id),
    devices: structuredClone(snapshot.devices as Record<string, Json>),
    groups: (snapshot.realm_user_groups as Group[])
      .map((g) => ({ ...g, members: [...g.members].sort((a, b) => a - b) }))
      .sort((a, b) => a.id - b.id),
    moderationChannel: snapshot.realm_moderation_request_channel_id as number,
  };
}

const validateEvents = eventsSchema();

/** An app: registered as the app registers, applying each event as the app's store does. */
class App {
  state!: AppState;
  private queueId = "";
  private last = -1;

  constructor(readonly who: string) {}

  static async register(who: string): Promise<Json> {
    const reply = await call(who, "POST", "/register", APP_REGISTER);
    expect(reply.status).toBe(200);
    expect(snapshotProblems(reply.body)).toEqual([]);
    return reply.body;
  }

  async start(): Promise<this> {
    const snapshot = await App.register(this.who);
    this.state = stateOf(snapshot);
    this.queueId = snapshot.queue_id as string;
    this.last = snapshot.last_event_id as number;
    return this;
  }

  async catchUp(): Promise<void> {
    const polled = await server.call("GET", "/api/v1/events", {
      ...cast.as(this.who),
      query: { queue_id: this.queueId, last_event_id: String(this.last), dont_block: "true" },
    });
    expect(eventProblems(polled.body, true)).toEqual([]);
    expect(validateEvents(polled.body)).toEqual([]);
    for (const event of polled.body.events as (Json & { id: number })[]) {
      this.apply(event);
      this.last = event.id;
    }
  }

  private apply(event: Json): void {
    const { state } = this;
    const group = (id: unknown) => state.groups.find((g) => g.id === id);
    switch (`${String(event.type)}/${String(event.op)}`) {
      case "channel_folder/add":
        state.folders.push({ ...(event.channel_folder as Folder) });
        break;
      case "channel_folder/update": {
        const folder = state.folders.find((f) => f.id === event.channel_folder_id);
        Object.assign(folder ?? {}, event.data);
        break;
      }
      case "channel_folder/reorder":
        for (const [order, id] of (event.order as number[]).entries()) {
          const folder = state.folders.find((f) => f.id === id);
          if (folder !== undefined) folder.order = order;
        }
        break;
      case "device/add":
        state.devices[String(event.device_id)] = {
          push_key_id: null,
          push_token_id: null,
          pending_push_token_id: null,
          push_token_last_updated_timestamp: null,
          push_registration_error_code: null,
        };
        break;
      case "device/remove":
        state.devices = Object.fromEntries(
          Object.entries(state.devices).filter(([id]) => id !== String(event.device_id)),
        );
        break;
      case "user_group/add": {
        const added = event.group as Group;
        state.groups.push({ ...added, members: [...added.members] });
        break;
      }
      case "user_group/update":
        Object.assign(group(event.group_id) ?? {}, event.data);
        break;
      case "user_group/add_members": {
        const target = group(event.group_id);
        if (target !== undefined) target.members.push(...(event.user_ids as number[]));
        break;
      }
      case "user_group/remove_members": {
        const target = group(event.group_id);
        const gone = new Set(event.user_ids as number[]);
        if (target !== undefined) target.members = target.members.filter((m) => !gone.has(m));
        break;
      }
      case "realm/update":
        if (event.property === "moderation_request_channel_id")
          state.moderationChannel = event.value as number;
        break;
    }
    state.folders.sort((a, b) => a.order - b.order || a.id - b.id);
    for (const g of state.groups) g.members.sort((a, b) => a - b);
    state.groups.sort((a, b) => a.id - b.id);
  }
}

it("two apps keep folders, devices, groups and the moderation channel as a fresh register has them", async () => {
  const apps = [await new App("hamlet").start(), await new App("othello").start()];
  const expectOk = async (reply: Promise<{ status: number; text: string }>) => {
    const done = await reply;
    expect([done.status, done.text]).toEqual([200, expect.any(String)]);
  };

  // Channel folders: made, changed, archived, reordered.
  const folder = async (name: string) =>
    (await call("iago", "POST", "/channel_folders/create", { name })).body
      .channel_folder_id as number;
  const [a, b, c] = [await folder("Alpha"), await folder("Beta"), await folder("Gamma")];
  await expectOk(
    call("iago", "PATCH", `/channel_folders/${String(a)}`, {
      name: "Alef",
      description: "The *first*",
    }),
  );
  await expectOk(call("iago", "PATCH", `/channel_folders/${String(b)}`, { is_archived: "true" }));
  const all = (await call("iago", "GET", "/channel_folders")).status;
  expect(all).toBe(200);
  const ids = (
    await server.db.prisma.channelFolder.findMany({
      orderBy: { order: "asc" },
      select: { id: true },
    })
  ).map((f) => f.id);
  await expectOk(
    call("iago", "PATCH", "/channel_folders", {
      order: JSON.stringify([c, ...ids.filter((id) => id !== c)]),
    }),
  );

  // Devices: each person's own.
  const device = (await call("hamlet", "POST", "/register_client_device")).body.device_id as number;
  await call("othello", "POST", "/register_client_device");
  await expectOk(call("hamlet", "POST", "/remove_client_device", { device_id: String(device) }));
  await call("hamlet", "POST", "/register_client_device");

  // A group: made, its members changed, deactivated.
  const group = (
    await call("hamlet", "POST", "/user_groups/create", {
      name: "Travellers",
      description: "On the road",
      members: JSON.stringify([cast.id("hamlet")]),
    })
  ).body.group_id as number;
  await expectOk(
    call("hamlet", "POST", `/user_groups/${String(group)}/members`, {
      add: JSON.stringify([cast.id("othello"), cast.id("cordelia")]),
    }),
  );
  await expectOk(
    call("hamlet", "POST", `/user_groups/${String(group)}/members`, {
      delete: JSON.stringify([cast.id("cordelia")]),
    }),
  );
  await expectOk(call("hamlet", "POST", `/user_groups/${String(group)}/deactivate`));

  // The moderation channel.
  const channel = (
    await call("iago", "POST", "/channels/create", {
      name: "reports",
      invite_only: "true",
      subscribers: JSON.stringify([cast.id("iago")]),
    })
  ).body.id as number;
  await expectOk(
    call("iago", "PATCH", "/realm", { moderation_request_channel_id: String(channel) }),
  );

  for (const app of apps) {
    await app.catchUp();
    const fresh = stateOf(await App.register(app.who));
    expect(app.state).toEqual(fresh);
  }
  // What the apps hold is what happened, not two equal mistakes.
  const [hamlet] = apps;
  expect(hamlet?.state.folders.map((f) => f.id)[0]).toBe(c);
  expect(hamlet?.state.folders.find((f) => f.id === a)).toMatchObject({
    name: "Alef",
    rendered_description: "<p>The <em>first</em></p>",
  });
  expect(Object.keys(hamlet?.state.devices ?? {})).toHaveLength(1);
  expect(hamlet?.state.groups.find((g) => g.id === group)).toMatchObject({
    deactivated: true,
    members: [cast.id("hamlet"), cast.id("othello")].sort((x, y) => x - y),
  });
  expect(hamlet?.state.moderationChannel).toBe(channel);
});
