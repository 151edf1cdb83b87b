/**
 * Reading a raw collection for the build: every planned route's body, parsed
 * once, each record validated once with its route's model, and the unknown
 * field names collected. No I/O. It changes its input only when the memory
 * policy says the bodies are consumed: each is then deleted from the
 * collection once read.
 */
import type { z } from 'zod';
import { REALMS_ROUTE, ROUTES, planRoute, routeById, type PlannedRoute, type RouteDef } from '../api/catalog.js';
import { BodyError, decodeBody, decodeSlices } from '../body/decode.js';
import { opensArray } from '../body/slices.js';
import { openBody } from '../body/file.js';
import type { RouteRecord } from '../api/route-record.js';
import type { RawCollection } from '../collect/types.js';
import { collectDrift, driftTree, type DriftNode } from './schema.js';
import { compileFastCheck, type FastCheck } from './fast/record-check.js';
import type { BuildOptions, LoadReport, ValidationSample } from './types.js';

export type Path = readonly (string | number)[];

/** One record of a route body, as received (never copied), with the paths the model rejected. */
export interface SourceRecord {
  readonly value: unknown;
  readonly realm: string | undefined;
  /** Paths whose value must be written as null; undefined for a valid record (the common case). */
  readonly rejected: readonly Path[] | undefined;
}

export type RouteBody = { readonly label: string; readonly realm: string | undefined } & (
  | { readonly ok: true; readonly records: readonly SourceRecord[] }
  | {
      readonly ok: false;
      /** "GET /api/... was skipped: …" / "… failed: …". */
      readonly reason: string;
      /** Not called or not served (as opposed to failed): naming the route helps. */
      readonly skipped: boolean;
    }
);

/** A route across every realm it was planned for. */
export interface RouteGroup {
  readonly def: RouteDef;
  readonly bodies: readonly RouteBody[];
  /** Records of the bodies that are present, in realm order. */
  readonly records: readonly SourceRecord[];
  readonly missing: ReadonlyArray<Extract<RouteBody, { ok: false }>>;
}

const MAX_SAMPLES = 20;

/** The sample's message for a record naming another realm than its route's (never the realm it names: a value). */
const OTHER_REALM = "names another realm than the route that listed the record; it is exported under the route's realm";

/**
 * Whether a record of a per-realm route names, in its route's recordRealm field, a realm other than the
 * route's (a value of the wrong type is zod's to report).
 */
function otherRealm(p: PlannedRoute, value: unknown): boolean {
  const field = p.def.recordRealm;
  if (field === undefined || p.realm === undefined || value === null || typeof value !== 'object') return false;
  const said = (value as Record<string, unknown>)[field];
  return typeof said === 'string' && said !== p.realm;
}

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
    out.push({
      path,
      message: issue.message,
      keep: issue.code === 'invalid_value' && typeof valueAt(record, path) === 'string',
    });
  }
}

/** A body that is not there to read: `skipped` when not called or not served, rather than failed. */
function unreadBody(label: string, realm: string | undefined, reason: string, skipped = false): RouteBody {
  return { label, realm, ok: false, reason, skipped };
}

/** What validating one body found; kept per body so that bodies read in any order report as in catalog order. */
interface BodyReport {
  count: number;
  samples: ValidationSample[];
  drift: { route: string; unknownFields: string[] } | undefined;
}

/** The value of `key` in `map`, made and kept there when first asked for. */
export function memo<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) map.set(key, (v = make()));
  return v;
}

class Loader {
  private readonly reports = new Map<string, BodyReport>();
  private readonly bodyFailures = new Map<string, string>();
  readonly manifest: ReadonlyMap<string, RouteRecord>;
  private readonly trees = new Map<RouteDef, DriftNode | null>();
  private readonly fastChecks = new Map<RouteDef, FastCheck>();

  constructor(
    private readonly collection: RawCollection,
    /** Delete each body from the collection once it is read. */
    private readonly consume: boolean,
    private readonly options: BuildOptions,
  ) {
    this.manifest = new Map(collection.manifest.routes.map((r) => [r.route, r]));
  }

