import { randomInt } from "node:crypto";
import { createServer } from "node:net";

// A test that must know a server's port before starting it (an OAuth redirect URL, a proxy in front) asks for one
// here. Ports come from below the kernel's ephemeral range (32768–60999 on Linux), so no outgoing connection and no
// other server's `listen(0)` takes one between this check and the test's own listen, and at random, so two test
// processes (vitest workers, a second vitest run on the same machine) rarely draw the same one.
const first = 10000;
const last = 32767;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A loopback port nothing listens on right now, for servers a test starts on a chosen port. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = randomInt(first, last + 1);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${first}–${last} after 100 tries`);
}
