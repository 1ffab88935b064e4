/**
 * Polls `probe` every `everyMs` until it gives a value other than undefined, and returns that value; throws once
 * `timeoutMs` has passed (below the integration tests' 30 s, so a stuck condition says so rather than timing out).
 */
export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
