/**
 * Reading a raw collection for the build: every planned route's body, parsed
 * once (or taken from the live run's cache), each record validated once with
 * its route's model, and the unknown field names collected. Pure: no I/O.
 */
import type { z } from 'zod';
import { REALMS_ROUTE, ROUTES, planRoute, type PlannedRoute, type RouteDef } from '../api/catalog.js';
import { BodyError, decodeBody } from '../api/decode.js';
import type { RawCollection, RouteRecord } from '../collect/types.js';
import { collectDrift, driftTree, type DriftNode } from './schema.js';
import type { ValidationSample } from './types.js';

export type Path = readonly (string | number)[];

/** One record of a route body, as received (never copied), with the paths the model rejected. */
export interface SourceRecord {
  readonly value: unknown;
  readonly realm: string | undefined;
  /** Paths whose value must be written as null; undefined for a valid record (the common case). */
  readonly rejected: readonly Path[] | undefined;
}

export type RouteBody =
  | { readonly label: string; readonly realm: string | undefined; readonly ok: true; readonly records: readonly SourceRecord[] }
  | {
      readonly label: string;
      readonly realm: string | undefined;
      readonly ok: false;
      /** "GET /api/... was skipped: …" / "… failed: …". */
      readonly reason: string;
      /** Not called or not served (as opposed to failed): naming the route helps. */
      readonly skipped: boolean;
    };

/** A route across every realm it was planned for. */
export interface RouteGroup {
  readonly def: RouteDef;
  readonly bodies: readonly RouteBody[];
  /** Records of the bodies that are present, in realm order. */
  readonly records: readonly SourceRecord[];
  readonly missing: ReadonlyArray<Extract<RouteBody, { ok: false }>>;
}

export interface LoadedCollection {
  readonly groups: ReadonlyMap<string, RouteGroup>;
  readonly validation: { issues: number; samples: ValidationSample[] };
  readonly drift: Array<{ route: string; unknownFields: string[] }>;
}

const MAX_SAMPLES = 20;

interface FlatIssue {
  readonly path: (string | number)[];
  readonly message: string;
  /** An undocumented enum value that is a string: counted, but the value is kept (docs/exports.md). */
  readonly keep: boolean;
}

function valueAt(value: unknown, path: Path): unknown {
  let cur = value;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/**
 * zod issues as flat (path, message) pairs. A failed union is replaced by the
 * issues of its closest branch (fewest values to drop), so that one new enum
 * value inside `ImageInfo.info` does not null the pool and volume too. Only
 * the issue's message is kept: zod's messages name expected types and
 * options, never the received value.
 */
function flattenIssues(issues: readonly z.core.$ZodIssue[], record: unknown, prefix: Path, out: FlatIssue[]): void {
  for (const issue of issues) {
    const path = [...prefix, ...issue.path.map((s) => (typeof s === 'number' ? s : String(s)))];
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      let best: FlatIssue[] | undefined;
      let bestHard = Infinity;
      for (const branch of issue.errors) {
        const flat: FlatIssue[] = [];
        flattenIssues(branch, record, path, flat);
        const hard = flat.filter((f) => !f.keep).length;
        if (hard < bestHard || (hard === bestHard && flat.length < best!.length)) {
          best = flat;
          bestHard = hard;
        }
      }
      out.push(...best!);
      continue;
    }
    out.push({ path, message: issue.message, keep: issue.code === 'invalid_value' && typeof valueAt(record, path) === 'string' });
  }
}

function problem(label: string, entry: RouteRecord | undefined): { reason: string; skipped: boolean } | undefined {
  if (!entry) return { reason: `${label} was not collected`, skipped: true };
  if (entry.skipped) return { reason: `${label} was skipped: ${entry.reason ?? 'no reason recorded'}`, skipped: true };
  if (entry.error !== undefined) return { reason: `${label} failed: ${entry.error}`, skipped: false };
  return undefined;
}

class Loader {
  readonly issues = { count: 0, samples: [] as ValidationSample[] };
  readonly drift: Array<{ route: string; unknownFields: string[] }> = [];
  private readonly manifest: ReadonlyMap<string, RouteRecord>;
  private readonly trees = new Map<RouteDef, DriftNode | null>();

