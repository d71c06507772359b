// The stored-size cap of settings and defaults (api.md: at most 64 KiB of JSON each).
import { MAX_STORED_SETTINGS_BYTES, storedSizeErrors } from "./reply-settings-check.js";

describe("storedSizeErrors", () => {
  const withText = (bytes: number) => ({ autoResponse: { enabled: true, text: "x".repeat(bytes) } });
  const overhead = JSON.stringify(withText(0)).length;

  it("accepts exactly 64 KiB and refuses one byte more, under the given field, counting UTF-8 bytes", () => {
    expect(storedSizeErrors(withText(MAX_STORED_SETTINGS_BYTES - overhead), "settings")).toEqual({});
    expect(storedSizeErrors(withText(MAX_STORED_SETTINGS_BYTES - overhead + 1), "defaults")).toEqual({
      defaults: [`must be at most 65536 bytes of JSON as stored (65537 given)`],
    });
    // "é" is two bytes: half as many characters reach the cap.
    const accented = { autoResponse: { enabled: true, text: "é".repeat(MAX_STORED_SETTINGS_BYTES / 2) } };
    expect(Object.keys(storedSizeErrors(accented, "settings"))).toEqual(["settings"]);
  });
});
