/** A bad configuration value; the message is the one line the process prints before it stops. */
export class ConfigError extends Error {
  override name = "ConfigError";
}
