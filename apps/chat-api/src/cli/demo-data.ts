import type { Database } from "../db/database";
import { createAccount } from "../actions/accounts";
import { createRealm, defaultChannelGroups } from "../actions/realm-creation";
import { renderPlain } from "../lib/render";
import { hashPassword } from "../lib/passwords";
import { Role } from "../lib/roles";
import { setPasswordHash } from "../db/queries/users";

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

/** The demo people's password (development only: production never seeds), for POST /fetch_api_key. */
export const DEMO_PASSWORD = "demo-password";

/**
 * Seeds the demo realm (the root realm, "Demo") in one transaction: its people
 * and bots, channels, a group, linkifiers, profile fields and 50 messages that
 * othello and cordelia have not read. API keys are random per database; the
 * people's password is {@link DEMO_PASSWORD}.
 */
export async function seedDemoRealm(db: Database): Promise<void> {
  await db.transaction(
    async (tx) => {
      const { realmId, groups } = await createRealm(tx, {
        subdomain: "",
        name: "Demo",
        description: "The demo organization of chat-api: characters from Shakespeare.",
      });
      const people: Record<string, number> = {};
      // One hash for all: the demo password is published, so a salt per person would hide nothing.
      const password = await hashPassword(DEMO_PASSWORD);
      for (const person of DEMO_PEOPLE) {
        const { id } = await createAccount(tx, {
          realmId,
          email: `${person.key}@example.com`,
          fullName: person.full_name,
          role: person.role,
        });
        await setPasswordHash(tx, id, password);
        people[person.key] = id;
      }
      const id = (key: DemoPerson): number => people[key] ?? 0;
      // The owner may create accounts through the API (POST /users), as a server
      // operator grants with the admin CLI's set-can-create-users.
      await tx.prisma.user.update({
        where: { id: id("desdemona") },
        data: { can_create_users: true },
      });
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
      const channel = async (name: string, description: string, invite_only = false) =>
        tx.prisma.channel.create({
          data: {
            realm_id: realmId,
            name,
            description,
            rendered_description: await renderPlain(description),
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
      await tx.prisma.realm.update({
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
      await tx.prisma.subscription.createMany({
        data: [...members].flatMap(([channel_id, users]) =>
          users.map((user_id) => ({ user_id, channel_id })),
        ),
      });

      const named = await tx.prisma.userGroup.create({
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
      await tx.prisma.userGroupMember.createMany({
        data: [id("hamlet"), id("cordelia")].map((user_id) => ({ group_id: named.id, user_id })),
      });

      await tx.prisma.linkifier.createMany({
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
      await tx.prisma.customProfileField.createMany({
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
        const message = await tx.prisma.message.create({
          data: {
            realm_id: realmId,
            sender_id: sender,
            channel_id: target.id,
            topic: TOPICS[n % TOPICS.length] ?? "greetings",
            content,
            rendered_content: await renderPlain(content),
            date_sent: new Date(Date.UTC(2026, 0, 1, 9, n)),
          },
        });
        const unreadFor = new Set([id("othello"), id("cordelia")]);
        await tx.prisma.userMessage.createMany({
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
