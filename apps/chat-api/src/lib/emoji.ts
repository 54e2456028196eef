import { readFileSync } from "node:fs";

/**
 * Unicode emoji by name, as Zulip's clients name them: the short names of
 * iamcal's emoji data (which Zulip's own names follow) from emojibase-data,
 * with Zulip's codes (lower-case hex code points joined by `-`, without
 * variation selectors). Read once, on first use.
 */
interface EmojiTable {
  codeOfName: Map<string, string>;
  namesOfCode: Map<string, string[]>;
}

let table: EmojiTable | undefined;

/** The Emoji version Zulip's emoji data covers. */
const ZULIP_EMOJI_VERSION = 15.0;

function load(): EmojiTable {
  const path = require.resolve("emojibase-data/en/shortcodes/iamcal.json");
  const data = JSON.parse(readFileSync(path, "utf8")) as Record<string, string | string[]>;
  // Zulip's emoji set stops at Emoji 15.0: later emoji are text.
  const versions = JSON.parse(
    readFileSync(require.resolve("emojibase-data/versions/emoji.json"), "utf8"),
  ) as Record<string, string[]>;
  const tooNew = new Set(
    Object.entries(versions)
      .filter(([version]) => Number(version) > ZULIP_EMOJI_VERSION)
      .flatMap(([, hexcodes]) => hexcodes),
  );
  const codeOfName = new Map<string, string>();
  const namesOfCode = new Map<string, string[]>();
  for (const [hexcode, names] of Object.entries(data)) {
    if (tooNew.has(hexcode)) continue;
    const code = hexcode.toLowerCase();
    const list = Array.isArray(names) ? names : [names];
    namesOfCode.set(code, list);
    for (const name of list) if (!codeOfName.has(name)) codeOfName.set(name, code);
  }
  return { codeOfName, namesOfCode };
}

/** The code of the unicode emoji named `name`, if there is one. */
export function unicodeEmojiCode(name: string): string | undefined {
  table ??= load();
  return table.codeOfName.get(name);
}

/** Whether `code` is a unicode emoji's code and `name` one of its names. */
export function isUnicodeEmoji(name: string, code: string): boolean {
  table ??= load();
  return table.namesOfCode.get(code)?.includes(name) ?? false;
}

/** Whether `code` is a unicode emoji's code. */
export function isUnicodeEmojiCode(code: string): boolean {
  table ??= load();
  return table.namesOfCode.has(code);
}

/** The first (Zulip's) name of the unicode emoji with code `code`, if it is one. */
export function emojiNameOfCode(code: string): string | undefined {
  table ??= load();
  return table.namesOfCode.get(code)?.[0];
}
