"use client";
import { type RefObject, useEffect, useRef } from "react";

/**
 * A `<dialog>` shown modal while the component that holds it is mounted: opened with `showModal()` on
 * mount (focus moves into it, Escape fires `cancel`) and closed on unmount. Put the returned ref on the
 * `<dialog>`; the caller handles `onClose` / `onCancel`.
 */
export function useModalDialog(): RefObject<HTMLDialogElement | null> {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return ref;
}
