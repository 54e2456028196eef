import { type Operation, isIdParam } from "./typed-endpoint";

/** The OpenAPI 3.1 document of every registered operation, derived from their declarations. */
export function buildOpenApi(
  operations: readonly Operation[],
  info: { version: string; serverUrl: string },
): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const op of operations) {
    const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
      name,
      in: "path",
      required: true,
      schema: isIdParam(name ?? "")
        ? { type: "integer", minimum: 0, maximum: 2147483647 }
        : { type: "string" },
    }));
    const fields = Object.entries(op.params).map(([name, param]) => ({ name, param }));
    const inQuery = op.method === "GET";
    const queryParams = inQuery
      ? fields.map(({ name, param }) => ({
          name,
          in: "query",
          required: param.required,
          ...(param.description === "" ? {} : { description: param.description }),
          ...(param.jsonEncoded
            ? { content: { "application/json": { schema: param.schema } } }
            : { schema: param.schema }),
        }))
      : [];
    const body =
      !inQuery && fields.length > 0
        ? {
            requestBody: {
              required: fields.some(({ param }) => param.required),
              content: {
                "application/x-www-form-urlencoded": {
                  schema: {
                    type: "object",
                    properties: Object.fromEntries(
                      fields.map(({ name, param }) => [
                        name,
                        param.description === ""
                          ? param.schema
                          : { ...param.schema, description: param.description },
                      ]),
                    ),
                    required: fields.filter(({ param }) => param.required).map(({ name }) => name),
                  },
                  encoding: Object.fromEntries(
                    fields
                      .filter(({ param }) => param.jsonEncoded)
                      .map(({ name }) => [name, { contentType: "application/json" }]),
                  ),
                },
              },
            },
          }
        : {};
    const errors = {
      "400": { $ref: "#/components/responses/BadRequest" },
      ...(op.auth === "user" ? { "401": { $ref: "#/components/responses/Unauthorized" } } : {}),
      "429": { $ref: "#/components/responses/RateLimited" },
    };
    (paths[op.path] ??= {})[op.method.toLowerCase()] = {
      operationId: op.operationId,
      summary: op.summary,
      tags: [op.tag],
      deprecated: op.deprecated,
      security: op.auth === "user" ? [{ basicAuth: [] }] : [],
      parameters: [...pathParams, ...queryParams],
      ...body,
      responses: {
        "200": op.bare
          ? {
              description: "The document",
              content: { "application/json": { schema: { type: "object" } } },
            }
          : { $ref: "#/components/responses/Success" },
        ...errors,
      },
    };
  }
  const envelope = (schema: object, description: string) => ({
    description,
    content: { "application/json": { schema } },
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "chat-api",
      version: info.version,
      description:
        "The HTTP JSON API of a team-chat server, following the Zulip REST API's conventions.",
    },
    servers: [{ url: info.serverUrl }],
    tags: [...new Set(operations.map((op) => op.tag))].sort().map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        basicAuth: { type: "http", scheme: "basic", description: "email:api_key" },
      },
      schemas: {
        JsonSuccess: {
          type: "object",
          required: ["result", "msg"],
          properties: {
            result: { const: "success" },
            msg: { const: "" },
            ignored_parameters_unsupported: { type: "array", items: { type: "string" } },
          },
          additionalProperties: true,
        },
        JsonError: {
          type: "object",
          required: ["result", "msg"],
          properties: {
            result: { const: "error" },
            msg: { type: "string" },
            code: { type: "string" },
          },
          additionalProperties: true,
        },
      },
      responses: {
        Success: envelope({ $ref: "#/components/schemas/JsonSuccess" }, "Success"),
        BadRequest: envelope({ $ref: "#/components/schemas/JsonError" }, "Invalid request"),
        Unauthorized: envelope({ $ref: "#/components/schemas/JsonError" }, "Not authenticated"),
        RateLimited: envelope({ $ref: "#/components/schemas/JsonError" }, "Over the rate limit"),
      },
    },
  };
}
