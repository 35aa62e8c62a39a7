"use client";

import { useId } from "react";
import { useModalDialog } from "~/components/use-modal-dialog";
import { actionLabel, OPERATOR_ACTIONS } from "~/lib/status";

/** The queue's keyboard help. */
export function HelpDialog({ onClose }: { onClose: () => void }) {
  const ref = useModalDialog();
  const titleId = useId();
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={onClose} onCancel={onClose} className="help">
      <h2 id={titleId}>Keyboard shortcuts</h2>
      <dl className="facts">
        <dt>
          <kbd>j</kbd> / <kbd>k</kbd>
        </dt>
        <dd>Select the next / previous record</dd>
        {OPERATOR_ACTIONS.map((action, index) => (
          <div key={action} style={{ display: "contents" }}>
            <dt>
              <kbd>{index + 1}</kbd>
            </dt>
            <dd>{actionLabel(action)} (operators; asks for confirmation)</dd>
          </div>
        ))}
        <dt>
          <kbd>/</kbd>
        </dt>
        <dd>Focus the search box</dd>
        <dt>
          <kbd>?</kbd>
        </dt>
        <dd>This help</dd>
      </dl>
      <div className="dialog-buttons">
        <button type="button" className="primary" onClick={onClose}>
          Close
        </button>
      </div>
    </dialog>
  );
}
