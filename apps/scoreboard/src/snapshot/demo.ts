/**
 * The bundled demo board: deterministic (a seeded PRNG), so every replica and
 * every run serves the same 10,000 users.
 */

const ADJECTIVES = [
  "swift",
  "quiet",
  "brave",
  "lucky",
  "clever",
  "sunny",
  "misty",
  "bold",
  "calm",
  "wild",
];
const NOUNS = [
  "Otter",
  "Falcon",
  "Maple",
  "Comet",
  "Tiger",
  "Heron",
  "Cedar",
  "Pixel",
  "Nova",
  "Lynx",
];
const COUNTRIES = ["US", "DE", "JP", "BR", "IN", "FR", "KR", "NG", "CA", "SE", "PL", "VN"];

/** mulberry32: a small, well-known 32-bit PRNG; enough for demo data. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gradeFor(rank: number, size: number): string {
  const share = rank / size;
  if (share <= 0.01) return "S";
  if (share <= 0.1) return "A";
  if (share <= 0.35) return "B";
  if (share <= 0.7) return "C";
  return "D";
}

/** The demo board as CSV (header, then `size` ranked rows with falling scores). */
export function demoBoardCsv(size: number): string {
  const random = prng(20261122);
  const lines = ["rank,username,profile_path,country,grade,score"];
  let score = 1_000_000;
  for (let rank = 1; rank <= size; rank++) {
    const adjective = ADJECTIVES[Math.floor(random() * ADJECTIVES.length)] ?? "swift";
    const noun = NOUNS[Math.floor(random() * NOUNS.length)] ?? "Otter";
    const username = `${adjective}${noun}${rank}`;
    const country = COUNTRIES[Math.floor(random() * COUNTRIES.length)] ?? "US";
    lines.push(
      `${rank},${username},/users/${username},${country},${gradeFor(rank, size)},${score}`,
    );
    score -= 1 + Math.floor(random() * 150);
  }
  return `${lines.join("\n")}\n`;
}
