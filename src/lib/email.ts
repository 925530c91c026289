// The one e-mail check. Both rules refuse the same characters: whitespace, `@` (one only), and what would quote,
// comment, group or split an address in a header (`< > ( ) [ ] \ , ; : "`), so an accepted address can be written
// into a header as it is. They differ in one thing, for a reason:
// - an address someone gives us (a signer, a template recipient, an `email` field value, a dashboard user) must also
//   have a dot in its domain: a plausibility test, which the API's error bodies rely on;
// - an address written into a message header (To, Reply-To, the operator's From) may have a dotless domain, because
//   the operator's sender defaults to `no-reply@localhost`; there the check guards against header injection only.
const PART = String.raw`[^\s@<>()[\]\\,;:"]+`;
const ADDRESS = new RegExp(`^${PART}@${PART}\\.${PART}$`);
const HEADER_ADDRESS = new RegExp(`^${PART}@${PART}$`);

/** An address a person gives: one plain `local@domain.tld`, no display name, nothing a header would split. */
export const isEmailAddress = (s: string): boolean => ADDRESS.test(s);

/** An address that may stand alone in a message header: as `isEmailAddress`, but the domain may have no dot. */
export const isHeaderAddress = (s: string): boolean => HEADER_ADDRESS.test(s);
