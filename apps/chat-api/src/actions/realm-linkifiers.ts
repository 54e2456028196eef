import { activeUserIds } from "../db/queries/users";
import {
  deleteLinkifier,
  insertLinkifier,
  linkifierPatternTaken,
  updateLinkifier,
  linkifiersOf,
} from "../db/queries/linkifiers";
import { nextOrder } from "../db/queries/realms";
import { isUniqueViolation } from "../db/unavailable";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { sendEvent } from "../realtime/queue";
import { isSafeUrlTemplate } from "../lib/markdown/linkifiers";

/** An RFC 6570 expression: an optional operator and variables with prefix or explode modifiers. */
const TEMPLATE_EXPRESSION =
  /\{[+#./;?&]?[A-Za-z0-9_.%]+(?::[1-9]\d{0,3}|\*)?(?:,[A-Za-z0-9_.%]+(?::[1-9]\d{0,3}|\*)?)*\}/g;

/** The variables of an RFC 6570 URL template, or null when it is not one. */
export function templateVariables(template: string): Set<string> | null {
  if (/[{}]/.test(template.replace(TEMPLATE_EXPRESSION, ""))) return null;
  const names = new Set<string>();
  for (const expression of template.match(TEMPLATE_EXPRESSION) ?? []) {
    for (const spec of expression
      .slice(1, -1)
      .replace(/^[+#./;?&]/, "")
      .split(",")) {
      names.add(spec.replace(/(:\d+|\*)$/, ""));
    }
  }
  return names;
}

/**
 * A linkifier pattern (Python/RE2 syntax, `(?P<name>...)` groups) compiled
 * as a JavaScript regular expression, with its group names; else Zulip's
 * `Bad regular expression: ...`.
 */
export function compileLinkifierPattern(pattern: string): { groups: Set<string> } {
  const source = pattern.replace(/\(\?P</g, "(?<");
  try {
    new RegExp(source, "u");
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^.*: /, "") : "invalid";
    throw new JsonableError(`Bad regular expression: ${reason}`);
  }
  return { groups: new Set([...source.matchAll(/\(\?<([A-Za-z_]\w*)>/g)].map((m) => m[1] ?? "")) };
}

/**
 * Zulip's checks of a linkifier: the pattern compiles, the URL template is
 * RFC 6570 and links to http(s) or this server, and the two name the same
 * groups.
 */
function checkLinkifier(pattern: string, urlTemplate: string): void {
  const { groups } = compileLinkifierPattern(pattern);
  const variables = templateVariables(urlTemplate);
  if (variables === null) throw new JsonableError("Invalid URL template.");
  if (!isSafeUrlTemplate(urlTemplate))
    throw new JsonableError(
      "Invalid URL template: it must start with http://, https:// or / (a link on this server).",
    );
  const missingInPattern = [...variables].filter((v) => !groups.has(v)).sort()[0];
  if (missingInPattern !== undefined) {
    throw new JsonableError(
      `Group '${missingInPattern}' in URL template is not present in linkifier pattern.`,
    );
  }
  const missingInTemplate = [...groups].filter((g) => !variables.has(g)).sort()[0];
  if (missingInTemplate !== undefined) {
    throw new JsonableError(
      `Group '${missingInTemplate}' in linkifier pattern is not present in URL template.`,
    );
  }
}

const duplicatePattern = () =>
  new JsonableError("Linkifier with this Pattern and Realm already exists.");

/** Adds a linkifier at the end of the realm's order, after {@link checkLinkifier}. Returns its id. */
export async function doAddLinkifier(
  db: Database,
  realmId: number,
  pattern: string,
  urlTemplate: string,
): Promise<number> {
  checkLinkifier(pattern, urlTemplate);
  try {
    return await db.transaction(async (tx) => {
      if (await linkifierPatternTaken(tx, realmId, pattern)) throw duplicatePattern();
      const id = await insertLinkifier(tx, {
        realm_id: realmId,
        pattern,
        url_template: urlTemplate,
        order: await nextOrder(tx, "linkifiers", realmId),
      });
      await sendLinkifiersEvent(tx, realmId);
      return id;
    });
  } catch (error) {
    throw isUniqueViolation(error) ? duplicatePattern() : error;
  }
}

/**
 * PATCH /realm/filters/{filter_id}: changes a linkifier's pattern and URL
 * template in place (its order stays), with {@link checkLinkifier}'s checks;
 * another realm's or an unknown one is `Linkifier not found.`
 */
export async function doUpdateLinkifier(
  db: Database,
  realmId: number,
  id: number,
  pattern: string,
  urlTemplate: string,
): Promise<void> {
  checkLinkifier(pattern, urlTemplate);
  try {
    await db.transaction(async (tx) => {
      if (await linkifierPatternTaken(tx, realmId, pattern, id)) throw duplicatePattern();
      if (!(await updateLinkifier(tx, realmId, id, { pattern, url_template: urlTemplate })))
        throw new JsonableError("Linkifier not found.");
      await sendLinkifiersEvent(tx, realmId);
    });
  } catch (error) {
    throw isUniqueViolation(error) ? duplicatePattern() : error;
  }
}

/** Removes one of the realm's linkifiers; another realm's or an unknown one is `Linkifier not found.` */
export async function doRemoveLinkifier(db: Database, realmId: number, id: number): Promise<void> {
  await db.transaction(async (tx) => {
    if (!(await deleteLinkifier(tx, realmId, id))) throw new JsonableError("Linkifier not found.");
    await sendLinkifiersEvent(tx, realmId);
  });
}

/** Tells the realm its linkifiers changed (`realm_linkifiers`, the whole new list), inside `tx`. */
export async function sendLinkifiersEvent(tx: Tx, realmId: number) {
  await sendEvent(tx, await activeUserIds(tx, realmId), {
    type: "realm_linkifiers",
    realm_linkifiers: await listLinkifiers(tx, realmId),
  });
}

/** The realm's linkifiers in their order, as GET /realm/linkifiers and the events describe them. */
export async function listLinkifiers(tx: Tx, realmId: number) {
  const rows = await linkifiersOf(tx, realmId);
  return rows.map((r) => ({ pattern: r.pattern, url_template: r.url_template, id: r.id }));
}

/** The realm's linkifiers in their legacy form, `[pattern, url_template, id]` (`realm_filters`). */
export async function listLegacyFilters(tx: Tx, realmId: number) {
  return (await listLinkifiers(tx, realmId)).map((l) => [l.pattern, l.url_template, l.id]);
}
