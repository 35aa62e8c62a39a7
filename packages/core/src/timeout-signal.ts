/**
 * An AbortSignal that fires after `timeoutMs` (a `TimeoutError` DOMException as its reason); a
 * negative timeout fires at once. Call `dispose` when the work is done so the timer does not linger.
 */
export function timeoutSignal(timeoutMs: number): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, "TimeoutError")),
    Math.max(0, timeoutMs),
  );
  return { signal: controller.signal, dispose: () => clearTimeout(timer) };
}
