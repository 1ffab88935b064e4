/**
 * Whether a sign-in may send the browser back to `raw`: an absolute http(s) URL whose host is on the allow list.
 * An entry without a port allows that host name on any port; `host:port` allows exactly that.
 */
export function isAllowedReturnUrl(raw: string, allowedHosts: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return false;
  if (url.username || url.password) return false;
  const host = url.host.toLowerCase();
  const hostname = url.hostname.toLowerCase();
  return allowedHosts.some(
    (allowed) =>
      allowed === host ||
      (!allowed.includes(":") && allowed === hostname) ||
      (allowed.startsWith("[") && allowed === host),
  );
}

/** The return URL with the sign-in's outcome added as query parameters. */
export function withOutcome(raw: string, outcome: Record<string, string>): string {
  const url = new URL(raw);
  for (const [name, value] of Object.entries(outcome)) url.searchParams.set(name, value);
  return url.href;
}
