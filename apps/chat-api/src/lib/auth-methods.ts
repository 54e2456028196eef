import type { Realm } from "../gen/prisma/client";
import { type Config, isProduction } from "./config";

/** Zulip's authentication backends, in its order; this server has the first two. */
const BACKENDS = [
  "password",
  "dev",
  "email",
  "ldap",
  "remoteuser",
  "github",
  "azuread",
  "gitlab",
  "apple",
  "google",
  "saml",
  "openid connect",
  "discord",
] as const;

/**
 * Which ways of logging in work (`authentication_methods` of
 * `GET /server_settings`): a password where the realm allows it, and the
 * development key outside production.
 */
export function authenticationMethods(
  config: Config,
  realm: Pick<Realm, "password_auth_enabled"> | undefined,
): Record<(typeof BACKENDS)[number], boolean> {
  const enabled = {
    password: realm?.password_auth_enabled ?? true,
    dev: !isProduction(config),
  };
  return Object.fromEntries(
    BACKENDS.map((name) => [name, name in enabled ? enabled[name as keyof typeof enabled] : false]),
  ) as Record<(typeof BACKENDS)[number], boolean>;
}

/**
 * The same as `register`'s `realm_authentication_methods`: each backend
 * enabled or not, and whether this server has it at all.
 */
export function realmAuthenticationMethods(
  config: Config,
  realm: Pick<Realm, "password_auth_enabled">,
): Record<string, { enabled: boolean; available: boolean; unavailable_reason?: string }> {
  return Object.fromEntries(
    Object.entries(authenticationMethods(config, realm)).map(([name, enabled]) => {
      const available = name === "password" || (name === "dev" && enabled);
      return [
        name,
        available
          ? { enabled, available }
          : { enabled, available, unavailable_reason: "Not supported by this server." },
      ];
    }),
  );
}
