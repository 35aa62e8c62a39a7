import { describe, expect, it } from "vitest";
import { buildTraceUrl } from "./trace-url.ts";

describe("buildTraceUrl", () => {
  it("fills Jaeger's template with the trace id and the call ±5 minutes in microseconds", () => {
    const url = buildTraceUrl(
      "http://localhost:16686/trace/{traceId}?start={startMicros}&end={endMicros}",
      "4bf92f3577b34da6a3ce929d0e0e4736",
      1_700_000_000_000,
      1_700_000_002_000,
    );
    expect(url).toBe(
      "http://localhost:16686/trace/4bf92f3577b34da6a3ce929d0e0e4736?start=1699999700000000&end=1700000302000000",
    );
  });
  it("fills milliseconds for Grafana", () => {
    expect(buildTraceUrl("g/explore?t={traceId}&from={startMs}&to={endMs}", "ab", 600_000, 600_000)).toBe(
      "g/explore?t=ab&from=300000&to=900000",
    );
  });
});
