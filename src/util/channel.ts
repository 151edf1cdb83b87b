/**
 * A queue between a producer that pushes (a worker's messages, as they
 * arrive) and one async reader; what is pushed before the reader waits is
 * kept.
 */
export class Channel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private ended = false;
  private error: Error | undefined;
  private wake: (() => void) | undefined;

  push(v: T): void {
    this.items.push(v);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  fail(err: Error): void {
    this.error ??= err;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.error) throw this.error;
      if (this.items.length > 0) {
        yield this.items.shift()!;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
