import {
  deleteNavigationView,
  hasNavigationViewNamed,
  insertNavigationView,
  navigationViewCount,
  navigationViewOf,
  navigationViewsOf,
  updateNavigationView,
} from "../db/queries/navigation-views";
import type { Tx } from "../db/kysely";
import type { Database } from "../db/database";
import type { NavigationView } from "../gen/prisma/client";
import { JsonableError, ResourceNotFoundError } from "@repo/envelope";
import { checkCap } from "./caps";
import { sendEvent } from "../realtime/queue";
import type { AuthedUser } from "../caches/auth";
import { codePoints } from "../lib/text";

/**
 * Navigation views (feature level 390): how a person's web app shows its
 * built-in views (pinned in the left sidebar or in its "more views" menu)
 * and the named views of their own, each keyed by its URL fragment.
 */

/** The built-in views' fragments (Zulip's): they take no name. */
export const BUILT_IN_VIEW_FRAGMENTS: ReadonlySet<string> = new Set([
  "inbox",
  "recent",
  "feed",
  "drafts",
  "narrow/has/reaction/sender/me",
  "narrow/is/mentioned",
  "narrow/is/starred",
]);

/** A fragment's and a name's longest lengths (Zulip sets none; the columns' sizes). */
export const MAX_FRAGMENT_LENGTH = 1000;
export const MAX_VIEW_NAME_LENGTH = 100;

/** A view on the wire (GET /navigation_views, register, `navigation_view` events). */
function navigationViewView(view: NavigationView) {
  return { fragment: view.fragment, is_pinned: view.is_pinned, name: view.name };
}

/** The caller's views (GET /navigation_views and register's `navigation_views`). */
export async function listNavigationViews(tx: Tx, userId: number) {
  return (await navigationViewsOf(tx, userId)).map(navigationViewView);
}

/** A fragment as Zulip takes it: trimmed, not empty, within its length. */
export function checkFragment(fragment: string): string {
  const trimmed = fragment.trim();
  if (trimmed === "") throw new JsonableError("fragment cannot be blank");
  if (codePoints(trimmed) > MAX_FRAGMENT_LENGTH)
    throw new JsonableError(`fragment is too long (limit: ${MAX_FRAGMENT_LENGTH} characters)`);
  return trimmed;
}

/** A view's name for `fragment`: none for a built-in view, one for any other. */
function checkName(fragment: string, name: string | undefined, required: boolean) {
  if (name === undefined) {
    if (required && !BUILT_IN_VIEW_FRAGMENTS.has(fragment))
      throw new JsonableError("Custom views must have a valid name.");
    return undefined;
  }
  if (BUILT_IN_VIEW_FRAGMENTS.has(fragment))
    throw new JsonableError("Built-in views cannot have a custom name.");
  const trimmed = name.trim();
  if (trimmed === "") throw new JsonableError("Custom views must have a valid name.");
  if (codePoints(trimmed) > MAX_VIEW_NAME_LENGTH)
    throw new JsonableError(`name is too long (limit: ${MAX_VIEW_NAME_LENGTH} characters)`);
  return trimmed;
}

async function ownView(tx: Tx, userId: number, fragment: string) {
  const view = await navigationViewOf(tx, userId, fragment);
  if (view === null) throw new ResourceNotFoundError("Navigation view does not exist.");
  return view;
}

/** POST /navigation_views: a new view (within the per-person cap); sends `navigation_view`/`add`. */
export async function doAddNavigationView(
  db: Database,
  user: AuthedUser,
  request: { fragment: string; is_pinned: boolean; name: string | undefined },
  cap: number,
): Promise<void> {
  const fragment = checkFragment(request.fragment);
  const name = checkName(fragment, request.name, true);
  await db.transaction(async (tx) => {
    if (
      (await navigationViewOf(tx, user.id, fragment)) !== null ||
      (name !== undefined && (await hasNavigationViewNamed(tx, user.id, name)))
    )
      throw new JsonableError("Navigation view already exists.");
    checkCap(await navigationViewCount(tx, user.id), 1, cap, "navigation views");
    const view = await insertNavigationView(tx, {
      user_id: user.id,
      fragment,
      is_pinned: request.is_pinned,
      name: name ?? null,
    });
    await sendEvent(tx, [user.id], {
      type: "navigation_view",
      op: "add",
      navigation_view: navigationViewView(view),
    });
  });
}

/** PATCH /navigation_views/{fragment}: its pinning and (a custom view's) name; `navigation_view`/`update`. */
export async function doUpdateNavigationView(
  db: Database,
  user: AuthedUser,
  request: { fragment: string; is_pinned: boolean | undefined; name: string | undefined },
): Promise<void> {
  const fragment = checkFragment(request.fragment);
  const name = checkName(fragment, request.name, false);
  await db.transaction(async (tx) => {
    if (name !== undefined && (await hasNavigationViewNamed(tx, user.id, name)))
      throw new JsonableError("Navigation view already exists.");
    const view = await ownView(tx, user.id, fragment);
    const data = {
      ...(name === undefined ? {} : { name }),
      ...(request.is_pinned === undefined ? {} : { is_pinned: request.is_pinned }),
    };
    await updateNavigationView(tx, view.id, data);
    await sendEvent(tx, [user.id], { type: "navigation_view", op: "update", fragment, data });
  });
}

/** DELETE /navigation_views/{fragment}; sends `navigation_view`/`remove`. */
export async function doRemoveNavigationView(
  db: Database,
  user: AuthedUser,
  fragment: string,
): Promise<void> {
  const trimmed = checkFragment(fragment);
  await db.transaction(async (tx) => {
    await deleteNavigationView(tx, (await ownView(tx, user.id, trimmed)).id);
    await sendEvent(tx, [user.id], { type: "navigation_view", op: "remove", fragment: trimmed });
  });
}
