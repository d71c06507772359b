import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
  UseInterceptors,
  UsePipes,
  applyDecorators,
} from "@nestjs/common";
import { Reflector } from "@nestjs/core";
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiExtension,
  ApiForbiddenResponse,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from "@nestjs/swagger";
import type { FastifyRequest } from "fastify";
import { adminValidationPipe } from "../common/validation.js";
import { AppError } from "../common/app-error.js";
import { AdminRateLimit } from "./admin-rate-limit.js";
import { apiKeyMatches, prefixOf, type Role } from "./api-key.js";
import { ApiKeysRepository, LAST_USED_RESOLUTION_MS } from "./api-keys.repository.js";
import { PreauthBudget } from "./preauth-budget.js";
import type { Principal } from "./principal.js";
import { RecentWritesInterceptor } from "./recent-writes.js";
import { isRead, SessionAuth } from "../users/session-auth.js";

const OPERATOR_ONLY = "leadgate:operator-only";

/** The route is for operator keys; tenant-admin keys get 403. Listed in the OpenAPI document as `x-roles`. */
export const OperatorOnly = () =>
  applyDecorators(
    SetMetadata(OPERATOR_ONLY, true),
    ApiExtension("x-roles", ["operator"]),
    ApiForbiddenResponse({ description: "tenant-admin key on an operator-only route" }),
  );

/** The `429` every admin route may answer (a route with limits of its own adds them to it). */
export const ADMIN_RATE_LIMITED =
  "rate_limited: the key is over ADMIN_RATE_LIMIT requests per minute, or its tenant over ADMIN_TENANT_RATE_LIMIT across its keys; Retry-After says when to retry";

/**
 * Marks a controller as admin API: a Bearer API key or a console session cookie required, input
 * validated by the admin rules; each change marks its caller's write (read-your-writes with a replica).
 * The answers every route can give beyond these (404 for an id, 413, 415, 503) are added to the
 * document in one place: src/observability/openapi-responses.ts.
 */
export const AdminApi = () =>
  applyDecorators(
    UseGuards(ApiKeyGuard),
    UseInterceptors(RecentWritesInterceptor),
    UsePipes(adminValidationPipe),
    ApiBearerAuth(),
    ApiUnauthorizedResponse({
      description: "no key, an unknown key, or a revoked key; or a session cookie of no live session",
    }),
    ApiForbiddenResponse({
      description:
        "csrf_failed: a session cookie without the session's X-CSRF-Token on a change; forbidden: a tenant-viewer on a change",
    }),
    ApiTooManyRequestsResponse({ description: ADMIN_RATE_LIMITED }),
    ApiBadRequestResponse({ description: "validation_failed: `details` maps each field to its errors" }),
  );

export type AuthenticatedRequest = FastifyRequest & { principal?: Principal };

const unauthorized = () =>
  new AppError(401, "unauthorized", "A valid API key is required: Authorization: Bearer <api key>.");
const sessionEnded = () =>
  new AppError(
    401,
    "unauthorized",
    "The session has ended (signed out, expired or disabled): sign in again.",
  );

/**
 * Authenticates admin requests by API key: the row is found by the key's prefix, the key's hash is
 * compared in constant time, revoked keys are refused. The caller becomes `request.principal`.
 * Each failure counts against the client IP's PREAUTH_FAILURE_LIMIT; an IP over it gets 429, and
 * a key whose prefix no key has is then refused without a query.
 *
 * A request without an Authorization header may carry a console session cookie instead; then a
 * change (anything but GET and HEAD) needs the session's X-CSRF-Token. With an Authorization
 * header the cookie is ignored. A tenant-viewer, key or user, may only read.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly keys: ApiKeysRepository,
    private readonly reflector: Reflector,
    private readonly budget: PreauthBudget,
    private readonly rateLimit: AdminRateLimit,
    private readonly sessions: SessionAuth,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    request.principal = await this.authenticateRequest(request);
    await this.rateLimit.consume(request.principal);
    if (request.principal.role === "tenant-viewer" && !isRead(request.method)) {
      throw new AppError(403, "forbidden", "A tenant-viewer may only read (GET).");
    }
    const operatorOnly = this.reflector.getAllAndOverride<boolean | undefined>(OPERATOR_ONLY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (operatorOnly && request.principal.role !== "operator") {
      throw new AppError(403, "forbidden", "This route needs an operator key.");
    }
    return true;
  }

  /**
   * The caller of a request: its Authorization header if it has one, else its session cookie (whose
   * CSRF token a change must carry, unless `csrf` is false: the queue dashboard checks the origin).
   */
  async authenticateRequest(
    request: Pick<FastifyRequest, "headers" | "method" | "ip">,
    { csrf = true } = {},
  ): Promise<Principal> {
    const { headers, ip } = request;
    if (headers.authorization !== undefined || !this.sessions.hasCookie(headers)) {
      return this.authenticate(headers.authorization, ip);
    }
    const session = await this.sessions.fromHeaders(headers);
    if (!session) throw await this.budget.failed(ip, sessionEnded());
    if (csrf) this.sessions.checkCsrf(session, request.method, headers);
    const { id, role, tenantId } = session.user;
    return { keyId: null, userId: id, role, tenantId };
  }

  async authenticate(authorization: string | undefined, ip: string): Promise<Principal> {
    const match = /^Bearer ([\x21-\x7e]{1,512})$/.exec(authorization ?? "");
    if (!match) throw await this.budget.failed(ip, unauthorized());
    const key = match[1]!;
    const prefix = prefixOf(key);
    if (this.budget.exhausted(ip) && !(await this.keys.mayExist(prefix))) throw this.budget.refusal(ip);
    const row = await this.keys.findByPrefix(prefix);
    if (!row || !apiKeyMatches(key, row.keyHash) || row.revokedAt) {
      throw await this.budget.failed(ip, unauthorized());
    }
    if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      await this.keys.touch(row.id);
    }
    return { keyId: row.id, userId: null, role: row.role as Role, tenantId: row.tenantId };
  }
}
