/**
 * Whether `url`'s host is one of a crew's `toolPolicy.allowedHosts`: `api.example.com` (that host),
 * `*.example.com` (any subdomain, not example.com itself), each optionally with `:port` (without one, any port).
 * Names compare case-insensitively, a trailing dot ignored. This narrows where http_request may go; the outbound URL
 * policy still judges every address a name resolves to.
 */
export function hostAllowed(url: URL, patterns: readonly string[]): boolean {
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return patterns.some((pattern) => {
    const [name = "", patternPort] = pattern.toLowerCase().split(":");
    if (patternPort !== undefined && patternPort !== port) return false;
    if (name.startsWith("*.")) return host.endsWith(name.slice(1)) && host.length > name.length - 1;
    return host === name;
  });
}
