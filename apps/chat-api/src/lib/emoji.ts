import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Unicode emoji as Zulip names them: data/zulip-emoji.json (Zulip 10.2's
 * emoji names, see data/NOTICE), for each emoji's code (lower-case hex code
 * points joined by `-`, without variation selectors) its canonical name
 * first, then its aliases; and Zulip's emoticons. Zulip's emoji set stops at
 * Emoji 15.0, so later emoji (whose versions come from emojibase-data) are
 * left out, as Zulip leaves them out: they stay text. Read once, on first use.
 */
interface EmojiTable {
  codeOfName: Map<string, string>;
  namesOfCode: Map<string, readonly string[]>;
  /** Emoticon to the name of its emoji (`:)` to `smile`). */
  emoticons: ReadonlyMap<string, string>;
}

let table: EmojiTable | undefined;

/** The Emoji version Zulip's emoji data covers. */
const ZULIP_EMOJI_VERSION = 15.0;

const DATA_FILE = join(__dirname, "../../data/zulip-emoji.json");

/** A code as Zulip writes it: lower case, without variation selectors. */
const zulipCode = (hexcode: string): string =>
  hexcode
    .toLowerCase()
    .split("-")
    .filter((part) => part !== "fe0f")
    .join("-");

function load(): EmojiTable {
  const data = JSON.parse(readFileSync(DATA_FILE, "utf8")) as {
    code_to_names: Record<string, string[]>;
    emoticon_conversions: Record<string, string>;
  };
  const versions = JSON.parse(
    readFileSync(require.resolve("emojibase-data/versions/emoji.json"), "utf8"),
  ) as Record<string, string[]>;
  const tooNew = new Set(
    Object.entries(versions)
      .filter(([version]) => Number(version) > ZULIP_EMOJI_VERSION)
      .flatMap(([, hexcodes]) => hexcodes.map(zulipCode)),
  );
  const codeOfName = new Map<string, string>();
  const namesOfCode = new Map<string, readonly string[]>();
  for (const [code, names] of Object.entries(data.code_to_names)) {
    if (tooNew.has(code)) continue;
    namesOfCode.set(code, names);
    for (const name of names) if (!codeOfName.has(name)) codeOfName.set(name, code);
  }
  const emoticons = new Map(
    Object.entries(data.emoticon_conversions).map(([emoticon, name]) => [
      emoticon,
      name.replaceAll(":", ""),
    ]),
  );
  return { codeOfName, namesOfCode, emoticons };
}

const emojiTable = (): EmojiTable => (table ??= load());

/** The code of the unicode emoji named `name` (any of its names), if there is one. */
export function unicodeEmojiCode(name: string): string | undefined {
  return emojiTable().codeOfName.get(name);
}

/** Whether `code` is a unicode emoji's code and `name` one of its names. */
export function isUnicodeEmoji(name: string, code: string): boolean {
  return emojiTable().namesOfCode.get(code)?.includes(name) ?? false;
}

/** Whether `code` is a unicode emoji's code. */
export function isUnicodeEmojiCode(code: string): boolean {
  return emojiTable().namesOfCode.has(code);
}

/** The canonical (Zulip's first) name of the unicode emoji with code `code`, if it is one. */
export function emojiNameOfCode(code: string): string | undefined {
  return emojiTable().namesOfCode.get(code)?.[0];
}

/** Zulip's emoticons, each with the name of the emoji it becomes. */
export function emoticons(): ReadonlyMap<string, string> {
  return emojiTable().emoticons;
}

/** Zulip's emoji data file (`server_emoji_data_url`): its JSON and a hash of it. */
export interface EmojiDataFile {
  json: string;
  /** The first 12 hex digits of the JSON's SHA-256: the file's version in its URL. */
  hash: string;
}

let dataFile: EmojiDataFile | undefined;

/** `{"code_to_names": {...}}` of the emoji this server knows, as Zulip serves it. */
export function emojiDataFile(): EmojiDataFile {
  if (dataFile !== undefined) return dataFile;
  const json = JSON.stringify({ code_to_names: Object.fromEntries(emojiTable().namesOfCode) });
  dataFile = { json, hash: createHash("sha256").update(json).digest("hex").slice(0, 12) };
  return dataFile;
}

/** Where Zulip's clients find the emoji data file (register's `server_emoji_data_url`). */
export const EMOJI_DATA_PATH = "/static/generated/emoji/emoji_api";

/** The versioned path of the emoji data file this server serves. */
export function emojiDataPath(): string {
  return `${EMOJI_DATA_PATH}.${emojiDataFile().hash}.json`;
}