  body(p: PlannedRoute): RouteBody {
    const { label, realm } = p;
    const failed = (why: string) => unreadBody(label, realm, `${label} failed: ${why}`);
    const entry = this.manifest.get(label);
    if (!entry) return unreadBody(label, realm, `${label} was not collected`, true);
    if (entry.skipped)
      return unreadBody(label, realm, `${label} was skipped: ${entry.reason ?? 'no reason recorded'}`, true);
    if (entry.error !== undefined) return failed(entry.error);
    const raw = this.collection.bodies.get(label);
    if (!raw) return failed('the collection holds no body for it');
    let records: SourceRecord[];
    const reader = openBody(raw);
    try {
      const check = this.checker(p);
      if (p.def.shape === 'array' && opensArray(reader)) {
        // A slice at a time: no string as long as the body, and each slice's text dropped once its records are checked.
        // A body from a file is never quoted in the message (it may not be what its name says).
        for (const list of decodeSlices(label, p.def, reader, { quote: false, sliceBytes: this.options.sliceBytes }))
          check.add(list);
      } else {
        const value = decodeBody(label, p.def, reader.read(0, reader.size), { quote: false });
        if (p.def.shape === 'array' && !Array.isArray(value)) return failed('the body is not a JSON array');
        check.add(p.def.shape === 'array' ? (value as unknown[]) : [value]);
      }
      // A body read back from a file is checked against its sha256 once read whole, before anything of it is used.
      reader.done();
      records = check.done();
    } catch (e) {
      // A file changed while it was read says so, whatever its bytes were.
      reader.done();
      if (e instanceof BodyError) {
        this.bodyFailures.set(label, e.detail);
        return failed(e.detail);
      }
      throw e;
    }
    if (this.consume) this.collection.bodies.delete(label);
    return { label, realm, ok: true, records };
  }

  /** Validates each record once with the route's model and collects unknown field names, a list (a slice) at a time. */
  private checker(p: PlannedRoute): { add(list: readonly unknown[]): void; done(): SourceRecord[] } {
    const model = p.def.item;
    const drift = memo(this.trees, p.def, () => driftTree(model));
    const check = memo(this.fastChecks, p.def, () => compileFastCheck(model));
    const report: BodyReport = { count: 0, samples: [], drift: undefined };
    const unknown = new Set<string>();
    const out: SourceRecord[] = [];
    const sample = (index: number, path: string, message: string): void => {
      report.count++;
      if (report.samples.length < MAX_SAMPLES) report.samples.push({ route: p.label, index, path, message });
    };
    const add = (list: readonly unknown[]): void => {
      for (let k = 0; k < list.length; k++) {
        const value = list[k];
        const i = out.length;
        let rejected: Path[] | undefined;
        // zod only for a record the compiled check does not pass: it alone says what is wrong.
        // A passing record has had its drift collected by the same pass.
        const passed = check(value, drift ? unknown : null);
        const result = passed ? undefined : model.safeParse(value);
        if (result && !result.success) {
          const flat: FlatIssue[] = [];
          flattenIssues(result.error.issues, value, [], flat);
          for (const f of flat) {
            sample(i, f.path.join('.'), f.message);
            if (!f.keep) (rejected ??= []).push(f.path);
          }
        }
        if (drift && !passed) collectDrift(drift, value, '', unknown);
        if (otherRealm(p, value)) sample(i, p.def.recordRealm!, OTHER_REALM);
        out.push({ value, realm: p.realm, rejected });
      }
    };
    const done = (): SourceRecord[] => {
      if (unknown.size > 0) report.drift = { route: p.label, unknownFields: [...unknown].sort() };
      this.reports.set(p.label, report);
      return out;
    };
    return { add, done };
  }

