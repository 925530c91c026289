// The states of template instances and every move between them: the spec's template-instance rows of "States and
// transitions" in one table. Template code changes an instance's status only through `moveInstance`
// (templates.repo.ts), a guarded update that refuses a row not in one of the move's `from` states, so of a confirm
// and a discard racing for one staged instance exactly one wins.

/** `staged` waits for review; `confirmed` was sent (or finalized); `discarded` never will be. */
export const INSTANCE_STATUSES = ['staged', 'confirmed', 'discarded'] as const;
export type InstanceStatus = (typeof INSTANCE_STATUSES)[number];

export const INSTANCE_KINDS = ['instantiate', 'generate'] as const;
export type InstanceKind = (typeof INSTANCE_KINDS)[number];

/** Who confirmed: the API (a key, or creation without review) or a person on the review page. */
export type ConfirmActor = 'api' | 'review_page';
/** Why an instance was discarded: by hand (API or review page) or because the review window closed. */
export type DiscardReason = 'discarded' | 'expired';

type Move = { readonly from: readonly InstanceStatus[]; readonly to: InstanceStatus };

export const INSTANCE_MOVES = {
  /** `template_instance.confirmed`: invitations released (or the file finalized). */
  confirm: { from: ['staged'], to: 'confirmed' },
  /** `template_instance.discarded` with reason `discarded`. */
  discard: { from: ['staged'], to: 'discarded' },
  /** The review window closed: `template_instance.discarded` with reason `expired`. */
  expire: { from: ['staged'], to: 'discarded' },
} as const satisfies Record<string, Move>;
export type InstanceMove = keyof typeof INSTANCE_MOVES;
