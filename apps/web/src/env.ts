import { z } from "zod";

/** Jaeger's trace page; placeholders `{traceId}`, `{startMicros}`, `{endMicros}`, `{startMs}`, `{endMs}`. */
export const DEFAULT_TRACE_URL_TEMPLATE = "http://localhost:16686/trace/{traceId}?start={startMicros}&end={endMicros}";

const envSchema = z.object({
  /** Where the executor's API lives (`${EXECUTOR_URL}/trpc/*`). @default http://127.0.0.1:4100 */
  EXECUTOR_URL: z.url().default("http://127.0.0.1:4100"),
  /** The trace viewer's URL for one trace (Jaeger or Grafana Tempo). @default Jaeger on localhost:16686 */
  TRACE_URL_TEMPLATE: z.string().min(1).default(DEFAULT_TRACE_URL_TEMPLATE),
  /** The dashboard's HTTP port. @default 3000 */
  PORT: z.coerce.number().int().min(1).max(65_535).default(3000),
});

/** The dashboard's settings, validated once (server side only: the browser never reads them). */
export type Env = z.infer<typeof envSchema>;

function loadEnv(): Env {
  const parsed = envSchema.safeParse({
    EXECUTOR_URL: process.env.EXECUTOR_URL || undefined,
    TRACE_URL_TEMPLATE: process.env.TRACE_URL_TEMPLATE || undefined,
    PORT: process.env.PORT || undefined,
  });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid dashboard settings: ${issues}`);
  }
  return parsed.data;
}

/** The validated settings. The only place that reads `process.env`. */
export const env: Env = loadEnv();
