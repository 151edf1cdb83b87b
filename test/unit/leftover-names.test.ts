import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deadLeftover,
  leftoverName,
  parseLeftover,
  stagingPrefix,
  type LeftoverKind,
} from '../../src/publish/leftovers.js';
import { deadPid } from '../helpers/run-cli.js';

// Each name a run keeps only while it works is built and recognised in one
// module: what is built must be recognised as that kind and no other, and
// what merely looks like it must not be.
const BASES = ['svc-snapshot-2026-11-21', 'users (11-21-2026).csv', 'a.partial-1-abcdef', 'new\nline'];
const KINDS: LeftoverKind[] = ['partial', 'previous', 'pruning', 'temp'];

/** A name of `kind` as a run with pid `pid` builds it (the staging directory as mkdtemp completes it). */
function built(kind: LeftoverKind, base: string, pid = process.pid): string {
  const name = kind === 'partial' ? `${stagingPrefix(base)}aB3xY9` : leftoverName(kind, base);
  return name.replace(`-${process.pid}-`, `-${pid}-`);
}

describe('parseLeftover', () => {
  for (const kind of KINDS)
    it(`recognises every ${kind} name built, as that kind only`, () => {
      for (const base of BASES) {
        const name = built(kind, base);
        expect(parseLeftover(kind, name)).toEqual({ base, pid: process.pid });
        // partial (mkdtemp) and temp (hex) share a word but not a tail; the others differ by word.
        for (const other of KINDS.filter((k) => k !== kind)) expect(parseLeftover(other, name)).toBeUndefined();
      }
    });

  it('builds a new random tail each time', () => {
    expect(leftoverName('pruning', 'x')).not.toBe(leftoverName('pruning', 'x'));
  });

  it('does not recognise names that merely look alike', () => {
    const alike = [
      '.git',
      '.cache',
      '.svc-snapshot-2026-11-21', // another tool's dot-directory
      'svc-snapshot-2026-11-21.pruning-123-0a1b2c3d', // no leading dot
      '.svc-snapshot-2026-11-21.pruning-123-0a1b2c3', // seven hex digits
      '.svc-snapshot-2026-11-21.pruning-123-0A1B2C3D', // upper-case hex
      '.svc-snapshot-2026-11-21.pruning-0123-0a1b2c3d', // pid with a leading zero
      '.svc-snapshot-2026-11-21.pruning-0-0a1b2c3d',
      '.svc-snapshot-2026-11-21.pruning-12345678-0a1b2c3d', // no pid has eight digits
      '.svc-snapshot-2026-11-21.pruning--0a1b2c3d',
      '.svc-snapshot-2026-11-21.pruning-123-0a1b2c3d.tmp',
      '..pruning-123-0a1b2c3d', // no name before the word
      '.svc-snapshot-2026-11-21.partial-123-aB3xY', // mkdtemp's tail has six
      '.users.csv.partial-123-0a1b2c3d~',
      '.users.csv.swp',
    ];
    for (const name of alike) for (const kind of KINDS) expect(parseLeftover(kind, name), name).toBeUndefined();
  });
});

describe('deadLeftover', () => {
  let dir: string;
  let dead: number;
  let sleeping: ChildProcess;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'leftover-names-test-'));
    dead = await deadPid();
    sleeping = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
  });

  afterAll(() => {
    sleeping.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds a dead run’s directory or file, never a live run’s, a link, or the wrong type of entry', () => {
    for (const kind of KINDS) {
      const make = (name: string) =>
        kind === 'temp' ? writeFileSync(path.join(dir, name), 'x') : mkdirSync(path.join(dir, name));
      const deadOne = built(kind, 'out', dead);
      const liveOne = built(kind, 'live', sleeping.pid!);
      const link = built(kind, 'link', dead);
      const wrongType = built(kind, 'wrong', dead);
      make(deadOne);
      make(liveOne);
      symlinkSync(path.join(dir, deadOne), path.join(dir, link));
      if (kind === 'temp') mkdirSync(path.join(dir, wrongType));
      else writeFileSync(path.join(dir, wrongType), 'x');

      expect(deadLeftover(kind, dir, deadOne), kind).toEqual({ base: 'out', pid: dead });
      expect(deadLeftover(kind, dir, liveOne), kind).toBeUndefined();
      expect(deadLeftover(kind, dir, link), kind).toBeUndefined();
      expect(deadLeftover(kind, dir, wrongType), kind).toBeUndefined();
      expect(deadLeftover(kind, dir, built(kind, 'missing', dead)), kind).toBeUndefined();
    }
  });
});
