// Row types of the dashboard's people and the key-use log (split from schema.ts, which re-exports them).
import type { Generated } from 'kysely';

export type UsersTable = {
  id: string;
  email: string;
  password_hash: string | null;
  password_changed_at: number | null;
  created_at: number;
};

export type WorkspaceMembersTable = {
  workspace_id: string;
  user_id: string;
  role: string;
  created_by: string | null;
  created_at: number;
};

export type UserTokensTable = {
  token_hash: string;
  kind: string;
  user_id: string;
  workspace_id: string;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
};

export type DashboardSessionsTable = {
  token_hash: string;
  user_id: string;
  workspace_id: string;
  created_at: number;
  last_seen_at: number;
  revoked_at: number | null;
  ip: string | null;
  user_agent: string | null;
};

export type KeyUsesTable = {
  id: Generated<number>;
  key_id: string;
  workspace_id: string;
  at: number;
  ip_masked: string | null;
  method: string;
  route: string;
  status: number;
};

/** A document being prepared on /dashboard/send (migration 015): its PDF, the form and the fields placed so far. */
export type DashboardDraftsTable = {
  /** `drf_…` */
  id: string;
  workspace_id: string;
  /** The user who uploaded it. */
  created_by: string;
  file_name: string;
  /** The uploaded PDF in the blob store. */
  pdf_blob: string;
  /** JSON: [{width, height}] of each page as shown, in points (from the upload's inspection). */
  pages: string;
  /** JSON: the send form as typed (dashboard/send.form.ts's SendForm). */
  form: string;
  /** JSON: the fields placed (dashboard/send.form.ts's DraftField[]). */
  fields: string;
  created_at: number;
  updated_at: number;
};
