// Console users (api.md "Console and users"): operators invite anyone; a tenant-admin invites and
// disables its own tenant's admins and viewers. The invitation URL is shown once, to the inviter
// (and mailed when SMTP_URL is set). Invitations are limited (InvitationLimits: per user per hour,
// per tenant per day) and so are a tenant's users (MAX_USERS_PER_TENANT). Disabling a user may
// revoke the API keys it created (?revokeKeys=true).
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from "@nestjs/common";
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnprocessableEntityResponse,
} from "@nestjs/swagger";
import { IsEmail, IsIn, IsUUID, Length } from "class-validator";
import { ADMIN_RATE_LIMITED, AdminApi } from "../auth/api-key.guard.js";
import { ApiKeysRepository } from "../auth/api-keys.repository.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, scopeOf, tenantParam } from "../auth/principal.js";
import { AppError } from "../common/app-error.js";
import { Optional } from "../common/validation.js";
import { Transactions } from "../database/transactions.js";
import { alreadyAccepted, Invitation, InvitationsRepository } from "../users/invitations.repository.js";
import { USER_ROLES, type UserRole, UserView } from "../users/user.js";
import { UsersRepository } from "../users/users.repository.js";
import { AuditRepository } from "../audit/audit.repository.js";
import { IdPipe, notFound } from "../common/id.pipe.js";
import { listScope, TenantListQuery } from "../auth/list-filters.js";
import { type Page, PageOf, pageAfter, toPage } from "../common/pagination.js";
import { ownTenant, TenantsRepository } from "../tenants/tenants.repository.js";
import {
  InvitationLimits,
  INVITATIONS_PER_TENANT_DAY,
  INVITATIONS_PER_USER_HOUR,
} from "../users/invitation-limits.js";
import { UserInvitationMail } from "../users/user-invitation-mail.js";

const TOO_MANY_INVITATIONS = `${ADMIN_RATE_LIMITED}; or the user was sent ${INVITATIONS_PER_USER_HOUR} invitations in the last hour, or the tenant's users ${INVITATIONS_PER_TENANT_DAY} in the last day (nothing written or sent)`;

export class CreateUserBody {
  @ApiProperty({ example: "ana@example.com" })
  @IsEmail()
  @Length(3, 320)
  email!: string;

  @ApiProperty({ enum: USER_ROLES })
  @IsIn(USER_ROLES)
  role!: UserRole;

  @ApiPropertyOptional({ description: "required for a tenant role created by an operator" })
  @Optional()
  @IsUUID()
  tenantId?: string;
}

export class DisableUserQuery {
  @ApiPropertyOptional({
    enum: ["true", "false"],
    description: "true: also revoke the API keys this user created (key views name it in `createdBy`)",
  })
  @Optional()
  @IsIn(["true", "false"])
  revokeKeys?: "true" | "false";
}

export class InvitationAnswer {
  @ApiProperty({ type: () => Invitation })
  invitation!: Invitation;
}

export class CreatedUser extends InvitationAnswer {
  @ApiProperty({ type: () => UserView })
  user!: UserView;
}

@ApiTags("users")
@AdminApi()
@Controller("admin/users")
export class UsersController {
  constructor(
    private readonly transactions: Transactions,
    private readonly users: UsersRepository,
    private readonly invitations: InvitationsRepository,
    private readonly tenants: TenantsRepository,
    private readonly audit: AuditRepository,
    private readonly mail: UserInvitationMail,
    private readonly limits: InvitationLimits,
    private readonly keys: ApiKeysRepository,
  ) {}

