import {
  type Cast,
  type TestServer,
  apiError,
  createOtherRealm,
  loadCast,
  startTestServer,
  channelIds,
} from "./support/server";
import { zulipResponseSchema } from "./support/zulip-schema";

const validateInvite = zulipResponseSchema("companions", "/invites", "post");
const validateLink = zulipResponseSchema("companions", "/invites/multiuse", "post");
const validateRevokeLink = zulipResponseSchema(
  "companions",
  "/invites/multiuse/{invite_id}",
  "delete",
);
const validateList = zulipResponseSchema("subset", "/invites", "get");
const validateRevoke = zulipResponseSchema("subset", "/invites/{invite_id}", "delete");

let server: TestServer;
let cast: Cast;
let channels: Record<string, number>;

beforeAll(async () => {
  server = await startTestServer();
  cast = await loadCast(server, [
    "desdemona",
    "iago",
    "prospero",
    "hamlet",
    "othello",
    "polonius",
    "hamlet-bot",
  ]);
  channels = await channelIds(server);
});

afterAll(() => server.close());

const as = (who: string) => cast.as(who);
const invite = (who: string, form: Record<string, unknown>) =>
  server.call("POST", "/api/v1/invites", { ...as(who), form });
const list = async (who: string) => {
  const reply = await server.call("GET", "/api/v1/invites", as(who));
  expect(validateList(reply.body)).toEqual([]);
  return reply.body.invites as Record<string, unknown>[];
};

