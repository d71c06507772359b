// SMTP transports (nodemailer), made on first use: nodemailer and its MIME tables (about 3 MiB of
// heap) load only in a process that sends mail, not at every boot of the API and the worker.
import type { Transporter } from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport/index.js";

/** A transport for `options` (an smtp:// URL or nodemailer's SMTP options); nodemailer loads on the first call. */
export async function smtpTransport(options: string | SMTPTransport.Options): Promise<Transporter> {
  const { default: nodemailer } = await import("nodemailer");
  return nodemailer.createTransport(options);
}
