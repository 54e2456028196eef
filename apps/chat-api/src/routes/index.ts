import { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";
import { botRoutes } from "./bots";
import { channelFolderRoutes } from "./channel-folders";
import { channelRoutes } from "./channels";
import { draftRoutes } from "./drafts";
import { eventRoutes } from "./events";
import { inviteRoutes } from "./invites";
import { messageRoutes } from "./messages";
import { presenceRoutes } from "./presence";
import { pushRoutes } from "./push";
import { openApiRoutes } from "./openapi";
import { realmRoutes } from "./realm";
import { serverRoutes } from "./server";
import { userGroupRoutes } from "./user-groups";
import { userRoutes } from "./users";

/**
 * The URL table: every operation of the API, by resource. Reads like the API's
 * table of contents; each module declares its operations and thin handlers.
 */
export function buildApi(services: Services): Api {
  const api = new Api();
  serverRoutes(api, services);
  userRoutes(api, services);
  userGroupRoutes(api, services);
  botRoutes(api, services);
  channelRoutes(api, services);
  channelFolderRoutes(api, services);
  realmRoutes(api, services);
  eventRoutes(api, services);
  draftRoutes(api, services);
  presenceRoutes(api, services);
  messageRoutes(api, services);
  inviteRoutes(api, services);
  pushRoutes(api, services);
  openApiRoutes(api, services);
  return api;
}
