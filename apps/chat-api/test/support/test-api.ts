import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { bool, int, json, oneOf, str } from "../../src/http/params";
import { type Api, publicEndpoint, url, userEndpoint } from "../../src/http/typed-endpoint";
import { buildApi } from "../../src/urls";
import type { Services } from "../../src/http/context";

/** The real operations plus test operations that exercise every part of the platform. */
export function testApi(services: Services): Api {
  const api = buildApi(services);
  const spec = { tag: "test", params: {} };
  api.add(
    url(
      "GET",
      "/test/whoami",
      userEndpoint(
        { ...spec, operationId: "test-whoami", summary: "Who am I" },
        ({ user, realm }) => ({
          user_id: user.id,
          realm: realm.name,
        }),
      ),
    ),
  );
  api.add(
    url(
      "GET",
      "/test/realm",
      publicEndpoint(
        { ...spec, operationId: "test-realm", summary: "Which realm" },
        ({ realm, request }) => ({
          realm: realm?.name ?? null,
          subdomain: request.subdomain,
        }),
      ),
    ),
  );
  api.add(
    url(
      "POST",
      "/test/params",
      userEndpoint(
        {
          tag: "test",
          operationId: "test-params",
          summary: "Every kind of parameter",
          params: {
            name: str({ maxLength: 5, notBlank: true }),
            count: int({ min: 0, max: 10 }).optional(),
            flag: bool().default(false),
            color: oneOf(["red", "green"]).optional(),
            topic: str().alias("subject").optional(),
            draft: json(
              z
                .object({
                  to: z.array(z.int()),
                  topic: z.string().max(60),
                  content: z.string().min(1),
                  meta: z.object({ kind: z.string() }).strict().optional(),
                })
                .strict(),
            ).optional(),
            ids: json(z.array(z.int())).optional(),
            settings: json(z.record(z.string(), z.boolean())).optional(),
          },
        },
        ({ params }) => ({ got: params }),
      ),
    ),
  );
  api.add(
    url(
      "GET",
      "/test/items/{item_id}",
      userEndpoint(
        { pathParams: ["item_id"], ...spec, operationId: "test-item", summary: "Item" },
        ({ path }) => ({
          item_id: path.item_id,
        }),
      ),
    ),
  );
  api.add(
    url(
      "DELETE",
      "/test/items/{item_id}",
      userEndpoint(
        { pathParams: ["item_id"], ...spec, operationId: "test-item-delete", summary: "Delete" },
        () => ({}),
      ),
    ),
  );
  api.add(
    url(
      "POST",
      "/test/boom",
      publicEndpoint({ ...spec, operationId: "test-boom", summary: "Fails" }, () => {
        throw new Error('relation "secret_table" does not exist');
      }),
    ),
  );
  api.add(
    url(
      "POST",
      "/test/slow",
      userEndpoint(
        {
          ...spec,
          operationId: "test-slow",
          summary: "Slow",
          params: { ms: int({ min: 0, max: 10_000 }) },
        },
        async ({ params }) => {
          await sleep(params.ms);
          return { slept: params.ms };
        },
      ),
    ),
  );
  api.add(
    url(
      "GET",
      "/test/humans",
      userEndpoint(
        {
          ...spec,
          operationId: "test-humans",
          summary: "No bots",
          deprecated: true,
          access: { bots: false },
        },
        () => ({}),
      ),
    ),
  );
  api.add(
    url(
      "GET",
      "/test/members",
      userEndpoint(
        { ...spec, operationId: "test-members", summary: "No guests", access: { guests: false } },
        () => ({}),
      ),
    ),
  );
  api.add(
    url(
      "GET",
      "/test/admins",
      userEndpoint(
        {
          ...spec,
          operationId: "test-admins",
          summary: "Admins",
          access: { role: "administrator" },
        },
        () => ({}),
      ),
    ),
  );
  api.add(
    url(
      "GET",
      "/test/owners",
      userEndpoint(
        { ...spec, operationId: "test-owners", summary: "Owners", access: { role: "owner" } },
        () => ({}),
      ),
    ),
  );
  return api;
}