  /** Validation and drift of the bodies read, in the order of `labels`. */
  report(labels: readonly string[]): LoadReport {
    const validation = { issues: 0, samples: [] as ValidationSample[] };
    const drift: LoadReport['drift'] = [];
    const bodyFailures: LoadReport['bodyFailures'] = [];
    for (const label of labels) {
      const failure = this.bodyFailures.get(label);
      if (failure !== undefined) bodyFailures.push({ route: label, detail: failure });
      const r = this.reports.get(label);
      if (!r) continue;
      validation.issues += r.count;
      for (const s of r.samples) if (validation.samples.length < MAX_SAMPLES) validation.samples.push(s);
      if (r.drift) drift.push(r.drift);
    }
    return { validation, drift, bodyFailures };
  }
}

/**
 * The collection's route groups, each read (parsed, validated) when first
 * asked for, in any order; `report` gives the validation and drift as if
 * every route had been read in catalog order.
 */
export class CollectionReader {
  private readonly loader: Loader;
  private readonly realms: string[];
  private readonly noRealms: RouteBody | undefined;
  private readonly groups = new Map<string, RouteGroup>();
  private readonly released = new Set<string>();
  private readonly consume: boolean;

  /** With `consume` (the memory policy's consumeBodies), each body is deleted from the collection once read. */
  constructor(collection: RawCollection, consume: boolean, options: BuildOptions = {}) {
    this.consume = consume;
    this.loader = new Loader(collection, consume, options);
    this.realms = [...new Set(collection.manifest.realms.ids)];
    const realmsLabel = planRoute(REALMS_ROUTE).label;
    const realmsEntry = collection.manifest.routes.find((r) => r.route === realmsLabel);
    // Without the realm list no per-realm route was planned: their data is missing, not empty.
    this.noRealms =
      this.realms.length === 0 && collection.manifest.realms.source === realmsLabel && realmsEntry?.error !== undefined
        ? unreadBody(realmsLabel, undefined, `the realms are unknown: ${realmsLabel} failed: ${realmsEntry.error}`)
        : undefined;
  }

  /** The planned bodies of a catalog route (one per realm for a per-realm route; none without the realm list). */
  private plans(def: RouteDef): PlannedRoute[] {
    if (!def.perRealm) return [planRoute(def)];
    return this.noRealms ? [] : this.realms.map((r) => planRoute(def, r));
  }

  /** The group of a catalog route id, read on first use. After `release`, its records may not be read. */
  group(id: string): RouteGroup {
    return memo(this.groups, id, () => {
      const def = routeById(id);
      const bodies = def.perRealm && this.noRealms ? [this.noRealms] : this.plans(def).map((p) => this.loader.body(p));
      const records: SourceRecord[] = [];
      const missing: Array<Extract<RouteBody, { ok: false }>> = [];
      for (const b of bodies) {
        if (b.ok) for (const r of b.records) records.push(r);
        else missing.push(b);
      }
      return { def, bodies, records, missing };
    });
  }

  /** Bytes of a route's bodies as collected (every realm), read or not. */
  bytes(id: string): number {
    let sum = 0;
    for (const p of this.plans(routeById(id))) sum += this.loader.manifest.get(p.label)?.bytes ?? 0;
    return sum;
  }

  /** Drops a group's records (what it says about missing bodies stays). */
  release(id: string): void {
    const g = this.groups.get(id);
    if (!g || this.released.has(id)) return;
    this.released.add(id);
    const bodies = g.bodies.map((b): RouteBody =>
      b.ok ? { label: b.label, realm: b.realm, ok: true, records: [] } : b,
    );
    this.groups.set(id, {
      def: g.def,
      bodies,
      missing: g.missing,
      get records(): never {
        throw new Error(`internal: the records of route ${id} were read after their release`);
      },
    });
  }

  /**
   * Reads every route not read yet (no export reads
   * GET /api/vms/{realm}/active, but its validation and drift are reported
   * too; consumed, it is released at once), then reports in catalog order.
   */
  report(): LoadReport {
    const labels: string[] = [];
    for (const def of ROUTES) {
      if (!this.groups.has(def.id)) {
        this.group(def.id);
        if (this.consume) this.release(def.id);
      }
      labels.push(...this.plans(def).map((p) => p.label));
    }
    return this.loader.report(labels);
  }
}
