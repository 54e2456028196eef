import {
  checkDraftSync,
  doCreateDrafts,
  doDeleteDraft,
  doEditDraft,
  draftListSchema,
  draftSchema,
  listDrafts,
} from "../actions/drafts";
import { json, jsonLater } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** A user's drafts: private to them, synchronized to their clients by events. */
export function draftRoutes({ db, config }: Services) {
  return {
    getDrafts: userEndpoint(
      { operationId: "get-drafts", summary: "Get drafts", tag: "drafts", params: {} },
      async ({ user }) => {
        await checkDraftSync(db, user.id);
        const drafts = await listDrafts(db, user.id);
        return { count: drafts.length, drafts };
      },
    ),
    createDrafts: userEndpoint(
      {
        operationId: "create-drafts",
        summary: "Create drafts",
        tag: "drafts",
        params: { drafts: json(draftListSchema.max(100)).default([]) },
      },
      async ({ user, params }) => ({
        ids: await doCreateDrafts(db, user, params.drafts, config.CHAT_MAX_OBJECTS_PER_USER),
      }),
    ),
    editDraft: userEndpoint(
      {
        pathParams: ["draft_id"],
        operationId: "edit-draft",
        summary: "Edit a draft",
        tag: "drafts",
        // Parsed when the action asks, after the sync setting and the draft's existence.
        params: { draft: jsonLater(draftSchema) },
      },
      async ({ user, path, params }) => {
        await doEditDraft(db, user, path.draft_id, params.draft);
        return {};
      },
    ),
    deleteDraft: userEndpoint(
      {
        pathParams: ["draft_id"],
        operationId: "delete-draft",
        summary: "Delete a draft",
        tag: "drafts",
        params: {},
      },
      async ({ user, path }) => {
        await doDeleteDraft(db, user, path.draft_id);
        return {};
      },
    ),
  };
}
