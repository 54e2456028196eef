import { z } from "zod";

/** One narrow term, as Zulip clients send them. */
export interface NarrowTerm {
  operator: string;
  operand: string | number | number[];
  negated?: boolean;
}

/** A `narrow` parameter: terms as objects or `[operator, operand]` pairs. */
export const narrowSchema = z.array(
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
);

/** A narrow term in its object form. */
export function narrowTerm(term: z.output<typeof narrowSchema>[number]): NarrowTerm {
  return Array.isArray(term) ? { operator: term[0], operand: term[1] } : term;
}
