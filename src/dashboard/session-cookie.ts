/** The dashboard's session cookie (HttpOnly, path /dashboard); its value is a 256-bit token, stored only hashed. */
export const SESSION_COOKIE = 'signet_session';
