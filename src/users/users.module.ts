import { Module } from "@nestjs/common";
import { ConsoleSessionController } from "./console-session.controller.js";
import { InvitationsRepository } from "./invitations.repository.js";
import { PasswordChange } from "./password-change.js";
import { PasswordSlots } from "./password-slots.js";
import { SessionAuth } from "./session-auth.js";
import { SessionsRepository } from "./sessions.repository.js";
import { SignIn } from "./sign-in.js";
import { SignInThrottle } from "./sign-in-throttle.js";
import { UsersRepository } from "./users.repository.js";

/** Console users, their invitations and sessions; the sign-in routes under /console/api. */
@Module({
  controllers: [ConsoleSessionController],
  providers: [
    UsersRepository,
    InvitationsRepository,
    SessionsRepository,
    SessionAuth,
    SignIn,
    SignInThrottle,
    PasswordSlots,
    PasswordChange,
  ],
  exports: [UsersRepository, InvitationsRepository, SessionsRepository, SessionAuth],
})
export class UsersModule {}
