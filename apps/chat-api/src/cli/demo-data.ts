import type { Database } from "../db/database";
import { createAccount } from "../actions/accounts";
import { createRealm, defaultChannelGroups } from "../actions/realm-creation";
import { renderPlain } from "../lib/render";
import { hashPassword } from "../lib/passwords";
import { Role } from "../lib/roles";
import { setCanCreateUsers, setPasswordHash } from "../db/queries/users";
import { insertChannel } from "../db/queries/channels";
import { activateSubscriptions } from "../db/queries/subscriptions";
import { updateRealm } from "../db/queries/realms";
import { insertUserGroup } from "../db/queries/user-groups";
import { insertLinkifier } from "../db/queries/linkifiers";
import { insertProfileField } from "../db/queries/profile-fields";
import { insertMessageRows, newMessageId } from "../db/queries/messages";

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
      await setCanCreateUsers(tx, id("desdemona"), true);
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
        insertChannel(tx, {
          realm_id: realmId,
          name,
          description,
          rendered_description: await renderPlain(description),
          invite_only,
          history_public_to_subscribers: !invite_only,
          is_default_stream: !invite_only,
          creator_id: id("desdemona"),
          ...channelGroups,
        });
      const verona = await channel("Verona", "Announcements and the fair city of Verona.");
      const denmark = await channel("Denmark", "Something is rotten in the state of Denmark.");
      const scotland = await channel("Scotland", "The Scottish play.");
      const coreTeam = await channel("core team", "A private channel for the core team.", true);
      await updateRealm(tx, realmId, { new_stream_announcements_stream_id: verona.id });

      const humans = DEMO_PEOPLE.map((p) => id(p.key));
      const members = new Map<number, number[]>([
        [verona.id, humans],
        [denmark.id, humans],
        [scotland.id, humans],
        [coreTeam.id, [id("desdemona"), id("iago"), id("hamlet")]],
      ]);
      for (const [channelId, users] of members) await activateSubscriptions(tx, channelId, users);

      await insertUserGroup(
        tx,
        {
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
        [id("hamlet"), id("cordelia")],
        [],
      );

      await insertLinkifier(tx, {
        realm_id: realmId,
        pattern: "#(?P<id>[0-9]+)",
        url_template: "https://github.com/zulip/zulip/issues/{id}",
        order: 0,
      });
      await insertLinkifier(tx, {
        realm_id: realmId,
        pattern: "RFC(?P<rfc>[0-9]+)",
        url_template: "https://www.rfc-editor.org/rfc/rfc{rfc}",
        order: 1,
      });
      const field = { realm_id: realmId, hint: "", field_data: "" } as const;
      const summary = {
        display_in_profile_summary: false,
        required: false,
        editable_by_user: true,
      };
      await insertProfileField(tx, {
        ...field,
        ...summary,
        name: "Phone number",
        hint: "A number people can call",
        field_type: 1,
        order: 0,
      });
      await insertProfileField(tx, {
        ...field,
        ...summary,
        name: "Biography",
        hint: "What are you known for?",
        field_type: 2,
        order: 1,
      });
      await insertProfileField(tx, {
        ...field,
        ...summary,
        name: "Favorite editor",
        field_type: 3,
        order: 2,
        field_data: JSON.stringify({
          emacs: { text: "Emacs", order: "1" },
          vim: { text: "Vim", order: "2" },
        }),
      });

      const senders: DemoPerson[] = ["desdemona", "iago", "hamlet", "prospero", "polonius"];
      const publicChannels = [verona, denmark, scotland];
      for (let n = 0; n < 50; n++) {
        const sender = id(senders[n % senders.length] ?? "desdemona");
        const target = publicChannels[n % publicChannels.length] ?? verona;
        const content = `Message ${n + 1} of the demo, about ${TOPICS[n % TOPICS.length] ?? "greetings"}.`;
        const { id: messageId } = await newMessageId(tx, realmId);
        const recipients = members.get(target.id) ?? [];
        const unreadFor = new Set([id("othello"), id("cordelia")]);
        await insertMessageRows(
          tx,
          {
            id: messageId,
            realm_id: realmId,
            sender_id: sender,
            channel_id: target.id,
            topic: TOPICS[n % TOPICS.length] ?? "greetings",
            dm_key: null,
            content,
            rendered_content: await renderPlain(content),
            date_sent: new Date(Date.UTC(2026, 0, 1, 9, n)),
          },
          recipients,
          recipients.map((userId) => (unreadFor.has(userId) ? 0n : 1n)),
          [],
        );
      }
    },
    { timeout: 60_000 },
  );
}
