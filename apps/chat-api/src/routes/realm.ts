import { z } from "zod";
import { doReorderLinkifiers, doReorderProfileFields } from "../actions/realm-order";
import { json } from "../lib/params";
import type { Api } from "../lib/typed-endpoint";
import type { Services } from "../services";

const ids = z.array(z.int());

/** Linkifiers and custom profile fields of the realm: listing and reordering. */
export function realmRoutes(api: Api, { db }: Services): void {
  api.user(
    "GET",
    "/realm/linkifiers",
    {
      operationId: "get-linkifiers",
      summary: "Get linkifiers",
      tag: "server_and_organizations",
      params: {},
    },
    async ({ realm }) => {
      const rows = await db.prisma.linkifier.findMany({
        where: { realm_id: realm.id },
        orderBy: [{ order: "asc" }, { id: "asc" }],
      });
      return {
        linkifiers: rows.map((r) => ({
          pattern: r.pattern,
          url_template: r.url_template,
          id: r.id,
        })),
      };
    },
  );

  api.user(
    "PATCH",
    "/realm/linkifiers",
    {
      operationId: "reorder-linkifiers",
      summary: "Reorder linkifiers",
      tag: "server_and_organizations",
      access: { role: "administrator" },
      params: {
        ordered_linkifier_ids: json(ids).describe(
          "IDs of all the organization's linkifiers, in the new order",
        ),
      },
    },
    async ({ realm, params }) => {
      await doReorderLinkifiers(db.prisma, realm.id, params.ordered_linkifier_ids);
      return {};
    },
  );

  api.user(
    "GET",
    "/realm/profile_fields",
    {
      operationId: "get-custom-profile-fields",
      summary: "Get all custom profile fields",
      tag: "server_and_organizations",
      params: {},
    },
    async ({ realm }) => {
      const rows = await db.prisma.customProfileField.findMany({
        where: { realm_id: realm.id },
        orderBy: [{ order: "asc" }, { id: "asc" }],
      });
      return {
        custom_fields: rows.map((f) => ({
          id: f.id,
          name: f.name,
          type: f.field_type,
          hint: f.hint,
          field_data: f.field_data,
          order: f.order,
          // Zulip sends this key only when it is true.
          ...(f.display_in_profile_summary ? { display_in_profile_summary: true } : {}),
          required: f.required,
          editable_by_user: f.editable_by_user,
        })),
      };
    },
  );

  api.user(
    "PATCH",
    "/realm/profile_fields",
    {
      operationId: "reorder-custom-profile-fields",
      summary: "Reorder custom profile fields",
      tag: "server_and_organizations",
      access: { role: "administrator" },
      params: {
        order: json(ids).describe(
          "IDs of all the organization's custom profile fields, in the new order",
        ),
      },
    },
    async ({ realm, params }) => {
      await doReorderProfileFields(db.prisma, realm.id, params.order);
      return {};
    },
  );
}
