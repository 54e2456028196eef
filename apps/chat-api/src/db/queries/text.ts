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

/**
 * An array of integers as PostgreSQL's array literal (`{1,2,3}`), to be cast
 * (`::int[]`, `::bigint[]`): for the long ones (a channel's recipients), the
 * driver's generic array writer, which escapes element by element, costs far
 * more than the join.
 */
export function intArrayLiteral(values: readonly (number | bigint)[]): string {
  return `{${values.join(",")}}`;
}
