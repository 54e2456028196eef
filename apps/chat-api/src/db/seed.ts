import { randomInt } from "node:crypto";
import type { Prisma, PrismaClient } from "../gen/prisma/client";
import { Role } from "../lib/roles";

export { Role };

/** Zulip's bot types. */
export const BotType = {
  GENERIC: 1,
  INCOMING_WEBHOOK: 2,
  OUTGOING_WEBHOOK: 3,
  EMBEDDED: 4,
} as const;

const ALPHANUMERICS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A fresh API key: 32 random alphanumerics (crypto-strength, no modulo bias). */
export function generateApiKey(): string {
  return Array.from({ length: 32 }, () => ALPHANUMERICS[randomInt(ALPHANUMERICS.length)]).join("");
}

/** HTML for message content until there is a Markdown renderer: the escaped text in a paragraph. */
export function renderPlainText(content: string): string {
  const escaped = content
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#x27;");
  return `<p>${escaped}</p>`;
}

/** System groups, each containing the next by subgroup (role:owners is in role:administrators...). */
export const SYSTEM_GROUPS = [
  "role:owners",
  "role:administrators",
  "role:moderators",
  "role:fullmembers",
  "role:members",
  "role:everyone",
  "role:internet",
] as const;

/** The system group a role's users are direct members of. */
export const GROUP_OF_ROLE: Record<number, (typeof SYSTEM_GROUPS)[number]> = {
  [Role.OWNER]: "role:owners",
  [Role.ADMINISTRATOR]: "role:administrators",
  [Role.MODERATOR]: "role:moderators",
  [Role.MEMBER]: "role:fullmembers",
  [Role.GUEST]: "role:everyone",
};

/** A system group's name. */
export type SystemGroupName = (typeof SYSTEM_GROUPS)[number] | "role:nobody";

/**
 * Creates a realm with its system groups and Zulip's default permission
 * settings; returns the realm id and the system groups by name.
 */
export async function createRealm(
  tx: Prisma.TransactionClient,
  realm: { subdomain: string; name: string; description?: string },
): Promise<{ realmId: number; groups: Record<SystemGroupName, number> }> {
  const { id: realmId } = await tx.realm.create({ data: realm });
  const groups = {} as Record<SystemGroupName, number>;
  for (const name of [...SYSTEM_GROUPS, "role:nobody"] as const) {
    const group = await tx.userGroup.create({
      data: { realm_id: realmId, name, is_system_group: true, description: `System group ${name}` },
    });
    groups[name] = group.id;
  }
  await tx.userGroupSubgroup.createMany({
    data: SYSTEM_GROUPS.slice(1).map((name, i) => ({
      supergroup_id: groups[name],
      subgroup_id: groups[SYSTEM_GROUPS[i] ?? "role:owners"],
    })),
  });
  const nobody = groups["role:nobody"];
  await tx.userGroup.updateMany({
    where: { realm_id: realmId, is_system_group: true },
    data: {
      can_add_members_group_id: nobody,
      can_join_group_id: nobody,
      can_leave_group_id: nobody,
      can_manage_group_id: nobody,
      can_mention_group_id: groups["role:everyone"],
      can_remove_members_group_id: nobody,
    },
  });
  await tx.realm.update({
    where: { id: realmId },
    data: {
      can_create_public_channel_group_id: groups["role:members"],
      can_create_private_channel_group_id: groups["role:members"],
      can_create_web_public_channel_group_id: groups["role:owners"],
      can_invite_users_group_id: groups["role:members"],
      can_create_groups_id: groups["role:members"],
      can_manage_all_groups_id: groups["role:administrators"],
      can_add_subscribers_group_id: groups["role:members"],
      can_access_all_users_group_id: groups["role:everyone"],
      can_create_bots_group_id: groups["role:members"],
    },
  });
  return { realmId, groups };
}

/** The ids of a realm's system groups, by name. */
export async function systemGroupIds(
  tx: Prisma.TransactionClient,
  realmId: number,
): Promise<Record<SystemGroupName, number>> {
  const rows = await tx.userGroup.findMany({ where: { realm_id: realmId, is_system_group: true } });
  const ids = {} as Record<SystemGroupName, number>;
  for (const name of [...SYSTEM_GROUPS, "role:nobody"] as const) {
    const row = rows.find((g) => g.name === name);
    if (row === undefined) throw new Error(`realm ${realmId} has no ${name} group`);
    ids[name] = row.id;
  }
  return ids;
}