describe("POST /api/v1/invites", () => {
  it("invites by e-mail: an invitation each, e-mail in the outbox and the log", async () => {
    const reply = await invite("hamlet", {
      invitee_emails: "rosencrantz@example.com, guildenstern@example.com\nrosencrantz@example.com",
      stream_ids: [channels.Denmark],
      invite_expires_in_minutes: 60,
    });
    expect(reply.status).toBe(200);
    expect(validateInvite(reply.body)).toEqual([]);
    const mine = await list("hamlet");
    expect(mine).toHaveLength(2);
    expect(mine[0]).toMatchObject({
      email: "rosencrantz@example.com",
      invited_by_user_id: cast.id("hamlet"),
      invited_as: 400,
      is_multiuse: false,
      notify_referrer_on_join: true,
    });
    const invited = mine[0]?.invited as number;
    expect(mine[0]?.expiry_date).toBe(invited + 3600);
    const mail = await server.db.prisma.outboxEmail.findMany({ orderBy: { id: "asc" } });
    expect(mail.map((m) => m.to_address)).toEqual([
      "rosencrantz@example.com",
      "guildenstern@example.com",
    ]);
    expect(mail[0]?.body_text).toMatch(/http:\/\/chat\.test\/join\/[a-z0-9]{24}\//);
    expect(server.logs.join("")).toContain("invitation e-mail queued");
  });

  it("lets only owners invite owners and administrators invite administrators", async () => {
    const asAdmin = await invite("iago", { invitee_emails: "o@example.com", invite_as: 100 });
    expect(asAdmin.body).toEqual(
      apiError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL"),
    );
    const asMember = await invite("hamlet", { invitee_emails: "a@example.com", invite_as: 200 });
    expect(asMember.body).toEqual(
      apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
    );
    const owner = await invite("desdemona", {
      invitee_emails: "claudius@example.com",
      invite_as: 100,
    });
    expect(owner.status).toBe(200);
  });

  it.each([
    [{ invitee_emails: " , " }, "You must specify at least one email address."],
    [{ invitee_emails: "x@example.com", invite_as: 250 }, "Invalid invite_as"],
    [
      { invitee_emails: "x@example.com", stream_ids: [999_999] },
      "Invalid channel ID 999999. No invites were sent.",
    ],
    [
      { invitee_emails: "x@example.com", invite_expires_in_minutes: 0 },
      "Invalid invite_expires_in_minutes",
    ],
  ])("refuses %j: %s", async (form, msg) => {
    const before = await server.db.prisma.invitation.count();
    const reply = await invite("iago", form);
    expect([reply.status, reply.body]).toEqual([400, apiError(msg)]);
    expect(await server.db.prisma.invitation.count()).toBe(before);
  });

  it("refuses the whole batch when an address is invalid, with Zulip's details", async () => {
    const before = await server.db.prisma.invitation.count();
    const reply = await invite("iago", { invitee_emails: "good@example.com, not-an-address" });
    expect([reply.status, reply.body]).toEqual([
      400,
      {
        result: "error",
        msg: "Some emails did not validate, so we didn't send any invitations.",
        code: "INVITATION_FAILED",
        errors: [["not-an-address", "Invalid address.", false]],
        sent_invitations: false,
        license_limit_reached: false,
        daily_limit_reached: false,
      },
    ]);
    expect(await server.db.prisma.invitation.count()).toBe(before);
  });

  it("skips existing users and invites the rest", async () => {
    const reply = await invite("iago", {
      invitee_emails: "othello@example.com, horatio@example.com",
    });
    expect(reply.body).toMatchObject({
      code: "INVITATION_FAILED",
      errors: [["othello@example.com", "Already has an account.", false]],
      sent_invitations: true,
    });
    expect(
      await server.db.prisma.invitation.count({ where: { email: "horatio@example.com" } }),
    ).toBe(1);
  });

  it("refuses guests, and members outside can_invite_users_group", async () => {
    expect((await invite("polonius", { invitee_emails: "g@example.com" })).body).toEqual(
      apiError("Not allowed for guest users"),
    );
    const realm = await server.db.prisma.realm.findFirstOrThrow();
    const admins = await server.db.prisma.userGroup.findFirstOrThrow({
      where: { realm_id: realm.id, name: "role:administrators" },
    });
    const previous = realm.can_invite_users_group_id;
    await server.db.prisma.realm.update({
      where: { id: realm.id },
      data: { can_invite_users_group_id: admins.id },
    });
    try {
      expect((await invite("hamlet", { invitee_emails: "h@example.com" })).body).toEqual(
        apiError("Insufficient permission"),
      );
    } finally {
      await server.db.prisma.realm.update({
        where: { id: realm.id },
        data: { can_invite_users_group_id: previous },
      });
    }
  });
});

describe("reusable links, listing and revoking", () => {
  it("creates a link under the realm's URL for administrators only", async () => {
    const reply = await server.call("POST", "/api/v1/invites/multiuse", {
      ...as("iago"),
      form: { invite_expires_in_minutes: null, invite_as: 600 },
    });
    expect(validateLink(reply.body)).toEqual([]);
    expect(reply.body.invite_link).toMatch(/^http:\/\/chat\.test\/join\/[a-z0-9]{24}\/$/);
    const links = (await list("iago")).filter((i) => i.is_multiuse === true);
    expect(links).toContainEqual(
      expect.objectContaining({
        link_url: reply.body.invite_link,
        expiry_date: null,
        invited_as: 600,
      }),
    );
    const member = await server.call("POST", "/api/v1/invites/multiuse", as("hamlet"));
    expect(member.body).toEqual(
      apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
    );
  });

  it("lists all unexpired invitations for administrators, one's own for others; never expired ones", async () => {
    await invite("othello", { invitee_emails: "emilia@example.com" });
    const expired = await invite("othello", { invitee_emails: "bianca@example.com" });
    expect(expired.status).toBe(200);
    await server.db.prisma.invitation.updateMany({
      where: { email: "bianca@example.com" },
      data: { expires_at: new Date(Date.now() - 1000) },
    });
    const othellos = await list("othello");
    expect(othellos.map((i) => i.email)).toEqual(["emilia@example.com"]);
    const admin = await list("iago");
    expect(admin.map((i) => i.email)).toEqual(
      expect.arrayContaining(["emilia@example.com", "rosencrantz@example.com"]),
    );
    expect(admin.map((i) => i.email)).not.toContain("bianca@example.com");
  });

  it("revokes an invitation with the contract's permission answers", async () => {
    const hamlets = (await list("hamlet")).filter((i) => i.is_multiuse === false);
    const target = hamlets[0]?.id as number;
    const byOther = await server.call("DELETE", `/api/v1/invites/${target}`, as("othello"));
    expect(byOther.body).toEqual(apiError("Must be an organization administrator"));
    const revoked = await server.call("DELETE", `/api/v1/invites/${target}`, as("hamlet"));
    expect(validateRevoke(revoked.body)).toEqual([]);
    expect((await list("hamlet")).map((i) => i.id)).not.toContain(target);
    expect((await server.call("DELETE", `/api/v1/invites/${target}`, as("hamlet"))).body).toEqual(
      apiError("No such invitation"),
    );
    const ownerInvite = await server.db.prisma.invitation.findFirstOrThrow({
      where: { email: "claudius@example.com" },
    });
    expect(
      (await server.call("DELETE", `/api/v1/invites/${ownerInvite.id}`, as("iago"))).body,
    ).toEqual(apiError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL"));
  });

  it("keeps email invitations and links apart, and realms apart", async () => {
    const link = await server.db.prisma.reusableInvitation.findFirstOrThrow();
    const emailIds = new Set(
      (await server.db.prisma.invitation.findMany({ select: { id: true } })).map((i) => i.id),
    );
    const linkOnlyId = link.id + 1000;
    expect(emailIds.has(linkOnlyId)).toBe(false);
    expect((await server.call("DELETE", `/api/v1/invites/${linkOnlyId}`, as("iago"))).body).toEqual(
      apiError("No such invitation"),
    );
    const { outsider } = await createOtherRealm(server);
    const foreign = await server.call("DELETE", `/api/v1/invites/multiuse/${link.id}`, {
      auth: [outsider.email, outsider.apiKey],
      host: "lear.chat.test",
    });
    expect(foreign.body).toEqual(apiError("Invalid invitation ID."));
    const revoked = await server.call("DELETE", `/api/v1/invites/multiuse/${link.id}`, as("iago"));
    expect(validateRevokeLink(revoked.body)).toEqual([]);
    expect((await list("iago")).some((i) => i.link_url !== undefined && i.id === link.id)).toBe(
      false,
    );
  });

  it("edits a link's role, channels and groups, checked as when made; key and expiry kept", async () => {
    const made = await server.call("POST", "/api/v1/invites/multiuse", {
      ...as("iago"),
      form: {
        invite_expires_in_minutes: 60,
        invite_as: 400,
        stream_ids: JSON.stringify([channels.Denmark]),
      },
    });
    const link = await server.db.prisma.reusableInvitation.findFirstOrThrow({
      where: { confirmation_key: /join\/(\w+)\//.exec(String(made.body.invite_link))?.[1] ?? "" },
    });
    const group = await server.call("POST", "/api/v1/user_groups/create", {
      ...as("iago"),
      form: { name: "Players", description: "The players", members: JSON.stringify([]) },
    });
    const groupId = group.body.group_id as number;
    const grants = async () => {
      const row = await server.db.prisma.reusableInvitation.findUniqueOrThrow({
        where: { id: link.id },
        include: { channels: true, groups: true },
      });
      return {
        invited_as: row.invited_as,
        key: row.confirmation_key,
        expires_at: row.expires_at,
        channels: row.channels.map((c) => c.channel_id).sort(),
        groups: row.groups.map((g) => g.group_id),
      };
    };
    const before = await grants();
    const edit = (who: string, form: Record<string, string>) =>
      server.call("PATCH", `/api/v1/invites/multiuse/${link.id}`, { ...as(who), form });
    // Refused: a member, an administrator making owners, unknown channels and groups, unknown links.
    expect((await edit("hamlet", { invite_as: "600" })).body).toEqual(
      apiError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL"),
    );
    expect((await edit("iago", { invite_as: "100" })).body).toEqual(
      apiError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL"),
    );
    expect((await edit("iago", { stream_ids: "[999999]" })).body).toEqual(
      apiError("Invalid channel ID 999999. No invites were sent."),
    );
    expect((await edit("iago", { group_ids: "[999999]" })).body).toEqual(
      apiError("Invalid user group ID: 999999"),
    );
    expect(
      (await server.call("PATCH", "/api/v1/invites/multiuse/999999", { ...as("iago"), form: {} }))
        .body,
    ).toEqual(apiError("Invalid invitation ID."));
    expect(await grants()).toEqual(before);
    const edited = await edit("iago", {
      invite_as: "600",
      stream_ids: JSON.stringify([channels.Verona, channels.Verona, channels.Denmark]),
      group_ids: JSON.stringify([groupId]),
    });
    expect(edited.body).toEqual({ result: "success", msg: "" });
    expect(await grants()).toEqual({
      ...before,
      invited_as: 600,
      channels: [channels.Denmark, channels.Verona].sort(),
      groups: [groupId],
    });
    expect((await edit("iago", { stream_ids: "[]" })).body.result).toBe("success");
    expect(await grants()).toMatchObject({ invited_as: 600, channels: [], groups: [groupId] });
    const listed = (await list("iago")).find((i) => i.is_multiuse === true && i.id === link.id);
    expect(listed).toMatchObject({ invited_as: 600, link_url: made.body.invite_link });
  });

  it("sends invites_changed to administrators and the inviter", async () => {
    const register = async (who: string) =>
      (
        await server.call("POST", "/api/v1/register", {
          ...as(who),
          form: { event_types: ["invites_changed"] },
        })
      ).body.queue_id as string;
    const queues = {
      iago: await register("iago"),
      othello: await register("othello"),
      hamlet: await register("hamlet"),
    };
    await invite("othello", { invitee_emails: "lodovico@example.com" });
    const events = async (who: keyof typeof queues) =>
      (
        await server.call("GET", "/api/v1/events", {
          ...as(who),
          query: { queue_id: queues[who], dont_block: true },
        })
      ).body.events as { type: string }[];
    expect((await events("iago")).map((e) => e.type)).toEqual(["invites_changed"]);
    expect((await events("othello")).map((e) => e.type)).toEqual(["invites_changed"]);
    expect(await events("hamlet")).toEqual([]);
  });
});

describe("POST /api/v1/invites/{invite_id}/resend", () => {
  const validateResend = zulipResponseSchema("full", "/invites/{invite_id}/resend", "post");
  const resend = (who: string, id: number) =>
    server.call("POST", `/api/v1/invites/${id}/resend`, as(who));

  it("sends the invitation again with a new link, the old one dead, the expiry kept", async () => {
    expect(
      (await invite("othello", { invitee_emails: "yorick@example.com", stream_ids: [] })).status,
    ).toBe(200);
    const before = await server.db.prisma.invitation.findFirstOrThrow({
      where: { email: "yorick@example.com" },
    });
    const reply = await resend("othello", before.id);
    expect(reply.body).toEqual({ result: "success", msg: "" });
    expect(validateResend(reply.body)).toEqual([]);
    const after = await server.db.prisma.invitation.findUniqueOrThrow({ where: { id: before.id } });
    expect(after.confirmation_key).not.toBe(before.confirmation_key);
    expect(after.expires_at).toEqual(before.expires_at);
    const mails = await server.db.prisma.outboxEmail.findMany({
      where: { to_address: "yorick@example.com" },
      orderBy: { id: "asc" },
    });
    expect(mails).toHaveLength(2);
    expect(mails[1]?.body_text).toContain(`/join/${after.confirmation_key}/`);
    expect(mails[1]?.body_text).not.toContain(before.confirmation_key);
    // An administrator may resend it too; another member may not.
    expect((await resend("iago", before.id)).status).toBe(200);
    expect((await resend("hamlet", before.id)).body).toEqual(
      apiError("Must be an organization administrator"),
    );
  });

  it("answers No such invitation for unknown, revoked, expired and foreign ones", async () => {
    await invite("othello", { invitee_emails: "osric@example.com", stream_ids: [] });
    const row = await server.db.prisma.invitation.findFirstOrThrow({
      where: { email: "osric@example.com" },
    });
    await server.call("DELETE", `/api/v1/invites/${row.id}`, as("othello"));
    await invite("othello", { invitee_emails: "marcellus@example.com", stream_ids: [] });
    const expired = await server.db.prisma.invitation.update({
      where: {
        confirmation_key: (
          await server.db.prisma.invitation.findFirstOrThrow({
            where: { email: "marcellus@example.com" },
          })
        ).confirmation_key,
      },
      data: { expires_at: new Date(Date.now() - 1000) },
    });
    const mailsBefore = await server.db.prisma.outboxEmail.count();
    for (const id of [999_999, row.id, expired.id])
      expect((await resend("iago", id)).body).toEqual(apiError("No such invitation"));
    expect(await server.db.prisma.outboxEmail.count()).toBe(mailsBefore);
  });
});
