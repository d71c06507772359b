// The property decorators of the admin API's answer schemas that a bare @ApiProperty() cannot infer:
// a nullable column's type (its metadata reads Object), so the console's generated types say `| null`.
import { ApiProperty } from "@nestjs/swagger";

export const NullableDate = (description?: string) =>
  ApiProperty({ type: String, format: "date-time", nullable: true, description });

export const NullableString = (description?: string) =>
  ApiProperty({ type: String, nullable: true, description });

export const NullableId = (description?: string) =>
  ApiProperty({ type: String, format: "uuid", nullable: true, description });

export const NullableNumber = (description?: string) =>
  ApiProperty({ type: Number, nullable: true, description });
