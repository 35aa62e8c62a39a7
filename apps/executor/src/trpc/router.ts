import { executeCall } from "../api/calls/execute.ts";
import { getCall } from "../api/calls/get.ts";
import { promptRule } from "../api/prompt/rule.ts";
import { listTools } from "../api/tools/list.ts";
import { router } from "./init.ts";

/** The executor's API. The web app imports only its type. */
export const appRouter = router({
  tools: router({ list: listTools }),
  calls: router({ execute: executeCall, get: getCall }),
  prompt: router({ rule: promptRule }),
});

/** The router's type, for `@trpc/client` (type-only import in apps/web). */
export type AppRouter = typeof appRouter;
