/**
 * Seeded pseudo-random numbers for the fake dataset: mulberry32 over a 32-bit
 * state derived from the seed and a stream name, so each resource list has its
 * own stream and resizing one list does not reshuffle the others.
 */

function hash32(text: string): number {
  // FNV-1a
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export class Rng {
  private state: number;

  constructor(seed: number | string, stream: string) {
    this.state = hash32(`${String(seed)}\u0000${stream}`);
  }

  /** A stream started from a raw 32-bit state (plain mulberry32 of `seed`), for tests that need repeatable numbers without a stream name. */
  static fromState(state: number): Rng {
    const r = new Rng(0, '');
    r.state = state | 0;
    return r;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Up to `count` distinct items, in list order. */
  sample<T>(items: readonly T[], count: number): T[] {
    if (count >= items.length) return items.slice();
    const chosen = new Set<number>();
    while (chosen.size < count) chosen.add(Math.floor(this.next() * items.length));
    return [...chosen].sort((a, b) => a - b).map((i) => items[i] as T);
  }

  /** Integer epoch-ms timestamp in [from, to]. */
  ts(from: number, to: number): number {
    return from + Math.floor(this.next() * (to - from + 1));
  }

  hex(bytes: number): string {
    let out = '';
    for (let i = 0; i < bytes; i++) out += HEX[(this.next() * 256) | 0];
    return out;
  }

  /** RFC 4122 version-4 shaped UUID. */
  uuid(): string {
    const h = this.hex(16);
    const variant = '89ab'[this.int(0, 3)] ?? '8';
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}

/** A stream of uniform numbers in [0, 1) from a seed, for tests that need repeatable random data. */
export function randomStream(seed: number): () => number {
  const r = Rng.fromState(seed);
  return () => r.next();
}
