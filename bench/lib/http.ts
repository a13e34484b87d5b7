/**
 * A small HTTP client over node:http keep-alive agents: one request with a deadline, and a
 * "browser" (a cookie jar that follows same-origin redirects and submits HTML forms), enough to
 * walk an authorization server's login and consent pages from a script.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Milliseconds before the request is abandoned (every loop of the harness is bounded). */
  timeoutMs?: number;
}

export const REQUEST_TIMEOUT_MS = 15_000;

export function keepAliveAgent(maxSockets = 1): Agent {
  return new Agent({ keepAlive: true, maxSockets });
}

export function send(agent: Agent, url: string | URL, options: RequestOptions = {}): Promise<HttpResponse> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        hostname: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: options.method ?? 'GET',
        headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(options.timeoutMs ?? REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`timeout: ${options.method ?? 'GET'} ${target.pathname}`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

export function formBody(fields: Record<string, string | string[] | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, one);
  }
  return params.toString();
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'", '#x27': "'", '#x2F': '/', '#47': '/', '#x3D': '=', '#61': '=', '#96': '`', '#x60': '`' };

function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (ENTITIES[name] !== undefined) return ENTITIES[name]!;
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
    return whole;
  });
}

function attributes(tag: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const match of tag.matchAll(/([a-zA-Z_:-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/g)) {
    const name = match[1]!.toLowerCase();
    if (result[name] === undefined) result[name] = decodeEntities(match[2] ?? match[3] ?? match[4] ?? '');
  }
  return result;
}

export interface HtmlForm {
  action: string;
  method: string;
  /** Hidden, text and password inputs and checked checkboxes, in document order. */
  fields: Array<[string, string]>;
  /** Input types by name, to find the username and password fields. */
  types: Record<string, string>;
  /** The first named submit button (e.g. decision=allow). */
  submit: [string, string] | null;
}

/** Every POST form of a page. */
export function parseForms(html: string): HtmlForm[] {
  const forms: HtmlForm[] = [];
  for (const match of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const formAttributes = attributes(match[1]!);
    const form: HtmlForm = {
      action: formAttributes.action ?? '',
      method: (formAttributes.method ?? 'get').toLowerCase(),
      fields: [],
      types: {},
      submit: null,
    };
    for (const control of match[2]!.matchAll(/<(input|button)\b([^>]*)>/gi)) {
      const attrs = attributes(control[2]!);
      const name = attrs.name;
      if (!name) continue;
      const type = (attrs.type ?? (control[1]!.toLowerCase() === 'button' ? 'submit' : 'text')).toLowerCase();
      if (type === 'submit') {
        form.submit ??= [name, attrs.value ?? ''];
        continue;
      }
      if ((type === 'checkbox' || type === 'radio') && attrs.checked === undefined) continue;
      form.types[name] = type;
      form.fields.push([name, attrs.value ?? '']);
    }
    if (form.method === 'post') forms.push(form);
  }
  return forms;
}

/** A cookie jar on one origin that follows same-origin redirects (302/303 become GET). */
export class Browser {
  private readonly cookies = new Map<string, string>();

  constructor(
    readonly origin: string,
    readonly agent: Agent,
  ) {}

  private cookieHeader(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private store(setCookie: string[] | undefined): void {
    for (const line of setCookie ?? []) {
      const [pair, ...attributeParts] = line.split(';');
      const index = pair!.indexOf('=');
      if (index <= 0) continue;
      const name = pair!.slice(0, index).trim();
      const value = pair!.slice(index + 1).trim();
      const attrs = attributeParts.join(';').toLowerCase();
      const expired = /max-age=0\b/.test(attrs) || /expires=thu, 01 jan 1970/.test(attrs);
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** One request with the jar's cookies; no redirect is followed. */
  async fetch(url: string, options: RequestOptions = {}): Promise<HttpResponse & { url: string }> {
    const absolute = new URL(url, this.origin).toString();
    const headers: Record<string, string> = { ...options.headers };
    const cookie = this.cookieHeader();
    if (cookie) headers.cookie = cookie;
    const response = await send(this.agent, absolute, { ...options, headers });
    const setCookie = response.headers['set-cookie'];
    this.store(Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : undefined);
    return { ...response, url: absolute };
  }

  /**
   * Follows redirects while they stay on this origin. Returns the last page, or the response
   * whose Location leaves the origin (an authorization response to a client's redirect URI).
   */
  async navigate(url: string, options: RequestOptions = {}): Promise<HttpResponse & { url: string; leavingTo?: string }> {
    let response = await this.fetch(url, options);
    for (let hop = 0; hop < 10; hop++) {
      if (response.status < 300 || response.status >= 400 || !response.headers.location) return response;
      const next = new URL(response.headers.location, response.url);
      if (next.origin !== new URL(this.origin).origin) return { ...response, leavingTo: next.toString() };
      response = await this.fetch(next.toString());
    }
    throw new Error(`too many redirects from ${url}`);
  }

  async submit(page: { url: string }, form: HtmlForm, fill: Record<string, string> = {}): Promise<HttpResponse & { url: string; leavingTo?: string }> {
    const fields: Array<[string, string]> = form.fields.map(([name, value]) => [name, fill[name] ?? value]);
    for (const [name, value] of Object.entries(fill)) if (!(name in form.types)) fields.push([name, value]);
    if (form.submit) fields.push(form.submit);
    const action = new URL(form.action || page.url, page.url).toString();
    return this.navigate(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }
}
