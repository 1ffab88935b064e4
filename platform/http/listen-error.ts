import { KubecrewError } from "../../core/errors.ts";

/** The settings a command's server listens by: the variables to name when it cannot. */
export interface ListenVariables {
  host: string;
  port: string;
}

/**
 * A server could not listen on host:port. The message says why in a user's words and which setting to change: the
 * port when it is taken or needs privileges, the host otherwise (an address this machine does not have, a name that
 * does not resolve).
 */
export class ListenError extends KubecrewError {
  readonly code = "listen_failed";
  override name = "ListenError";
  readonly host: string;
  readonly port: number;
  /** The system's error code (EADDRINUSE, EACCES, …). */
  readonly errno: string | undefined;

  constructor(host: string, port: number, cause: NodeJS.ErrnoException) {
    super(`cannot listen on ${hostPort(host, port)}: ${cause.message}`, { cause });
    this.host = host;
    this.port = port;
    this.errno = cause.code;
  }

  /** One line: what went wrong and, in parentheses, the variable to change. */
  explain(variables: ListenVariables): string {
    const { host, port } = this;
    const at = `cannot listen on ${hostPort(host, port)}`;
    switch (this.errno) {
      case "EADDRINUSE":
        return `port ${port} is in use (${variables.port})`;
      case "EACCES":
        return `${at}: not permitted (ports below 1024 need privileges) (${variables.port})`;
      case "EADDRNOTAVAIL":
        return `${at}: no network interface of this machine has the address ${host} (${variables.host})`;
      case "ENOTFOUND":
      case "EAI_AGAIN":
      case "EAI_NONAME":
        return `${at}: ${host} is neither an IP address nor a host name that resolves (${variables.host})`;
      case "EINVAL":
      case "EAFNOSUPPORT":
        return `${at}: this machine cannot listen on ${host} (${this.errno}) (${variables.host})`;
      default:
        return `${this.message} (${variables.host}, ${variables.port})`;
    }
  }
}

const hostPort = (host: string, port: number) => `${host.includes(":") ? `[${host}]` : host}:${port}`;

/**
 * Runs a command's start-up; a server that cannot listen ends the process with one line naming the address and the
 * variable to change (`kubecrew dev: port 8080 is in use (PORT)`) and exit status 1, instead of a stack trace.
 * Anything else rethrows.
 */
export async function exitIfCannotListen<T>(
  command: string,
  variables: ListenVariables,
  start: () => Promise<T>,
): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (!(err instanceof ListenError)) throw err;
    process.stderr.write(`kubecrew ${command}: ${err.explain(variables)}\n`);
    process.exit(1);
  }
}
