const unitSeconds = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const;

/** "30d", "12h", "90m", "45s", "2w" or plain seconds → seconds; undefined when it is none of those. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)([smhdw]?)$/.exec(text.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * unitSeconds[(match[2] || "s") as keyof typeof unitSeconds];
  return Number.isSafeInteger(seconds) && seconds > 0 ? seconds : undefined;
}
