// The one logger shape every module takes (pino satisfies it), and the one way an error becomes text for a log line
// or a stored row: bounded, without NUL characters (PostgreSQL text cannot hold them), secrets cut out.

export type Logger = {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
};

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

export const ERROR_TEXT_LIMIT = 500;

/** `code: message` (or the message alone when it already names the code), with each secret replaced. */
export function describeError(err: unknown, secrets: ReadonlyArray<string | undefined> = []): string {
  const e = err as { code?: string; message?: string };
  let msg = e?.message ? (e.code && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : e.message) : String(err);
  for (const s of secrets) if (s) msg = msg.split(s).join('[redacted]');
  return withoutNul(msg).slice(0, ERROR_TEXT_LIMIT);
}

export const withoutNul = (s: string): string => s.replace(/\u0000/g, '');
