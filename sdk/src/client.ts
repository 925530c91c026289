// The Signet client: one method per API operation, grouped by resource, typed from the generated OpenAPI types.
// Each call goes through transport.ts, which sets its headers and Idempotency-Key and decides its retries.
import type {
  ApiPath,
  AuditTrail,
  BulkSend,
  BulkSendDryRun,
  BulkSendParams,
  CreatedBulkSend,
  CreatedHook,
  CreatedSigningRequest,
  CreatedTemplate,
  CreatedTemplateVersion,
  Delivery,
  DeliveryListParams,
  DeliveryReplayResult,
  Document,
  DocumentWithdrawResult,
  Hook,
  HookTestResult,
  PlacementPreview,
  SignSession,
  SigningRequest,
  SigningRequestRemindResult,
  SigningRequestWithdrawResult,
  Template,
  TemplateGenerateResult,
  TemplateInstance,
  TemplateInstanceConfirmResult,
  TemplateInstanceDiscardResult,
  TemplateInstantiateResult,
  TemplateList,
  TemplateVersion,
  FileInput,
  HookCreateParams,
  HttpMethod,
  PlacementPreviewParams,
  SignSessionCreateParams,
  SigningRequestCreateParams,
  SuccessBody,
  TemplateCreateParams,
  TemplateGenerateParams,
  TemplateInstanceConfirmParams,
  TemplateInstantiateParams,
  TemplateListParams,
  TemplateVersionCreateParams,
  Workspace,
} from './types.js';
import { request, type Call, type RequestOptions, type Transport } from './transport.js';
import { webhooks } from './webhooks.js';

export { SDK_VERSION, type RequestOptions } from './transport.js';

export type SignetOptions = {
  /** `svk_live_…` (or a legacy `lgk_live_…`) key; it selects the workspace. */
  apiKey: string;
  /** Where your Signet serves, e.g. `https://sign.example.com` (the API is under `/v1`). */
  baseUrl: string;
  /** A fetch implementation (default: the global fetch of Node 20). */
  fetch?: typeof fetch;
  /** Waits between attempts (default: a timer). Tests pass one that moves their clock. */
  sleep?: (ms: number) => Promise<void>;
  /** Retries after the first attempt (default 3). 0 turns retrying off. */
  maxRetries?: number;
  /** Extra headers sent with every call. */
  headers?: Record<string, string>;
};

