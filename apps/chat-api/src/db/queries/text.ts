import type { ExpressionBuilder, Expression, SqlBool, StringReference } from "kysely";
import type { DB } from "../../gen/kysely/tables";

/**
 * `lower(column) = lower(value)`: names, topics and addresses compare
 * case-insensitively, as in Zulip (with the `lower(...)` indexes of the migrations).
 */
export function sameText<TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>,
  column: StringReference<DB, TB>,
  value: string,
): Expression<SqlBool> {
  return eb(eb.fn("lower", [column]), "=", eb.fn("lower", [eb.val(value)]));
}
