// Payload conflicts: deliveries whose event id matched a receipt with a different payload digest,
// as GET /admin/conflicts lists them.
import { Injectable } from "@nestjs/common";
import { type TenantScope, tenantWhere } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Prisma } from "../generated/prisma/client.js";

const VIEW = {
  id: true,
  tenantId: true,
  receiptId: true,
  idempotencyKey: true,
  storedDigest: true,
  incomingDigest: true,
  createdAt: true,
} satisfies Prisma.PayloadConflictSelect;
export type ConflictView = Prisma.PayloadConflictGetPayload<{ select: typeof VIEW }>;

@Injectable()
export class ConflictsRepository {
  constructor(private readonly prisma: PrismaService) {}

  list(scope: TenantScope, page: { take: number; where: Prisma.PayloadConflictWhereInput }) {
    return this.prisma.payloadConflict.findMany({
      where: { AND: [tenantWhere(scope), page.where] },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.take,
      select: VIEW,
    });
  }
}
