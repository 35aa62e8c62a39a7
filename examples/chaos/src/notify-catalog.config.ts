/**
 * The executor's catalog in the `notify-kill` scenario (`TRISTATE_CONFIG`): one `unsafe` tool without
 * a probe whose remote never answers clearly, so every call puts its record in the human queue (and
 * raises a `human_queue` notification).
 */
import { AmbiguousError, canon, defineTool } from "@tristate/core";

export default {
  tools: [
    defineTool({
      name: "limbo",
      kind: "unsafe",
      identity: { id: canon.exact },
      timeoutMs: 2000,
      invoke: async () => {
        throw new AmbiguousError("the remote reset the connection after the request was written", {
          code: "RESET_AFTER_WRITE",
        });
      },
    }),
  ],
};
