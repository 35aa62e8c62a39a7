/**
 * @deprecated Import from `@tristate/testing` (fakes and contract suites) or
 * `@tristate/executor/demo-remotes` (the example remote services). Kept so existing imports keep working.
 * @module
 */

export * from "@tristate/testing";
