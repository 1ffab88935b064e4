// What a route the console has no page for shows: which address it was, and the way back.
import { html } from "./html.js";

export function NotFound({ hash }) {
  return html`<section>
    <h1>Page not found</h1>
    <p>The console has no page at <code>${hash}</code>.</p>
    <p><a href="#/">Back to the crews</a></p>
  </section>`;
}
