import {
  checkDraftSync,
  doCreateDrafts,
  doDeleteDraft,
  doEditDraft,
  draftListSchema,
  listDrafts,
} from "../actions/drafts";
import {
  doCreateSavedSnippet,
  doDeleteSavedSnippet,
  doEditSavedSnippet,
  listSavedSnippets,
} from "../actions/saved-snippets";
import { json, str } from "../lib/params";
import type { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** A user's drafts and saved snippets: private to them, synchronized to their clients by events. */
export function draftRoutes(api: Api, { db, config }: Services): void {
  api.user(
    "GET",
    "/drafts",
    { operationId: "get-drafts", summary: "Get drafts", tag: "drafts", params: {} },
    async ({ user }) => {
      await checkDraftSync(db.prisma, user.id);
      const drafts = await listDrafts(db.prisma, user.id);
      return { count: drafts.length, drafts };
    },
  );

  api.user(
    "POST",
    "/drafts",
    {
      operationId: "create-drafts",
      summary: "Create drafts",
      tag: "drafts",
      params: { drafts: json(draftListSchema.max(100)).default([]) },
    },
    async ({ user, params }) => ({
      ids: await doCreateDrafts(db, user, params.drafts, config.CHAT_MAX_OBJECTS_PER_USER),
    }),
  );

  api.user(
    "PATCH",
    "/drafts/{draft_id}",
    {
      operationId: "edit-draft",
      summary: "Edit a draft",
      tag: "drafts",
      // Parsed by the action, after the sync setting and the draft's existence.
      params: { draft: str({ ownNulCheck: true }).describe("A Draft object, as JSON") },
    },
    async ({ user, path, params }) => {
      await doEditDraft(db, user, path.draft_id, params.draft);
      return {};
    },
  );

  api.user(
    "DELETE",
    "/drafts/{draft_id}",
    { operationId: "delete-draft", summary: "Delete a draft", tag: "drafts", params: {} },
    async ({ user, path }) => {
      await doDeleteDraft(db.prisma, user, path.draft_id);
      return {};
    },
  );

  api.user(
    "GET",
    "/saved_snippets",
    {
      operationId: "get-saved-snippets",
      summary: "Get all saved snippets",
      tag: "drafts",
      params: {},
    },
    async ({ user }) => ({ saved_snippets: await listSavedSnippets(db.prisma, user.id) }),
  );

  api.user(
    "POST",
    "/saved_snippets",
    {
      operationId: "create-saved-snippet",
      summary: "Create a saved snippet",
      tag: "drafts",
      params: { title: str(), content: str() },
    },
    async ({ user, params }) => ({
      saved_snippet_id: await doCreateSavedSnippet(
        db.prisma,
        user,
        params.title,
        params.content,
        config.CHAT_MAX_OBJECTS_PER_USER,
      ),
    }),
  );

  api.user(
    "PATCH",
    "/saved_snippets/{saved_snippet_id}",
    {
      operationId: "edit-saved-snippet",
      summary: "Edit a saved snippet",
      tag: "drafts",
      params: { title: str().optional(), content: str().optional() },
    },
    async ({ user, path, params }) => {
      await doEditSavedSnippet(db.prisma, user, path.saved_snippet_id, params);
      return {};
    },
  );

  api.user(
    "DELETE",
    "/saved_snippets/{saved_snippet_id}",
    {
      operationId: "delete-saved-snippet",
      summary: "Delete a saved snippet",
      tag: "drafts",
      params: {},
    },
    async ({ user, path }) => {
      await doDeleteSavedSnippet(db.prisma, user, path.saved_snippet_id);
      return {};
    },
  );
}
