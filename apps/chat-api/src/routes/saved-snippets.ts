"../actions/drafts";
import {
  doCreateSavedSnippet,
  doDeleteSavedSnippet,
  doEditSavedSnippet,
  listSavedSnippets,
} from "../actions/saved-snippets";
import { str } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** A user's saved snippets: private to them, synchronized to their clients by events. */
export function savedSnippetRoutes({ db, config }: Services) {
  return {
    getSavedSnippets: userEndpoint(
      {
        operationId: "get-saved-snippets",
        summary: "Get all saved snippets",
        tag: "drafts",
        params: {},
      },
      async ({ user }) => ({ saved_snippets: await listSavedSnippets(db, user.id) }),
    ),
    createSavedSnippet: userEndpoint(
      {
        operationId: "create-saved-snippet",
        summary: "Create a saved snippet",
        tag: "drafts",
        params: { title: str(), content: str() },
      },
      async ({ user, params }) => ({
        saved_snippet_id: await doCreateSavedSnippet(
          db,
          user,
          params.title,
          params.content,
          config.CHAT_MAX_OBJECTS_PER_USER,
        ),
      }),
    ),
    editSavedSnippet: userEndpoint(
      {
        pathParams: ["saved_snippet_id"],
        operationId: "edit-saved-snippet",
        summary: "Edit a saved snippet",
        tag: "drafts",
        params: { title: str().optional(), content: str().optional() },
      },
      async ({ user, path, params }) => {
        await doEditSavedSnippet(db, user, path.saved_snippet_id, params);
        return {};
      },
    ),
    deleteSavedSnippet: userEndpoint(
      {
        pathParams: ["saved_snippet_id"],
        operationId: "delete-saved-snippet",
        summary: "Delete a saved snippet",
        tag: "drafts",
        params: {},
      },
      async ({ user, path }) => {
        await doDeleteSavedSnippet(db, user, path.saved_snippet_id);
        return {};
      },
    ),
  };
}
