// Which plan has which feature, decided here only: a route asks `requireFeature(workspace, 'embedded_sessions')` and
// the 402 enterprise-required body (`meta.tier`) is built once. The spec makes template channels, QES and minting
// embedded sessions Enterprise-only.
import { apiError } from '../lib/errors.js';

const FEATURES = {
  embedded_sessions: {
    tiers: ['enterprise'],
    message: 'Minting embedded signing sessions is available on the Enterprise plan only.',
  },
  template_channels: { tiers: ['enterprise'], message: 'SMS delivery is a template channel of the Enterprise plan.' },
  sms_verification: {
    tiers: ['enterprise'],
    message: 'Signer verification by SMS code (verification "sms_code") is available on the Enterprise plan only.',
  },
  qes: {
    tiers: ['enterprise'],
    message: 'Qualified electronic signatures (signature_level "qes") are available on the Enterprise plan only.',
  },
} as const satisfies Record<string, { tiers: readonly string[]; message: string }>;

export type Feature = keyof typeof FEATURES;

export const hasFeature = (tier: string, feature: Feature): boolean =>
  (FEATURES[feature].tiers as readonly string[]).includes(tier);

/** 402 enterprise-required unless the workspace's plan includes `feature`. */
export function requireFeature(workspace: { tier: string }, feature: Feature): void {
  if (hasFeature(workspace.tier, feature)) return;
  throw apiError('enterprise_required', { message: FEATURES[feature].message, meta: { tier: workspace.tier } });
}
