// Payload conflicts: deliveries whose event id matched a receipt with a different payload digest,
// as GET /admin/conflicts lists them.
import { ApiProperty } from "@nestjs/swagger";
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
/** The same idempotency key delivered with a different payload digest: kept, never applied. */
export class ConflictView implements Prisma.PayloadConflictGetPayload<{ select: typeof VIEW }> {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty({ format: "uuid" })
  tenantId!: string;

  @ApiProperty({ format: "uuid", description: "the receipt stored first" })
  receiptId!: string;

  @ApiProperty()
  idempotencyKey!: string;

  @ApiProperty({ description: "the stored payload's digest" })
  storedDigest!: string;

  @ApiProperty({ description: "the later delivery's digest" })
  incomingDigest!: string;

  @ApiProperty()
  createdAt!: Date;
}

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
