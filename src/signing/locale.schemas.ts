// The `locale` field of POST /v1/signing-requests, template instantiate and a bulk-send row (TypeBox).
import { Type } from 'typebox';
import { KNOWN_LOCALES } from '../i18n/i18n.js';

/** Checked as given and never replaced when given (signing/open.ts resolveLocale). */
export const LocaleIn = Type.String({
  minLength: 1,
  maxLength: 35,
  description:
    `A known locale: ${KNOWN_LOCALES.join(', ')}; an unknown one is refused (400). Absent: the workspace's default ` +
    'language, English unless set.',
});
