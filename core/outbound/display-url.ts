/** A URL without query or credentials, for messages (an MCP server's URL may carry a key in its query). */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}
