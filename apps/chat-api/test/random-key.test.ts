import { randomUuid } from "../src/lib/random-key";

/** RFC 9562's version 4: hex groups 8-4-4-4-12, version digit 4, variant digit 8, 9, a or b. */
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("randomUuid", () => {
  // 2,000 ids: the generator draws its random bytes 256 ids at a time, so this crosses
  // seven refills.
  const ids = Array.from({ length: 2000 }, () => randomUuid());

  it("makes version 4 UUIDs in their usual text form", () => {
    expect(ids.filter((id) => !UUID_V4.test(id))).toEqual([]);
  });

  it("never repeats one, across the refills of its random bytes", () => {
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("uses every hex digit in every random position", () => {
    // With uniform digits, a given digit is missing from a position in 2,000 ids with
    // probability (15/16)^2000, about 1e-56.
    for (let at = 0; at < 36; at++) {
      if ([8, 13, 14, 18, 19, 23].includes(at)) continue; // dashes, the version and the variant
      expect(new Set(ids.map((id) => id[at])).size).toBe(16);
    }
    expect(new Set(ids.map((id) => id[19]))).toEqual(new Set(["8", "9", "a", "b"]));
  });
});