  @ApiOperation({
    description:
      "Invites a console user: the user and a single-use invitation URL (72 h), also mailed when SMTP_URL is set.",
  })
  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({
    description: "`{ user, invitation: { url, expiresAt } }`: the URL is shown this once",
    type: CreatedUser,
  })
  @ApiConflictResponse({ description: "user_exists: the e-mail is taken (in any case, in any tenant)" })
  @ApiUnprocessableEntityResponse({
    description:
      "limit_reached: the tenant has MAX_USERS_PER_TENANT users (pending ones count); nothing written",
  })
  @ApiTooManyRequestsResponse({ description: TOO_MANY_INVITATIONS })
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateUserBody): Promise<CreatedUser> {
    const tenantId = await this.tenantOfNewUser(principal, body);
    const giveBack = await this.limits.take({ tenantId });
    const created = await this.transactions
      .run(async (tx) => {
        const user = await this.users.create(tx, { email: body.email, role: body.role, tenantId });
        const invitation = await this.invitations.issue(tx, user.id);
        await this.audit.record(tx, principal, {
          action: "user.create",
          tenantId,
          targetType: "user",
          targetId: user.id,
          details: { role: body.role },
        });
        return { user, invitation };
      })
      .catch(async (error: unknown) => {
        await giveBack();
        throw error;
      });
    await this.limits.first(created.user.id);
    await this.mail.send(created.user.id, created.user.email, created.invitation);
    return created;
  }

  @ApiOperation({
    description: "Issues a new invitation for a user who has not accepted; the old one stops working.",
  })
  @Post(":id/invitation")
  @HttpCode(201)
  @ApiCreatedResponse({
    description: "`{ invitation }`: a new invitation; the user's older one stops working",
    type: InvitationAnswer,
  })
  @ApiConflictResponse({ description: "already_accepted: the user has set a password, or is disabled" })
  @ApiTooManyRequestsResponse({ description: TOO_MANY_INVITATIONS })
  async invite(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
  ): Promise<InvitationAnswer> {
    const user = await this.users.find(tenantParam(scopeOf(principal)), id);
    if (!user) throw notFound("user");
    // An accepted or disabled user gets its 409 before any limit is counted (issue() checks again, locked).
    if (user.accepted || user.disabledAt !== null) throw alreadyAccepted();
    const giveBack = await this.limits.take({ userId: id, tenantId: user.tenantId });
    const invitation = await this.transactions
      .run(async (tx) => {
        const issued = await this.invitations.issue(tx, id);
        await this.audit.record(tx, principal, {
          action: "user.invite",
          tenantId: user.tenantId,
          targetType: "user",
          targetId: id,
        });
        return issued;
      })
      .catch(async (error: unknown) => {
        await giveBack();
        throw error;
      });
    await this.mail.send(id, user.email, invitation);
    return { invitation };
  }

  @ApiOperation({ description: "Lists the console users of the caller's scope, newest first." })
  @Get()
  @ApiOkResponse({ type: PageOf(UserView) })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: TenantListQuery,
  ): Promise<Page<UserView>> {
    // As every list: an operator narrows to ?tenantId; another tenant's id lists nothing.
    const scope = listScope(principal, query.tenantId);
    const rows = await this.users.list(tenantParam(scope), pageAfter("createdAt", query));
    return toPage(rows, query, (row) => row.createdAt);
  }

  @ApiOperation({
    description:
      "Disables a user: its sessions and pending OAuth attempts end at once, and with `revokeKeys` the API keys it created are revoked.",
  })
  @Delete(":id")
  @HttpCode(204)
  @ApiNoContentResponse({
    description:
      "disabled: its sessions and pending OAuth attempts end at once; with revokeKeys=true, the API keys it created are revoked too",
  })
  @ApiConflictResponse({ description: "cannot_disable_self: a signed-in user disabling themselves" })
  async disable(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Query() query: DisableUserQuery,
  ): Promise<void> {
    // Locking oneself out (a tenant's last admin, say) takes another user or an API key.
    if (principal.userId === id)
      throw new AppError(409, "cannot_disable_self", "You cannot disable yourself: ask another admin.");
    await this.transactions.run(async (tx) => {
      const scope = scopeOf(principal);
      const user = await this.users.disable(tx, tenantParam(scope), id);
      if (!user) throw notFound("user");
      const revoked = query.revokeKeys === "true" ? await this.keys.revokeCreatedBy(tx, scope, id) : [];
      await this.audit.record(
        tx,
        principal,
        {
          action: "user.disable",
          tenantId: user.tenantId,
          targetType: "user",
          targetId: id,
          details: query.revokeKeys === "true" ? { revokedKeyIds: revoked.map((key) => key.id) } : {},
        },
        ...revoked.map((key) => ({
          action: "api-key.revoke" as const,
          tenantId: key.tenantId,
          targetType: "api-key",
          targetId: key.id,
          details: { createdBy: id, with: "user.disable" },
        })),
      );
    });
  }

  /** Who a new user belongs to, by the caller's role (api.md): tenant-admins never create operators. */
  private async tenantOfNewUser(principal: Principal, body: CreateUserBody): Promise<string | null> {
    if (principal.role !== "operator") {
      if (body.role === "operator") throw new AppError(403, "forbidden", "Only operators create operators.");
      return ownTenant(principal, body.tenantId);
    }
    if (body.role === "operator") {
      if (body.tenantId !== undefined) throw invalidTenant("an operator belongs to no tenant");
      return null;
    }
    if (body.tenantId === undefined) throw invalidTenant("required for a tenant role");
    if (!(await this.tenants.find(scopeOf(principal), body.tenantId))) throw notFound("tenant");
    return body.tenantId;
  }
}

const invalidTenant = (problem: string) =>
  new AppError(400, "validation_failed", "Invalid input: tenantId.", { tenantId: [problem] });
