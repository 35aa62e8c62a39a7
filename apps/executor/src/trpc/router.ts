import { auditListProcedure } from "../api/audit/list.ts";
import { authWhoamiProcedure } from "../api/auth/whoami.ts";
import { callsExecuteProcedure } from "../api/calls/execute.ts";
import { callsGetProcedure } from "../api/calls/get.ts";
import { confirmationsIssueProcedure } from "../api/confirmations/issue.ts";
import { confirmationsPreviewProcedure } from "../api/confirmations/preview.ts";
import { intentsByIdentityProcedure } from "../api/intents/by-identity.ts";
import { intentsGetProcedure } from "../api/intents/get.ts";
import { intentsListProcedure } from "../api/intents/list.ts";
import {
  keysCreateProcedure,
  keysListProcedure,
  keysRevokeProcedure,
  tenantsListProcedure,
} from "../api/keys/manage.ts";
import {
  notificationsChannelsCreateProcedure,
  notificationsChannelsDeleteProcedure,
  notificationsChannelsListProcedure,
  notificationsChannelsTestProcedure,
  notificationsChannelsUpdateProcedure,
} from "../api/notifications/channels.ts";
import { notificationsDeliveriesListProcedure } from "../api/notifications/deliveries.ts";
import { probeRerunProcedure } from "../api/probe/rerun.ts";
import { promptRuleProcedure } from "../api/prompt/rule.ts";
import { queueListProcedure } from "../api/queue/list.ts";
import { queueResolveProcedure } from "../api/queue/resolve.ts";
import { runsAbortProcedure } from "../api/runs/abort.ts";
import { runsGetProcedure } from "../api/runs/get.ts";
import { runsListProcedure } from "../api/runs/list.ts";
import { runsOperatorAbortProcedure } from "../api/runs/operator-abort.ts";
import { runsPlanProcedure } from "../api/runs/plan.ts";
import { sessionsCreateProcedure, sessionsEndProcedure } from "../api/sessions/manage.ts";
import { staleListProcedure } from "../api/stale/list.ts";
import { statsAttentionProcedure } from "../api/stats/attention.ts";
import { statsOldestProcedure } from "../api/stats/oldest.ts";
import { statsOverviewProcedure } from "../api/stats/overview.ts";
import { toolsListProcedure } from "../api/tools/list.ts";
import { router } from "./init.ts";

/** The executor's API. The web app imports only its type. */
export const appRouter = router({
  auth: router({ whoami: authWhoamiProcedure }),
  sessions: router({ create: sessionsCreateProcedure, end: sessionsEndProcedure }),
  tools: router({ list: toolsListProcedure }),
  calls: router({ execute: callsExecuteProcedure, get: callsGetProcedure }),
  prompt: router({ rule: promptRuleProcedure }),
  queue: router({ list: queueListProcedure, resolve: queueResolveProcedure }),
  audit: router({ list: auditListProcedure }),
  probe: router({ rerun: probeRerunProcedure }),
  stats: router({
    overview: statsOverviewProcedure,
    attention: statsAttentionProcedure,
    oldest: statsOldestProcedure,
  }),
  intents: router({ list: intentsListProcedure, get: intentsGetProcedure, byIdentity: intentsByIdentityProcedure }),
  stale: router({ list: staleListProcedure }),
  runs: router({
    get: runsGetProcedure,
    list: runsListProcedure,
    abort: runsAbortProcedure,
    operatorAbort: runsOperatorAbortProcedure,
    plan: runsPlanProcedure,
  }),
  confirmations: router({ issue: confirmationsIssueProcedure, preview: confirmationsPreviewProcedure }),
  keys: router({ create: keysCreateProcedure, list: keysListProcedure, revoke: keysRevokeProcedure }),
  tenants: router({ list: tenantsListProcedure }),
  notifications: router({
    channels: router({
      list: notificationsChannelsListProcedure,
      create: notificationsChannelsCreateProcedure,
      update: notificationsChannelsUpdateProcedure,
      delete: notificationsChannelsDeleteProcedure,
      test: notificationsChannelsTestProcedure,
    }),
    deliveries: router({ list: notificationsDeliveriesListProcedure }),
  }),
});

/** The router's type, for `@trpc/client` (type-only import in apps/web). */
export type AppRouter = typeof appRouter;
