import { Global, Module } from "@nestjs/common";
import type { AppConfig } from "../config/config.js";
import { APP_CONFIG } from "../config/config.module.js";
import { SecretBox } from "./secret-box.js";

@Global()
@Module({
  providers: [
    {
      provide: SecretBox,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new SecretBox(config.encryptionKey, config.previousEncryptionKeys),
    },
  ],
  exports: [SecretBox],
})
export class CryptoModule {}
