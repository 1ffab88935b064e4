// Preact with htm's tagged templates: components read like JSX without a build step.
import { h, render } from "./vendor/preact.mjs";
import htm from "./vendor/htm.mjs";

export const html = htm.bind(h);
export { render };
export { useEffect, useRef, useState } from "./vendor/hooks.mjs";
