// Conflicts: the same idempotency key delivered with a different payload digest (kept, never applied).
import { Controller, Get, Injectable, Query } from "@nestjs/common";
import { ApiOkResponse, ApiTags } from "@nestjs/swagger";
import { listScope, TenantListQuery } from "./filters.js";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, type TenantScope, tenantWhere } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Prisma } from "../generated/prisma/client.js";
import { type Page, pageAfter, toPage } from "./pagination.js";

const VIEW = {
  id: true,
  tenantId: true,
  receiptId: true,
  idempotencyKey: true,
  storedDigest: true,
  incomingDigest: true,
  createdAt: true,
} satisfies Prisma.PayloadConflictSelect;
type ConflictView = Prisma.PayloadConflictGetPayload<{ select: typeof VIEW }>;

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

@ApiTags("conflicts")
@AdminApi()
@Controller("admin/conflicts")
export class ConflictsController {
  constructor(private readonly conflicts: ConflictsRepository) {}

  @Get()
  @ApiOkResponse({ description: "same key, different payload digest: the stored receipt and both digests" })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: TenantListQuery,
  ): Promise<Page<ConflictView>> {
    return toPage(
      await this.conflicts.list(listScope(principal, query.tenantId), pageAfter("createdAt", query)),
      query,
      (row) => row.createdAt,
    );
  }
}
