/**
 * The line that says why a runner failed, from the end of its log: the last plain line (the runner's one-line
 * error on stderr); failing that, the last JSON log line at error level (its message and error).
 */
export function lastWords(log: string): string | undefined {
  const lines = log
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  let logged: string | undefined;
  for (const line of lines.toReversed()) {
    if (!line.startsWith("{")) return line;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      if (!logged && (entry.level ?? 0) >= 50) logged = [entry.msg, entry.err?.message].filter(Boolean).join(": ");
    } catch {
      return line; // a JSON line cut by the 2 KiB tail: still the best there is
    }
  }
  return logged || lines.at(-1);
}
