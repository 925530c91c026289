// Phone numbers as the spec takes them: E.164 only ("+" and the full international number), checked against
// libphonenumber's metadata (awesome-phonenumber), not a regex, so "+1 555 0100" or a number too short for its
// country is refused. The canonical form is what is stored and sent.
import { parsePhoneNumber } from 'awesome-phonenumber';

/** The number in canonical E.164 form, or null when `raw` is not a valid E.164 number. */
export function toE164(raw: string): string | null {
  if (!/^\+[1-9]\d{6,14}$/.test(raw)) return null;
  const parsed = parsePhoneNumber(raw);
  return parsed.valid ? parsed.number.e164 : null;
}
