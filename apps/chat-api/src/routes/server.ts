import { ErrorCode, JsonableError } from "@repo/envelope";
import { devApiKey, passwordApiKey } from "../actions/accounts";
import { hasWebPublicChannels } from "../actions/channels";
import { renderPlain } from "../lib/render";
import { isIncompatibleClient } from "../lib/client-version";
import { isProduction } from "../lib/config";
import { authenticationMethods } from "../lib/auth-methods";
import { str } from "../http/params";
import { realmIconUrl, realmUrl } from "../lib/realm-url";
import { publicEndpoint } from "../http/typed-endpoint";
import { VERSION_FIELDS } from "../lib/version";
import { PASSWORD_MIN_GUESSES, PASSWORD_MIN_LENGTH } from "../lib/password-strength";
import type { Services } from "../http/context";

/** GET /server_settings, POST /fetch_api_key and POST /dev_fetch_api_key: what a client calls before it has a key. */
export function serverRoutes({ config, db, rateLimiter }: Services) {
  return {
    getServerSettings: publicEndpoint(
      {
        operationId: "get-server-settings",
        summary: "Get server settings",
        tag: "server_and_organizations",
        params: {},
      },
      async ({ realm, request }) => {
        const settings = {
          authentication_methods: authenticationMethods(config, realm),
          external_authentication_methods: [],
          ...VERSION_FIELDS,
          push_notifications_enabled: config.CHAT_PUSH_BOUNCER_URL !== undefined,
          // The sign-up pages' password rule, for a client that checks before it has a key
          // (Zulip sends these two in POST /register only).
          password_min_length: PASSWORD_MIN_LENGTH,
          password_min_guesses: PASSWORD_MIN_GUESSES,
          is_incompatible: isIncompatibleClient(
            request.userAgent,
            config.CHAT_MINIMUM_CLIENT_VERSIONS,
          ),
        };
        if (realm === undefined) return settings;
        const webPublic =
          config.CHAT_WEB_PUBLIC_STREAMS_ENABLED &&
          realm.enable_spectator_access &&
          (await hasWebPublicChannels(db, realm.id));
        const url = realmUrl(config, realm);
        return {
          ...settings,
          email_auth_enabled: realm.email_auth_enabled,
          require_email_format_usernames: true,
          realm_uri: url,
          realm_url: url,
          realm_name: realm.name,
          realm_icon: realmIconUrl(config, realm),
          realm_description: await renderPlain(realm.description),
          realm_web_public_access_enabled: webPublic,
        };
      },
    ),
    devFetchApiKey: publicEndpoint(
      {
        operationId: "dev-fetch-api-key",
        summary: "Fetch an API key (development only)",
        tag: "authentication",
        params: { username: str().describe("Email address of the user who owns the key") },
      },
      async ({ realm, params }) => {
        if (isProduction(config)) throw new JsonableError("Endpoint not available in production.");
        if (realm === undefined)
          throw new JsonableError("Invalid subdomain", ErrorCode.NONEXISTENT_SUBDOMAIN, 404);
        return devApiKey(db, realm, params.username.trim());
      },
    ),
    fetchApiKey: publicEndpoint(
      {
        operationId: "fetch-api-key",
        summary: "Fetch an API key (production)",
        tag: "authentication",
        params: {
          username: str().describe("The user's email address"),
          password: str().describe("The user's password"),
        },
      },
      async ({ realm, params }) => {
        if (realm === undefined)
          throw new JsonableError("Invalid subdomain", ErrorCode.NONEXISTENT_SUBDOMAIN, 404);
        return passwordApiKey(db, realm, params.username.trim(), params.password, rateLimiter);
      },
    ),
  };
}
