/** A CSV board of `size` entries, the same for every run: ranks 1..size, distinct usernames. */
export function boardCsv(size: number): Buffer {
  const lines = ["rank,username,profile_path,country,grade,score"];
  for (let rank = 1; rank <= size; rank++) {
    lines.push(
      `${rank},player_${rank.toString(36)}${rank % 10 === 0 ? "_Ü" : ""},/users/player_${rank},DE,A,${size - rank}`,
    );
  }
  return Buffer.from(lines.join("\n"));
}

/** The username of rank `rank` in {@link boardCsv}. */
export function usernameOf(rank: number): string {
  return `player_${rank.toString(36)}${rank % 10 === 0 ? "_Ü" : ""}`;
}
