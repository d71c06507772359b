// The client store: the businesses a tenant (an agency) serves (api.md "Clients"), each with the
// reply settings its connections inherit before the tenant's (`defaults`), its `branding` and the
// `timezone` of its reports. A tenant's first client is made with the tenant (a trigger: migration
// 20261215000000_clients); a deleted client is kept, hidden, for its disabled connections' history.
import { Injectable } from "@nestjs/common";
import { PLATFORM, type Principal, type TenantScope, tenantParam } from "../auth/principal.js";
import { AuditRepository } from "../audit/audit.repository.js";
import { AppError } from "../common/app-error.js";
import { notFound } from "../common/id.pipe.js";
import { given, validationFailed } from "../common/validation.js";
import { settingsWithoutNulls } from "../connections/lifecycle/connection.js";
import { PrismaService } from "../database/prisma.service.js";
import { Transactions, type Tx } from "../database/transactions.js";
import type { Prisma } from "../generated/prisma/client.js";
import {
  delayField,
  delayProblem,
  type FieldErrors,
  type GivenReplySettings,
  refuse,
  replySettingsErrors,
  storedSizeErrors,
} from "../replies/reply-settings-check.js";
import { isTimeZone } from "../replies/business-hours.js";
import { effectiveSettings, type InheritedSettings, type ReplySettings } from "../replies/reply-settings.js";

/** How a client is shown on its share pages and report e-mails (api.md "Proof"). */
export interface Branding {
  displayName?: string;
  logoUrl?: string;
  accentColor?: string;
}

export interface NewClient {
  name: string;
  defaults?: GivenReplySettings;
  branding?: { [K in keyof Branding]?: Branding[K] | null };
  timezone?: string;
}

/** What a client PATCH may change: each given field of `defaults` and `branding` replaces the stored one, null removes it. */
export type ClientChanges = Partial<NewClient>;

/** The columns a client is shown with. */
export const CLIENT_VIEW = {
  id: true,
  tenantId: true,
  name: true,
  defaults: true,
  branding: true,
  timezone: true,
  createdAt: true,
  updatedAt: true,
} satisfies Prisma.ClientSelect;
export type ClientRow = Prisma.ClientGetPayload<{ select: typeof CLIENT_VIEW }>;

const live = (scope: TenantScope): Prisma.ClientWhereInput =>
  scope === PLATFORM ? { deletedAt: null } : { tenantId: scope, deletedAt: null };