/** A new user or bot. */
export interface NewAccount {
  realmId: number;
  email: string;
  fullName: string;
  /** A role of {@link Role}; bots are members. */
  role?: number;
  bot?: { ownerId: number | null; system?: boolean; type?: number };
}

/**
 * Creates a user or generic bot with a fresh API key and puts it in the system
 * group of its role, inside transaction `tx`; returns its id and key.
 */
export async function createAccount(
  tx: Prisma.TransactionClient,
  account: NewAccount,
): Promise<{ id: number; apiKey: string }> {
  const role = account.bot === undefined ? (account.role ?? Role.MEMBER) : Role.MEMBER;
  const apiKey = generateApiKey();
  const user = await tx.user.create({
    data: {
      realm_id: account.realmId,
      email: account.email,
      delivery_email: account.email,
      full_name: account.fullName,
      role,
      api_key: apiKey,
      ...(account.bot === undefined
        ? {}
        : {
            is_bot: true,
            bot_type: account.bot.type ?? BotType.GENERIC,
            bot_owner_id: account.bot.ownerId,
            is_system_bot: account.bot.system ?? false,
          }),
    },
  });
  const group = await tx.userGroup.findFirstOrThrow({
    where: { realm_id: account.realmId, name: GROUP_OF_ROLE[role] ?? "role:everyone" },
  });
  await tx.userGroupMember.create({ data: { group_id: group.id, user_id: user.id } });
  return { id: user.id, apiKey };
}

/** Zulip's defaults for a new channel's group settings. */
export function defaultChannelGroups(groups: Record<SystemGroupName, number>) {
  return {
    can_add_subscribers_group_id: groups["role:nobody"],
    can_administer_channel_group_id: groups["role:nobody"],
    can_create_topic_group_id: groups["role:everyone"],
    can_delete_any_message_group_id: groups["role:administrators"],
    can_delete_own_message_group_id: groups["role:everyone"],
    can_move_messages_out_of_channel_group_id: groups["role:nobody"],
    can_move_messages_within_channel_group_id: groups["role:nobody"],
    can_remove_subscribers_group_id: groups["role:administrators"],
    can_resolve_topics_group_id: groups["role:nobody"],
    can_send_message_group_id: groups["role:everyone"],
    can_subscribe_group_id: groups["role:nobody"],
  };
}

/** The demo realm's people: email, full name and role. */
export const DEMO_PEOPLE = [
  { key: "desdemona", full_name: "Desdemona", role: Role.OWNER },
  { key: "iago", full_name: "Iago", role: Role.ADMINISTRATOR },
  { key: "prospero", full_name: "Prospero from The Tempest", role: Role.MODERATOR },
  { key: "hamlet", full_name: "King Hamlet", role: Role.MEMBER },
  { key: "othello", full_name: "Othello, the Moor of Venice", role: Role.MEMBER },
  { key: "cordelia", full_name: "Cordelia, Lear's daughter", role: Role.MEMBER },
  { key: "polonius", full_name: "Polonius", role: Role.GUEST },
] as const;

/** A key of {@link DEMO_PEOPLE}. */
export type DemoPerson = (typeof DEMO_PEOPLE)[number]["key"];

const TOPICS = ["greetings", "plans", "castle", "weather", "rehearsal"];

/**
 * Seeds the demo realm (the root realm, "Demo") in one transaction: its people
 * and bots, channels, a group, linkifiers, profile fields and 50 messages that
 * othello and cordelia have not read. API keys are random per database.
 */
