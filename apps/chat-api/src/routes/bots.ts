import { InsufficientPermissionError, JsonableError } from "@repo/envelope";
import { doRegenerateApiKey } from "../actions/accounts";
import { isAdministrator } from "../lib/roles";
import type { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** Bot operations. */
export function botRoutes(api: Api, services: Services): void {
  api.user(
    "POST",
    "/bots/{bot_id}/api_key/regenerate",
    {
      operationId: "regenerate-bot-api-key",
      summary: "Regenerate a bot's API key",
      tag: "users",
      params: {},
      access: { bots: false },
    },
    async ({ realm, user, path }) => {
      const bot = await services.db.prisma.user.findFirst({
        where: { id: path.bot_id, realm_id: realm.id, is_bot: true },
      });
      if (bot === null) throw new JsonableError("No such bot");
      if (bot.bot_owner_id !== user.id && !isAdministrator(user.role))
        throw new InsufficientPermissionError();
      // The old key stops working at once on every replica (CacheBus).
      return { api_key: await doRegenerateApiKey(services, bot.id) };
    },
  );
}
