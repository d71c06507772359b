// provider-sync: registers a connection's webhook with its provider (create or repair, update the
// credentials after a rotation, remove on disconnect: src/providers/provider-registration.ts). A
// removal runs although the connection is disabled (the disconnect's clean-up waits for it before
// deleting the tokens: src/connections/connection-cleanup.ts). Every outcome is recorded on the
// connection through the store (ConnectionSubstates.recordRegistration); a failure is then thrown on, so the job
// retries with backoff like every side effect. Ingest reads none of this.
import { CONFIG, type ConnectionsConfig } from "../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import { classify, CredentialError, PermanentError, WaitRequired } from "../common/outbound/errors.js";
import type { ConnectionJobContext } from "../jobs/job-context.js";
import type { Processor } from "../jobs/processor.js";
import { hasApi } from "../providers/capabilities.js";
import type { RegistrationTarget } from "../providers/provider-registration.js";
import { RegistrationRegistry } from "../providers/registration-registry.js";
import { ConnectionSubstates, type RegistrationOutcome } from "./connection-substates.js";
import { ConnectionsService } from "./connections.service.js";
import { actionOf } from "./provider-sync.js";
import { RegistrationRepository } from "./registration.js";

@Injectable()
export class ProviderSyncProcessor implements Processor<ConnectionJobContext> {
  readonly operation = "provider-sync" as const;

  constructor(
    private readonly registrations: RegistrationRepository,
    private readonly substates: ConnectionSubstates,
    private readonly registrars: RegistrationRegistry,
    private readonly connections: ConnectionsService,
    @Inject(CONFIG.connections) private readonly config: ConnectionsConfig,
  ) {}

  needsCredentials(): boolean {
    return true;
  }

  runsWhileDisabled({ job }: ConnectionJobContext): boolean {
    return actionOf(job.jobKey) === "remove";
  }

  async run({ job, connection }: ConnectionJobContext): Promise<void> {
    const action = actionOf(job.jobKey);
    if (!hasApi(connection.provider)) throw new PermanentError("registration_unsupported");
    const stored = await this.registrations.read(connection.tenantId, connection.id);
    if (!stored) throw new PermanentError("missing_connection");
    // Let go already (a removal ran): nothing of ours is left to look after.
    if (stored.status === "manual") return;
    const registrar = this.registrars.get(connection.provider);
    const target: RegistrationTarget = {
      accountId: connection.externalAccountId,
      token: connection.accessToken,
      webhookUrl: this.connections.webhookUrl(connection.provider, connection.id, stored.inbound),
      inbound: stored.inbound,
      known: stored.known,
      released: (ids) => this.registrations.released(connection.provider, ids),
    };
    const resync = this.config.registrationSyncIntervalSeconds;
    const ref = { tenantId: connection.tenantId, id: connection.id };
    const record = (outcome: RegistrationOutcome) => this.substates.recordRegistration(ref, outcome, resync);
    try {
      if (action === "remove") {
        await registrar.remove(target);
        await record({ kind: "removed" });
      } else {
        const registered = await registrar[action](target);
        await record({ kind: "registered", ...registered });
      }
    } catch (error) {
      // A quota wait is not a failure (the job waits, no attempt used).
      if (error instanceof WaitRequired) throw error;
      await record({ kind: "failed", errorCode: classify(error).code });
      // A 403 here says the grant may not manage webhooks (a scope the partner lacks), not that the
      // token is bad: the registration is dead, but the connection's other provider calls go on.
      // (A 401 stays a credential error: the runner refreshes the token once, then blocks.)
      if (error instanceof CredentialError && error.code === "http_403") throw new PermanentError(error.code);
      throw error;
    }
  }
}
