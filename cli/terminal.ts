import { styleText } from "node:util";

export type TextStyle = Parameters<typeof styleText>[0];

/** Text from an agent or the server made safe to print: no escape sequences or other control characters but \n, \t. */
// eslint-disable-next-line no-control-regex -- removing control characters is the point
export const printable = (text: string) => text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "");

/** Text from the server on one line: no line breaks or other control characters. */
export const oneLine = (text: string) =>
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  text.replace(/[\u0000-\u001f\u007f-\u009f\s]+/g, " ").trim();

const SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";

/**
 * Where a command's text goes. Colour and the live progress line only on a terminal: styleText leaves colour out when
 * the stream is not a TTY or NO_COLOR is set, and the live line (redrawn in place) is never drawn off a terminal.
 */
export class Terminal {
  readonly tty: boolean;
  private liveText: (() => string) | undefined;
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;

  private readonly stream: NodeJS.WriteStream;

  constructor(stream: NodeJS.WriteStream = process.stdout) {
    this.stream = stream;
    this.tty = stream.isTTY === true;
  }

  style(format: TextStyle, text: string): string {
    return styleText(format, text, { stream: this.stream });
  }

  /** How wide a line may be: the terminal's width, or a fixed width off a terminal. */
  get width(): number {
    return this.tty ? Math.max(40, this.stream.columns || 80) : 160;
  }

  /** Writes whole lines (the live line stays below them). */
  line(text = ""): void {
    this.clearLive();
    this.stream.write(text + "\n");
    this.drawLive();
  }

  /** A line redrawn in place every 100 ms with a spinner (terminals only); undefined removes it. */
  live(text: (() => string) | undefined): void {
    if (!this.tty) return;
    this.clearLive();
    this.liveText = text;
    clearInterval(this.timer);
    this.timer = undefined;
    if (!text) return;
    this.drawLive();
    this.timer = setInterval(() => {
      this.frame = (this.frame + 1) % SPINNER.length;
      this.clearLive();
      this.drawLive();
    }, 100);
    this.timer.unref();
  }

  private clearLive(): void {
    if (this.liveText) this.stream.write("\r\x1b[2K");
  }

  private drawLive(): void {
    if (!this.liveText) return;
    const text = `${SPINNER[this.frame]} ${this.liveText()}`;
    this.stream.write(this.style("dim", cut(text, this.width - 1)));
  }
}

/** The first line of `text`, within `max` characters. */
export function cut(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= max ? line : line.slice(0, Math.max(0, max - 1)) + "…";
}
