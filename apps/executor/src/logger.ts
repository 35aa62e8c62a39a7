import pino, { type DestinationStream, type Logger } from "pino";
import { currentRequestId } from "./request-id.ts";

/**
 * Structured JSON logs (pino). Child loggers carry the idempotency key as `idempotency_key`; every
 * line written while an HTTP request is served carries its id as `request_id` (request-id.ts).
 * @param destination where lines go (default: stdout).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: "tristate-executor" },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: () => {
      const id = currentRequestId();
      return id === undefined ? {} : { request_id: id };
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };
