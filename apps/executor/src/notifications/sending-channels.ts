/**
 * Where a notification goes and how it is signed, by channel id, for the internal tools' `invoke`:
 * their arguments carry the channel id, the delivery id and the rendered message, never a URL or a
 * secret (the record's arguments are readable through the API; a Slack webhook URL is a credential).
 * The delivery loop puts each claimed delivery's channel here before it calls the executor.
 */

/** What an internal tool needs of a channel besides its arguments. */
export interface SendingChannel {
  /** webhook and slack: the URL posted to; email: null. */
  url: string | null;
  /** webhook: the signing secret (`whsec_…`); else null. Never logged. */
  secret: string | null;
}

/** The channels of the deliveries this replica has claimed, by channel id (ids are unique across tenants). */
export class SendingChannels {
  readonly #byId = new Map<string, SendingChannel>();

  /** Keeps (or replaces) a channel as the last claim read it. */
  remember(channelId: string, channel: SendingChannel): void {
    this.#byId.set(channelId, channel);
  }

  /** The channel, or undefined when no delivery of it was claimed by this replica since it started. */
  get(channelId: string): SendingChannel | undefined {
    return this.#byId.get(channelId);
  }
}
