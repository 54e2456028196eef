/** The realm's linkifiers: compiled once (RE2, RFC 6570 templates), applied to text in the realm's order. */
import { StdUriTemplate } from "@std-uritemplate/std-uritemplate";
import { RE2JS } from "re2js";
import { type CompiledLinkifier, type Linkifier, type RenderEnv, checkDeadline } from "./context";

/**
 * Whether a linkifier's URL template can only make an http(s) or a relative
 * link: it starts with `http://`, `https://` or `/`. Anything else could
 * expand to `javascript:` or `data:` for every reader.
 */
export function isSafeUrlTemplate(template: string): boolean {
  return /^(https?:\/\/|\/)/i.test(template);
}

/** Whether a link a linkifier made is http(s) or relative (checked again at render: older rows). */
function isHttpOrRelative(href: string): boolean {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(href.trim())?.[1]?.toLowerCase();
  return scheme === undefined || scheme === "http" || scheme === "https";
}

/** `text` split into plain pieces and linkifier links, the realm's linkifiers in order. */
export function splitLinkified(
  text: string,
  env: RenderEnv,
): (string | { text: string; href: string })[] {
  let pieces: (string | { text: string; href: string })[] = [text];
  for (const linkifier of env.compiled) {
    checkDeadline(env);
    pieces = pieces.flatMap((piece) => {
      if (typeof piece !== "string") return [piece];
      const found: (string | { text: string; href: string })[] = [];
      const matcher = linkifier.pattern.matcher(piece);
      let last = 0;
      while (matcher.find()) {
        const start = matcher.start();
        const end = matcher.end();
        if (end === start) break;
        const before = start === 0 ? "" : piece.charAt(start - 1);
        const after = piece.charAt(end);
        // Zulip's boundaries: not inside a word.
        if (/[\p{L}\p{N}_]/u.test(before) || /[\p{L}\p{N}_]/u.test(after)) continue;
        const groups: Record<string, string> = {};
        for (const name of Object.keys(matcher.namedGroups))
          groups[name] = matcher.group(name) ?? "";
        const href = linkifier.expand(groups);
        if (!isHttpOrRelative(href)) continue;
        found.push(piece.slice(last, start), { text: piece.slice(start, end), href });
        last = end;
      }
      found.push(piece.slice(last));
      return found.filter((p) => p !== "");
    });
  }
  return pieces;
}

/** Compiled linkifiers by pattern and template (a realm's few, reused by every render). */
const compiledCache = new Map<string, CompiledLinkifier | null>();

const MAX_CACHED_LINKIFIERS = 10_000;

/** The realm's linkifiers, compiled (RE2; a pattern RE2 refuses is skipped), from the cache. */
export function compileLinkifiers(linkifiers: readonly Linkifier[]): CompiledLinkifier[] {
  return linkifiers.flatMap((l) => {
    const key = `${l.pattern}\u0000${l.url_template}`;
    let compiled = compiledCache.get(key);
    if (compiled === undefined) {
      compiled = compileLinkifier(l);
      if (compiledCache.size >= MAX_CACHED_LINKIFIERS) compiledCache.clear();
      compiledCache.set(key, compiled);
    }
    return compiled === null ? [] : [compiled];
  });
}

function compileLinkifier(l: Linkifier): CompiledLinkifier | null {
  try {
    // Python's named groups, `(?P<name>...)`, in RE2JS's spelling.
    const pattern = RE2JS.compile(l.pattern.replace(/\(\?P</g, "(?<"));
    const template = l.url_template;
    return {
      pattern,
      expand: (groups: Record<string, string>) => StdUriTemplate.expand(template, groups),
    };
  } catch {
    return null;
  }
}
