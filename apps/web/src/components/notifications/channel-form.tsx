"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type ReactNode, useEffect, useId, useRef, useState } from "react";
import { RequestIdLine } from "~/components/states";
import {
  CHANNEL_KINDS,
  type ChannelKind,
  type CreateChannelInput,
  channelKindLabel,
  EVENT_KINDS,
  eventKindLabel,
  type FormField,
  formFieldOf,
  type NotificationChannel,
  parseRecipients,
} from "~/lib/notifications";
import { useTRPC } from "~/trpc/react";
import styles from "./notifications.module.css";

/** A labelled control with the refusal that names it shown beside it (`errorId` for `aria-describedby`). */
function Field({
  label,
  htmlFor,
  error,
  errorId,
  wide = false,
  children,
}: {
  label: string;
  htmlFor: string;
  error: string | null;
  errorId: string;
  wide?: boolean;
  children: ReactNode;
}) {
  return (
    <div className={wide ? `${styles.field} ${styles.target}` : styles.field}>
      <label htmlFor={htmlFor}>{label}</label>
      {children}
      {error ? (
        <span id={errorId} role="alert" className={styles["field-error"]} data-testid="field-error">
          {error}
        </span>
      ) : null}
    </div>
  );
}

/**
 * "New channel": kind (webhook, slack, email), name, URL or recipients, and the event kinds it
 * receives (all by default). The executor's refusal is shown beside the field it names (`data.field`),
 * anything else above the button. `onCreated` gets the channel and, for a webhook, its signing secret.
 */
export function ChannelForm({
  tenant,
  onCreated,
}: {
  /** The tenant the channel is created in (the page's). */
  tenant: string;
  onCreated: (created: { channel: NotificationChannel; secret: string | null }) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const create = useMutation(trpc.notifications.channels.create.mutationOptions());
  const [kind, setKind] = useState<ChannelKind>("webhook");
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [to, setTo] = useState("");
  const [events, setEvents] = useState<string[]>([...EVENT_KINDS]);
  const [local, setLocal] = useState<{ field: FormField; message: string } | null>(null);
  const base = useId();
  const id = (part: string) => `${base}-${part}`;

  const apiField = create.error ? formFieldOf(create.error) : null;
  const errorOf = (field: FormField): string | null =>
    local?.field === field ? local.message : apiField === field ? (create.error?.message ?? null) : null;
  const fieldProps = (field: FormField) => {
    const error = errorOf(field);
    return error ? { "aria-invalid": true, "aria-describedby": id(`${field}-error`) } : {};
  };

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (create.isPending) return;
    if (events.length === 0) {
      setLocal({ field: "events", message: "events: choose at least one event kind" });
      return;
    }
    setLocal(null);
    const target = kind === "email" ? { to: parseRecipients(to) } : { url: url.trim() };
    try {
      const created = await create.mutateAsync({
        tenant,
        kind,
        name: name.trim(),
        events: events as CreateChannelInput["events"],
        ...target,
      });
      void queryClient.invalidateQueries(trpc.notifications.pathFilter());
      setName("");
      setUrl("");
      setTo("");
      setEvents([...EVENT_KINDS]);
      create.reset();
      onCreated(created);
    } catch {
      // shown beside its field, or above the button
    }
  }

  const otherError = create.error && apiField === null ? create.error : null;
  return (
    <form className={`panel ${styles.form}`} aria-label="New channel" onSubmit={submit} noValidate>
      <h2>New channel</h2>
      <div className={styles["form-row"]}>
        <Field label="Kind" htmlFor={id("kind")} error={errorOf("kind")} errorId={id("kind-error")}>
          <select
            id={id("kind")}
            value={kind}
            onChange={(e) => setKind(e.currentTarget.value as ChannelKind)}
            {...fieldProps("kind")}
          >
            {CHANNEL_KINDS.map((k) => (
              <option key={k} value={k}>
                {channelKindLabel(k)}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Name" htmlFor={id("name")} error={errorOf("name")} errorId={id("name-error")}>
          <input
            id={id("name")}
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            maxLength={100}
            required
            {...fieldProps("name")}
          />
        </Field>
        {kind === "email" ? (
          <Field label="Recipients" htmlFor={id("to")} error={errorOf("to")} errorId={id("to-error")} wide>
            <input
              id={id("to")}
              value={to}
              onChange={(e) => setTo(e.currentTarget.value)}
              placeholder="ops@example.com, oncall@example.com"
              required
              {...fieldProps("to")}
            />
          </Field>
        ) : (
          <Field
            label={kind === "slack" ? "Slack incoming webhook URL" : "URL"}
            htmlFor={id("url")}
            error={errorOf("url")}
            errorId={id("url-error")}
            wide
          >
            <input
              id={id("url")}
              type="url"
              value={url}
              onChange={(e) => setUrl(e.currentTarget.value)}
              placeholder={kind === "slack" ? "https://hooks.slack.com/services/…" : "https://example.com/tristate"}
              required
              {...fieldProps("url")}
            />
          </Field>
        )}
      </div>
      <fieldset className={styles.events} aria-describedby={errorOf("events") ? id("events-error") : undefined}>
        <legend>Events</legend>
        {EVENT_KINDS.map((k) => (
          <label key={k} className="nowrap">
            <input
              type="checkbox"
              name="events"
              value={k}
              checked={events.includes(k)}
              onChange={(e) => {
                const on = e.currentTarget.checked;
                setEvents((old) => (on ? [...old, k] : old.filter((x) => x !== k)));
              }}
            />{" "}
            {eventKindLabel(k)} <span className="mono small muted">{k}</span>
          </label>
        ))}
      </fieldset>
      {errorOf("events") ? (
        <p id={id("events-error")} role="alert" className={styles["field-error"]} data-testid="field-error">
          {errorOf("events")}
        </p>
      ) : null}
      {otherError ? (
        <div role="alert" className="error">
          {otherError.message}
          <RequestIdLine error={otherError} />
        </div>
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          Create channel
        </button>
        {kind === "webhook" ? (
          <span className="small muted">A webhook gets a signing secret, shown once after it is created.</span>
        ) : null}
      </div>
    </form>
  );
}

/**
 * A new webhook's signing secret, shown this once with a Copy button: the executor keeps it to sign,
 * and never lists it again.
 */
export function SecretOnce({
  channel,
  secret,
  onDone,
}: {
  channel: NotificationChannel;
  secret: string;
  onDone: () => void;
}) {
  const [copied, setCopied] = useState<"yes" | "no" | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  // Brought into view and selected: the form that created it is further down the page.
  useEffect(() => {
    inputRef.current?.focus();
  }, []);
  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied("yes");
    } catch {
      setCopied("no");
    }
  }
  return (
    <section className={`panel ${styles.secret}`} aria-label="Signing secret" data-testid="secret-once">
      <h2>Signing secret of “{channel.name}”</h2>
      <p>
        <strong>This secret will not be shown again.</strong> Copy it now and keep it where your receiver checks the{" "}
        <span className="mono">Tristate-Signature</span> header.
      </p>
      <div className="secret-field">
        <input
          ref={inputRef}
          readOnly
          aria-label="Signing secret"
          className="mono"
          value={secret}
          data-testid="channel-secret"
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
      <p className="small muted" role="status">
        {copied === "yes" ? "Copied." : copied === "no" ? "Could not copy: select the secret and copy it by hand." : ""}
      </p>
    </section>
  );
}
