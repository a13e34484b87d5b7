/**
 * A small HTTP/1.1 client for the load drivers: one keep-alive connection per simulated client,
 * one request at a time, and a "browser" (a cookie jar that follows same-origin redirects and
 * submits HTML forms), enough to walk an authorization server's login and consent pages from a
 * script.
 *
 * The connection speaks HTTP/1.1 over a plain socket instead of node:http's client: the driver
 * shares the machine's two cores with the server it measures, and node:http's client spends about
 * twice the CPU per request (agents, streams, header objects) — CPU the server then lacks.
 */
import { connect, type Socket } from 'node:net';

export interface HttpResponse {
  status: number;
  /** Lower-case names; a repeated header's values joined with ", " (but see setCookie). */
  headers: Record<string, string | undefined>;
  /** Every Set-Cookie header, in order (they cannot be joined). */
  setCookie: string[];
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

const HEAD_END = Buffer.from('\r\n\r\n');
const LINE_END = Buffer.from('\r\n');

interface Pending {
  resolve(response: HttpResponse): void;
  reject(error: Error): void;
  /** Whether the request asked for HEAD (no body follows, whatever the headers say). */
  head: boolean;
}

/** What is known of the response being read once its head has arrived. */
interface ResponseHead {
  status: number;
  headers: HttpResponse['headers'];
  setCookie: string[];
  /** Body bytes still to come (Content-Length), 'chunked', or 'close' (until the server closes). */
  framing: number | 'chunked' | 'close';
  keepAlive: boolean;
}

export class ResponseError extends Error {}

function parseHead(text: string): ResponseHead {
  const lines = text.split('\r\n');
  const statusLine = /^HTTP\/1\.([01]) (\d{3})/.exec(lines[0]!);
  if (!statusLine) throw new ResponseError(`not an HTTP/1.x status line: ${lines[0]!.slice(0, 80)}`);
  const headers: HttpResponse['headers'] = {};
  const setCookie: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new ResponseError(`malformed header line: ${line.slice(0, 80)}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'set-cookie') setCookie.push(value);
    else headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const connection = (headers.connection ?? '').toLowerCase();
  const keepAlive = statusLine[1] === '1' ? connection !== 'close' : connection === 'keep-alive';
  const encoding = (headers['transfer-encoding'] ?? '').toLowerCase();
  let framing: ResponseHead['framing'];
  if (encoding !== '') {
    if (encoding !== 'chunked') throw new ResponseError(`unsupported Transfer-Encoding: ${encoding}`);
    framing = 'chunked';
  } else if (headers['content-length'] !== undefined) {
    framing = Number(headers['content-length']);
    if (!Number.isSafeInteger(framing) || framing < 0) throw new ResponseError(`bad Content-Length: ${headers['content-length']}`);
  } else {
    framing = 'close';
  }
  return { status: Number(statusLine[2]), headers, setCookie, framing, keepAlive };
}

/**
 * The body of a chunked message (RFC 9112 §7.1) if all of it is in `data` (trailers are read and
 * dropped): the body and how many bytes of `data` the message took, or null if more must come.
 */
function chunkedBody(data: Buffer): { body: Buffer; used: number } | null {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf(LINE_END, offset);
    if (lineEnd < 0) return null;
    const size = parseInt(data.toString('latin1', offset, lineEnd).split(';')[0]!, 16);
    if (!Number.isSafeInteger(size) || size < 0) throw new ResponseError('bad chunk size');
    if (size === 0) {
      // Trailer lines, then an empty line.
      let cursor = lineEnd + 2;
      for (;;) {
        const end = data.indexOf(LINE_END, cursor);
        if (end < 0) return null;
        if (end === cursor) return { body: Buffer.concat(parts), used: end + 2 };
        cursor = end + 2;
      }
    }
    if (data.length < lineEnd + 2 + size + 2) return null;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}

/**
 * One keep-alive HTTP/1.1 connection to one origin (http: only), one request at a time. It
 * connects on the first request and again after the server closed it.
 */
export class Connection {
  private socket: Socket | null = null;
  private buffered: Buffer = Buffer.alloc(0);
  private head: ResponseHead | null = null;
  private pending: Pending | null = null;
  private readonly host: string;
  private readonly port: number;

  constructor(origin: string) {
    const url = new URL(origin);
    if (url.protocol !== 'http:') throw new Error(`only http: origins are supported, not ${url.protocol}`);
    this.host = url.hostname;
    this.port = Number(url.port || 80);
  }

  /** Sends one request; `target` is the path and query. */
  request(method: string, target: string, headers: Record<string, string>, body?: string): Promise<HttpResponse> {
    if (this.pending) return Promise.reject(new Error('a request is already in flight on this connection'));
    const socket = this.socket ?? this.open();
    let text = `${method} ${target} HTTP/1.1\r\nhost: ${this.host}:${this.port}\r\n`;
    for (const [name, value] of Object.entries(headers)) text += `${name}: ${value}\r\n`;
    if (body !== undefined) text += `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    else text += '\r\n';
    return new Promise<HttpResponse>((resolve, reject) => {
      this.pending = { resolve, reject, head: method === 'HEAD' };
      socket.write(text);
    });
  }

  /** Closes the connection; a request in flight fails. */
  close(error: Error = new Error('connection closed')): void {
    const { socket, pending } = this;
    this.socket = null;
    this.pending = null;
    this.head = null;
    this.buffered = Buffer.alloc(0);
    socket?.destroy();
    pending?.reject(error);
  }

  private open(): Socket {
    const socket = connect({ host: this.host, port: this.port, noDelay: true });
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      if (this.socket !== socket) return;
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
      try {
        this.read(false);
      } catch (error) {
        this.close(error as Error);
      }
    });
    socket.on('end', () => {
      if (this.socket !== socket) return;
      try {
        // A body delimited by the end of the connection is complete now.
        if (this.pending && this.head?.framing === 'close') this.read(true);
      } catch (error) {
        this.close(error as Error);
        return;
      }
      this.close(new Error('the server closed the connection before answering'));
    });
    socket.on('error', (error) => {
      if (this.socket === socket) this.close(error);
    });
    return socket;
  }

  /** Completes the response in flight if all of it has arrived. */
  private read(ended: boolean): void {
    const pending = this.pending;
    if (!pending) {
      if (this.buffered.length > 0) throw new ResponseError('the server sent bytes nobody asked for');
      return;
    }
    if (!this.head) {
      const end = this.buffered.indexOf(HEAD_END);
      if (end < 0) return;
      this.head = parseHead(this.buffered.toString('latin1', 0, end));
      this.buffered = this.buffered.subarray(end + 4);
      // 1xx answers are interim (RFC 9110 §15.2): the real one follows.
      if (this.head.status < 200) {
        this.head = null;
        this.read(ended);
        return;
      }
    }
    const head = this.head;
    const bodyless = pending.head || head.status === 204 || head.status === 304;
    let body: Buffer;
    let used: number;
    if (bodyless) {
      body = Buffer.alloc(0);
      used = 0;
    } else if (head.framing === 'chunked') {
      const chunked = chunkedBody(this.buffered);
      if (!chunked) return;
      ({ body, used } = chunked);
    } else if (head.framing === 'close') {
      if (!ended) return;
      body = this.buffered;
      used = this.buffered.length;
    } else {
      if (this.buffered.length < head.framing) return;
      body = this.buffered.subarray(0, head.framing);
      used = head.framing;
    }
    this.buffered = this.buffered.subarray(used);
    this.head = null;
    this.pending = null;
    // A body-less answer ends with its head, whatever its framing headers; bytes beyond the answer
    // to the one request sent mean the connection is out of step: it is not used again.
    const keepAlive = head.keepAlive && (bodyless || head.framing !== 'close') && this.buffered.length === 0;
    // Nothing is in flight any more: closing rejects nobody.
    if (!keepAlive) this.close();
    pending.resolve({ status: head.status, headers: head.headers, setCookie: head.setCookie, body: body.toString('utf8') });
  }
}

