// The tenant store: tenants (agencies) with their `defaults`, the reply settings their connections
// inherit (api.md "First replies"). Creates a tenant with its first tenant-admin key, updates its
// name and defaults (checked against every connection that inherits them), reads them.
import { Injectable } from "@nestjs/common";
import { ApiKeysRepository, type CreatedApiKey } from "../auth/api-keys.repository.js";
import { PLATFORM, type Principal, type TenantScope } from "../auth/principal.js";
import { AuditRepository } from "../audit/audit.repository.js";
import { AppError } from "../common/app-error.js";
import { notFound } from "../common/id.pipe.js";
import { given } from "../common/validation.js";
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
import { effectiveSettings, type ReplySettings } from "../replies/reply-settings.js";

/** What a tenant PATCH may change. */
export interface TenantChanges {
  name?: string;
  defaults?: GivenReplySettings;
}

/** The columns a tenant is shown with. */
export const TENANT_VIEW = {
  id: true,
  name: true,
  defaults: true,
  createdAt: true,
} satisfies Prisma.TenantSelect;

/**
 * The tenant a tenant-admin acts on: its own. Naming another tenant's id answers `404`, as every
 * other tenant's id does for it.
 */
export function ownTenant(principal: Principal, tenantId: string | undefined): string {
  if (tenantId !== undefined && tenantId !== principal.tenantId) throw notFound("tenant");
  return principal.tenantId!;
}

/** A tenant's own id is its scope: tenant-admins see exactly one tenant. */
const tenantIdWhere = (scope: TenantScope) => (scope === PLATFORM ? {} : { id: scope });

@Injectable()
export class TenantsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly transactions: Transactions,
    private readonly keys: ApiKeysRepository,
    private readonly audit: AuditRepository,
  ) {}

  /** The tenant, its first tenant-admin key and the audit row, in one transaction. */
  create(
    by: Principal,
    name: string,
  ): Promise<{ tenant: Prisma.TenantGetPayload<{ select: typeof TENANT_VIEW }>; apiKey: CreatedApiKey }> {
    return this.transactions.run(async (tx) => {
      const tenant = await tx.tenant.create({ data: { name }, select: TENANT_VIEW });
      const apiKey = await this.keys.create(
        tx,
        { tenantId: tenant.id, name: "first admin key", role: "tenant-admin" },
        by,
      );
      await this.audit.record(tx, by, {
        action: "tenant.create",
        tenantId: tenant.id,
        targetType: "tenant",
        targetId: tenant.id,
        details: { name, apiKeyId: apiKey.id },
      });
      return { tenant, apiKey };
    });
  }

  list(scope: TenantScope, page: { take: number; where: Prisma.TenantWhereInput }) {
    return this.prisma.tenant.findMany({
      where: { AND: [tenantIdWhere(scope), page.where] },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.take,
      select: TENANT_VIEW,
    });
  }

  /**
   * Name and defaults, with the audit row, in one transaction. Refused (400, nothing written) when a
   * template or the hours do not parse, or when the new defaults would put a connection's effective
   * delaySeconds at or above its effective responseTarget (the connections are named).
   */
  async update(by: Principal, scope: TenantScope, id: string, body: TenantChanges) {
    const named = given(body.defaults ?? {});
    refuse(replySettingsErrors(named, "defaults"));
    if (scope !== PLATFORM && scope !== id) throw notFound("tenant");
    return this.transactions.run(async (tx) => {
      // Locked: a connection's create or PATCH reads the defaults FOR SHARE, so its delay check and
      // this one see each other's change (ClientsRepository.inherited).
      const [locked] = await tx.$queryRaw<{ defaults: ReplySettings }[]>`
        SELECT defaults FROM tenants WHERE id = ${id}::uuid FOR UPDATE`;
      if (!locked) throw notFound("tenant");
      const defaults: ReplySettings = settingsWithoutNulls({ ...locked.defaults, ...named });
      refuse(storedSizeErrors(defaults, "defaults"));
      if ("autoResponse" in named || "responseTarget" in named) {
        refuse(await this.delayConflicts(tx, id, defaults, named));
      }
      const tenant = await tx.tenant.update({
        where: { id },
        data: { name: body.name, defaults: defaults as Prisma.InputJsonObject },
        select: TENANT_VIEW,
      });
      await this.audit.record(tx, by, {
        action: "tenant.update",
        tenantId: id,
        targetType: "tenant",
        targetId: id,
        details: {
          fields: Object.keys(given(body)).concat(Object.keys(named).map((key) => `defaults.${key}`)),
        },
      });
      return { tenant };
    });
  }

  /** The defaults' own delay against their target, then every live connection that inherits either (through its client or not). */
  private async delayConflicts(
    tx: Tx,
    tenantId: string,
    defaults: ReplySettings,
    named: object,
  ): Promise<FieldErrors> {
    const problems: string[] = [];
    const own = delayProblem(effectiveSettings({}, { client: undefined, tenant: defaults }));
    if (own) problems.push(`the defaults themselves: ${own}`);
    const connections = await tx.connection.findMany({
      where: { tenantId, status: { not: "disabled" } },
      select: { id: true, displayName: true, settings: true, client: { select: { defaults: true } } },
      orderBy: { createdAt: "asc" },
    });
    for (const connection of connections) {
      const effective = effectiveSettings(connection.settings as ReplySettings, {
        client: connection.client.defaults as ReplySettings,
        tenant: defaults,
      });
      const inherits =
        effective.source.autoResponse !== "connection" || effective.source.responseTarget !== "connection";
      const problem = inherits ? delayProblem(effective) : undefined;
      if (problem) problems.push(`connection ${connection.id} (${connection.displayName}): ${problem}`);
    }
    return problems.length > 0 ? { [delayField(named, "defaults")]: problems } : {};
  }

  /**
   * The tenant something new is made in: a tenant-admin's own (another tenant's id: `404`), or the
   * one an operator names (`400` without one, `404` for an unknown one). `doing` ends the 400's
   * message: "required when an operator key <doing>".
   */
  async tenantOfNew(by: Principal, tenantId: string | undefined, doing: string): Promise<string> {
    if (by.role !== "operator") return ownTenant(by, tenantId);
    if (tenantId === undefined) {
      throw new AppError(400, "validation_failed", "Invalid input: tenantId.", {
        tenantId: [`required when an operator key ${doing}`],
      });
    }
    if (!(await this.find(PLATFORM, tenantId))) throw notFound("tenant");
    return tenantId;
  }

  find(scope: TenantScope, id: string) {
    return this.prisma.tenant.findFirst({
      where: { AND: [tenantIdWhere(scope), { id }] },
      select: TENANT_VIEW,
    });
  }
}
