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

function load(): EmojiTable {
  const path = require.resolve("emojibase-data/en/shortcodes/iamcal.json");
  const data = JSON.parse(readFileSync(path, "utf8")) as Record<string, string | string[]>;
  const codeOfName = new Map<string, string>();
  const namesOfCode = new Map<string, string[]>();
  for (const [hexcode, names] of Object.entries(data)) {
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
