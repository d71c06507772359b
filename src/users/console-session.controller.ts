// The console's sign-in routes (api.md "Console and users"): accepting an invitation, signing in,
// who is signed in, signing out, changing one's password. Login and acceptance need no CSRF token;
// signing out and a password change do.
import { CONFIG, type HttpConfig } from "../config/sections.js";
import { Body, Controller, Delete, Get, HttpCode, Inject, Post, Req, Res, UsePipes } from "@nestjs/common";
import {
  ApiBadRequestResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from "@nestjs/swagger";
import { IsString, Length } from "class-validator";
import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../common/app-error.js";
import { adminValidationPipe } from "../common/validation.js";
import { refuseCrossSite } from "./cross-site.js";
import { InvitationsRepository } from "./invitations.repository.js";
import { PasswordChange } from "./password-change.js";
import { SessionAuth } from "./session-auth.js";
import { clearedSessionCookie, sessionCookie } from "./session-cookie.js";
import { SessionsRepository } from "./sessions.repository.js";
import { SignIn } from "./sign-in.js";
import { SessionUser } from "./user.js";

/** `{ user, csrfToken }`: who is signed in, and the token every change must carry as X-CSRF-Token. */
export class SessionAnswer {
  @ApiProperty({ type: () => SessionUser })
  user!: SessionUser;

  @ApiProperty()
  csrfToken!: string;
}

export class AcceptInvitationBody {
  @ApiProperty({ description: "the token of the invitation URL" })
  @IsString()
  @Length(1, 200)
  token!: string;

  @ApiProperty({ description: "at least 12 characters, not the e-mail" })
  @IsString()
  password!: string;
}

export class SignInBody {
  @ApiProperty({ example: "ana@example.com" })
  @IsString()
  @Length(1, 320)
  email!: string;

  @ApiProperty()
  @IsString()
  @Length(1, 1024)
  password!: string;
}

export class ChangePasswordBody {
  @ApiProperty()
  @IsString()
  @Length(1, 1024)
  currentPassword!: string;

  @ApiProperty({ description: "at least 12 characters, not the e-mail" })
  @IsString()
  newPassword!: string;
}

const notSignedIn = () => new AppError(401, "unauthorized", "Not signed in: sign in at /console.");

@ApiTags("console")
@UsePipes(adminValidationPipe)
@Controller("console/api")
export class ConsoleSessionController {
  constructor(
    private readonly invitations: InvitationsRepository,
    private readonly signIn: SignIn,
    private readonly sessions: SessionsRepository,
    private readonly auth: SessionAuth,
    private readonly passwords: PasswordChange,
    @Inject(CONFIG.http) private readonly http: HttpConfig,
  ) {}

  @ApiOperation({
    description: "Accepts an invitation: sets the user's password; the invitation is used up.",
  })
  @Post("invitations/accept")
  @HttpCode(204)
  @ApiNoContentResponse({ description: "the password is set; the invitation is used up" })
  @ApiBadRequestResponse({
    description:
      "invalid_invitation (used, replaced, expired, unknown), or validation_failed (a weak password)",
  })
  @ApiForbiddenResponse({ description: "cross_site_request: the request came from another site" })
  async accept(@Body() body: AcceptInvitationBody, @Req() request: FastifyRequest): Promise<void> {
    refuseCrossSite(request.headers, this.http.publicBaseUrl);
    await this.invitations.accept(body.token, body.password);
  }

  @ApiOperation({
    description: "Signs in with e-mail and password: the user and its CSRF token, and the session cookie.",
  })
  @Post("session")
  @HttpCode(200)
  @ApiOkResponse({
    description: "`{ user, csrfToken }` and the session cookie (HttpOnly, SameSite=Lax)",
    type: SessionAnswer,
  })
  @ApiUnauthorizedResponse({
    description: "invalid_credentials: a wrong e-mail or password (the same answer for both)",
  })
  @ApiTooManyRequestsResponse({
    description:
      "rate_limited (with Retry-After): 5 failures of this e-mail from this address (then a wait that doubles from 60 s up to 15 minutes), or 50 from this address (IPv6: its /64) in 15 minutes",
  })
  @ApiForbiddenResponse({ description: "cross_site_request: the request came from another site" })
  async create(
    @Body() body: SignInBody,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SessionAnswer> {
    refuseCrossSite(request.headers, this.http.publicBaseUrl);
    const { user, token, csrfToken } = await this.signIn.signIn(body.email, body.password, request.ip);
    void reply.header("set-cookie", sessionCookie(token, this.http.publicBaseUrl));
    void reply.header("cache-control", "no-store");
    return { user, csrfToken };
  }

  @ApiOperation({ description: "Who is signed in, with the session's CSRF token." })
  @Get("session")
  @ApiOkResponse({ description: "`{ user, csrfToken }`: who is signed in", type: SessionAnswer })
  @ApiUnauthorizedResponse({ description: "no live session" })
  async show(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SessionAnswer> {
    const session = await this.auth.fromHeaders(request.headers);
    if (!session) throw notSignedIn();
    void reply.header("cache-control", "no-store");
    return { user: session.user, csrfToken: session.csrfToken };
  }

  @Post("password")
  @ApiOperation({ description: "Changes the signed-in user's password and ends its other sessions." })
  @HttpCode(204)
  @ApiNoContentResponse({ description: "the password is changed; the user's other sessions have ended" })
  @ApiBadRequestResponse({
    description: "validation_failed: the new password is too short or is the e-mail; nothing written",
  })
  @ApiUnauthorizedResponse({
    description:
      "invalid_credentials: the current password is wrong (it counts toward sign-in throttling); unauthorized: no live session",
  })
  @ApiTooManyRequestsResponse({
    description: "rate_limited (with Retry-After): sign-in throttling, as for POST /console/api/session",
  })
  @ApiForbiddenResponse({ description: "csrf_failed: X-CSRF-Token missing or wrong" })
  async changePassword(@Body() body: ChangePasswordBody, @Req() request: FastifyRequest): Promise<void> {
    const session = await this.auth.fromHeaders(request.headers);
    if (!session) throw notSignedIn();
    this.auth.checkCsrf(session, request.method, request.headers);
    await this.passwords.change(session, body.currentPassword, body.newPassword, request.ip);
  }

  @ApiOperation({ description: "Signs out: the session ends and its cookie is cleared." })
  @Delete("session")
  @HttpCode(204)
  @ApiNoContentResponse({ description: "signed out: the session ends, the cookie is cleared" })
  @ApiForbiddenResponse({ description: "csrf_failed: X-CSRF-Token missing or wrong" })
  async destroy(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<void> {
    const session = await this.auth.fromHeaders(request.headers);
    if (!session) throw notSignedIn();
    this.auth.checkCsrf(session, request.method, request.headers);
    await this.sessions.revoke(session.id);
    void reply.header("set-cookie", clearedSessionCookie(this.http.publicBaseUrl));
  }
}
