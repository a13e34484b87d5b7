/**
 * HTTP for the load drivers, on undici: one keep-alive connection per simulated client, and a
 * browser (a cookie jar for one origin that follows its redirects and submits its HTML forms),
 * enough to walk an authorization server's login and consent pages from a script.
 */
import { Client, parseCookie, type Dispatcher } from 'undici';

/** Milliseconds before a request is abandoned: every loop of the harness is bounded. */
export const REQUEST_TIMEOUT_MS = 15_000;

/**
 * One keep-alive HTTP/1.1 connection to `origin`, one request at a time. undici's Client opens it
 * at the first request and again after the server closed it; it is one socket, so a simulated
 * client costs the server what one browser or one app's back end would.
 */
export function connection(origin: string, timeoutMs = REQUEST_TIMEOUT_MS): Client {
  return new Client(origin, { pipelining: 1, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
}

export interface Answer {
  status: number;
  /** Lower-cased names; a header sent more than once (Set-Cookie) as an array. */
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RequestOptions {
  method?: Dispatcher.HttpMethod;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * One request (`path` with its query) on a connection; the body is read whole, so the connection
 * can take the next. Dispatched with a handler that keeps the body's chunks, not through
 * `request()`, whose answer is a Readable stream: a driver shares the cores with the server it
 * measures, and the stream costs it about a fifth of a small request's CPU.
 */
export function send(client: Dispatcher, path: string, options: RequestOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let headers: Answer['headers'] = {};
    const chunks: Buffer[] = [];
    const request = { path, method: options.method ?? 'GET', headers: options.headers, body: options.body };
    client.dispatch(request, {
      // Named even when empty: undici tells this handler interface from the older one by it.
      onRequestStart() {},
      onResponseStart(_controller, statusCode, responseHeaders) {
        status = statusCode;
        headers = responseHeaders;
      },
      onResponseData(_controller, chunk) {
        chunks.push(chunk);
      },
      onResponseEnd() {
        resolve({ status, headers, body: chunks.length === 1 ? chunks[0]!.toString() : Buffer.concat(chunks).toString() });
      },
      onResponseError(_controller, error) {
        reject(error);
      },
    });
  });
}

/** One request on a connection of its own, closed afterwards. */
export async function sendOnce(url: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Answer> {
  const target = new URL(url);
  const client = connection(target.origin, timeoutMs);
  try {
    return await send(client, target.pathname + target.search);
  } finally {
    await client.destroy();
  }
}

export function formBody(fields: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) params.append(name, value);
  return params.toString();
}

export interface HtmlForm {
  action: string;
  /** Hidden, text, email and password inputs and checked checkboxes, in document order. */
  fields: Array<[string, string]>;
  /** Input types by name, to find the username and password fields. */
  types: Record<string, string>;
  /** The first named submit button (e.g. decision=allow). */
  submit: [string, string] | null;
}

/** Both servers' pages are Eta templates, which escape these five. */
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };

function attributes(tag: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const match of tag.matchAll(/([\w:-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/g)) {
    const value = match[2] ?? match[3] ?? match[4] ?? '';
    result[match[1]!.toLowerCase()] ??= value.includes('&') ? value.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ENTITIES[name]!) : value;
  }
  return result;
}

/** Every POST form of a page. */
export function parseForms(html: string): HtmlForm[] {
  const forms: HtmlForm[] = [];
  for (const match of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const formAttributes = attributes(match[1]!);
    if (formAttributes.method?.toLowerCase() !== 'post') continue;
    const form: HtmlForm = { action: formAttributes.action ?? '', fields: [], types: {}, submit: null };
    for (const control of match[2]!.matchAll(/<(input|button)\b([^>]*)>/gi)) {
      const attrs = attributes(control[2]!);
      if (!attrs.name) continue;
      const type = (attrs.type ?? (control[1]!.toLowerCase() === 'button' ? 'submit' : 'text')).toLowerCase();
      if (type === 'submit') form.submit ??= [attrs.name, attrs.value ?? ''];
      else if ((type !== 'checkbox' && type !== 'radio') || attrs.checked !== undefined) {
        form.types[attrs.name] = type;
        form.fields.push([attrs.name, attrs.value ?? '']);
      }
    }
    forms.push(form);
  }
  return forms;
}

export type Page = Answer & { url: string; leavingTo?: string };

const FORM_CONTENT_TYPE = { 'content-type': 'application/x-www-form-urlencoded' };

/** A cookie jar on one origin, over one connection, that follows same-origin redirects (302/303 become GET). */
export class Browser {
  private readonly cookies = new Map<string, string>();
  /** The Cookie header the jar sends, made again only when the jar changes. */
  private cookieHeader: string | null = null;

  constructor(
    readonly origin: string,
    readonly client: Dispatcher,
  ) {}

  /** One request with the jar's cookies; no redirect is followed. */
  async fetch(url: string | URL, options: RequestOptions = {}): Promise<Page> {
    const target = new URL(url, this.origin);
    // The connection goes to one origin only: a request elsewhere would reach the wrong server.
    if (target.origin !== this.origin) throw new Error(`${target.origin} is not this browser's origin (${this.origin})`);
    if (this.cookies.size > 0) {
      this.cookieHeader ??= Array.from(this.cookies, ([name, value]) => `${name}=${value}`).join('; ');
      options = { ...options, headers: { ...options.headers, cookie: this.cookieHeader } };
    }
    const answer = await send(this.client, target.pathname + target.search, options);
    const setCookie = answer.headers['set-cookie'];
    if (setCookie !== undefined) this.keep(typeof setCookie === 'string' ? [setCookie] : setCookie);
    return { ...answer, url: target.href };
  }

  private keep(lines: string[]): void {
    for (const line of lines) {
      const cookie = parseCookie(line);
      if (!cookie) continue;
      // How a server deletes a cookie: an empty value, or an expiry now or in the past.
      const expired = cookie.value === '' || (cookie.maxAge ?? 1) <= 0 || (cookie.expires !== undefined && Number(cookie.expires) <= Date.now());
      if (expired) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    this.cookieHeader = null;
  }

  /**
   * Follows redirects while they stay on this origin. Returns the last page, or the answer whose
   * Location leaves the origin (an authorization response to a client's redirect URI).
   */
  async navigate(url: string | URL, options: RequestOptions = {}): Promise<Page> {
    let page = await this.fetch(url, options);
    for (let hop = 0; hop < 10; hop++) {
      const location = page.headers.location;
      if (page.status < 300 || page.status >= 400 || typeof location !== 'string') return page;
      const next = new URL(location, page.url);
      if (next.origin !== this.origin) return { ...page, leavingTo: next.href };
      page = await this.fetch(next);
    }
    throw new Error(`too many redirects from ${url}`);
  }

  async submit(page: { url: string }, form: HtmlForm, fill: Record<string, string> = {}): Promise<Page> {
    const fields: Array<[string, string]> = form.fields.map(([name, value]) => [name, fill[name] ?? value]);
    for (const [name, value] of Object.entries(fill)) if (!(name in form.types)) fields.push([name, value]);
    if (form.submit) fields.push(form.submit);
    return this.navigate(new URL(form.action || page.url, page.url), {
      method: 'POST',
      headers: FORM_CONTENT_TYPE,
      body: new URLSearchParams(fields).toString(),
    });
  }
}
