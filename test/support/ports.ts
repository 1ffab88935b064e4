import { createServer } from "node:net";

// A test that must know a server's port before starting it (an OAuth redirect URL, a proxy in front) asks for one
// here. Ports come from below the kernel's ephemeral range (32768–60999 on Linux), so neither an outgoing connection
// nor another server's `listen(0)` can take one between this check and the test's own listen, and each vitest worker
// draws from its own block, so two workers never hand out the same port.
const first = 15000;
const blockSize = 1000;
const blocks = 17; // 15000–31999
let next = 0;

function blockStart(): number {
  const worker = Number(process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? 0);
  return first + ((Number.isInteger(worker) ? worker : 0) % blocks) * blockSize;
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A loopback port nothing listens on right now and no other vitest worker hands out, for servers a test starts on a chosen port. */
export async function freePort(): Promise<number> {
  const start = blockStart();
  for (let tries = 0; tries < blockSize; tries++) {
    const port = start + (next++ % blockSize);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${start}–${start + blockSize - 1}`);
}
