// A real SMTP server on loopback (smtp-server) that records the messages it accepts, for email
// channels and their confirmation mails. Started in beforeAll (declare it before `useApp` to put
// its URL in SMTP_URL), closed in afterAll.
import { SMTPServer } from "smtp-server";

export interface Mail {
  from: string;
  to: string[];
  /** The whole message (headers and body) as a reader sees it: quoted-printable undone. */
  text: string;
}

export interface FakeSmtp {
  /** `smtp://127.0.0.1:<port>` */
  readonly url: string;
  /** Every message accepted, in order. */
  readonly mails: Mail[];
  /** Recipients the server refuses with `550` (RCPT TO), by address. */
  readonly refused: Set<string>;
  /** The mails to `address`. */
  to(address: string): Mail[];
}

/** The message as a reader sees it: quoted-printable soft breaks and escapes undone. */
export function decodeQuotedPrintable(text: string): string {
  return text
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export function useSmtpServer(): FakeSmtp {
  const mails: Mail[] = [];
  const refused = new Set<string>();
  let server: SMTPServer | undefined;
  let port = 0;
  beforeAll(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onRcptTo(address, _session, callback) {
        if (!refused.has(address.address)) return callback();
        callback(Object.assign(new Error("mailbox unavailable"), { responseCode: 550 }));
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            text: decodeQuotedPrintable(Buffer.concat(chunks).toString("utf8")),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    port = (server.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(resolve) : resolve()));
  });
  return {
    get url() {
      if (port === 0)
        throw new Error("the SMTP server starts in beforeAll: use it in a test or a later hook");
      return `smtp://127.0.0.1:${port}`;
    },
    mails,
    refused,
    to: (address) => mails.filter((mail) => mail.to.includes(address)),
  };
}

/** The confirmation link of a channel's confirmation mail (`<base>/notification-channels/confirm?token=…`). */
export function confirmationLink(mail: Mail): URL {
  const match = /(\S+\/notification-channels\/confirm\?token=[A-Za-z0-9._~%-]+)/.exec(mail.text);
  if (!match) throw new Error(`no confirmation link in: ${mail.text}`);
  return new URL(match[1]!);
}
