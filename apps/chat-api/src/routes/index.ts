import { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";
import { openApiRoutes } from "./openapi";

/**
 * The URL table: every operation of the API, by resource. Reads like the API's
 * table of contents; each module declares its operations and thin handlers.
 */
export function buildApi(services: Services): Api {
  const api = new Api();
  openApiRoutes(api, services);
  return api;
}
