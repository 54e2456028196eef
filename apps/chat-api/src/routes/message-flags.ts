import { doMarkAllAsRead } from "../actions/read-messages";
import { userEndpoint } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** Message flags: what a user has read (and later starred, and the rest of Zulip's flags). */
export function messageFlagRoutes({ db, config }: Services) {
  return {
    markAllAsRead: userEndpoint(
      {
        operationId: "mark-all-as-read",
        summary: "Mark all messages as read",
        tag: "messages",
        deprecated: true,
        params: {},
      },
      async ({ user }) => ({
        complete: await doMarkAllAsRead(db, user, config.CHAT_MARK_READ_BUDGET_MS),
      }),
    ),
  };
}
