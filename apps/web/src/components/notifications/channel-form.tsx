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

/** Props of a control whose refusal is shown beside it. */
interface ControlProps {
  inputId: string;
  error: string | null;
  errorId: string;
}

/** `aria-invalid` and `aria-describedby` of a control while the API refuses it. */
function invalidProps({ error, errorId }: Pick<ControlProps, "error" | "errorId">) {
  return error ? { "aria-invalid": true, "aria-describedby": errorId } : {};
}

/** The channel's kind: webhook (signed), Slack, e-mail. */
function KindField({
  kind,
  onChange,
  ...control
}: ControlProps & { kind: ChannelKind; onChange: (kind: ChannelKind) => void }) {
  return (
    <Field label="Kind" htmlFor={control.inputId} error={control.error} errorId={control.errorId}>
      <select
        id={control.inputId}
        value={kind}
        onChange={(e) => onChange(e.currentTarget.value as ChannelKind)}
        {...invalidProps(control)}
      >
        {CHANNEL_KINDS.map((k) => (
          <option key={k} value={k}>
            {channelKindLabel(k)}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** Where a channel sends: the URL (webhook, Slack) or the recipients (e-mail). */
function TargetField({
  kind,
  value,
  onChange,
  ...control
}: ControlProps & { kind: ChannelKind; value: string; onChange: (value: string) => void }) {
  const email = kind === "email";
  return (
    <Field
      label={email ? "Recipients" : kind === "slack" ? "Slack incoming webhook URL" : "URL"}
      htmlFor={control.inputId}
      error={control.error}
      errorId={control.errorId}
      wide
    >
      <input
        id={control.inputId}
        type={email ? "text" : "url"}
        value={value}
        onChange={(e) => onChange(e.currentTarget.value)}
        placeholder={
          email
            ? "ops@example.com, oncall@example.com"
            : kind === "slack"
              ? "https://hooks.slack.com/services/…"
              : "https://example.com/tristate"
        }
        required
        {...invalidProps(control)}
      />
    </Field>
  );
}

/** The event kinds a channel receives, one checkbox each (all ticked for a new channel). */
function EventsField({
  events,
  onChange,
  error,
  errorId,
}: Omit<ControlProps, "inputId"> & { events: string[]; onChange: (update: (old: string[]) => string[]) => void }) {
  return (
    <>
      <fieldset className={styles.events} aria-describedby={error ? errorId : undefined}>
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
                onChange((old) => (on ? [...old, k] : old.filter((x) => x !== k)));
              }}
            />{" "}
            {eventKindLabel(k)} <span className="mono small muted">{k}</span>
          </label>
        ))}
      </fieldset>
      {error ? (
        <p id={errorId} role="alert" className={styles["field-error"]} data-testid="field-error">
          {error}
        </p>
      ) : null}
    </>
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
        <KindField
          kind={kind}
          onChange={setKind}
          inputId={id("kind")}
          error={errorOf("kind")}
          errorId={id("kind-error")}
        />
        <Field label="Name" htmlFor={id("name")} error={errorOf("name")} errorId={id("name-error")}>
          <input
            id={id("name")}
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            maxLength={100}
            required
            {...invalidProps({ error: errorOf("name"), errorId: id("name-error") })}
          />
        </Field>
        <TargetField
          kind={kind}
          value={kind === "email" ? to : url}
          onChange={kind === "email" ? setTo : setUrl}
          inputId={id(kind === "email" ? "to" : "url")}
          error={errorOf(kind === "email" ? "to" : "url")}
          errorId={id(kind === "email" ? "to-error" : "url-error")}
        />
      </div>
      <EventsField events={events} onChange={setEvents} error={errorOf("events")} errorId={id("events-error")} />
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
