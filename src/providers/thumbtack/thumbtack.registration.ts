// Thumbtack webhook registration ([DOCS T1] create; [ASSUMPTION] list, update, delete: see
// providers.md "Provider endpoints Leadgate calls"). Ours is the business's webhook whose URL is
// this connection's webhook URL (query aside: a token-auth URL changes with a rotation).
import { Injectable } from "@nestjs/common";
import { PermanentError } from "../../common/outbound/errors.js";
import {
  isGone,
  type ProviderRegistrar,
  type Registered,
  type RegistrationTarget,
} from "../provider-registration.js";
import {
  type ThumbtackListedWebhook,
  ThumbtackClient,
  type ThumbtackWebhookSpec,
} from "./thumbtack.client.js";

const withoutQuery = (url: string) => url.split("?")[0];

@Injectable()
export class ThumbtackRegistrar implements ProviderRegistrar {
  readonly provider = "thumbtack" as const;

  constructor(private readonly client: ThumbtackClient) {}

  /** The business's webhooks: readable only with a grant of that business. */
  async probeAccount(accessToken: string, accountId: string): Promise<void> {
    await this.client.listWebhooks(accessToken, accountId);
  }

  async sync(target: RegistrationTarget): Promise<Registered> {
    const ours = await this.ours(target);
    const current =
      ours.find(
        (hook) =>
          hook.enabled && hook.webhookID === target.known.webhookId && hook.webhookURL === target.webhookUrl,
      ) ?? ours.find((hook) => hook.enabled && hook.webhookURL === target.webhookUrl);
    // Missing, disabled, or at an old token URL: a new one first.
    const webhookId =
      current?.webhookID ?? (await this.client.createWebhook(target.token, target.accountId, spec(target)));
    // Then every other one of ours goes (stale ones, and a duplicate two racing jobs made).
    for (const other of ours) if (other.webhookID !== webhookId) await this.delete(target, other.webhookID);
    return { webhookId, expiresAt: null };
  }

  async rotate(target: RegistrationTarget): Promise<Registered> {
    const webhookId = target.known.webhookId;
    if (webhookId === null) return this.sync(target);
    try {
      await this.client.updateWebhook(target.token, target.accountId, webhookId, spec(target));
    } catch (error) {
      if (!isGone(error)) throw error;
      return this.sync(target); // removed on Thumbtack's side: created anew
    }
    return { webhookId, expiresAt: null };
  }

  async remove(target: RegistrationTarget): Promise<void> {
    const ids = new Set((await this.ours(target)).map((hook) => hook.webhookID));
    if (target.known.webhookId !== null) ids.add(target.known.webhookId);
    for (const id of ids) await this.delete(target, id);
  }

  private async ours(target: RegistrationTarget): Promise<ThumbtackListedWebhook[]> {
    const endpoint = withoutQuery(target.webhookUrl);
    const hooks = await this.client.webhooks(target.token, target.accountId);
    return hooks.filter((hook) => withoutQuery(hook.webhookURL) === endpoint);
  }

  private async delete(target: RegistrationTarget, webhookId: string): Promise<void> {
    try {
      await this.client.deleteWebhook(target.token, target.accountId, webhookId);
    } catch (error) {
      if (!isGone(error)) throw error;
    }
  }
}

/**
 * What Thumbtack is given: Basic credentials, or for token auth none (the secret is in the URL).
 * Header auth is not registered (registration `manual`): how Thumbtack takes a custom header
 * is not in any readable document.
 */
function spec(target: RegistrationTarget): ThumbtackWebhookSpec {
  const inbound = target.inbound;
  if (inbound.type === "basic") {
    return {
      webhookURL: target.webhookUrl,
      auth: { username: inbound.username, password: inbound.password },
    };
  }
  if (inbound.type === "token") return { webhookURL: target.webhookUrl };
  throw new PermanentError("registration_unsupported_auth");
}
