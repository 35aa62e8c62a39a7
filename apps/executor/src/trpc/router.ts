import { listAudit } from "../api/audit/list.ts";
import { whoamiProcedure } from "../api/auth/whoami.ts";
import { executeCall } from "../api/calls/execute.ts";
import { getCall } from "../api/calls/get.ts";
import { issueConfirmationProcedure } from "../api/confirmations/issue.ts";
import { getIntentProcedure } from "../api/intents/get.ts";
import { listIntentsProcedure } from "../api/intents/list.ts";
import { createKeyProcedure, listKeysProcedure, listTenantsProcedure, revokeKeyProcedure } from "../api/keys/manage.ts";
import { rerunProbe } from "../api/probe/rerun.ts";
import { promptRule } from "../api/prompt/rule.ts";
import { listQueue } from "../api/queue/list.ts";
import { resolveQueue } from "../api/queue/resolve.ts";
import { abortRunProcedure } from "../api/runs/abort.ts";
import { getRunProcedure } from "../api/runs/get.ts";
import { listRunsProcedure } from "../api/runs/list.ts";
import { operatorAbortRunProcedure } from "../api/runs/operator-abort.ts";
import { planRunProcedure } from "../api/runs/plan.ts";
import { createSessionProcedure, endSessionProcedure } from "../api/sessions/manage.ts";
import { listStaleProcedure } from "../api/stale/list.ts";
import { statsOverviewProcedure } from "../api/stats/overview.ts";
import { listTools } from "../api/tools/list.ts";
import { router } from "./init.ts";

/** The executor's API. The web app imports only its type. */
export const appRouter = router({
  auth: router({ whoami: whoamiProcedure }),
  sessions: router({ create: createSessionProcedure, end: endSessionProcedure }),
  tools: router({ list: listTools }),
  calls: router({ execute: executeCall, get: getCall }),
  prompt: router({ rule: promptRule }),
  queue: router({ list: listQueue, resolve: resolveQueue }),
  audit: router({ list: listAudit }),
  probe: router({ rerun: rerunProbe }),
  stats: router({ overview: statsOverviewProcedure }),
  intents: router({ list: listIntentsProcedure, get: getIntentProcedure }),
  stale: router({ list: listStaleProcedure }),
  runs: router({
    get: getRunProcedure,
    list: listRunsProcedure,
    abort: abortRunProcedure,
    operatorAbort: operatorAbortRunProcedure,
    plan: planRunProcedure,
  }),
  confirmations: router({ issue: issueConfirmationProcedure }),
  keys: router({ create: createKeyProcedure, list: listKeysProcedure, revoke: revokeKeyProcedure }),
  tenants: router({ list: listTenantsProcedure }),
});

/** The router's type, for `@trpc/client` (type-only import in apps/web). */
export type AppRouter = typeof appRouter;
