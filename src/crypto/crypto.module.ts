import { CONFIG, type CryptoConfig } from "../config/sections.js";
import { Global, Module } from "@nestjs/common";
import { SecretBox } from "./secret-box.js";
import { SignedValues } from "./signed-values.js";

@Global()
@Module({
  providers: [
    {
      provide: SecretBox,
      inject: [CONFIG.crypto],
      useFactory: (config: CryptoConfig) =>
        new SecretBox(config.encryptionKey, config.previousEncryptionKeys),
    },
    {
      provide: SignedValues,
      inject: [CONFIG.crypto],
      useFactory: (config: CryptoConfig) =>
        new SignedValues(config.encryptionKey, config.previousEncryptionKeys),
    },
  ],
  exports: [SecretBox, SignedValues],
})
export class CryptoModule {}