/**
 * A connection per origin for one simulated client (a browser, or an app's back end): requests
 * to the same origin reuse one keep-alive connection.
 */
export class Connections {
  private readonly byOrigin = new Map<string, Connection>();

  for(origin: string): Connection {
    let connection = this.byOrigin.get(origin);
    if (connection === undefined) this.byOrigin.set(origin, (connection = new Connection(origin)));
    return connection;
  }

  close(): void {
    for (const connection of this.byOrigin.values()) connection.close();
    this.byOrigin.clear();
  }
}

/** One request on a connection of its own, closed afterwards. */
export async function sendOnce(url: string | URL, options: RequestOptions = {}): Promise<HttpResponse> {
  const connections = new Connections();
  try {
    return await send(connections, url, options);
  } finally {
    connections.close();
  }
}

export function send(connections: Connections, url: string | URL, options: RequestOptions = {}): Promise<HttpResponse> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const method = options.method ?? 'GET';
  const connection = connections.for(target.origin);
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const timer = setTimeout(() => connection.close(new Error(`timeout: ${method} ${target.pathname}`)), timeoutMs);
  return connection.request(method, target.pathname + target.search, options.headers ?? {}, options.body).finally(() => clearTimeout(timer));
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
    readonly connections: Connections,
  ) {}

  private cookieHeader(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private store(setCookie: string[]): void {
    for (const line of setCookie) {
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
    const response = await send(this.connections, absolute, { ...options, headers });
    this.store(response.setCookie);
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
