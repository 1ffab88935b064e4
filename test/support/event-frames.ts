import { expect } from "vitest";

/** One frame of an execution's event stream (`GET …/status/{id}/events`): its event name and its data. */
export interface EventFrame {
  event: string;
  data: Record<string, unknown>;
}

/**
 * An execution's event stream at `url`, read as it comes up to the first frame `last` accepts (the stream of a running
 * or waiting execution stays open; it is closed then): the frames before it and that frame.
 */
export async function framesUntil(
  url: string,
  token: string,
  last: (frame: EventFrame) => boolean,
): Promise<EventFrame[]> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
  expect(res.status).toBe(200);
  const frames: EventFrame[] = [];
  const decoder = new TextDecoder();
  let text = "";
  try {
    for await (const chunk of res.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      const parts = text.split("\n\n");
      text = parts.pop()!;
      for (const part of parts.filter((p) => p.includes("data: "))) {
        const frame: EventFrame = {
          event: /^event: (.*)$/m.exec(part)![1]!,
          data: JSON.parse(/^data: (.*)$/m.exec(part)![1]!) as Record<string, unknown>,
        };
        frames.push(frame);
        if (last(frame)) return frames;
      }
    }
    throw new Error(`the event stream ${url} ended without the frame awaited: ${JSON.stringify(frames)}`);
  } finally {
    abort.abort();
  }
}
