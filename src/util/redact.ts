/**
 * Secrets known to this process. Every message that leaves the process goes
 * through `redact`, so a token echoed by a server or a library never escapes.
 */
const secrets = new Set<string>();

export function registerSecret(value: string | undefined): void {
  if (value && value.length > 0) secrets.add(value);
}

export function knownSecrets(): string[] {
  return [...secrets];
}

/** Forms a secret may take in text: as is, and URL-encoded (query strings, cookies). */
export function secretForms(value: string): string[] {
  const forms = new Set([value, encodeURIComponent(value)]);
  return [...forms];
}

export function redact(text: string): string {
  let out = text;
  // Longest first, so a token that contains another is replaced whole.
  const all = [...secrets].flatMap(secretForms).sort((a, b) => b.length - a.length);
  for (const s of all) out = out.split(s).join('[redacted]');
  return out;
}

/** Only for tests. */
export function clearSecrets(): void {
  secrets.clear();
}
