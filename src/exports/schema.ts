/**
 * Reading the zod models as data: which fields a model declares, what type a
 * field has, which fields were added in 3.14.1. The export catalog is checked
 * against these at load time, the docs print them, and the build uses them
 * for nullFields and drift, so none of it is written twice.
 */
import { z } from 'zod';
import * as models from '../api/models.js';
import { isRecord } from '../body/decode.js';

type Schema = z.ZodType;

/** The schema under `.optional()` / `.nullable()`. */
export function unwrap(s: Schema): Schema {
  let cur = s;
  while (cur instanceof z.ZodOptional || cur instanceof z.ZodNullable) cur = cur.unwrap() as Schema;
  return cur;
}

/** The objects a schema stands for: itself, or each option of a union of objects. */
function objectsOf(s: Schema): z.ZodObject[] {
  const u = unwrap(s);
  if (u instanceof z.ZodObject) return [u];
  if (u instanceof z.ZodUnion) return (u.options as Schema[]).flatMap(objectsOf);
  return [];
}

/** Declared fields of an object (or union of objects), in declaration order; undefined when not object-shaped. */
export function fieldsOf(s: Schema): Map<string, Schema> | undefined {
  const objects = objectsOf(s);
  if (objects.length === 0) return undefined;
  const out = new Map<string, Schema>();
  for (const o of objects)
    for (const [k, v] of Object.entries(o.shape as Record<string, Schema>)) if (!out.has(k)) out.set(k, v);
  return out;
}

/**
 * An object that keeps keys it does not declare (zod's looseObject): the
 * free-form settings of an image, of which the API documents one key. Its
 * other keys are data, not drift.
 */
export function isOpenObject(s: Schema): boolean {
  const u = unwrap(s);
  if (!(u instanceof z.ZodObject)) return false;
  // `def` is zod's public view of how a schema was made (zod 4: `.def`; `_zod` is its internals).
  const catchall = u.def.catchall;
  return catchall instanceof z.ZodType && unwrap(catchall) instanceof z.ZodUnknown;
}

export type SchemaKind = 'object' | 'array' | 'record' | 'scalar' | 'unknown';

export function kindOf(s: Schema): SchemaKind {
  const u = unwrap(s);
  if (fieldsOf(u)) return 'object';
  if (u instanceof z.ZodArray) return 'array';
  if (u instanceof z.ZodRecord) return 'record';
  if (u instanceof z.ZodString || u instanceof z.ZodNumber || u instanceof z.ZodBoolean || u instanceof z.ZodEnum)
    return 'scalar';
  return 'unknown';
}

export function elementOf(s: Schema): Schema | undefined {
  const u = unwrap(s);
  return u instanceof z.ZodArray ? (u.element as Schema) : undefined;
}

export function recordValueOf(s: Schema): Schema | undefined {
  const u = unwrap(s);
  return u instanceof z.ZodRecord ? (u.valueType as Schema) : undefined;
}

/** A short, human type for the docs: `string`, `integer`, `one of a, b`, `string[]`. */
export function describeType(s: Schema): string {
  const u = unwrap(s);
  if (u instanceof z.ZodString) return 'string';
  if (u instanceof z.ZodNumber) return u.isInt ? 'integer' : 'number';
  if (u instanceof z.ZodBoolean) return 'boolean';
  if (u instanceof z.ZodEnum) return `one of ${u.options.map(String).join(', ')}`;
  if (u instanceof z.ZodArray) return `${describeType(u.element as Schema)}[]`;
  if (u instanceof z.ZodRecord) return `map of ${describeType(u.valueType as Schema)}`;
  if (fieldsOf(u)) return 'object';
  return 'any';
}

// ---------------------------------------------------------------- paths

export interface ResolvedPath {
  /** The schema of the value at the path. */
  readonly schema: Schema;
  /** The last step was added in backend 3.14.1 (SINCE_3_14_1 of the model that declares it). */
  readonly since3141: boolean;
}

const MODEL_NAMES: ReadonlyMap<Schema, string> = (() => {
  const names = new Map<Schema, string>();
  for (const [name, value] of Object.entries(models)) {
    if (value instanceof z.ZodType && !names.has(value)) names.set(value, name);
  }
  return names;
})();

/**
 * Follows a dotted path through object fields; `each` names an array (or map)
 * field that may be entered (the path then continues in its element). Throws
 * with a message naming the step that does not exist.
 */
export function resolvePath(root: Schema, path: string, each?: string): ResolvedPath {
  const segs = path.split('.');
  let cur: Schema = root;
  let since3141 = false;
  let walked = '';
  for (const seg of segs) {
    const fields = fieldsOf(cur);
    const next = fields?.get(seg);
    if (!fields || !next) throw new Error(`no field "${seg}"${walked ? ` under "${walked}"` : ''}`);
    // Added in 3.14.1 by the model (of a union, any one) that declares it.
    since3141 = objectsOf(cur).some(
      (o) => seg in o.shape && models.SINCE_3_14_1[MODEL_NAMES.get(o) ?? '']?.includes(seg),
    );
    walked = walked ? `${walked}.${seg}` : seg;
    cur = next;
    if (walked === each) {
      // An array's element, or (for a map of objects) a map's value.
      const el = elementOf(cur) ?? recordValueOf(cur);
      if (!el) throw new Error(`"${walked}" is not an array or a map`);
      cur = el;
    }
  }
  return { schema: cur, since3141 };
}

// ---------------------------------------------------------------- drift

/** What the model knows about a value: its fields, its array element, or its map values. */
export type DriftNode =
  | { readonly kind: 'object'; readonly fields: ReadonlyMap<string, DriftNode | null>; readonly open?: true }
  | { readonly kind: 'array'; readonly element: DriftNode }
  | { readonly kind: 'map'; readonly value: DriftNode };

/** Compiles a model once into the tree the drift walk follows; null where nothing is declared below. */
export function driftTree(s: Schema): DriftNode | null {
  const fields = fieldsOf(s);
  if (fields) {
    const out = new Map<string, DriftNode | null>();
    for (const [k, v] of fields) out.set(k, driftTree(v));
    return isOpenObject(s) ? { kind: 'object', fields: out, open: true } : { kind: 'object', fields: out };
  }
  const el = elementOf(s);
  if (el) {
    const element = driftTree(el);
    return element ? { kind: 'array', element } : null;
  }
  const val = recordValueOf(s);
  if (val) {
    const value = driftTree(val);
    return value ? { kind: 'map', value } : null;
  }
  return null;
}

/**
 * Adds to `out` the dotted paths of fields in `value` that `node` does not
 * declare. Array elements share their array's path; map values appear as `*`.
 */
export function collectDrift(node: DriftNode, value: unknown, prefix: string, out: Set<string>): void {
  switch (node.kind) {
    case 'object':
      if (!isRecord(value)) return;
      for (const k of Object.keys(value)) {
        if (!node.fields.has(k)) {
          if (!node.open) out.add(prefix + k);
          continue;
        }
        const child = node.fields.get(k);
        if (child) collectDrift(child, value[k], `${prefix}${k}.`, out);
      }
      return;
    case 'array':
      if (Array.isArray(value)) for (const el of value) collectDrift(node.element, el, prefix, out);
      return;
    case 'map':
      if (isRecord(value)) for (const v of Object.values(value)) collectDrift(node.value, v, `${prefix}*.`, out);
      return;
  }
}
