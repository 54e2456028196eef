import type { Realm } from "../gen/prisma/client";
import type { Config } from "./config";

/** A realm's URL: its subdomain on CHAT_EXTERNAL_URL's host (the root realm is the host itself). */
export function realmUrl(config: Config, realm: Pick<Realm, "subdomain">): string {
  const url = new URL(config.CHAT_EXTERNAL_URL.href);
  if (realm.subdomain !== "") url.hostname = `${realm.subdomain}.${url.hostname}`;
  return url.origin;
}

/** The realm's icon: its own, or the default one served with the web app. */
export function realmIconUrl(config: Config, realm: Pick<Realm, "subdomain" | "icon_url">): string {
  return realm.icon_url ?? `${realmUrl(config, realm)}/static/images/default-realm-icon.png`;
}
