import type { Writable } from 'node:stream';

/** The reader went away (or the response failed) before the statement was complete. */
export class StatementAborted extends Error {
  constructor() {
    super('statement download aborted');
  }
}

/**
 * Waits until `stream` wants more data. Generators call this between batches so a slow reader holds back the
 * database cursor instead of letting the document pile up in memory. Rejects with StatementAborted when the
 * stream is destroyed or closed first.
 */
export async function drained(stream: Writable): Promise<void> {
  if (stream.destroyed || stream.closed) throw new StatementAborted();
  if (!needsDrain(stream)) return;
  await new Promise<void>((resolve, reject) => {
    const cleanup = () => {
      stream.off('drain', onDrain);
      stream.off('close', onClose);
      stream.off('error', onError);
    };
    const onDrain = () => {
      cleanup();
      resolve();
    };
    const onClose = () => {
      cleanup();
      reject(new StatementAborted());
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    stream.on('drain', onDrain);
    stream.on('close', onClose);
    stream.on('error', onError);
  });
}

/**
 * Whether writes to `stream` have been refused until it drains. Streams of the `readable-stream` package (which
 * exceljs's zip stages use) predate `writableNeedDrain` and keep the flag in their writable state only.
 */
function needsDrain(stream: Writable): boolean {
  return stream.writableNeedDrain ?? (stream as unknown as { _writableState?: { needDrain?: boolean } })._writableState?.needDrain ?? false;
}

/** Runs `work` but gives up as soon as `stream` closes without having finished (so nothing waits forever). */
export async function unlessClosed<T>(stream: Writable, work: Promise<T>): Promise<T> {
  if (stream.destroyed) throw new StatementAborted();
  let onClose: (() => void) | undefined;
  const closed = new Promise<never>((_, reject) => {
    onClose = () => {
      if (!stream.writableFinished) reject(new StatementAborted());
    };
    stream.once('close', onClose);
  });
  try {
    return await Promise.race([work, closed]);
  } finally {
    stream.off('close', onClose!);
  }
}

/** Yields to the event loop so stream stages (zlib, zip) can move what was just written. */
export function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
