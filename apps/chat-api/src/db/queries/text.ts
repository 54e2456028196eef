import type { ExpressionBuilder, Expression, SqlBool, StringReference } from "kysely";
import type { DB } from "../../gen/kysely/tables";

/**
 * `lower(column) = lower(value)`: names, topics and addresses compare
 * case-insensitively, as in Zulip (with the `lower(...)` indexes of the migrations).
 */
export function sameText<D extends DB, TB extends keyof D>(
  eb: ExpressionBuilder<D, TB>,
  column: StringReference<D, TB>,
  value: string,
): Expression<SqlBool> {
  return eb(eb.fn("lower", [column]), "=", eb.fn("lower", [eb.val(value)]));
}

/**
 * Prisma's filter "equal to `value`, in any case". Prisma writes an `equals`
 * with `mode: "insensitive"` as `ILIKE` and leaves the value's `%`, `_` and
 * `\` as pattern characters (prisma/orm#20318): a name, address or topic
 * holding them matched others (`%` matched everyone). Escaped here, the value
 * is compared as written. (`in` with that mode is `lower(...) IN (...)`: no
 * pattern, no escaping.)
 */
export function caselessEquals(value: string): { equals: string; mode: "insensitive" } {
  return { equals: value.replace(/[\\%_]/g, "\\$&"), mode: "insensitive" };
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
