import { buildOpenApi } from "../http/openapi";
import { type Api, publicEndpoint } from "../http/typed-endpoint";
import type { Services } from "../http/context";
import { CHAT_VERSION } from "../lib/version";

/** GET /openapi.json: the OpenAPI 3.1 document of this server, built from the URL table. */
export function openApiRoutes({ config }: Services, api: Api) {
  let document: object | undefined;
  return {
    getOpenapi: publicEndpoint(
      {
        operationId: "get-openapi",
        summary: "The OpenAPI 3.1 document of this API",
        tag: "server",
        params: {},
        bare: true,
      },
      () => {
        document ??= buildOpenApi(api.operations, {
          version: CHAT_VERSION,
          serverUrl: new URL("/api/v1", config.CHAT_EXTERNAL_URL).href,
        });
        return document;
      },
    ),
  };
}
