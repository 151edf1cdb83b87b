/** What `verify` can say of a signature (docs/verify.md), read by the signature check and the --json schema. */
export const SIGNATURE_STATES = ['valid', 'unsigned', 'invalid', 'not allowed'] as const;
export type SignatureStateName = (typeof SIGNATURE_STATES)[number];
