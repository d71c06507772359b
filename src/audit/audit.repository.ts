// The audit log's store: who (which API key or console user) did which admin action, on what, when.
// Written in the same transaction as the action it records; read by GET /admin/audit.
import { Injectable } from "@nestjs/common";
import { type Principal, type TenantScope, tenantWhere } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import type { Prisma } from "../generated/prisma/client.js";

export type AuditAction =
  | "tenant.create"
  | "tenant.update"
  | "client.create"
  | "client.update"
  | "client.delete"
  | "api-key.create"
  | "api-key.revoke"
  | "connection.create"
  | "connection.update"
  | "connection.pause"
  | "connection.resume"
  | "connection.rotate-secret"
  | "connection.rotate-crm-secret"
  | "connection.revoke-previous-secret"
  | "connection.disable"
  | "connection.oauth-connect"
  | "connection.reconnect"
  | "connection.sync"
  | "connection.backfill"
  | "lead.mark_replied"
  | "job.replay"
  | "receipt.replay"
  | "replay.create"
  | "alert.acknowledge"
  | "alert.resolve"
  | "notification-channel.create"
  | "notification-channel.delete"
  | "user.create"
  | "user.invite"
  | "user.disable";

export interface AuditRecord {
  action: AuditAction;
  /** The tenant the action touched; null for platform actions. */
  tenantId: string | null;
  targetType: string;
  targetId: string | null;
  /** What changed, never a secret. */
  details?: Prisma.InputJsonObject;
}

/** The columns an audit entry is shown with. */
export const AUDIT_VIEW = {
  id: true,
  tenantId: true,
  apiKeyId: true,
  userId: true,
  action: true,
  targetType: true,
  targetId: true,
  details: true,
  createdAt: true,
} satisfies Prisma.AuditEntrySelect;

@Injectable()
export class AuditRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** `by`: the key or user that acted (an OAuth callback acts for whoever started the flow). */
  async record(db: Tx, by: Pick<Principal, "keyId" | "userId">, ...entries: AuditRecord[]): Promise<void> {
    await db.auditEntry.createMany({
      data: entries.map((entry) => ({
        ...entry,
        apiKeyId: by.keyId,
        userId: by.userId,
        details: entry.details ?? {},
      })),
    });
  }

  list(scope: TenantScope, page: { take: number; where: Prisma.AuditEntryWhereInput }) {
    return this.prisma.auditEntry.findMany({
      where: { ...tenantWhere(scope), ...page.where },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.take,
      select: AUDIT_VIEW,
    });
  }
}
