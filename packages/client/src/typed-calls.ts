/**
 * Typed calls over an openapi-fetch client of Stride's generated `paths`: each method takes a path
 * of /openapi.json and that operation's parameters and body, returns its success body, and throws
 * a StrideError for any other answer — so a caller writes `const me = await user.get('/v1/users/me')`
 * instead of checking `{ data, error }` after every call.
 */
import type { Client, FetchOptions, FetchResponse, MaybeOptionalInit } from 'openapi-fetch';
import type { HttpMethod, MediaType, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import { errorFromResponse } from './errors.js';
import type { paths } from './generated/api.js';

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

export function typedCalls(client: Client<paths>): TypedCalls {
  const call =
    (method: 'GET' | 'POST' | 'PUT' | 'DELETE') =>
    async (path: string, init?: FetchOptions<unknown>) => {
      const { data, error, response } = await (client[method] as (path: string, init?: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>)(path, init);
      if (!response.ok) throw await errorFromResponse(response, error ?? null);
      return data;
    };
  return { get: call('GET'), post: call('POST'), put: call('PUT'), delete: call('DELETE') } as unknown as TypedCalls;
}
