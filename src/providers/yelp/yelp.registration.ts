// Yelp webhook registration. `YELP_WEBHOOK_MODE=subscriptions` (default): the Business Subscriptions
// API ([CODE C1] subscribe; [ASSUMPTION] list and remove); Yelp advises re-syncing daily, and the
// listing lets a sync also remove ours for businesses Leadgate holds only in disabled connections.
// `self-serve`: a `/v3/webhooks` webhook per business ([DOCS Y3]) that expires after 14 days: a sync
// replaces it when less than the re-sync interval plus an hour is left, so it is always renewed at
// least an hour before its expiration_date. Yelp lists no self-serve webhooks, so the URL one was
// registered with is the one Leadgate kept: a webhook is ours and current only at the current token's
// URL; one at another URL (the previous token's during a rotation, an older PUBLIC_BASE_URL) is
// replaced by the next sync, so the registration sweep moves every connection to the new URL.
import { CONFIG, type ConnectionsConfig, type HttpConfig } from "../../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import { PermanentError } from "../../common/outbound/errors.js";
import {
  isGone,
  type ProviderRegistrar,
  type Registered,
  type RegistrationTarget,
} from "../provider-registration.js";
import { YelpClient } from "./yelp.client.js";
import { YELP_CONFIG, type YelpConfig } from "./yelp.config.js";

const HOUR_MS = 3_600_000;

@Injectable()
export class YelpRegistrar implements ProviderRegistrar {
  readonly provider = "yelp" as const;

  constructor(
    private readonly client: YelpClient,
    @Inject(YELP_CONFIG) private readonly config: YelpConfig,
    @Inject(CONFIG.connections) private readonly connections: ConnectionsConfig,
    @Inject(CONFIG.http) private readonly http: HttpConfig,
  ) {}

  /** The business's lead ids: readable only with a grant of that business. */
  async probeAccount(accessToken: string, accountId: string): Promise<void> {
    await this.client.listLeadIds(accessToken, accountId);
  }

  /** A self-serve webhook with less than this left is replaced by the sync that sees it. */
  get renewBeforeMs(): number {
    return this.connections.registrationSyncIntervalSeconds * 1000 + HOUR_MS;
  }

  sync(target: RegistrationTarget): Promise<Registered> {
    return this.config.webhookMode === "self-serve" ? this.renew(target) : this.subscribe(target);
  }

  /** Yelp's credentials are the platform URL token: a rotation changes nothing at Yelp. */
  rotate(target: RegistrationTarget): Promise<Registered> {
    return this.sync(target);
  }

  async remove(target: RegistrationTarget): Promise<void> {
    try {
      if (target.known.webhookId !== null)
        await this.client.deleteWebhook(target.token, target.known.webhookId);
      else if (this.config.webhookMode === "subscriptions")
        await this.client.unsubscribe(target.token, [target.accountId]);
    } catch (error) {
      if (!isGone(error)) throw error;
    }
  }

  private async subscribe(target: RegistrationTarget): Promise<Registered> {
    let listed: string[] | undefined;
    try {
      listed = await this.client.webhookSubscriptions(target.token);
    } catch (error) {
      if (!isGone(error)) throw error; // no listing at this path: subscribing is idempotent anyway
    }
    if (!listed?.includes(target.accountId)) await this.client.subscribe(target.token, [target.accountId]);
    const others = (listed ?? []).filter((id) => id !== target.accountId);
    const released = others.length > 0 ? await target.released(others) : [];
    if (released.length > 0) await this.client.unsubscribe(target.token, released);
    return { webhookId: null, expiresAt: null };
  }

  private async renew(target: RegistrationTarget): Promise<Registered> {
    const { webhookId, expiresAt, webhookUrl: registeredUrl } = target.known;
    const token = this.config.webhookToken;
    if (token === undefined) throw new PermanentError("yelp_webhook_token_missing");
    const webhookUrl = `${this.http.publicBaseUrl}/webhooks/yelp/${token}`;
    if (
      webhookId !== null &&
      expiresAt !== null &&
      expiresAt.getTime() - Date.now() > this.renewBeforeMs &&
      this.atCurrentUrl(registeredUrl, webhookUrl)
    ) {
      return { webhookId, expiresAt, webhookUrl: registeredUrl };
    }
    // The new one first, so no lead falls between the two; a delivery through both is one receipt
    // (the previous token's URL keeps working while the old webhook is still there).
    const created = await this.client.createWebhook(target.token, webhookUrl, target.accountId);
    if (webhookId !== null) {
      try {
        await this.client.deleteWebhook(target.token, webhookId);
      } catch (error) {
        if (!isGone(error)) throw error;
      }
    }
    return { ...created, webhookUrl };
  }

  /**
   * Whether a webhook registered at `registered` needs no new URL. Unknown (registered before
   * Leadgate kept the URL): current, unless a rotation is under way, when it may carry the previous
   * token and is replaced to be sure.
   */
  private atCurrentUrl(registered: string | null, current: string): boolean {
    if (registered === null) return this.config.webhookTokenPrevious === undefined;
    return registered === current;
  }
}
