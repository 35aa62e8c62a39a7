/** τ-bench domain service: pure domain tools, the HTTP service with realism and fault injection. */
export * from "./domain/index.ts";
export * from "./service/faults.ts";
export * from "./service/http-service.ts";
export * from "./service/realism.ts";
export * from "./service/rng.ts";
export * from "./service/stores.ts";
export * from "./settings.ts";
