import type { Tx } from "../db/kysely";
import { alertWordsOf, topicParticipants } from "../db/queries/messages";
import { membersAmong, mentionableGroups, withSubgroups } from "../db/queries/user-groups";
import { mentionablePeople } from "../db/queries/users";
import { authorSettingsRow } from "../db/queries/user-settings";
import { linkableChannels } from "../db/queries/channels";
import { linkifiersOf } from "../db/queries/linkifiers";
import type { AuthedUser } from "../caches/auth";
import { MESSAGE_FLAGS } from "../lib/message-flag-bits";
import { RateLimitedError } from "@repo/envelope";
import type { RenderContext, RenderResult } from "../lib/markdown/context";
import { referencedNames } from "../lib/markdown/references";
import { type Requester, render } from "../lib/render-pool";
import { userSettings } from "../lib/user-settings";
import { liveCustomEmoji } from "./custom-emoji";

/** Who renders: the realm, and the viewer whose channels a link may name. */
export interface RenderAuthor {
  realm_id: number;
  /** The sender; undefined for realm texts (descriptions), which link public channels only. */
  id?: number;
}

/**
 * What a content refers to, looked up in the realm: only the people, groups,
 * channels and custom emoji its `@**...**`, `@*...*`, `#**...**` and
 * `:name:` name (none when it names none), the realm's linkifiers in their
 * order, and the author's `translate_emoticons` when it holds an emoticon.
 * A private channel is linked only for its subscribers.
 */
export async function renderContext(
  tx: Tx,
  author: RenderAuthor,
  content: string,
): Promise<RenderContext> {
  const names = referencedNames(content);
  const [people, groups, channels, linkifiers, authorRow, customEmoji] = await Promise.all([
    names.people.length === 0 && names.ids.length === 0
      ? []
      : mentionablePeople(tx, author.realm_id, names.people, names.ids),
    names.groups.length === 0 ? [] : mentionableGroups(tx, author.realm_id, names.groups),
    names.channels.length === 0
      ? []
      : linkableChannels(tx, author.realm_id, author.id, names.channels),
    linkifiersOf(tx, author.realm_id),
    // The author's translate_emoticons, when the content holds an emoticon.
    !names.emoticons || author.id === undefined ? null : authorSettingsRow(tx, author.id),
    liveCustomEmoji(tx, author.realm_id, names.emoji),
  ]);
  return {
    people,
    groups: groups.flatMap((g) => (g.name === null ? [] : [{ id: g.id, name: g.name }])),
    channels,
    linkifiers: linkifiers.map((l) => ({ pattern: l.pattern, url_template: l.url_template })),
    customEmoji: customEmoji.map((e) => ({ name: e.name, source_url: e.source_url })),
    translateEmoticons: authorRow === null ? false : userSettings(authorRow).translate_emoticons,
  };
}

/**
 * Renders `content` for `author` with the realm's people, groups, channels
 * and linkifiers, on the render pool for `requester` (the person whose
 * request it is; undefined for text the server writes itself).
 */
export async function renderContent(
  tx: Tx,
  author: RenderAuthor,
  content: string,
  requester: Requester,
): Promise<RenderResult> {
  return render(content, await renderContext(tx, author, content), requester);
}

/** A render made before a transaction, taken inside it: its result, or its error. */
export type RenderedAhead = () => RenderResult;

/**
 * {@link renderContent} before a transaction begins, so that no transaction
 * (nor PGlite's one connection) waits on a render. A render that fails is
 * reported when the transaction takes it, where Zulip's order of errors has
 * it (after the permission checks); one refused for the requester's share of
 * the pool (429) is reported at once.
 */
export async function renderAhead(
  db: Tx,
  author: RenderAuthor,
  content: string,
  requester: Requester,
): Promise<RenderedAhead> {
  try {
    const rendered = await renderContent(db, author, content, requester);
    return () => rendered;
  } catch (error) {
    if (error instanceof RateLimitedError) throw error;
    return () => {
      throw error;
    };
  }
}

/**
 * The flags a rendered message gives each of its `recipients` (Zulip's
 * rules): `mentioned` to those it names, and to the members of the groups it
 * names; `wildcard_mentioned` to every recipient for `@**all**` and its
 * kin, to the topic's participants for `@**topic**`; `has_alert_word` to
 * those whose alert words it contains (whole words, any case; `alertWords`
 * when the caller read them with the recipients, else read here). The
 * sender's own mention of themselves flags nothing.
 */
export async function contentFlags(
  tx: Tx,
  rendered: RenderResult,
  content: string,
  recipients: readonly number[],
  where: { senderId: number; channelId: number | null; topic: string },
  alertWords?: readonly { user_id: number; word: string }[],
): Promise<Map<number, bigint>> {
  const flags = new Map<number, bigint>();
  const receiving = new Set(recipients);
  const add = (userId: number, bit: bigint) => {
    if (userId === where.senderId || !receiving.has(userId)) return;
    flags.set(userId, (flags.get(userId) ?? 0n) | bit);
  };
  for (const id of rendered.mentionedUserIds) add(id, MESSAGE_FLAGS.mentioned);
  if (rendered.mentionedGroupIds.size > 0) {
    const groups = await withSubgroups(tx, [...rendered.mentionedGroupIds]);
    for (const id of await membersAmong(tx, groups, recipients)) add(id, MESSAGE_FLAGS.mentioned);
  }
  if (
    rendered.wildcard === "channel" ||
    (rendered.wildcard === "topic" && where.channelId === null)
  )
    for (const id of recipients) add(id, MESSAGE_FLAGS.wildcard_mentioned);
  if (rendered.wildcard === "topic" && where.channelId !== null) {
    for (const id of await topicParticipants(tx, where.channelId, where.topic, recipients))
      add(id, MESSAGE_FLAGS.wildcard_mentioned);
  }
  const words = alertWords ?? (await alertWordsOf(tx, recipients));
  const text = content.toLowerCase();
  for (const { user_id, word } of words)
    if (containsWord(text, word.toLowerCase())) add(user_id, MESSAGE_FLAGS.has_alert_word);
  return flags;
}

/** Whether `word` occurs in `text` as a whole word (not inside another). */
function containsWord(text: string, word: string): boolean {
  if (word === "") return false;
  const isWordChar = (c: string) => /[\p{L}\p{N}_]/u.test(c);
  for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
    const before = at === 0 ? "" : text.charAt(at - 1);
    const after = text.charAt(at + word.length);
    if (!isWordChar(before) && !isWordChar(after)) return true;
  }
  return false;
}

/** POST /messages/render: the HTML `content` would get if `user` sent it now. */
export async function renderPreview(db: Tx, user: AuthedUser, content: string): Promise<string> {
  return (await renderContent(db, user, content, user.id)).html;
}
