import pino, { type Logger } from "pino";

/** Structured JSON logs (pino). Child loggers carry the idempotency key as `idempotency_key`. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: "tristate-executor" }, timestamp: pino.stdTimeFunctions.isoTime });
}

export type { Logger };
