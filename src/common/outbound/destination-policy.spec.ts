import {
  DestinationForbidden,
  destinationUrl,
  forbiddenRange,
  hostOf,
  parseCidrs,
} from "./destination-policy.js";

const NONE = parseCidrs([]);

describe("forbiddenRange", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["10.0.0.5", "private"],
    ["172.16.3.4", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["fe80::1", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["100.127.255.254", "carrierGradeNat"],
    ["fc00::1", "uniqueLocal"],
    ["fd12:3456::1", "uniqueLocal"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["ff02::1", "multicast"],
    ["ff00::", "multicast"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["255.255.255.255", "broadcast"],
    // IPv4-mapped IPv6 is judged as the IPv4 address it maps to, in either spelling.
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.0.0.5", "private"],
    ["::ffff:a9fe:a9fe", "linkLocal"],
    // IPv6 forms that embed an IPv4 address are not plain unicast either.
    ["64:ff9b::a00:5", "rfc6052"],
    ["2002:a00:5::1", "6to4"],
    ["not-an-address", "not an IP address"],
  ])("refuses %s (%s)", (address, range) => {
    expect(forbiddenRange(address, NONE)).toBe(range);
  });

  it.each(["8.8.8.8", "93.184.215.14", "2606:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8"])(
    "accepts the public address %s",
    (address) => {
      expect(forbiddenRange(address, NONE)).toBeUndefined();
    },
  );

  it("accepts an address inside an allowed CIDR, and only there", () => {
    const allowed = parseCidrs(["127.0.0.0/8", "::1/128", "192.168.10.0/24"]);
    expect(forbiddenRange("127.0.0.1", allowed)).toBeUndefined();
    expect(forbiddenRange("::1", allowed)).toBeUndefined();
    expect(forbiddenRange("::ffff:127.0.0.1", allowed)).toBeUndefined();
    expect(forbiddenRange("192.168.10.7", allowed)).toBeUndefined();
    expect(forbiddenRange("192.168.11.7", allowed)).toBe("private");
    expect(forbiddenRange("10.0.0.1", allowed)).toBe("private");
    expect(forbiddenRange("169.254.169.254", allowed)).toBe("linkLocal");
  });
});

describe("destinationUrl", () => {
  const refusal = (value: string, allowHttp = false) => {
    try {
      destinationUrl(value, allowHttp);
    } catch (error) {
      if (error instanceof DestinationForbidden) return error.message;
      throw error;
    }
    return undefined;
  };

  it("accepts https, and http only when allowed", () => {
    expect(destinationUrl("https://crm.example.com/hook", false).hostname).toBe("crm.example.com");
    expect(refusal("http://crm.example.com/hook")).toBe("not https");
    expect(destinationUrl("http://crm.example.com/hook", true).protocol).toBe("http:");
    expect(refusal("ftp://crm.example.com/", true)).toBe("not http(s)");
    expect(refusal("file:///etc/passwd", true)).toBe("not http(s)");
    expect(refusal("not a url")).toBe("not a URL");
  });

  it.each([
    "https://user:pass@crm.example.com/",
    "https://user@crm.example.com/",
    "https://:pass@crm.example.com/",
  ])("refuses credentials in the URL: %s", (value) => {
    expect(refusal(value)).toBe("credentials in the URL");
  });

  it.each([
    // WHATWG URL turns decimal, hex, octal and short IPv4 forms into the dotted quad.
    ["https://2130706433/", "127.0.0.1", "loopback"],
    ["https://0x7f.1/", "127.0.0.1", "loopback"],
    ["https://0177.0.0.1/", "127.0.0.1", "loopback"],
    ["https://127.1/", "127.0.0.1", "loopback"],
    ["https://0/", "0.0.0.0", "unspecified"],
    ["https://0xa9fea9fe/", "169.254.169.254", "linkLocal"],
    ["https://[::ffff:127.0.0.1]/", "::ffff:7f00:1", "loopback"],
    ["https://[::1]:8080/", "::1", "loopback"],
    ["https://[::]/", "::", "unspecified"],
  ])("an IP literal in any spelling is judged by its address: %s", (value, host, range) => {
    const url = destinationUrl(value, false);
    expect(hostOf(url)).toBe(host);
    expect(forbiddenRange(hostOf(url), NONE)).toBe(range);
  });
});
