import { Option } from "commander";
import { stringify } from "yaml";

export const outputFormats = ["text", "json", "yaml"] as const;
export type OutputFormat = (typeof outputFormats)[number];

export const outputOption = () =>
  new Option("-o, --output <format>", "text for people; json or yaml: the API's bodies as they are, for scripts")
    .choices(outputFormats)
    .default("text");

/**
 * Prints the API's bodies for scripts: json, one body per line (a stream of several is JSON Lines, as `jq` reads it);
 * yaml, one document per body (`---` between them).
 */
export class BodyPrinter {
  private printed = 0;
  private readonly format: Exclude<OutputFormat, "text">;
  private readonly stream: NodeJS.WritableStream;

  constructor(format: Exclude<OutputFormat, "text">, stream: NodeJS.WritableStream = process.stdout) {
    this.format = format;
    this.stream = stream;
  }

  print(body: unknown): void {
    if (this.format === "json") this.stream.write(JSON.stringify(body) + "\n");
    else this.stream.write((this.printed > 0 ? "---\n" : "") + stringify(body));
    this.printed++;
  }
}
