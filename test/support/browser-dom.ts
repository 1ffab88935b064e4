/**
 * The browser's DOM as far as the page.evaluate() callbacks of the browser tests use it. The project's tsconfig has no
 * DOM lib (it is Node code), and a `/// <reference lib="dom" />` would put browser globals into every file; a file
 * declares these at its own module scope instead (`declare const document: BrowserDocument`).
 */
export interface BrowserElement {
  id: string;
  tagName: string;
  textContent: string | null;
  dataset: Record<string, string | undefined>;
  getAttribute(name: string): string | null;
  blur(): void;
}

export interface BrowserDocument {
  activeElement: BrowserElement | null;
  querySelectorAll(selector: string): Iterable<BrowserElement>;
  addEventListener(type: "securitypolicyviolation", listener: (event: { effectiveDirective: string }) => void): void;
  createElement(tag: "script"): { textContent: string };
  body: { append(node: unknown): void };
}