@Injectable()
export class ClientsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly transactions: Transactions,
    private readonly audit: AuditRepository,
  ) {}

  /**
   * A client of `tenantId`, at most `max` live ones (`422 limit_reached`): the tenant's row is
   * locked first (FOR NO KEY UPDATE, as for connections), so concurrent creations count each other.
   * Its time zone defaults to the zone of the tenant's default business hours, else UTC.
   */
  create(by: Principal, tenantId: string, body: NewClient, max: number): Promise<ClientRow> {
    checkTimeZone(body.timezone);
    const defaults = this.checkedDefaults({}, body.defaults);
    return this.transactions.run(async (tx) => {
      const [tenant] = await tx.$queryRaw<{ defaults: ReplySettings }[]>`
        SELECT defaults FROM tenants WHERE id = ${tenantId}::uuid FOR NO KEY UPDATE`;
      if (!tenant) throw notFound("tenant");
      const [{ n }] = await tx.$queryRaw<[{ n: number }]>`
        SELECT count(*)::int AS n FROM clients WHERE tenant_id = ${tenantId}::uuid AND deleted_at IS NULL`;
      if (n >= max) {
        throw new AppError(
          422,
          "limit_reached",
          `This tenant has ${n} clients, its limit (MAX_CLIENTS_PER_TENANT): delete one before adding another.`,
        );
      }
      const own = delayProblem(effectiveSettings({}, { client: defaults, tenant: tenant.defaults }));
      if (own) refuse({ [delayField(body.defaults ?? {}, "defaults")]: [`the defaults themselves: ${own}`] });
      const client = await tx.client.create({
        data: {
          tenantId,
          name: body.name,
          defaults: defaults as Prisma.InputJsonObject,
          branding: settingsWithoutNulls({ ...body.branding }) as Prisma.InputJsonObject,
          timezone: body.timezone ?? tenant.defaults.businessHours?.timezone ?? "UTC",
        },
        select: CLIENT_VIEW,
      });
      await this.audit.record(tx, by, {
        action: "client.create",
        tenantId,
        targetType: "client",
        targetId: client.id,
        details: { name: body.name },
      });
      return client;
    });
  }

  list(scope: TenantScope, page: { take: number; where: Prisma.ClientWhereInput }) {
    return this.prisma.client.findMany({
      where: { AND: [live(scope), page.where] },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.take,
      select: CLIENT_VIEW,
    });
  }

  async find(scope: TenantScope, id: string): Promise<ClientRow> {
    const client = await this.prisma.client.findFirst({
      where: { AND: [live(scope), { id }] },
      select: CLIENT_VIEW,
    });
    if (!client) throw notFound("client");
    return client;
  }

  /**
   * Name, defaults, branding and time zone, with the audit row. Refused (400, nothing written) when a
   * template or the hours do not parse, or when the new defaults would put the effective delay of the
   * client, or of a live connection that inherits it, at or above the effective response target.
   */
  async update(by: Principal, scope: TenantScope, id: string, body: ClientChanges): Promise<ClientRow> {
    checkTimeZone(body.timezone);
    const named = given(body.defaults ?? {});
    refuse(replySettingsErrors(named, "defaults"));
    return this.transactions.run(async (tx) => {
      // Locked: a connection's create or PATCH reads the defaults FOR SHARE (inherited), so its
      // delay check and this one see each other's change.
      const [locked] = await tx.$queryRaw<
        { tenantId: string; defaults: ReplySettings; branding: Branding }[]
      >`
        SELECT tenant_id AS "tenantId", defaults, branding FROM clients
        WHERE id = ${id}::uuid AND deleted_at IS NULL AND (${tenantParam(scope)}::uuid IS NULL OR tenant_id = ${tenantParam(scope)}::uuid)
        FOR UPDATE`;
      if (!locked) throw notFound("client");
      const defaults = this.checkedDefaults(locked.defaults, named);
      if ("autoResponse" in named || "responseTarget" in named) {
        refuse(await this.delayConflicts(tx, id, locked.tenantId, defaults, named));
      }
      const client = await tx.client.update({
        where: { id },
        data: {
          name: body.name,
          defaults: defaults as Prisma.InputJsonObject,
          branding: settingsWithoutNulls({
            ...locked.branding,
            ...given(body.branding ?? {}),
          }) as Prisma.InputJsonObject,
          timezone: body.timezone,
        },
        select: CLIENT_VIEW,
      });
      await this.audit.record(tx, by, {
        action: "client.update",
        tenantId: locked.tenantId,
        targetType: "client",
        targetId: id,
        details: {
          fields: Object.keys(given(body))
            .concat(Object.keys(named).map((key) => `defaults.${key}`))
            .concat(Object.keys(given(body.branding ?? {})).map((key) => `branding.${key}`)),
        },
      });
      return client;
    });
  }

  /**
   * Deletes (hides) a client: `409 client_in_use` while a connection of it is not disabled, or when
   * it is its tenant's last client (connections need one to belong to).
   */
  async remove(by: Principal, scope: TenantScope, id: string): Promise<void> {
    await this.transactions.run(async (tx) => {
      const [client] = await tx.$queryRaw<{ tenantId: string }[]>`
        SELECT tenant_id AS "tenantId" FROM clients
        WHERE id = ${id}::uuid AND deleted_at IS NULL AND (${tenantParam(scope)}::uuid IS NULL OR tenant_id = ${tenantParam(scope)}::uuid)
        FOR UPDATE`;
      if (!client) throw notFound("client");
      // The tenant's row too (FOR NO KEY UPDATE): a connection created meanwhile locks it first.
      await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${client.tenantId}::uuid FOR NO KEY UPDATE`;
      const [{ connections, others }] = await tx.$queryRaw<[{ connections: number; others: number }]>`
        SELECT (SELECT count(*)::int FROM connections WHERE client_id = ${id}::uuid AND status <> 'disabled') AS connections,
               (SELECT count(*)::int FROM clients WHERE tenant_id = ${client.tenantId}::uuid AND deleted_at IS NULL
                  AND id <> ${id}::uuid) AS others`;
      if (connections > 0) {
        throw new AppError(
          409,
          "client_in_use",
          `This client has ${connections} connection(s) that are not disabled: move or disconnect them first.`,
        );
      }
      if (others === 0) {
        throw new AppError(
          409,
          "client_in_use",
          "This is the tenant's only client: a tenant keeps at least one.",
        );
      }
      await tx.client.update({ where: { id }, data: { deletedAt: new Date() } });
      await this.audit.record(tx, by, {
        action: "client.delete",
        tenantId: client.tenantId,
        targetType: "client",
        targetId: id,
      });
    });
  }

  /**
   * The client a new or moved connection of `tenantId` belongs to: `clientId` when it is a live
   * client of that tenant (else `404`, as for any id the caller cannot see), or the tenant's first.
   */
  async clientFor(db: Tx | PrismaService, tenantId: string, clientId: string | undefined): Promise<string> {
    const [client] = await db.$queryRaw<{ id: string }[]>`
      SELECT id FROM clients
      WHERE tenant_id = ${tenantId}::uuid AND deleted_at IS NULL
        AND (${clientId ?? null}::uuid IS NULL OR id = ${clientId ?? null}::uuid)
      ORDER BY created_at, id LIMIT 1`;
    if (!client) throw notFound("client");
    return client.id;
  }

  /**
   * What a connection of the client inherits: the client's defaults, then the tenant's. `share`:
   * both rows locked against a concurrent PATCH until the transaction ends, so a connection's delay
   * check sees the defaults that stay in force.
   */
  async inherited(db: Tx | PrismaService, clientId: string, lock?: "share"): Promise<InheritedSettings> {
    const rows = lock
      ? await db.$queryRaw<InheritedSettings[]>`
          SELECT cl.defaults AS client, t.defaults AS tenant
          FROM clients cl JOIN tenants t ON t.id = cl.tenant_id WHERE cl.id = ${clientId}::uuid FOR SHARE`
      : await db.$queryRaw<InheritedSettings[]>`
          SELECT cl.defaults AS client, t.defaults AS tenant
          FROM clients cl JOIN tenants t ON t.id = cl.tenant_id WHERE cl.id = ${clientId}::uuid`;
    return rows[0] ?? { client: {}, tenant: {} };
  }

  /** `stored` with the fields `named` gives (null removes one), checked and within the size cap. */
  private checkedDefaults(stored: ReplySettings, named: GivenReplySettings | undefined): ReplySettings {
    refuse(replySettingsErrors(named ?? {}, "defaults"));
    const defaults: ReplySettings = settingsWithoutNulls({ ...stored, ...named });
    refuse(storedSizeErrors(defaults, "defaults"));
    return defaults;
  }

  /** The defaults' own delay against their target, then every live connection of the client that inherits either. */
  private async delayConflicts(
    tx: Tx,
    clientId: string,
    tenantId: string,
    defaults: ReplySettings,
    named: GivenReplySettings,
  ): Promise<FieldErrors> {
    const [tenant] = await tx.$queryRaw<{ defaults: ReplySettings }[]>`
      SELECT defaults FROM tenants WHERE id = ${tenantId}::uuid FOR SHARE`;
    const inherited = { client: defaults, tenant: tenant?.defaults };
    const problems: string[] = [];
    const own = delayProblem(effectiveSettings({}, inherited));
    if (own) problems.push(`the defaults themselves: ${own}`);
    const connections = await tx.connection.findMany({
      where: { clientId, status: { not: "disabled" } },
      select: { id: true, displayName: true, settings: true },
      orderBy: { createdAt: "asc" },
    });
    for (const connection of connections) {
      const effective = effectiveSettings(connection.settings as ReplySettings, inherited);
      const inherits =
        effective.source.autoResponse !== "connection" || effective.source.responseTarget !== "connection";
      const problem = inherits ? delayProblem(effective) : undefined;
      if (problem) problems.push(`connection ${connection.id} (${connection.displayName}): ${problem}`);
    }
    return problems.length > 0 ? { [delayField(named, "defaults")]: problems } : {};
  }
}

/** `400 validation_failed` (nothing written) for a `timezone` that is not an IANA zone. */
function checkTimeZone(timezone: string | undefined): void {
  if (timezone !== undefined && !isTimeZone(timezone)) {
    throw validationFailed({
      timezone: [`${JSON.stringify(timezone)} is not an IANA time zone (e.g. "America/New_York")`],
    });
  }
}
