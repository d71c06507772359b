// A console user as the API shows it, and the roles a user (or an API key) may have.
import { ApiProperty } from "@nestjs/swagger";
import { NullableDate, NullableId } from "../common/api-properties.js";
import type { Prisma } from "../generated/prisma/client.js";

export const USER_ROLES = ["operator", "tenant-admin", "tenant-viewer"] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const USER_VIEW = {
  id: true,
  email: true,
  role: true,
  tenantId: true,
  createdAt: true,
  disabledAt: true,
} satisfies Prisma.UserSelect;

/** Who is signed in, as GET and POST /console/api/session show it. */
export class SessionUser {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty()
  email!: string;

  @ApiProperty({ enum: USER_ROLES })
  role!: UserRole;

  @NullableId("null for an operator")
  tenantId!: string | null;

  @ApiProperty()
  createdAt!: Date;
}

export class UserView extends SessionUser {
  @NullableDate("when the user was disabled (its sessions ended then)")
  disabledAt!: Date | null;

  @ApiProperty({ description: "false until the invitation is accepted" })
  accepted!: boolean;
}

export function toUserView(
  row: Prisma.UserGetPayload<{ select: typeof USER_VIEW }> & { passwordHash: string | null },
): UserView {
  return {
    id: row.id,
    email: row.email,
    role: row.role as UserRole,
    tenantId: row.tenantId,
    createdAt: row.createdAt,
    disabledAt: row.disabledAt,
    accepted: row.passwordHash !== null,
  };
}

/** E-mails are compared in lower case. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
