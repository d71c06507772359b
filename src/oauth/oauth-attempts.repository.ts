// The single-use attempts of the OAuth authorization code flow. The `state` sent to the provider is
// stored only as its sha256, so the callback finds its attempt by an index lookup (no comparison of
// secrets in application code, and a leaked table holds no usable state).
import { createHash, randomUUID } from "node:crypto";
import { Injectable } from "@nestjs/common";
import { SecretBox } from "../crypto/secret-box.js";
import { oauthAttemptPlace } from "../crypto/stored-secrets.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Prisma } from "../generated/prisma/client.js";
import type { OAuthProvider } from "../connections/provider-oauth.js";
import type { ConnectionFields } from "./oauth.dto.js";

/** How long a started flow may take: api.md, 10 minutes. */
export const ATTEMPT_TTL_MS = 10 * 60 * 1000;

export interface NewAttempt {
  tenantId: string;
  /** Who started it: an API key or a console user (exactly one). */
  apiKeyId: string | null;
  userId: string | null;
  provider: OAuthProvider;
  connectionId: string | null;
  fields: ConnectionFields;
  returnUrl: string | null;
  state: string;
  codeVerifier: string;
}

/** A consumed attempt, as the callback continues with it. */
export interface ConsumedAttempt {
  id: string;
  tenantId: string;
  apiKeyId: string | null;
  userId: string | null;
  provider: OAuthProvider;
  connectionId: string | null;
  fields: ConnectionFields;
  returnUrl: string | null;
  codeVerifier: string;
}

const hashOf = (state: string) => createHash("sha256").update(state, "utf8").digest("hex");

@Injectable()
export class OAuthAttemptsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
  ) {}

  async create(attempt: NewAttempt): Promise<{ expiresAt: Date }> {
    const id = randomUUID();
    const expiresAt = new Date(Date.now() + ATTEMPT_TTL_MS);
    await this.prisma.oAuthAttempt.create({
      data: {
        id,
        tenantId: attempt.tenantId,
        apiKeyId: attempt.apiKeyId,
        userId: attempt.userId,
        provider: attempt.provider,
        connectionId: attempt.connectionId,
        stateHash: hashOf(attempt.state),
        codeVerifier: this.box.seal(attempt.codeVerifier, oauthAttemptPlace(id)),
        fields: attempt.fields as unknown as Prisma.InputJsonObject,
        returnUrl: attempt.returnUrl,
        expiresAt,
      },
    });
    return { expiresAt };
  }

  /**
   * Consumes the attempt of `state` exactly once: of concurrent callbacks with one state, the one
   * whose UPDATE commits first gets it; the others (and a forged, reused or expired state) get
   * undefined. One autocommit statement: the row lock is held for no longer than the UPDATE.
   */
  async consume(provider: OAuthProvider, state: string): Promise<ConsumedAttempt | undefined> {
    const { rows } = await this.prisma.pool.query<{
      id: string;
      tenantId: string;
      apiKeyId: string | null;
      userId: string | null;
      connectionId: string | null;
      fields: ConnectionFields;
      returnUrl: string | null;
      codeVerifier: string;
    }>(
      `UPDATE oauth_attempts SET consumed_at = now()
       WHERE state_hash = $1 AND provider = $2 AND consumed_at IS NULL AND expires_at > now()
       RETURNING id, tenant_id AS "tenantId", api_key_id AS "apiKeyId", user_id AS "userId", connection_id AS "connectionId",
         fields, return_url AS "returnUrl", code_verifier AS "codeVerifier"`,
      [hashOf(state), provider],
    );
    const row = rows[0];
    if (!row) return undefined;
    let codeVerifier: string;
    try {
      codeVerifier = this.box.open<string>(row.codeVerifier, oauthAttemptPlace(row.id));
    } catch {
      return undefined; // sealed under a key no longer configured: the flow starts again
    }
    return { ...row, provider, codeVerifier };
  }
}
