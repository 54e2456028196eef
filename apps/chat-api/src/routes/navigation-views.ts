import {
  doAddNavigationView,
  doRemoveNavigationView,
  doUpdateNavigationView,
  listNavigationViews,
} from "../actions/navigation-views";
import { bool, str } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** A person's navigation views (feature level 390): private to them, synchronized by events. */
export function navigationViewRoutes({ db, config }: Services) {
  return {
    getNavigationViews: userEndpoint(
      {
        operationId: "get-navigation-views",
        summary: "Get all navigation views",
        tag: "navigation_views",
        params: {},
      },
      async ({ user }) => ({ navigation_views: await listNavigationViews(db, user.id) }),
    ),
    addNavigationView: userEndpoint(
      {
        operationId: "add-navigation-view",
        summary: "Add a navigation view",
        tag: "navigation_views",
        params: {
          fragment: str({ maxLength: 10_000 }).describe("The view's URL fragment, its key"),
          is_pinned: bool().describe("Pinned in the left sidebar, or in the menu of more views"),
          name: str({ maxLength: 10_000 })
            .optional()
            .describe("A custom view's name; none for a built-in view"),
        },
      },
      async ({ user, params }) => {
        await doAddNavigationView(db, user, params, config.CHAT_MAX_OBJECTS_PER_USER);
        return {};
      },
    ),
    editNavigationView: userEndpoint(
      {
        pathParams: ["fragment"],
        operationId: "edit-navigation-view",
        summary: "Update the navigation view",
        tag: "navigation_views",
        params: {
          is_pinned: bool().optional().describe("Pinned in the left sidebar"),
          name: str({ maxLength: 10_000 }).optional().describe("A custom view's new name"),
        },
      },
      async ({ user, path, params }) => {
        await doUpdateNavigationView(db, user, { fragment: path.fragment, ...params });
        return {};
      },
    ),
    removeNavigationView: userEndpoint(
      {
        pathParams: ["fragment"],
        operationId: "remove-navigation-view",
        summary: "Remove a navigation view",
        tag: "navigation_views",
        params: {},
      },
      async ({ user, path }) => {
        await doRemoveNavigationView(db, user, path.fragment);
        return {};
      },
    ),
  };
}
