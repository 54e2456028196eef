import {
  CHAT_FEATURE_LEVEL,
  FEATURE_LEVEL_HISTORY,
  featureLevelOf,
  hasFeature,
} from "@repo/feature-levels";

describe("feature levels", () => {
  it("keeps CHAT_FEATURE_LEVEL equal to the highest level in the history", () => {
    const highest = Math.max(...FEATURE_LEVEL_HISTORY.map((entry) => entry.level));
    expect(CHAT_FEATURE_LEVEL).toBe(highest);
    expect(CHAT_FEATURE_LEVEL).toBe(496);
  });

  it("lists levels in ascending order with unique feature names", () => {
    const levels = FEATURE_LEVEL_HISTORY.map((entry) => entry.level);
    expect(levels).toEqual([...levels].sort((a, b) => a - b));
    const names = FEATURE_LEVEL_HISTORY.map((entry) => entry.feature);
    expect(new Set(names).size).toBe(names.length);
  });

  it("names every level the API document introduces", () => {
    const named = [
      1, 17, 88, 116, 127, 142, 153, 171, 178, 202, 257, 267, 325, 333, 342, 357, 396, 402, 407,
      441, 368, 389, 392, 404, 399, 406, 432, 468, 483, 417, 470, 488, 496,
    ];
    const levels = new Set<number>(FEATURE_LEVEL_HISTORY.map((entry) => entry.level));
    expect(named.filter((level) => !levels.has(level))).toEqual([]);
  });

  it("says a level has a feature from the level that introduced it on", () => {
    expect(featureLevelOf("channels_create")).toBe(417);
    expect(hasFeature(416, "channels_create")).toBe(false);
    expect(hasFeature(417, "channels_create")).toBe(true);
    expect(hasFeature(0, "feature_level")).toBe(false);
    expect(hasFeature(CHAT_FEATURE_LEVEL, "bots_on_user_group_endpoints")).toBe(true);
  });
});