/** A bulk send's body: the CSV as text/csv (its version in the query), or the JSON rows. */
const bulkBody = (body: BulkSendParams, query: Record<string, boolean | number> = {}) =>
  'csv' in body
    ? {
        text: { body: body.csv, type: 'text/csv; charset=utf-8' },
        query: { ...query, ...(body.version === undefined ? {} : { version: body.version }) },
      }
    : { body, query };

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class Signet {
  readonly hooks;
  readonly signingRequests;
  readonly documents;
  readonly placement;
  readonly templates;
  readonly bulkSends;
  readonly templateInstances;
  readonly embedded;
  /** Signature helpers (`verify`, `sign`); the same object as the package's `webhooks` export. */
  readonly webhooks = webhooks;

  readonly #transport: Transport;

  constructor(options: SignetOptions) {
    if (!options || typeof options.apiKey !== 'string' || options.apiKey === '') {
      throw new TypeError('new Signet({ apiKey, baseUrl }): apiKey is required (svk_live_…).');
    }
    if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
      throw new TypeError(
        'new Signet({ apiKey, baseUrl }): baseUrl must be an http(s) URL, e.g. https://sign.example.com',
      );
    }
    const maxRetries = options.maxRetries ?? 3;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError('maxRetries must be an integer ≥ 0.');
    this.#transport = {
      apiKey: options.apiKey,
      baseUrl: options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, ''),
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      sleep: options.sleep ?? defaultSleep,
      maxRetries,
      headers: { ...options.headers },
    };

    // The answer's type comes from the path and method (`SuccessBody`), never from the call site.
    const r = <P extends ApiPath, M extends HttpMethod>(c: Call<P, M>): Promise<SuccessBody<P, M>> =>
      this.#request<SuccessBody<P, M>>(c);
    const bytes = <P extends ApiPath>(c: Call<P, 'get'>): Promise<Uint8Array> =>
      this.#request<Uint8Array>({ ...c, binary: true });

    this.hooks = {
      /** `POST /v1/hooks`: the answer carries the hook's `secret`, shown this once. */
      create: (body: HookCreateParams, options?: RequestOptions): Promise<CreatedHook> =>
        r({ method: 'post', path: '/v1/hooks', body, options }),
      /** `GET /v1/hooks`: the workspace's hooks, without secrets. */
      list: (options?: RequestOptions): Promise<Hook[]> => r({ method: 'get', path: '/v1/hooks', options }),
      /** `DELETE /v1/hooks/{id}`: its pending retries stop. */
      delete: (id: string, options?: RequestOptions): Promise<void> =>
        r({ method: 'delete', path: '/v1/hooks/{id}', params: { id }, options }),
      /** `POST /v1/hooks/{id}/test`: sends the synthetic test event to this hook. */
      test: (id: string, options?: RequestOptions): Promise<HookTestResult> =>
        r({ method: 'post', path: '/v1/hooks/{id}/test', params: { id }, options }),
      /** `GET /v1/hooks/{id}/deliveries`: delivery history, newest first. */
      deliveries: (id: string, query?: DeliveryListParams, options?: RequestOptions): Promise<Delivery[]> =>
        r({ method: 'get', path: '/v1/hooks/{id}/deliveries', params: { id }, query, options }),
      /** `POST /v1/hooks/{id}/deliveries/{delivery_id}/replay`: the same event again, due now. */
      replayDelivery: (id: string, deliveryId: string, options?: RequestOptions): Promise<DeliveryReplayResult> =>
        r({
          method: 'post',
          path: '/v1/hooks/{id}/deliveries/{delivery_id}/replay',
          params: { id, delivery_id: deliveryId },
          options,
        }),
    };

    this.signingRequests = {
      /**
       * `POST /v1/signing-requests`: one document, one signing request per signer. `file` takes the wire form
       * `{name, content_base64}` or bytes (`{name, data}`, a `File`); the client encodes them.
       */
      create: async (body: SigningRequestCreateParams, options?: RequestOptions): Promise<CreatedSigningRequest> =>
        r({
          method: 'post',
          path: '/v1/signing-requests',
          body: await withEncodedFile(body),
          options,
        }),
      get: (id: string, options?: RequestOptions): Promise<SigningRequest> =>
        r({ method: 'get', path: '/v1/signing-requests/{id}', params: { id }, options }),
      /** E-mails the signer again with a fresh link (the old one stops working). */
      remind: (id: string, options?: RequestOptions): Promise<SigningRequestRemindResult> =>
        r({
          method: 'post',
          path: '/v1/signing-requests/{id}/remind',
          params: { id },
          options,
        }),
      /** Withdraws the request; its document never completes. */
      withdraw: (id: string, options?: RequestOptions): Promise<SigningRequestWithdrawResult> =>
        r({
          method: 'post',
          path: '/v1/signing-requests/{id}/withdraw',
          params: { id },
          options,
        }),
    };

    this.documents = {
      get: (id: string, options?: RequestOptions): Promise<Document> =>
        r({ method: 'get', path: '/v1/documents/{id}', params: { id }, options }),
      withdraw: (id: string, options?: RequestOptions): Promise<DocumentWithdrawResult> =>
        r({ method: 'post', path: '/v1/documents/{id}/withdraw', params: { id }, options }),
      /** The sealed PDF (after `document.completed`; before, 409 `document_not_completed`). */
      signedPdf: (id: string, options?: RequestOptions): Promise<Uint8Array> =>
        bytes({ method: 'get', path: '/v1/documents/{id}/signed', params: { id }, accept: 'application/pdf', options }),
      /** The audit trail as JSON: every entry of the hash chain and whether it verifies. */
      auditTrail: (id: string, options?: RequestOptions): Promise<AuditTrail> =>
        r({ method: 'get', path: '/v1/documents/{id}/audit-trail', params: { id }, options }),
      /** The audit certificate as a PDF. */
      auditCertificatePdf: (id: string, options?: RequestOptions): Promise<Uint8Array> =>
        bytes({
          method: 'get',
          path: '/v1/documents/{id}/audit-trail',
          params: { id },
          accept: 'application/pdf',
          options,
        }),
    };

    this.placement = {
      /** Anchors found and every problem, for a file; creates nothing. */
      preview: async (body: PlacementPreviewParams, options?: RequestOptions): Promise<PlacementPreview> =>
        r({
          method: 'post',
          path: '/v1/placement/preview',
          body: await withEncodedFile(body),
          options,
        }),
    };

    this.templates = {
      create: async (body: TemplateCreateParams, options?: RequestOptions): Promise<CreatedTemplate> =>
        r({ method: 'post', path: '/v1/templates', body: await withEncodedFile(body), options }),
      list: (query?: TemplateListParams, options?: RequestOptions): Promise<TemplateList> =>
        r({ method: 'get', path: '/v1/templates', query, options }),
      get: (id: string, options?: RequestOptions): Promise<Template> =>
        r({ method: 'get', path: '/v1/templates/{id}', params: { id }, options }),
      /** Archives the template (no new instances; existing ones keep working). */
      archive: (id: string, options?: RequestOptions): Promise<void> =>
        r({ method: 'delete', path: '/v1/templates/{id}', params: { id }, options }),
      createVersion: async (
        id: string,
        body: TemplateVersionCreateParams,
        options?: RequestOptions,
      ): Promise<CreatedTemplateVersion> =>
        r({
          method: 'post',
          path: '/v1/templates/{id}/versions',
          params: { id },
          body: await withEncodedFile(body),
          options,
        }),
      getVersion: (id: string, version: number, options?: RequestOptions): Promise<TemplateVersion> =>
        r({
          method: 'get',
          path: '/v1/templates/{id}/versions/{n}',
          params: { id, n: version },
          options,
        }),
      instantiate: (
        id: string,
        body: TemplateInstantiateParams,
        options?: RequestOptions,
      ): Promise<TemplateInstantiateResult> =>
        r({
          method: 'post',
          path: '/v1/templates/{id}/instantiate',
          params: { id },
          body,
          options,
        }),
      generate: (id: string, body: TemplateGenerateParams, options?: RequestOptions): Promise<TemplateGenerateResult> =>
        r({ method: 'post', path: '/v1/templates/{id}/generate', params: { id }, body, options }),
      /** One instance per row, sent by a job (202, status `queued`); follow it with `bulkSends.get`. */
      bulkSend: (id: string, body: BulkSendParams, options?: RequestOptions): Promise<CreatedBulkSend> =>
        r({ method: 'post', path: '/v1/templates/{id}/bulk-sends', params: { id }, ...bulkBody(body), options }).then(
          (x) => x as CreatedBulkSend, // this call answers 202; the same route's 200 is the dry run
        ),
      /** Every row's problems, checked as the send would check them; creates nothing. */
      bulkSendDryRun: (id: string, body: BulkSendParams, options?: RequestOptions): Promise<BulkSendDryRun> =>
        r({
          method: 'post',
          path: '/v1/templates/{id}/bulk-sends',
          params: { id },
          ...bulkBody(body, { dry_run: true }),
          options,
        }).then((x) => x as BulkSendDryRun),
    };

    this.bulkSends = {
      /** Progress (`status`, `sent`, `failed` of `total`) and each row's outcome: instance id, or problems. */
      get: (id: string, options?: RequestOptions): Promise<BulkSend> =>
        r({ method: 'get', path: '/v1/bulk-sends/{id}', params: { id }, options }),
    };

    this.templateInstances = {
      get: (id: string, options?: RequestOptions): Promise<TemplateInstance> =>
        r({ method: 'get', path: '/v1/template-instances/{id}', params: { id }, options }),
      confirm: (
        id: string,
        body: TemplateInstanceConfirmParams = {},
        options?: RequestOptions,
      ): Promise<TemplateInstanceConfirmResult> =>
        r({
          method: 'post',
          path: '/v1/template-instances/{id}/confirm',
          params: { id },
          body,
          options,
        }),
      discard: (id: string, options?: RequestOptions): Promise<TemplateInstanceDiscardResult> =>
        r({ method: 'post', path: '/v1/template-instances/{id}/discard', params: { id }, options }),
    };

    this.embedded = {
      /** Enterprise: a session for framing one signer's page on a registered origin. */
      createSignSession: (body: SignSessionCreateParams, options?: RequestOptions): Promise<SignSession> =>
        r({ method: 'post', path: '/v1/embedded/sign-sessions', body, options }),
    };
  }

  /** `GET /v1/me`: the key's workspace (exempt from the rate limit). */
  me(options?: RequestOptions): Promise<Workspace> {
    return this.#request<Workspace>({ method: 'get', path: '/v1/me', options });
  }

  #request<T>(c: Call): Promise<T> {
    return request<T>(this.#transport, c);
  }
}

type WireFile = { name: string; content_base64: string };

/** The body with `file` in the wire form (`{name, content_base64}`), whatever form it was given in. */
async function withEncodedFile<B extends { file?: FileInput<WireFile> }>(body: B): Promise<B> {
  const file = body.file;
  if (file === undefined || (typeof file === 'object' && 'content_base64' in file)) return body;
  let name: string;
  let bytes: Uint8Array;
  if (typeof Blob !== 'undefined' && file instanceof Blob) {
    name = (file as Blob & { name: string }).name;
    bytes = new Uint8Array(await file.arrayBuffer());
  } else {
    const f = file as { name: string; data: Uint8Array | ArrayBuffer | Blob };
    name = f.name;
    bytes =
      f.data instanceof Blob
        ? new Uint8Array(await f.data.arrayBuffer())
        : f.data instanceof ArrayBuffer
          ? new Uint8Array(f.data)
          : f.data;
  }
  if (typeof name !== 'string' || name === '') throw new TypeError('file.name is required (e.g. "contract.pdf").');
  if (!(bytes instanceof Uint8Array)) throw new TypeError('file.data must be a Uint8Array, an ArrayBuffer or a Blob.');
  const content_base64 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  return { ...body, file: { name, content_base64 } };
}
