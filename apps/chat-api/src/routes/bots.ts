import { doCreateBot, doRegenerateBotApiKey } from "../actions/bots";
import { gravatarUrl } from "../actions/user-view";
import { int, str } from "../http/params";
import { realmUrl } from "../lib/realm-url";
import { userEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";

/** Bot operations. */
export function botRoutes(services: Services) {
  return {
    createBot: userEndpoint(
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
          services.db,
          user,
          { fullName: params.full_name, shortName: params.short_name, botType: params.bot_type },
          new URL(realmUrl(services.config, realm)).hostname,
          services.config.CHAT_MAX_BOTS_PER_USER,
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
    ),
    regenerateBotApiKey: userEndpoint(
      {
        pathParams: ["bot_id"],
        operationId: "regenerate-bot-api-key",
        summary: "Regenerate a bot's API key",
        tag: "users",
        params: {},
        access: { bots: false },
      },
      async ({ realm, user, path }) => ({
        api_key: await doRegenerateBotApiKey(services, realm.id, user, path.bot_id),
      }),
    ),
  };
}
