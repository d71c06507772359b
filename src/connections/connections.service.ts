import { ClientsRepository } from "../clients/clients.repository.js";
import { CONFIG, type ConnectionsConfig, type HttpConfig } from "../config/sections.js";
import { randomBytes, randomUUID } from "node:crypto";
import { Inject, Injectable } from "@nestjs/common";
import { AppError } from "../common/app-error.js";
import { SecretBox } from "../crypto/secret-box.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Prisma } from "../generated/prisma/client.js";
import type { Tx } from "../database/transactions.js";
import { capabilities } from "../providers/capabilities.js";
import type { InboundCredentials } from "../providers/inbound-auth.js";
import type { Provider } from "../providers/provider-event.js";
import { secretPlace } from "../crypto/stored-secrets.js";
import { ConnectionStore } from "./connection-store.js";
import type {
  InboundAuthConfig,
  NewConnection,
  OAuthStatus,
  ProviderCredentials,
} from "./lifecycle/connection.js";

const HEADER_NAME = /^[A-Za-z0-9-]{1,64}$/;
const RESERVED_HEADERS = new Set([
  "authorization",
  "content-type",
  "content-length",
  "host",
  "idempotency-key",
]);

const secret = (): string => randomBytes(32).toString("base64url");

/** Secrets returned once on creation or rotation (api.md `secrets`). */
export type ShownSecrets = Record<string, string>;

export function generateCredentials(auth: NewConnection["inboundAuth"]): InboundCredentials {
  switch (auth.type) {
    case "bearer":
      return { type: "bearer", bearerToken: secret() };
    case "basic":
      return { type: "basic", username: `lg_${randomBytes(6).toString("hex")}`, password: secret() };
    case "header": {
      const headerName = auth.headerName ?? "";
      if (!HEADER_NAME.test(headerName) || RESERVED_HEADERS.has(headerName.toLowerCase())) {
        throw new AppError(400, "validation_failed", "inboundAuth.headerName must be a custom header name.", {
          "inboundAuth.headerName": ["must be letters, digits and '-', and not a standard header"],
        });
      }
      return { type: "header", headerName: headerName.toLowerCase(), headerValue: secret() };
    }
    case "token":
      return { type: "token", token: secret() };
    case "apiKey":
      if (!auth.apiKey || auth.apiKey.length < 8) {
        throw new AppError(400, "validation_failed", "inboundAuth.apiKey is required for type apiKey.", {
          "inboundAuth.apiKey": ["must be the Static Forms API key (at least 8 characters)"],
        });
      }
      return { type: "apiKey", apiKey: auth.apiKey };
    case "none":
      return { type: "none" };
  }
}

export function shown(credentials: InboundCredentials): ShownSecrets {
  const { type: _type, ...values } = credentials;
  // The apiKey was given by the caller, not generated: it is not shown back.
  return credentials.type === "apiKey" || credentials.type === "none" ? {} : values;
}

/**
 * The columns that hold provider credentials: the tokens encrypted, and beside them in clear what
 * the views show (scopes, expiry). `undefined`: no credentials. The grant's status is the
 * transition's to set (connection-states.ts: `reconnect`, `replaceCredentials`).
 */
export function credentialColumns(
  box: SecretBox,
  connectionId: string,
  credentials: ProviderCredentials | undefined,
) {
  const now = new Date();
  return {
    credentials: credentials ? box.seal({ ...credentials }, secretPlace("credentials", connectionId)) : null,
    oauthScopes: credentials?.scopes ?? [],
    tokenExpiresAt: credentials?.expiresAt ? new Date(credentials.expiresAt) : null,
    tokenIssuedAt: credentials ? now : null,
    oauthLastError: null,
  };
}

