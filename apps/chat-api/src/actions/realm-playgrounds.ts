import { activeUserIds } from "../db/queries/users";
import {
  deletePlayground,
  insertPlayground,
  playgroundCount,
  playgroundsOf,
} from "../db/queries/playgrounds";
import { isUniqueViolation } from "../db/unavailable";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import { JsonableError } from "@repo/envelope";
import { sendEvent } from "../realtime/queue";
import { isSafeUrlTemplate } from "../lib/markdown/linkifiers";
import { codePoints } from "../lib/text";
import { templateVariables } from "./realm-linkifiers";
import { checkCap } from "./caps";

/**
 * Code playgrounds (feature level 49): for a Pygments language, a named URL
 * template with one `code` variable, where clients open a code block.
 * Administrators add and remove them; the realm gets the whole list as a
 * `realm_playgrounds` event and in register's `realm_playgrounds`.
 */

/** What POST /realm/playgrounds asks for. */
export interface NewPlayground {
  name: string;
  pygmentsLanguage: string;
  urlTemplate: string;
}

/** Zulip's characters of a Pygments language name. */
const PYGMENTS_LANGUAGE = /^[ a-zA-Z0-9_+\-./#]*$/;

/** Zulip's checks of a playground, with its messages. */
function checkPlayground(playground: NewPlayground): void {
  if (playground.name.trim() === "") throw new JsonableError("Name cannot be blank.");
  if (codePoints(playground.name) > 50)
    throw new JsonableError("name is too long (limit: 50 characters)");
  if (playground.pygmentsLanguage === "")
    throw new JsonableError("Pygments language cannot be blank.");
  if (codePoints(playground.pygmentsLanguage) > 40)
    throw new JsonableError("pygments_language is too long (limit: 40 characters)");
  if (!PYGMENTS_LANGUAGE.test(playground.pygmentsLanguage))
    throw new JsonableError("Invalid characters in pygments language");
  const variables = templateVariables(playground.urlTemplate);
  if (variables === null) throw new JsonableError("Invalid URL template.");
  if (!isSafeUrlTemplate(playground.urlTemplate))
    throw new JsonableError(
      "Invalid URL template: it must start with http://, https:// or / (a link on this server).",
    );
  if (variables.size !== 1 || !variables.has("code"))
    throw new JsonableError('"code" should be the only variable present in the URL template');
}

const duplicate = () =>
  new JsonableError("Realm playground with this Realm, Pygments language and Name already exists.");

/** Adds a code playground (at most `cap` per realm); answers its id. */
export async function doAddPlayground(
  db: Database,
  realmId: number,
  playground: NewPlayground,
  cap: number,
): Promise<number> {
  checkPlayground(playground);
  try {
    return await db.transaction(async (tx) => {
      checkCap(await playgroundCount(tx, realmId), 1, cap, "code playgrounds");
      const id = await insertPlayground(tx, {
        realm_id: realmId,
        name: playground.name,
        pygments_language: playground.pygmentsLanguage,
        url_template: playground.urlTemplate,
      });
      await sendPlaygroundsEvent(tx, realmId);
      return id;
    });
  } catch (error) {
    throw isUniqueViolation(error) ? duplicate() : error;
  }
}

/** Removes one of the realm's code playgrounds; another realm's or an unknown one is `Invalid playground`. */
export async function doRemovePlayground(db: Database, realmId: number, id: number): Promise<void> {
  await db.transaction(async (tx) => {
    if (!(await deletePlayground(tx, realmId, id))) throw new JsonableError("Invalid playground");
    await sendPlaygroundsEvent(tx, realmId);
  });
}

/** Tells the realm its playgrounds changed (`realm_playgrounds`, the whole list), inside `tx`. */
async function sendPlaygroundsEvent(tx: Tx, realmId: number): Promise<void> {
  await sendEvent(tx, await activeUserIds(tx, realmId), {
    type: "realm_playgrounds",
    realm_playgrounds: await playgroundsOf(tx, realmId),
  });
}

/** The realm's code playgrounds as register's `realm_playgrounds` lists them. */
export function listPlaygrounds(tx: Tx, realmId: number) {
  return playgroundsOf(tx, realmId);
}
