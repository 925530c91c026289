// Request and response types, all taken from the generated OpenAPI types (src/generated/openapi.ts): nothing on the
// wire is declared by hand here, only looked up by path, method and status.
import type { paths } from './generated/openapi.js';

export type { paths } from './generated/openapi.js';

export type ApiPath = keyof paths;
export type HttpMethod = 'get' | 'post' | 'delete';

type Operation<P extends ApiPath, M extends HttpMethod> = Exclude<paths[P][M], undefined>;
type Responses<P extends ApiPath, M extends HttpMethod> = Operation<P, M> extends { responses: infer R } ? R : never;
type JsonContent<T> = T extends { content: { 'application/json': infer B } } ? B : undefined;

/** The JSON request body of an operation. */
export type RequestBody<P extends ApiPath, M extends HttpMethod> =
  Operation<P, M> extends { requestBody?: infer RB } ? JsonContent<NonNullable<RB>> : never;

/** The JSON body of one response status of an operation (`undefined` for a status without a body, such as 204). */
export type ResponseBody<P extends ApiPath, M extends HttpMethod, S extends number> = S extends keyof Responses<P, M>
  ? JsonContent<Responses<P, M>[S]>
  : never;

/** The JSON body of an operation's success response (its 200, 201, 202 or 204). */
export type SuccessBody<P extends ApiPath, M extends HttpMethod> = ResponseBody<P, M, 200 | 201 | 202 | 204>;

/** The query parameters of an operation. */
export type QueryParams<P extends ApiPath, M extends HttpMethod> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

// Names for the shapes people use most. Each is a lookup into the generated types.
export type ErrorBody = ResponseBody<'/v1/hooks', 'post', 400>;
export type Workspace = SuccessBody<'/v1/me', 'get'>;

export type HookCreateParams = RequestBody<'/v1/hooks', 'post'>;
export type CreatedHook = SuccessBody<'/v1/hooks', 'post'>;
export type Hook = SuccessBody<'/v1/hooks', 'get'>[number];
export type HookTestResult = SuccessBody<'/v1/hooks/{id}/test', 'post'>;
export type DeliveryListParams = QueryParams<'/v1/hooks/{id}/deliveries', 'get'>;
export type Delivery = SuccessBody<'/v1/hooks/{id}/deliveries', 'get'>[number];
export type DeliveryReplayResult = SuccessBody<'/v1/hooks/{id}/deliveries/{delivery_id}/replay', 'post'>;

export type SigningRequestCreateBody = RequestBody<'/v1/signing-requests', 'post'>;
export type CreatedSigningRequest = SuccessBody<'/v1/signing-requests', 'post'>;
export type SigningRequest = SuccessBody<'/v1/signing-requests/{id}', 'get'>;
export type SigningRequestRemindResult = SuccessBody<'/v1/signing-requests/{id}/remind', 'post'>;
export type SigningRequestWithdrawResult = SuccessBody<'/v1/signing-requests/{id}/withdraw', 'post'>;

export type Document = SuccessBody<'/v1/documents/{id}', 'get'>;
export type DocumentWithdrawResult = SuccessBody<'/v1/documents/{id}/withdraw', 'post'>;
export type AuditTrail = SuccessBody<'/v1/documents/{id}/audit-trail', 'get'>;

export type PlacementPreviewBody = RequestBody<'/v1/placement/preview', 'post'>;
export type PlacementPreview = SuccessBody<'/v1/placement/preview', 'post'>;

export type TemplateCreateBody = RequestBody<'/v1/templates', 'post'>;
export type CreatedTemplate = SuccessBody<'/v1/templates', 'post'>;
export type TemplateListParams = QueryParams<'/v1/templates', 'get'>;
export type TemplateList = SuccessBody<'/v1/templates', 'get'>;
export type Template = SuccessBody<'/v1/templates/{id}', 'get'>;
export type TemplateVersionCreateBody = RequestBody<'/v1/templates/{id}/versions', 'post'>;
export type CreatedTemplateVersion = SuccessBody<'/v1/templates/{id}/versions', 'post'>;
export type TemplateVersion = SuccessBody<'/v1/templates/{id}/versions/{n}', 'get'>;
export type TemplateInstantiateParams = RequestBody<'/v1/templates/{id}/instantiate', 'post'>;
export type TemplateInstantiateResult = SuccessBody<'/v1/templates/{id}/instantiate', 'post'>;
export type TemplateGenerateParams = RequestBody<'/v1/templates/{id}/generate', 'post'>;
export type TemplateGenerateResult = SuccessBody<'/v1/templates/{id}/generate', 'post'>;
/** A bulk send's rows as JSON (each an instantiate body), or the CSV the dashboard takes (`version` pins one). */
export type BulkSendParams = RequestBody<'/v1/templates/{id}/bulk-sends', 'post'> | { csv: string; version?: number };
export type CreatedBulkSend = ResponseBody<'/v1/templates/{id}/bulk-sends', 'post', 202>;
export type BulkSendDryRun = ResponseBody<'/v1/templates/{id}/bulk-sends', 'post', 200>;
export type BulkSend = SuccessBody<'/v1/bulk-sends/{id}', 'get'>;
export type TemplateInstance = SuccessBody<'/v1/template-instances/{id}', 'get'>;
export type TemplateInstanceConfirmParams = RequestBody<'/v1/template-instances/{id}/confirm', 'post'>;
export type TemplateInstanceConfirmResult = SuccessBody<'/v1/template-instances/{id}/confirm', 'post'>;
export type TemplateInstanceDiscardResult = SuccessBody<'/v1/template-instances/{id}/discard', 'post'>;

export type SignSessionCreateParams = RequestBody<'/v1/embedded/sign-sessions', 'post'>;
export type SignSession = SuccessBody<'/v1/embedded/sign-sessions', 'post'>;

/**
 * A PDF to upload. The API takes files as JSON (`file: {name, content_base64}`, see the README); the client encodes
 * bytes for you, so any of these works: the wire form, `{ name, data }` with bytes or a Blob, or a `File`.
 */
export type FileInput<Wire> =
  Wire | { name: string; data: Uint8Array | ArrayBuffer | Blob } | (Blob & { name: string });

/** An operation's body with `file` also accepting bytes (see `FileInput`). */
export type WithFileInput<B> = B extends { file?: infer F } ? Omit<B, 'file'> & { file?: FileInput<F> } : B;

export type SigningRequestCreateParams = WithFileInput<SigningRequestCreateBody>;
export type PlacementPreviewParams = WithFileInput<PlacementPreviewBody>;
export type TemplateCreateParams = WithFileInput<TemplateCreateBody>;
export type TemplateVersionCreateParams = WithFileInput<TemplateVersionCreateBody>;
