import { RETRY_SAFE_PROMPT_RULE } from "@tristate/core";
import { anyKeyProcedure } from "../../trpc/init.ts";

/** `prompt.rule` → the system-prompt rule text that goes with envelopes (`retry_safe`). */
export const promptRuleProcedure = anyKeyProcedure.query(() => ({ rule: RETRY_SAFE_PROMPT_RULE }));
