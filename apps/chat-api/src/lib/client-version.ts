/** `ZulipMobile/27.190 (Android 14)` -> `{ name: "ZulipMobile", version: [27, 190] }`. */
export function parseUserAgent(userAgent: string): { name: string; version: number[] } | undefined {
  const match = /^([\w.-]+)\/(\d+(?:\.\d+)*)/.exec(userAgent.trim());
  if (match === null) return undefined;
  return { name: match[1] ?? "", version: (match[2] ?? "").split(".").map(Number) };
}

function older(version: readonly number[], minimum: readonly number[]): boolean {
  for (let i = 0; i < Math.max(version.length, minimum.length); i++) {
    const a = version[i] ?? 0;
    const b = minimum[i] ?? 0;
    if (a !== b) return a < b;
  }
  return false;
}

/** Whether the client a User-Agent names is older than the configured minimum for that client. */
export function isIncompatibleClient(
  userAgent: string,
  minimums: Record<string, string> | undefined,
): boolean {
  const client = parseUserAgent(userAgent);
  const minimum = client === undefined ? undefined : minimums?.[client.name];
  if (client === undefined || minimum === undefined) return false;
  return older(client.version, minimum.split(".").map(Number));
}
