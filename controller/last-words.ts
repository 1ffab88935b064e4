/**
 * The line that says why a runner failed, from the end of its log: the last plain line (the runner's one-line
 * error on stderr); failing that, the last JSON log line at error level (its message, and its error's unless the
 * message holds it). A container runtime may write stderr's line before stdout's, so the plain line can fall out of
 * the 2 KiB the kubelet keeps.
 */
export function lastWords(log: string): string | undefined {
  const lines = log
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  // The first line may be cut by the window (a JSON line's end reads like a plain line): the last resort only.
  const [first, ...rest] = lines;
  let logged: string | undefined;
  for (const line of [...rest.toReversed(), first ?? ""]) {
    if (line !== first && !line.startsWith("{")) return line;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      if (!logged && (entry.level ?? 0) >= 50) logged = errorLine(entry.msg, entry.err?.message);
    } catch {
      // not JSON: a plain line, or one cut by the window
    }
  }
  return logged || (first && !first.startsWith("{") ? first : lines.at(-1));
}

function errorLine(msg: string | undefined, cause: string | undefined): string {
  if (msg && cause && !msg.includes(cause)) return `${msg}: ${cause}`;
  return msg || cause || "";
}
