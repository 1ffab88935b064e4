/** A server could not listen because something else already listens on its port (EADDRINUSE). */
export class PortInUse extends Error {
  override name = "PortInUse";
  readonly host: string;
  readonly port: number;

  constructor(host: string, port: number) {
    super(`port ${port} is in use`);
    this.host = host;
    this.port = port;
  }
}

/**
 * Runs a command's start-up; a port in use ends the process with one line naming the variable that sets the port
 * (`kubecrew dev: port 8080 is in use (PORT)`) and exit status 1, instead of a stack trace. Anything else rethrows.
 */
export async function exitIfPortInUse<T>(command: string, variable: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (!(err instanceof PortInUse)) throw err;
    process.stderr.write(`kubecrew ${command}: ${err.message} (${variable})\n`);
    process.exit(1);
  }
}
