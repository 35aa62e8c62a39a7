import pino from "pino";
import { describe, expect, it } from "vitest";
import { armLastResortExit, boundedStep, SHUTDOWN_MARGIN_MS } from "./shutdown.ts";

const logger = pino({ level: "silent" });

describe("a bounded stop (issue 21 §1)", () => {
  it("boundedStep: a step that never ends is left behind at its bound; a failing one is logged, never thrown", async () => {
    const started = performance.now();
    expect(await boundedStep("hangs", () => new Promise(() => {}), Date.now() + 100, logger)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await boundedStep("fails", async () => Promise.reject(new Error("x")), Date.now() + 100, logger)).toBe(
      false,
    );
    expect(await boundedStep("ends", async () => {}, Date.now() + 100, logger)).toBe(true);
  });

  it("armLastResortExit: exits 1 after the grace period plus the margin, naming the calls in flight", async () => {
    const exits: number[] = [];
    const lines: string[] = [];
    const recording = pino({ level: "error" }, { write: (line: string) => lines.push(line) });
    armLastResortExit(
      0,
      recording,
      () => 3,
      (code) => exits.push(code),
    );
    await new Promise((r) => setTimeout(r, SHUTDOWN_MARGIN_MS + 200));
    expect(exits).toEqual([1]);
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ inFlight: 3 });
  });
});
