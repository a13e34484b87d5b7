/** The part of fitbit-node (untyped) the interoperability test uses. */
declare module 'fitbit-node' {
  export default class FitbitApiClient {
    constructor(options: { clientId: string; clientSecret: string; apiVersion?: string });
    apiVersion: string;
    getUrl(path: string, userId?: string | false): string;
    getAuthorizeUrl(scope: string, redirectUrl: string, prompt?: string, state?: string): string;
    getAccessToken(code: string, redirectUrl: string): Promise<unknown>;
    refreshAccessToken(accessToken: string, refreshToken: string, expiresIn?: number): Promise<unknown>;
    get(path: string, accessToken: string, userId?: string, extraHeaders?: Record<string, string>): Promise<[unknown, unknown]>;
    post(path: string, accessToken: string, data: Record<string, string>, userId?: string, extraHeaders?: Record<string, string>): Promise<[unknown, unknown]>;
    delete(path: string, accessToken: string, userId?: string, extraHeaders?: Record<string, string>): Promise<[unknown, unknown]>;
  }
}
