/**
 * How the client speaks HTTP: by default undici's `request` on a keep-alive pool of its own — the
 * same library as Node.js's fetch, without the cost of building fetch's Request and Response
 * objects on every call, which was most of the client's CPU per call (docs/performance.md, load
 * 11) — or any `fetch` the app gives (a proxy agent, a recording one in tests).
 */
import { Agent, request } from 'undici';

export interface Outgoing {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** An answer, its body read once by `text()` or let go by `discard()`. */
export interface Answer {
  status: number;
  header(name: string): string | null;
  text(): Promise<string>;
  discard(): Promise<void>;
}

export interface Transport {
  send(outgoing: Outgoing): Promise<Answer>;
  /** Closes the connections kept alive. */
  close(): Promise<void>;
}

export function undiciTransport(): Transport {
  const agent = new Agent({ keepAliveTimeout: 4000 });
  return {
    async send({ method, url, headers, body, signal }) {
      const answer = await request(url, { method: method as 'GET', headers, body, signal, dispatcher: agent });
      return {
        status: answer.statusCode,
        header(name) {
          const value = answer.headers[name.toLowerCase()];
          return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
        },
        text: () => answer.body.text(),
        discard: () => answer.body.dump(),
      };
    },
    close: () => agent.close(),
  };
}

export function fetchTransport(fetchFn: typeof fetch): Transport {
  return {
    async send({ method, url, headers, body, signal }) {
      const response = await fetchFn(url, { method, headers, body, signal: signal ?? null });
      return {
        status: response.status,
        header: (name) => response.headers.get(name),
        text: () => response.text(),
        discard: async () => {
          await response.body?.cancel();
        },
      };
    },
    close: async () => undefined,
  };
}
