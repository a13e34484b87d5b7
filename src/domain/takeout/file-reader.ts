/**
 * The files of a Takeout archive parsed and read in a worker thread rather than on the event loop
 * (docs/takeout.md, "A background job"): `JSON.parse` of one file and its reading into steps take
 * tens of milliseconds (a month of minute steps, a day of heart rate every few seconds), which on
 * the server's event loop would hold every other request for as long. The event loop only inflates
 * the file (zlib, on libuv's threads) and writes the steps the worker sends back.
 *
 * One worker per process, started on first use and stopped by nothing: it is unreferenced while
 * idle, so it never keeps a process alive, and referenced while a file is in it, so a command
 * waiting for it is not ended under it. A worker that dies fails the files in it, and the next file
 * starts a new one.
 */
import { Worker } from 'node:worker_threads';
import type { TakeoutKind } from '../../store/takeout-imports.js';
import type { FileFound } from './preview-file.js';
import type { ReadContext, ReadStep } from './read-files.js';

type FileWork = { kind: TakeoutKind; bytes: Uint8Array } & ({ op: 'preview' } | { op: 'read'; context: ReadContext });
export type FileRequest = FileWork & { id: number };

type Answer = { id: number; result: unknown } | { id: number; error: string };

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

class FileReader {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  /** The preview's count of one file (preview.ts, previewFile). */
  preview(kind: TakeoutKind, bytes: Buffer): Promise<FileFound> {
    return this.send({ op: 'preview', kind, bytes }) as Promise<FileFound>;
  }

  /** One file read into the steps of an import (read-files.ts, readFile). */
  read(kind: TakeoutKind, bytes: Buffer, context: ReadContext): Promise<ReadStep[]> {
    return this.send({ op: 'read', kind, bytes, context }) as Promise<ReadStep[]>;
  }

  private send(request: FileWork): Promise<unknown> {
    const worker = this.started();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      // The file's bytes move to the worker rather than being copied (a Buffer may share a pooled slab: copy those).
      const bytes = request.bytes.byteLength === request.bytes.buffer.byteLength ? request.bytes : new Uint8Array(request.bytes);
      worker.postMessage({ ...request, id, bytes }, [bytes.buffer as ArrayBuffer]);
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./reader-worker.js', import.meta.url));
    worker.unref();
    worker.on('message', (answer: Answer) => {
      const waiting = this.pending.get(answer.id);
      if (!waiting) return;
      this.pending.delete(answer.id);
      if (this.pending.size === 0) worker.unref();
      if ('error' in answer) waiting.reject(new Error(`reading a file of the archive failed: ${answer.error}`));
      else waiting.resolve(answer.result);
    });
    const failAll = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', failAll);
    worker.on('exit', (code) => failAll(new Error(`the worker reading archive files stopped (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }
}

/** The process's reader of archive files. */
export const readOffThread = new FileReader();
