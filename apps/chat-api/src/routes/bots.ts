import { InsufficientPermissionError, JsonableError } from "@repo/envelope";
import { doRegenerateApiKey } from "../actions/accounts";
import { doCreateBot } from "../actions/bots";
import { gravatarUrl } from "../actions/user-view";
import { int, str } from "../lib/params";
import { realmUrl } from "../lib/realm-url";
import { isAdministrator } from "../lib/roles";
import type { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";

/** Bot operations. */
export function botRoutes(api: Api, services: Services): void {
  api.user(
    "POST",
    "/bots",
    {
      operationId: "create-bot",
      summary: "Create a bot",
      tag: "users",
      access: { bots: false },
      params: {
        full_name: str(),
        short_name: str(),
        bot_type: int()
          .default(1)
          .describe("1 generic, 2 incoming webhook, 3 outgoing, 4 embedded"),
      },
    },
    async ({ realm, user, params }) => {
      const bot = await doCreateBot(
        services.db.prisma,
        user,
        { fullName: params.full_name, shortName: params.short_name, botType: params.bot_type },
        new URL(realmUrl(services.config, realm)).hostname,
      );
      return {
        user_id: bot.id,
        api_key: bot.apiKey,
        avatar_url: gravatarUrl(bot.email),
        default_sending_stream: null,
        default_events_register_stream: null,
        default_all_public_streams: false,
      };
    },
  );

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
        where: { id: path.bot_id, realm_id: realm.id, is_bot: true, is_system_bot: false },
      });
      if (bot === null) throw new JsonableError("No such bot");
      if (bot.bot_owner_id !== user.id && !isAdministrator(user.role))
        throw new InsufficientPermissionError();
      // The old key stops working at once on every replica (CacheBus).
      return { api_key: await doRegenerateApiKey(services, bot.id) };
    },
  );
}
