/**
 * A round trip of every model: write a row with every kind of value the model
 * holds (enums, arrays, bigint, bytes, JSON, timestamps, nulls) and read it back
 * through Prisma, on the database this project runs on.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { get_dmmf } from "@prisma/prisma-schema-wasm";
import type { Database } from "../src/db/database";
import { generateApiKey } from "../src/actions/accounts";
import { freshDatabase } from "./support/database";

let db: Database;
let ids: {
  realm: number;
  hamlet: number;
  iago: number;
  verona: number;
  group: number;
  message: number;
};

beforeAll(async () => {
  db = await freshDatabase("seeded");
  const p = db.prisma;
  ids = {
    realm: (await p.realm.findFirstOrThrow()).id,
    hamlet: (await p.user.findFirstOrThrow({ where: { email: "hamlet@example.com" } })).id,
    iago: (await p.user.findFirstOrThrow({ where: { email: "iago@example.com" } })).id,
    verona: (await p.channel.findFirstOrThrow({ where: { name: "Verona" } })).id,
    group: (await p.userGroup.findFirstOrThrow({ where: { name: "hamletcharacters" } })).id,
    message: (await p.message.findFirstOrThrow()).id,
  };
});

afterAll(() => db.close());

const at = new Date("2026-11-22T10:11:12.345Z");

describe("round trips", () => {
  it("ChannelFolder, with a channel in it", async () => {
    const folder = await db.prisma.channelFolder.create({
      data: {
        realm_id: ids.realm,
        name: "Plays",
        description: "By play",
        order: 3,
        creator_id: ids.iago,
      },
    });
    await db.prisma.channel.update({ where: { id: ids.verona }, data: { folder_id: folder.id } });
    const read = await db.prisma.channelFolder.findUniqueOrThrow({
      where: { id: folder.id },
      include: { channels: true },
    });
    expect(read).toMatchObject({ name: "Plays", order: 3, is_archived: false });
    expect(read.channels.map((c) => c.name)).toEqual(["Verona"]);
  });

  it("Channel with every setting, including an enum and an anonymous group", async () => {
    const anonymous = await db.prisma.userGroup.create({
      data: { realm_id: ids.realm, name: null, members: { create: [{ user_id: ids.hamlet }] } },
    });
    const template = await db.prisma.channel.findUniqueOrThrow({ where: { id: ids.verona } });
    const { id: _id, date_created: _date, folder_id: _folder, name: _name, ...settings } = template;
    const channel = await db.prisma.channel.create({
      data: {
        ...settings,
        name: "Elsinore",
        topics_policy: "empty_topic_only",
        message_retention_days: -1,
        can_administer_channel_group_id: anonymous.id,
      },
      include: { can_administer_channel_group: { include: { members: true } } },
    });
    expect(channel.topics_policy).toBe("empty_topic_only");
    expect(channel.message_retention_days).toBe(-1);
    expect(channel.can_administer_channel_group.name).toBeNull();
    expect(channel.can_administer_channel_group.members.map((m) => m.user_id)).toEqual([
      ids.hamlet,
    ]);
  });

  it("UserTopic", async () => {
    await db.prisma.userTopic.create({
      data: {
        user_id: ids.hamlet,
        channel_id: ids.verona,
        topic_name: "Castle",
        visibility_policy: 1,
        last_updated: at,
      },
    });
    const read = await db.prisma.userTopic.findFirstOrThrow({ where: { user_id: ids.hamlet } });
    expect(read).toMatchObject({ topic_name: "Castle", visibility_policy: 1, last_updated: at });
  });

  it("Reaction, one per user, message and emoji", async () => {
    const data = {
      message_id: ids.message,
      user_id: ids.hamlet,
      emoji_name: "octopus",
      emoji_code: "1f419",
    };
    const reaction = await db.prisma.reaction.create({ data });
    expect(reaction).toMatchObject({ ...data, reaction_type: "unicode_emoji" });
    await expect(db.prisma.reaction.create({ data })).rejects.toThrow();
  });

  it("Submessage, a message's widget and its changes, in order", async () => {
    const widget = await db.prisma.submessage.create({
      data: {
        message_id: ids.message,
        sender_id: ids.hamlet,
        msg_type: "widget",
        content: '{"widget_type":"poll","extra_data":{"question":"?","options":[]}}',
      },
    });
    const vote = await db.prisma.submessage.create({
      data: {
        message_id: ids.message,
        sender_id: ids.hamlet,
        msg_type: "widget",
        content: '{"type":"vote","key":"canned,0","vote":1}',
      },
    });
    expect(vote.id).toBeGreaterThan(widget.id);
    const read = await db.prisma.submessage.findMany({
      where: { message_id: ids.message },
      orderBy: { id: "asc" },
    });
    expect(read.map((s) => s.id)).toEqual([widget.id, vote.id]);
  });

  it("MessageReport; a realm's moderation channel", async () => {
    const report = await db.prisma.messageReport.create({
      data: {
        realm_id: ids.realm,
        reporter_id: ids.hamlet,
        message_id: ids.message,
        report_type: "spam",
      },
    });
    expect(
      await db.prisma.messageReport.findUniqueOrThrow({ where: { id: report.id } }),
    ).toMatchObject({ report_type: "spam", date_created: expect.any(Date) as Date });
    await db.prisma.realm.update({
      where: { id: ids.realm },
      data: { moderation_request_channel_id: ids.verona },
    });
    expect(
      (await db.prisma.realm.findUniqueOrThrow({ where: { id: ids.realm } }))
        .moderation_request_channel_id,
    ).toBe(ids.verona);
  });

  it("MutedUser, one per pair; the rows go with either user", async () => {
    const mute = await db.prisma.mutedUser.create({
      data: { user_id: ids.hamlet, muted_user_id: ids.iago, date_muted: at },
    });
    expect(await db.prisma.mutedUser.findUniqueOrThrow({ where: { id: mute.id } })).toEqual({
      id: mute.id,
      user_id: ids.hamlet,
      muted_user_id: ids.iago,
      date_muted: at,
    });
    await expect(
      db.prisma.mutedUser.create({ data: { user_id: ids.hamlet, muted_user_id: ids.iago } }),
    ).rejects.toThrow();
  });

  it("CustomEmoji: one live emoji per name in a realm, any number deactivated", async () => {
    const emoji = (name: string, deactivated: boolean, n: number) =>
      db.prisma.customEmoji.create({
        data: {
          realm_id: ids.realm,
          name,
          author_id: ids.hamlet,
          path_id: `${String(ids.realm)}/emoji/images/model${String(n)}.png`,
          content_type: "image/png",
          deactivated,
        },
      });
    await emoji("parrot", true, 1);
    await emoji("parrot", true, 2);
    const live = await emoji("parrot", false, 3);
    expect(live).toMatchObject({ name: "parrot", deactivated: false, author_id: ids.hamlet });
    await expect(emoji("parrot", false, 4)).rejects.toThrow();
  });

  it("Attachment, with a unique path, linked to messages; ServerSecret, with bytes", async () => {
    const data = {
      realm_id: ids.realm,
      owner_id: ids.hamlet,
      path_id: "1/ab/random/notes.txt",
      file_name: "notes.txt",
      content_type: "text/plain",
      size: 5,
    };
    const attachment = await db.prisma.attachment.create({ data });
    expect(attachment).toMatchObject(data);
    expect(attachment.created_at).toBeInstanceOf(Date);
    await expect(db.prisma.attachment.create({ data })).rejects.toThrow();
    await db.prisma.attachmentMessage.create({
      data: { attachment_id: attachment.id, message_id: ids.message },
    });
    const linked = await db.prisma.attachment.findUniqueOrThrow({
      where: { id: attachment.id },
      include: { messages: true },
    });
    expect(linked.messages).toEqual([{ attachment_id: attachment.id, message_id: ids.message }]);
    const value = new Uint8Array([0, 1, 254, 255]);
    await db.prisma.serverSecret.create({ data: { name: "test", value } });
    const secret = await db.prisma.serverSecret.findUniqueOrThrow({ where: { name: "test" } });
    expect(Buffer.from(secret.value).equals(Buffer.from(value))).toBe(true);
  });

  it("AlertWord, one per user and word whatever its case", async () => {
    await db.prisma.alertWord.create({ data: { user_id: ids.hamlet, word: "Elsinore" } });
    await expect(
      db.prisma.alertWord.create({ data: { user_id: ids.hamlet, word: "ELSINORE" } }),
    ).rejects.toThrow();
    expect(await db.prisma.alertWord.count({ where: { user_id: ids.hamlet } })).toBe(1);
  });

  it("Draft, with an integer array and an enum", async () => {
    const draft = await db.prisma.draft.create({
      data: {
        user_id: ids.hamlet,
        type: "private",
        to: [ids.iago, ids.hamlet],
        content: "hi",
        last_edit_time: at,
      },
    });
    expect(await db.prisma.draft.findUniqueOrThrow({ where: { id: draft.id } })).toMatchObject({
      type: "private",
      to: [ids.iago, ids.hamlet],
      topic: "",
      last_edit_time: at,
    });
  });

  it("SavedSnippet", async () => {
    const snippet = await db.prisma.savedSnippet.create({
      data: {
        realm_id: ids.realm,
        user_id: ids.hamlet,
        title: "Greeting",
        content: "**Hello** ✨",
      },
    });
    expect(
      (await db.prisma.savedSnippet.findUniqueOrThrow({ where: { id: snippet.id } })).content,
    ).toBe("**Hello** ✨");
  });

  it("NavigationView, one per person and fragment", async () => {
    const data = { user_id: ids.hamlet, fragment: "narrow/is/starred", is_pinned: true };
    const view = await db.prisma.navigationView.create({ data });
    expect(
      await db.prisma.navigationView.findUniqueOrThrow({ where: { id: view.id } }),
    ).toMatchObject({ ...data, name: null });
    await expect(db.prisma.navigationView.create({ data })).rejects.toThrow();
  });

  it("Message and UserMessage, with bigint flags; the rows go with their message", async () => {
    const create = () =>
      db.prisma.message.create({
        data: {
          realm_id: ids.realm,
          sender_id: ids.iago,
          dm_key: `${ids.hamlet},${ids.iago}`,
          content: "psst",
          rendered_content: "<p>psst</p>",
        },
      });
    const [message, other] = [await create(), await create()];
    await db.prisma.userMessage.createMany({
      data: [message, other].flatMap((m) => [
        { user_id: ids.hamlet, message_id: m.id, flags: 2n ** 40n + 2n },
        { user_id: ids.iago, message_id: m.id },
      ]),
    });
    expect(message.channel_id).toBeNull();
    const row = await db.prisma.userMessage.findUniqueOrThrow({
      where: { user_id_message_id: { user_id: ids.hamlet, message_id: message.id } },
    });
    expect(row.flags).toBe(2n ** 40n + 2n);
    // No foreign key: the trigger of the migrations deletes a message's rows with it.
    await db.prisma.message.delete({ where: { id: message.id } });
    const left = await db.prisma.userMessage.findMany({
      where: { message_id: { in: [message.id, other.id] } },
      select: { message_id: true },
    });
    expect(left.map((r) => r.message_id)).toEqual([other.id, other.id]);
  });

  it("Reminder", async () => {
    const reminder = await db.prisma.reminder.create({
      data: {
        realm_id: ids.realm,
        user_id: ids.hamlet,
        message_id: ids.message,
        note: null,
        scheduled_timestamp: at,
      },
    });
    expect(
      await db.prisma.reminder.findUniqueOrThrow({ where: { id: reminder.id } }),
    ).toMatchObject({
      note: null,
      delivered: false,
      scheduled_timestamp: at,
    });
  });

  it("RealmExport, pending until written", async () => {
    const row = await db.prisma.realmExport.create({
      data: { realm_id: ids.realm, acting_user_id: ids.iago, export_type: 2 },
    });
    expect(await db.prisma.realmExport.findUniqueOrThrow({ where: { id: row.id } })).toMatchObject({
      export_type: 2,
      date_finished: null,
      date_failed: null,
      path_id: null,
    });
  });

  it("RealmPlayground, unique per language and name", async () => {
    const row = {
      realm_id: ids.realm,
      name: "Go",
      pygments_language: "Go",
      url_template: "https://go.dev/play/?c={code}",
    };
    const created = await db.prisma.realmPlayground.create({ data: row });
    expect(
      await db.prisma.realmPlayground.findUniqueOrThrow({ where: { id: created.id } }),
    ).toEqual({
      id: created.id,
      ...row,
    });
    await expect(db.prisma.realmPlayground.create({ data: row })).rejects.toThrow();
  });

  it("ScheduledMessage, with its direct recipients as an integer array", async () => {
    const direct = await db.prisma.scheduledMessage.create({
      data: {
        realm_id: ids.realm,
        sender_id: ids.hamlet,
        to_user_ids: [ids.iago, ids.hamlet],
        content: "later",
        rendered_content: "<p>later</p>",
        scheduled_timestamp: at,
      },
    });
    expect(
      await db.prisma.scheduledMessage.findUniqueOrThrow({ where: { id: direct.id } }),
    ).toMatchObject({
      channel_id: null,
      topic: "",
      to_user_ids: [ids.iago, ids.hamlet],
      read_by_sender: null,
      delivered: false,
      failed: false,
      failure_message: null,
      scheduled_timestamp: at,
    });
  });

  it("Invitation and ReusableInvitation, with channels and groups, in separate id spaces", async () => {
    const invitation = await db.prisma.invitation.create({
      data: {
        realm_id: ids.realm,
        email: "new@example.com",
        referred_by_id: ids.iago,
        confirmation_key: "a".repeat(24),
        expires_at: null,
        channels: { create: [{ channel_id: ids.verona }] },
        groups: { create: [{ group_id: ids.group }] },
      },
      include: { channels: true, groups: true },
    });
    const link = await db.prisma.reusableInvitation.create({
      data: {
        realm_id: ids.realm,
        referred_by_id: ids.iago,
        invited_as: 600,
        confirmation_key: "b".repeat(24),
        expires_at: at,
        channels: { create: [{ channel_id: ids.verona }] },
        groups: { create: [{ group_id: ids.group }] },
      },
      include: { channels: true, groups: true },
    });
    expect(invitation.id).toBe(1);
    expect(link.id).toBe(1);
    expect([
      invitation.channels.length,
      invitation.groups.length,
      link.channels.length,
      link.groups.length,
    ]).toEqual([1, 1, 1, 1]);
    expect(link.expires_at).toEqual(at);
  });

  it("CustomProfileFieldValue", async () => {
    const field = await db.prisma.customProfileField.findFirstOrThrow({
      where: { name: "Phone number" },
    });
    await db.prisma.customProfileFieldValue.create({
      data: { user_id: ids.hamlet, field_id: field.id, value: "+1 555" },
    });
    const read = await db.prisma.customProfileField.findUniqueOrThrow({
      where: { id: field.id },
      include: { values: true },
    });
    expect(read.values.map((v) => v.value)).toEqual(["+1 555"]);
  });

  it("Device, PushRegistration and LegacyPushToken, with bytes and an unsigned 32-bit key id", async () => {
    const device = await db.prisma.device.create({ data: { user_id: ids.hamlet } });
    const key = new Uint8Array([0x31, ...Array.from({ length: 32 }, (_, i) => i)]);
    await db.prisma.pushRegistration.create({
      data: {
        device_id: device.id,
        push_key_id: 4_294_967_295n,
        push_key: key,
        token_kind: "apns",
        token_id: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]),
        bouncer_public_key: "cHVibGlj",
        encrypted_push_registration: "c2VjcmV0",
      },
    });
    await db.prisma.legacyPushToken.create({
      data: {
        user_id: ids.hamlet,
        kind: "fcm",
        token: "legacy-token",
        token_id: new Uint8Array(8),
        ios_app_id: null,
      },
    });
    const read = await db.prisma.device.findUniqueOrThrow({
      where: { id: device.id },
      include: { push_registration: true },
    });
    expect(read.push_registration?.push_key_id).toBe(4_294_967_295n);
    expect(Array.from(read.push_registration?.push_key ?? [])).toEqual(Array.from(key));
    expect(read.push_registration?.token_kind).toBe("apns");
    await db.prisma.device.delete({ where: { id: device.id } });
    expect(await db.prisma.pushRegistration.count({ where: { device_id: device.id } })).toBe(0);
    await db.prisma.device.create({
      data: { user_id: ids.hamlet, push_registration: { create: { push_key_id: 1n } } },
    });
    expect((await db.prisma.legacyPushToken.findFirstOrThrow()).token).toBe("legacy-token");
  });

  it("Presence", async () => {
    await db.prisma.presence.create({
      data: {
        user_id: ids.hamlet,
        realm_id: ids.realm,
        last_connected_time: at,
        last_active_time: null,
      },
    });
    expect(
      await db.prisma.presence.findUniqueOrThrow({ where: { user_id: ids.hamlet } }),
    ).toMatchObject({
      last_connected_time: at,
      last_active_time: null,
    });
  });

  it("EventQueue and EventLog, with JSON, text and integer arrays, and bigint", async () => {
    await db.prisma.eventQueue.create({
      data: {
        id: "1732270000:1",
        user_id: ids.hamlet,
        realm_id: ids.realm,
        event_types: ["drafts", "saved_snippets"],
        options: {
          apply_markdown: true,
          client_capabilities: { notification_settings_null: true },
        },
      },
    });
    const queue = await db.prisma.eventQueue.findUniqueOrThrow({ where: { id: "1732270000:1" } });
    expect(queue.event_types).toEqual(["drafts", "saved_snippets"]);
    expect(queue.last_event_id).toBe(0n);
    expect(queue.options).toEqual({
      apply_markdown: true,
      client_capabilities: { notification_settings_null: true },
    });
    const logged = await db.prisma.eventLog.create({
      data: {
        user_ids: [ids.hamlet, ids.iago],
        event_type: "heartbeat",
        payload: { type: "heartbeat", nested: [1, "two", null] },
        seq: 9_007_199_254_740_991n,
      },
    });
    const read = await db.prisma.eventLog.findUniqueOrThrow({ where: { id: logged.id } });
    expect(read.user_ids).toEqual([ids.hamlet, ids.iago]);
    expect(read.seq).toBe(9_007_199_254_740_991n);
    expect(read.payload).toEqual({ type: "heartbeat", nested: [1, "two", null] });
  });

  it("OutboxEmail", async () => {
    const email = await db.prisma.outboxEmail.create({
      data: {
        realm_id: ids.realm,
        to_address: "new@example.com",
        subject: "Join Demo",
        body_text: "Click",
      },
    });
    expect(
      await db.prisma.outboxEmail.findUniqueOrThrow({ where: { id: email.id } }),
    ).toMatchObject({
      sent_at: null,
      attempts: 0,
      body_html: null,
    });
  });

  it("AccountConfirmation", async () => {
    const expires = new Date("2030-01-01T00:00:00.000Z");
    const link = await db.prisma.accountConfirmation.create({
      data: {
        realm_id: ids.realm,
        kind: 2,
        email: "hamlet@example.com",
        user_id: ids.hamlet,
        key_hash: "a".repeat(64),
        expires_at: expires,
      },
    });
    expect(
      await db.prisma.accountConfirmation.findUniqueOrThrow({
        where: { key_hash: "a".repeat(64) },
      }),
    ).toMatchObject({
      id: link.id,
      kind: 2,
      user_id: ids.hamlet,
      used_at: null,
      expires_at: expires,
    });
  });

  it("RealmDomain", async () => {
    await db.prisma.realmDomain.create({
      data: { realm_id: ids.realm, domain: "example.org", allow_subdomains: true },
    });
    await expect(
      db.prisma.realmDomain.create({ data: { realm_id: ids.realm, domain: "example.org" } }),
    ).rejects.toThrow();
    expect(
      await db.prisma.realmDomain.findMany({
        where: { realm_id: ids.realm },
        select: { domain: true, allow_subdomains: true },
      }),
    ).toEqual([{ domain: "example.org", allow_subdomains: true }]);
  });

  it("leaves no model untouched", async () => {
    const schema = readFileSync(join(__dirname, "../prisma/schema.prisma"), "utf8");
    const { datamodel } = JSON.parse(
      get_dmmf(JSON.stringify({ prismaSchema: [["schema.prisma", schema]] })),
    ) as {
      datamodel: { models: { name: string; dbName: string | null }[] };
    };
    const empty: string[] = [];
    for (const model of datamodel.models) {
      const table = model.dbName ?? model.name;
      const [row] = await db.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}"`);
      if (row?.n === 0) empty.push(model.name);
    }
    expect(empty).toEqual([]);
  });
});

describe("constraints", () => {
  it("allows one channel name per realm, case-insensitively", async () => {
    const template = await db.prisma.channel.findUniqueOrThrow({ where: { id: ids.verona } });
    const { id: _id, date_created: _date, ...rest } = template;
    await expect(db.prisma.channel.create({ data: { ...rest, name: "vERONA" } })).rejects.toThrow(
      /Unique constraint/,
    );
  });

  it("allows one email per realm, case-insensitively", async () => {
    await expect(
      db.prisma.user.create({
        data: {
          realm_id: ids.realm,
          email: "HAMLET@example.com",
          delivery_email: "other@example.com",
          full_name: "Impostor",
          api_key: generateApiKey(),
        },
      }),
    ).rejects.toThrow(/Unique constraint/);
  });

  it("keeps a group that a setting uses from being deleted", async () => {
    const nobody = await db.prisma.userGroup.findFirstOrThrow({ where: { name: "role:nobody" } });
    await expect(db.prisma.userGroup.delete({ where: { id: nobody.id } })).rejects.toThrow(
      /foreign key constraint/i,
    );
  });
});
