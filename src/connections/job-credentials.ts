import { Injectable } from "@nestjs/common";
import type { ConnectionCredentials, CredentialOwner } from "../jobs/connection-credentials.js";
import { ConnectionStore } from "./connection-store.js";
import { ProviderTokens } from "./provider-tokens.js";

/** The job engine's view of a connection's credentials (src/jobs/connection-credentials.ts). */
@Injectable()
export class JobCredentials implements ConnectionCredentials {
  constructor(
    private readonly tokens: ProviderTokens,
    private readonly store: ConnectionStore,
  ) {}

  current(owner: CredentialOwner): Promise<string | undefined> {
    return this.tokens.current(owner);
  }

  afterUnauthorized(owner: CredentialOwner, failed: string): Promise<string | undefined> {
    return this.tokens.afterUnauthorized(owner, failed);
  }

  async refused(owner: { tenantId: string; id: string }): Promise<void> {
    await this.store.refuseCredentials(owner);
  }
}
