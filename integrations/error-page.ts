export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** The page a browser sees when connecting an account fails. */
export function errorPage(status: number, title: string, message: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}p{line-height:1.5}.status{color:#888}</style></head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(message)}</p>
<p class="status">Error ${status}</p>
</body>
</html>
`;
}

/** The page a browser lands on after connecting an app from a tool's "connect at <url>" link. */
export function connectedPage(title: string, message: string): string {
  return errorPage(200, title, message).replace(/\n<p class="status">Error 200<\/p>/, "");
}