  constructor(
    private readonly collection: RawCollection,
    private readonly parsed: ReadonlyMap<string, unknown> | undefined,
  ) {
    this.manifest = new Map(collection.manifest.routes.map((r) => [r.route, r]));
  }

  body(p: PlannedRoute): RouteBody {
    const { label, realm } = p;
    const bad = problem(label, this.manifest.get(label));
    if (bad) return { label, realm, ok: false, ...bad };
    let value: unknown;
    if (this.parsed?.has(label)) {
      value = this.parsed.get(label);
    } else {
      const raw = this.collection.bodies.get(label);
      if (!raw) return { label, realm, ok: false, reason: `${label} failed: the collection holds no body for it`, skipped: false };
      try {
        value = decodeBody(label, p.def, raw);
      } catch (e) {
        if (e instanceof BodyError) return { label, realm, ok: false, reason: `${label} failed: ${e.detail}`, skipped: false };
        throw e;
      }
    }
    const list = p.def.shape === 'array' ? value : [value];
    if (!Array.isArray(list)) return { label, realm, ok: false, reason: `${label} failed: the body is not a JSON array`, skipped: false };
    return { label, realm, ok: true, records: this.check(p, list) };
  }

  /** Validates each record once with the route's model and collects unknown field names. */
  private check(p: PlannedRoute, list: readonly unknown[]): SourceRecord[] {
    const model = p.def.item;
    let tree = this.trees.get(p.def);
    if (tree === undefined) {
      tree = driftTree(model);
      this.trees.set(p.def, tree);
    }
    const unknown = new Set<string>();
    const out: SourceRecord[] = new Array(list.length);
    for (let i = 0; i < list.length; i++) {
      const value = list[i];
      let rejected: Path[] | undefined;
      const result = model.safeParse(value);
      if (!result.success) {
        const flat: FlatIssue[] = [];
        flattenIssues(result.error.issues, value, [], flat);
        for (const f of flat) {
          this.issues.count++;
          if (this.issues.samples.length < MAX_SAMPLES) this.issues.samples.push({ route: p.label, index: i, path: f.path.join('.'), message: f.message });
          if (!f.keep) (rejected ??= []).push(f.path);
        }
      }
      if (tree) collectDrift(tree, value, '', unknown);
      out[i] = { value, realm: p.realm, rejected };
    }
    if (unknown.size > 0) this.drift.push({ route: p.label, unknownFields: [...unknown].sort() });
    return out;
  }
}

/** Every route of the catalog, planned for the collection's realms, loaded and checked. */
export function loadCollection(collection: RawCollection, parsed?: ReadonlyMap<string, unknown>): LoadedCollection {
  const loader = new Loader(collection, parsed);
  const realms = [...new Set(collection.manifest.realms.ids)];
  const realmsLabel = planRoute(REALMS_ROUTE).label;
  const realmsEntry = collection.manifest.routes.find((r) => r.route === realmsLabel);
  // Without the realm list no per-realm route was planned: their data is missing, not empty.
  const noRealms: RouteBody | undefined =
    realms.length === 0 && collection.manifest.realms.source === realmsLabel && realmsEntry?.error !== undefined
      ? { label: realmsLabel, realm: undefined, ok: false, reason: `the realms are unknown: ${realmsLabel} failed: ${realmsEntry.error}`, skipped: false }
      : undefined;
  const groups = new Map<string, RouteGroup>();
  for (const def of ROUTES) {
    const plans = def.perRealm ? realms.map((r) => planRoute(def, r)) : [planRoute(def)];
    const bodies = def.perRealm && noRealms ? [noRealms] : plans.map((p) => loader.body(p));
    const records: SourceRecord[] = [];
    const missing: Array<Extract<RouteBody, { ok: false }>> = [];
    for (const b of bodies) {
      if (b.ok) for (const r of b.records) records.push(r);
      else missing.push(b);
    }
    groups.set(def.id, { def, bodies, records, missing });
  }
  return {
    groups,
    validation: { issues: loader.issues.count, samples: loader.issues.samples },
    drift: loader.drift,
  };
}
