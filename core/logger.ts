import { pino, type Logger, type LoggerOptions } from "pino";

export type { Logger };

/** Paths pino blanks out wherever they appear in a log object: secrets never reach a log line. */
export const redactedPaths = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  "req.headers.cookie",
  "token",
  "*.token",
  "accessToken",
  "*.accessToken",
  "access_token",
  "*.access_token",
  "refreshToken",
  "*.refreshToken",
  "refresh_token",
  "*.refresh_token",
  "clientSecret",
  "*.clientSecret",
  "client_secret",
  "*.client_secret",
  "apiKey",
  "*.apiKey",
  "password",
  "*.password",
  "secret",
  "*.secret",
];

export function createLogger(
  options: { level?: string; name?: string } = {},
  destination?: pino.DestinationStream,
): Logger {
  const config: LoggerOptions = {
    level: options.level ?? "info",
    redact: { paths: redactedPaths, censor: "[redacted]" },
    base: options.name ? { component: options.name } : {},
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(config, destination) : pino(config);
}

/** A logger that drops everything, for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
