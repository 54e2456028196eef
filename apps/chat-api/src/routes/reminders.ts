import { doCreateReminder, doDeleteReminder, listReminders } from "../actions/reminders";
import { int, str } from "../http/params";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** Message reminders: a message the notification bot sends its creator at a set time. */
export function reminderRoutes({ db, config }: Services) {
  return {
    createMessageReminder: userEndpoint(
      {
        operationId: "create-message-reminder",
        summary: "Create a message reminder",
        tag: "scheduled_messages",
        params: {
          message_id: int({ min: 1 }),
          scheduled_delivery_timestamp: int({ min: 0, max: 253_402_300_799 }),
          note: str().optional(),
        },
      },
      async ({ user, params }) => ({
        reminder_id: await doCreateReminder(
          db,
          user,
          params.message_id,
          params.scheduled_delivery_timestamp,
          params.note,
          config.CHAT_MAX_OBJECTS_PER_USER,
        ),
      }),
    ),
    getReminders: userEndpoint(
      {
        operationId: "get-reminders",
        summary: "Get reminders",
        tag: "scheduled_messages",
        params: {},
      },
      async ({ user }) => ({ reminders: await listReminders(db, user.id) }),
    ),
    deleteReminder: userEndpoint(
      {
        pathParams: ["reminder_id"],
        operationId: "delete-reminder",
        summary: "Delete a reminder",
        tag: "scheduled_messages",
        params: {},
      },
      async ({ user, path }) => {
        await doDeleteReminder(db, user, path.reminder_id);
        return {};
      },
    ),
  };
}
