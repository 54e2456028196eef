/**
 * Numbers past what their columns hold (ids are int32; durations must stay
 * dates), wherever an operation takes one: each is a 400 in the envelope,
 * never a 500 from the database or from Date, and nothing is stored.
 */
import { type Cast, type TestServer, loadCast, startTestServer } from "./support/server";

let server: TestServer;
let cast: Cast;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, ["iago"]);
});

afterAll(() => server.close());

const BIG = 2_147_483_648; // int32's maximum + 1

/** Row counts of the tables these operations write. */
async function counts(): Promise<number[]> {
  const p = server.db.prisma;
  return Promise.all([
    p.message.count(),
    p.userGroup.count(),
    p.userGroupMember.count(),
    p.channel.count(),
    p.subscription.count(),
    p.invitation.count(),
    p.draft.count(),
  ]);
}

describe("numbers past their columns", () => {
  it.each<[string, string, string, Record<string, unknown>]>([
    [
      "a narrow operand",
      "GET",
      "/messages",
      {
        anchor: "newest",
        num_before: 1,
        num_after: 0,
        narrow: [{ operator: "sender", operand: BIG }],
      },
    ],
    ["direct-message recipients", "POST", "/messages", { type: "direct", to: [BIG], content: "c" }],
    [
      "group members",
      "POST",
      "/user_groups/create",
      { name: "g", description: "d", members: [BIG] },
    ],
    [
      "group subgroups",
      "POST",
      "/user_groups/create",
      { name: "g", description: "d", members: [], subgroups: [BIG] },
    ],
    [
      "a group setting",
      "POST",
      "/user_groups/create",
      { name: "g", description: "d", members: [], can_mention_group: BIG },
    ],
    [
      "a group setting's members",
      "POST",
      "/user_groups/create",
      {
        name: "g",
        description: "d",
        members: [],
        can_mention_group: { direct_members: [BIG], direct_subgroups: [] },
      },
    ],
    ["channel subscribers", "POST", "/channels/create", { name: "wide", subscribers: [BIG] }],
    [
      "subscription principals",
      "POST",
      "/users/me/subscriptions",
      { subscriptions: [{ name: "Verona" }], principals: [BIG] },
    ],
    [
      "invitation channels",
      "POST",
      "/invites",
      { invitee_emails: "x@example.com", stream_ids: [BIG] },
    ],
    [
      "invitation groups",
      "POST",
      "/invites",
      { invitee_emails: "x@example.com", stream_ids: [], group_ids: [BIG] },
    ],
    [
      "an invitation's lifetime",
      "POST",
      "/invites",
      {
        invitee_emails: "x@example.com",
        stream_ids: [],
        invite_expires_in_minutes: 9_999_999_999_999,
      },
    ],
    [
      "a draft's recipients",
      "POST",
      "/drafts",
      { drafts: [{ type: "private", to: [BIG], topic: "", content: "c" }] },
    ],
    ["linkifier order", "PATCH", "/realm/linkifiers", { ordered_linkifier_ids: [BIG] }],
    [
      "presence history",
      "POST",
      "/users/me/presence",
      { status: "active", history_limit_days: 2_147_483_647 },
    ],
    [
      "a presence update id past 2^53",
      "POST",
      "/users/me/presence",
      { status: "active", last_update_id: 2 ** 53 },
    ],
  ])("%s", async (_what, method, path, fields) => {
    const before = await counts();
    const reply = await server.call(method, `/api/v1${path}`, {
      ...cast.as("iago"),
      ...(method === "GET" ? { query: fields } : { form: fields }),
    });
    expect(reply.status).toBe(400);
    expect(reply.body.result).toBe("error");
    // The range is what is refused (`NAME is too large`, or `to`'s own message).
    expect(reply.body.msg).toMatch(/ is too large$|^Invalid user ID or email in 'to'$/);
    expect(await counts()).toEqual(before);
  });
});
