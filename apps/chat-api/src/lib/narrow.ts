import { z } from "zod";

/** One narrow term, as Zulip clients send them. */
export interface NarrowTerm {
  operator: string;
  operand: string | number | number[];
  negated?: boolean;
}

/** Most terms a narrow may have (Zulip's clients send a handful). */
export const MAX_NARROW_TERMS = 100;

/** Longest operand: longer than any name, address or topic, and than a search a person types. */
export const MAX_NARROW_OPERAND_LENGTH = 1000;

/** Most ids a `dm` (or `dm-including`) operand may list. */
export const MAX_NARROW_OPERAND_IDS = 1000;

/** Whether an operand is within the limits above. */
function operandFits(operand: string | number | number[]): boolean {
  if (typeof operand === "string") return operand.length <= MAX_NARROW_OPERAND_LENGTH;
  return typeof operand === "number" || operand.length <= MAX_NARROW_OPERAND_IDS;
}

/**
 * A `narrow` parameter: terms as objects or `[operator, operand]` pairs, at
 * most {@link MAX_NARROW_TERMS} of them, each operand within its limit. A
 * larger narrow is a clear 400, not a statement too deep to compile.
 */
export const narrowSchema = z
  .array(
    z.union([
      z
        .object({
          operator: z.string(),
          operand: z.union([z.string(), z.int32(), z.array(z.int32())]),
          negated: z.boolean().optional(),
        })
        .strict(),
      z.tuple([z.string(), z.union([z.string(), z.int32()])]),
    ]),
  )
  .refine((terms) => terms.length <= MAX_NARROW_TERMS, {
    message: `narrow has too many terms (limit: ${String(MAX_NARROW_TERMS)})`,
  })
  .refine((terms) => terms.every((t) => operandFits(Array.isArray(t) ? t[1] : t.operand)), {
    message: `A narrow operand is too long (limit: ${String(MAX_NARROW_OPERAND_LENGTH)} characters or ${String(MAX_NARROW_OPERAND_IDS)} ids)`,
  });

/** A narrow term in its object form. */
export function narrowTerm(term: z.output<typeof narrowSchema>[number]): NarrowTerm {
  return Array.isArray(term) ? { operator: term[0], operand: term[1] } : term;
}