@Injectable()
export class ConnectionsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly store: ConnectionStore,
    private readonly box: SecretBox,
    private readonly clients: ClientsRepository,
    @Inject(CONFIG.http) private readonly config: HttpConfig,
    @Inject(CONFIG.connections) private readonly limits: ConnectionsConfig,
  ) {}

  webhookUrl(provider: Provider, connectionId: string, credentials: InboundCredentials): string {
    const base = this.config.publicBaseUrl;
    const shape = capabilities(provider).webhookUrl;
    if (shape !== "connection") return `${base}/webhooks/${provider}/{${shape.platformToken}}`; // one platform-wide URL
    const url = `${base}/webhooks/${provider}/${connectionId}`;
    return credentials.type === "token" ? `${url}?token=${credentials.token}` : url;
  }

  /**
   * Creates a connection with freshly generated inbound secrets; they are returned here, once. The
   * tenant must have room under MAX_CONNECTIONS_PER_TENANT live connections (`422 limit_reached`);
   * `db` is the caller's transaction, in which the tenant's row is locked so that concurrent
   * creations count each other. It belongs to `input.clientId`, a live client of the tenant (else
   * `404`), or to the tenant's first client.
   */
  async create(tenantId: string, input: NewConnection, db: Tx) {
    await this.makeRoom(db, tenantId);
    const clientId = await this.clients.clientFor(db, tenantId, input.clientId);
    const authTypes = capabilities(input.provider).inboundAuth;
    if (!authTypes.includes(input.inboundAuth.type)) {
      throw new AppError(
        400,
        "validation_failed",
        `inboundAuth.type ${input.inboundAuth.type} is not available for ${input.provider}.`,
        {
          "inboundAuth.type": [`must be one of ${authTypes.join(", ")}`],
        },
      );
    }
    const credentials = generateCredentials(input.inboundAuth);
    const crmSigningSecret = input.settings?.crmDestination
      ? `whsec_${randomBytes(32).toString("base64")}`
      : undefined;
    const inboundAuth: InboundAuthConfig = { type: credentials.type };
    if (credentials.type === "header") inboundAuth.headerName = credentials.headerName;
    // The id is made here, not by the database: each envelope is bound to its row (see SecretBox).
    const id = randomUUID();
    const connection = await this.store.insert(db, {
      id,
      tenantId,
      clientId,
      provider: input.provider,
      externalAccountId: input.externalAccountId,
      displayName: input.displayName,
      inboundAuth: { ...inboundAuth },
      inboundSecrets: this.box.seal(credentials, secretPlace("inbound_secrets", id)),
      ...credentialColumns(this.box, id, input.credentials),
      oauthStatus: (input.credentials ? "connected" : "not_connected") satisfies OAuthStatus,
      settings: { ...input.settings } as Prisma.InputJsonObject,
      crmSigningSecret: crmSigningSecret
        ? this.box.seal(crmSigningSecret, secretPlace("crm_signing_secret", id))
        : null,
    });
    const secrets: ShownSecrets = shown(credentials);
    if (crmSigningSecret) secrets.crmSigningSecret = crmSigningSecret;
    return { connection, webhookUrl: this.webhookUrl(input.provider, connection.id, credentials), secrets };
  }

  /**
   * Refuses a connection beyond the tenant's cap (`422 limit_reached`). The tenant's row is locked
   * first (FOR NO KEY UPDATE, which other writes' foreign-key checks do not wait for), so one
   * tenant's creations in transactions run one after the other, each counting the connections the
   * earlier ones committed. Outside a transaction it is a check only (the OAuth start's, before the
   * owner is sent to the provider; the callback's creation checks again).
   */
  async makeRoom(tx: Tx | PrismaService, tenantId: string): Promise<void> {
    await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${tenantId}::uuid FOR NO KEY UPDATE`;
    const [{ n }] = await tx.$queryRaw<[{ n: number }]>`
      SELECT count(*)::int AS n FROM connections WHERE tenant_id = ${tenantId}::uuid AND status <> 'disabled'`;
    if (n >= this.limits.maxConnectionsPerTenant) {
      throw new AppError(
        422,
        "limit_reached",
        `This tenant has ${n} connections, its limit (MAX_CONNECTIONS_PER_TENANT): disconnect one before adding another.`,
      );
    }
  }
}