export async function seedDemoRealm(prisma: PrismaClient): Promise<void> {
  await prisma.$transaction(
    async (tx) => {
      const { realmId, groups } = await createRealm(tx, {
        subdomain: "",
        name: "Demo",
        description: "The demo organization of chat-api: characters from Shakespeare.",
      });
      const people: Record<string, number> = {};
      for (const person of DEMO_PEOPLE) {
        const { id } = await createAccount(tx, {
          realmId,
          email: `${person.key}@example.com`,
          fullName: person.full_name,
          role: person.role,
        });
        people[person.key] = id;
      }
      const id = (key: DemoPerson): number => people[key] ?? 0;
      await createAccount(tx, {
        realmId,
        email: "hamlet-bot@example.com",
        fullName: "Hamlet's bot",
        bot: { ownerId: id("hamlet") },
      });
      await createAccount(tx, {
        realmId,
        email: "notification-bot@example.com",
        fullName: "Notification Bot",
        bot: { ownerId: null, system: true },
      });

      const channelGroups = defaultChannelGroups(groups);
      const channel = (name: string, description: string, invite_only = false) =>
        tx.channel.create({
          data: {
            realm_id: realmId,
            name,
            description,
            rendered_description: renderPlainText(description),
            invite_only,
            history_public_to_subscribers: !invite_only,
            is_default_stream: !invite_only,
            creator_id: id("desdemona"),
            ...channelGroups,
          },
        });
      const verona = await channel("Verona", "Announcements and the fair city of Verona.");
      const denmark = await channel("Denmark", "Something is rotten in the state of Denmark.");
      const scotland = await channel("Scotland", "The Scottish play.");
      const coreTeam = await channel("core team", "A private channel for the core team.", true);
      await tx.realm.update({
        where: { id: realmId },
        data: { new_stream_announcements_stream_id: verona.id },
      });

      const humans = DEMO_PEOPLE.map((p) => id(p.key));
      const members = new Map<number, number[]>([
        [verona.id, humans],
        [denmark.id, humans],
        [scotland.id, humans],
        [coreTeam.id, [id("desdemona"), id("iago"), id("hamlet")]],
      ]);
      await tx.subscription.createMany({
        data: [...members].flatMap(([channel_id, users]) =>
          users.map((user_id) => ({ user_id, channel_id })),
        ),
      });

      const named = await tx.userGroup.create({
        data: {
          realm_id: realmId,
          name: "hamletcharacters",
          description: "Characters of Hamlet",
          creator_id: id("desdemona"),
          can_add_members_group_id: groups["role:nobody"],
          can_join_group_id: groups["role:nobody"],
          can_leave_group_id: groups["role:everyone"],
          can_manage_group_id: groups["role:nobody"],
          can_mention_group_id: groups["role:everyone"],
          can_remove_members_group_id: groups["role:nobody"],
        },
      });
      await tx.userGroupMember.createMany({
        data: [id("hamlet"), id("cordelia")].map((user_id) => ({ group_id: named.id, user_id })),
      });

      await tx.linkifier.createMany({
        data: [
          {
            realm_id: realmId,
            pattern: "#(?P<id>[0-9]+)",
            url_template: "https://github.com/zulip/zulip/issues/{id}",
            order: 0,
          },
          {
            realm_id: realmId,
            pattern: "RFC(?P<rfc>[0-9]+)",
            url_template: "https://www.rfc-editor.org/rfc/rfc{rfc}",
            order: 1,
          },
        ],
      });
      await tx.customProfileField.createMany({
        data: [
          {
            realm_id: realmId,
            name: "Phone number",
            hint: "A number people can call",
            field_type: 1,
            order: 0,
          },
          {
            realm_id: realmId,
            name: "Biography",
            hint: "What are you known for?",
            field_type: 2,
            order: 1,
          },
          {
            realm_id: realmId,
            name: "Favorite editor",
            field_type: 3,
            order: 2,
            field_data: JSON.stringify({
              emacs: { text: "Emacs", order: "1" },
              vim: { text: "Vim", order: "2" },
            }),
          },
        ],
      });

      const senders: DemoPerson[] = ["desdemona", "iago", "hamlet", "prospero", "polonius"];
      const publicChannels = [verona, denmark, scotland];
      for (let n = 0; n < 50; n++) {
        const sender = id(senders[n % senders.length] ?? "desdemona");
        const target = publicChannels[n % publicChannels.length] ?? verona;
        const content = `Message ${n + 1} of the demo, about ${TOPICS[n % TOPICS.length] ?? "greetings"}.`;
        const message = await tx.message.create({
          data: {
            realm_id: realmId,
            sender_id: sender,
            channel_id: target.id,
            topic: TOPICS[n % TOPICS.length] ?? "greetings",
            content,
            rendered_content: renderPlainText(content),
            date_sent: new Date(Date.UTC(2026, 0, 1, 9, n)),
          },
        });
        const unreadFor = new Set([id("othello"), id("cordelia")]);
        await tx.userMessage.createMany({
          data: (members.get(target.id) ?? []).map((user_id) => ({
            user_id,
            message_id: message.id,
            flags: unreadFor.has(user_id) ? 0n : 1n,
          })),
        });
      }
    },
    { timeout: 60_000 },
  );
}
