/**
 * Typed calls of Stride's generated `paths`: each method takes a path of /openapi.json and that
 * operation's parameters and body (the types openapi-fetch gives its own methods), returns its
 * success body, and throws a StrideError for any other answer — so a caller writes
 * `const me = await person.get('/v1/users/me')` instead of checking `{ data, error }` after every
 * call. The URL and body are made by openapi-fetch's own serializers.
 */
import { createFinalURL, createQuerySerializer, defaultPathSerializer, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import type { HttpMethod, MediaType, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import { errorFromAnswer } from './errors.js';
import type { paths } from './generated/api.js';
import type { Answer } from './transport.js';

/** The options argument, required when the operation has required parameters (as openapi-fetch has it). */
type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/** The success body of `Method` on `Path`. */
export type SuccessBody<Method extends HttpMethod, Path extends PathsWithMethod<paths, Method>, Init = {}> = Exclude<
  FetchResponse<paths[Path][Method] & Record<string | number, any>, Init, MediaType>['data'],
  undefined
>;

export type TypedCall<Method extends HttpMethod> = <Path extends PathsWithMethod<paths, Method>, Init extends MaybeOptionalInit<paths[Path], Method>>(
  path: Path,
  ...init: InitParam<Init>
) => Promise<SuccessBody<Method, Path, Init>>;

export interface TypedCalls {
  get: TypedCall<'get'>;
  post: TypedCall<'post'>;
  put: TypedCall<'put'>;
  delete: TypedCall<'delete'>;
}

/** What a typed call sends: the method, the full URL, and a JSON body if any. */
export type Send = (method: string, url: string, body: string | undefined, signal: AbortSignal | undefined) => Promise<Answer>;

interface CallInit {
  params?: { query?: Record<string, unknown>; path?: Record<string, unknown> };
  body?: unknown;
  signal?: AbortSignal;
}

const querySerializer = createQuerySerializer();

export function typedCalls(baseUrl: string, send: Send): TypedCalls {
  const base = baseUrl.replace(/\/+$/, '');
  const call = (method: string) => async (path: string, init: CallInit = {}) => {
    const url = createFinalURL(path, { baseUrl: base, params: init.params ?? {}, querySerializer, pathSerializer: defaultPathSerializer });
    const answer = await send(method, url, init.body === undefined ? undefined : JSON.stringify(init.body), init.signal);
    if (answer.status < 200 || answer.status >= 300) throw await errorFromAnswer(answer);
    const text = await answer.text();
    return text === '' ? undefined : JSON.parse(text);
  };
  return { get: call('GET'), post: call('POST'), put: call('PUT'), delete: call('DELETE') } as unknown as TypedCalls;
}
