// The steps the templates e2e files share: a published template, a staged instance, a signature, the sealed PDF.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { E2E } from '../../testing/e2e.js';
import { templateBody, VALUES } from './fixtures.js';

export const has = (cmd: string) => !spawnSync(cmd, ['-v']).error;
export const email = (who: string) => `${who}.${Math.random().toString(36).slice(2, 8)}@example.com`;

/** The steps on the suite's E2E, which its `before` has started by the time a test calls them. */
export function templateSteps(e: () => E2E) {
  async function newTemplate() {
    const r = await e().api('POST', '/v1/templates', await templateBody());
    assert.equal(r.status, 201, r.text);
    return r.json as { id: string; current_version: number };
  }
  async function staged(tplId: string, extra: Record<string, unknown> = {}) {
    const people = { client: email('client'), provider: email('provider') };
    const r = await e().api('POST', `/v1/templates/${tplId}/instantiate`, {
      recipients: [
        { slot: 'client', name: 'Client Person', email: people.client },
        { slot: 'provider', name: 'Provider Person', email: people.provider },
      ],
      field_values: VALUES,
      review: true,
      ...extra,
    });
    assert.equal(r.status, 201, r.text);
    return { ti: r.json.template_instance, people };
  }
  const signedPdf = async (docId: string) => {
    const res = await fetch(e().h.url(`/v1/documents/${docId}/signed`), {
      headers: { authorization: `Bearer ${e().token}` },
    });
    assert.equal(res.status, 200);
    return new Uint8Array(await res.arrayBuffer());
  };
  async function signAs(token: string) {
    assert.equal((await e().h.request('POST', `/sign/${token}/view`)).status, 200);
    const s = await e().h.request('POST', `/sign/${token}/sign`, {
      body: { signature: { type: 'typed', text: 'Me' } },
    });
    assert.equal(s.status, 200, s.text);
  }
  return { newTemplate, staged, signedPdf, signAs };
}
