/**
 * FAST PATH: the compiled record checker. Equivalent to
 * `model.safeParse(value).success` (plus collectDrift for the unknown field
 * names) wherever it answers true; `false` means "ask zod", and anything the
 * compiler does not model (a refinement, a transform, a schema type the route
 * models do not use) compiles to `false`. It reads zod's private `_zod.def`
 * and generates code with `new Function`, so zod is pinned to an exact version
 * in package.json while this file exists. Differential test:
 * test/unit/bench-fast-check.test.ts (a mutation test against zod's
 * safeParse and collectDrift). What it earns: bench/RESULTS.md.
 *
 * Semantics mirrored from zod 4 for JSON input: `z.number()` is a finite
 * number and `.int()` a safe integer; optional accepts `undefined` (absent);
 * objects strip unknown keys (an open object keeps them, unchecked); a record accepts a plain object (an own
 * `__proto__` key is left to zod); a union accepts what any option accepts.
 */
import type { z } from 'zod';
import { collectDrift, driftTree } from '../schema.js';

/**
 * True when the value passes the model; then the unknown field names (drift)
 * have also been added to `unknown` (when given). False: ask zod, and walk
 * the drift with collectDrift.
 */
export type FastCheck = (value: unknown, unknown: Set<string> | null) => boolean;

interface Def {
  readonly type: string;
  readonly checks?: ReadonlyArray<{ _zod: { def: { check?: string; format?: string } } }>;
  readonly [k: string]: unknown;
}

function defOf(s: unknown): Def {
  return (s as { _zod: { def: Def } })._zod.def;
}

class Compiler {
  readonly constants: unknown[] = [];
  private vars = 0;

  constant(value: unknown): string {
    this.constants.push(value);
    return `c${this.constants.length - 1}`;
  }

  fresh(): string {
    return `v${this.vars++}`;
  }

  /**
   * Statements that `return false` unless the value in variable `v` passes
   * `schema`. `prefix` is the drift path of the value (as collectDrift writes
   * it), or null where drift is not collected by the compiled code.
   */
  emit(schema: unknown, v: string, out: string[], prefix: string | null): void {
    // Not modelled here: always ask zod.
    if (!this.emitModelled(schema, v, out, prefix)) out.push('return false;');
  }

  /** Emits the statements and answers true, or answers false (emitting nothing) where the schema is not modelled. */
  private emitModelled(schema: unknown, v: string, out: string[], prefix: string | null): boolean {
    const def = defOf(schema);
    const checks = def.checks ?? [];
    // `.int()` is the one check modelled, on numbers only.
    if (def.type === 'number')
      return checks.every((c) => isSafeInt(c._zod.def)) && this.emitNumber(v, out, checks.length > 0);
    if (checks.length > 0) return false;
    switch (def.type) {
      case 'string':
      case 'boolean':
        out.push(`if (typeof ${v} !== '${def.type}') return false;`);
        return true;
      case 'enum':
        return this.emitEnum(def, v, out);
      case 'unknown':
      case 'any':
        return true;
      case 'optional':
      case 'nullable':
        return this.emitWrapped(def, v, out, prefix);
      case 'array':
        return this.emitArray(def, v, out, prefix);
      case 'record':
        return this.emitRecord(def, v, out, prefix);
      case 'object':
        return this.emitObject(def, v, out, prefix);
      case 'union':
        return this.emitUnion(def, schema, v, out, prefix);
      default:
        return false;
    }
  }

  private emitNumber(v: string, out: string[], int: boolean): boolean {
    out.push(`if (typeof ${v} !== 'number' || !Number.isFinite(${v})) return false;`);
    if (int) out.push(`if (!Number.isSafeInteger(${v})) return false;`);
    return true;
  }

  private emitEnum(def: Def, v: string, out: string[]): boolean {
    const values = Object.values(def.entries as Record<string, unknown>);
    if (!values.every((x) => typeof x === 'string')) return false;
    out.push(`if (!${this.constant(new Set(values))}.has(${v})) return false;`);
    return true;
  }

  /** `.optional()` and `.nullable()`: the inner schema's statements, skipped for `undefined` or `null`. */
  private emitWrapped(def: Def, v: string, out: string[], prefix: string | null): boolean {
    const inner: string[] = [];
    this.emit(def.innerType, v, inner, prefix);
    out.push(`if (${v} !== ${def.type === 'optional' ? 'undefined' : 'null'}) {`, ...inner, '}');
    return true;
  }

  private emitArray(def: Def, v: string, out: string[], prefix: string | null): boolean {
    const i = this.fresh();
    const el = this.fresh();
    const inner: string[] = [];
    this.emit(def.element, el, inner, prefix);
    out.push(`if (!Array.isArray(${v})) return false;`);
    if (inner.length > 0)
      out.push(`for (let ${i} = 0; ${i} < ${v}.length; ${i}++) {`, `const ${el} = ${v}[${i}];`, ...inner, '}');
    return true;
  }

  private emitRecord(def: Def, v: string, out: string[], prefix: string | null): boolean {
    const key = defOf(def.keyType);
    if (key.type !== 'string' || (key.checks ?? []).length > 0) return false;
    const k = this.fresh();
    const el = this.fresh();
    const inner: string[] = [];
    this.emit(def.valueType, el, inner, prefix === null ? null : `${prefix}*.`);
    out.push(
      `if (typeof ${v} !== 'object' || ${v} === null || Array.isArray(${v}) || Object.hasOwn(${v}, '__proto__')) return false;`,
    );
    if (inner.length > 0) out.push(`for (const ${k} in ${v}) {`, `const ${el} = ${v}[${k}];`, ...inner, '}');
    return true;
  }

  private emitObject(def: Def, v: string, out: string[], prefix: string | null): boolean {
    // A catchall of unknown (an open object) accepts any other key, and such keys are not drift.
    const open = def.catchall !== undefined && defOf(def.catchall).type === 'unknown';
    if (def.catchall !== undefined && !open) return false;
    // One pass over the record's own keys rather than a lookup per declared field: records
    // from JSON.parse with optional fields have many hidden classes, and a named load on them
    // is megamorphic (slow); for-in reads the enum cache. Unknown keys are the drift.
    const k = this.fresh();
    const x = this.fresh();
    const seen = this.fresh();
    let required = 0;
    out.push(`if (typeof ${v} !== 'object' || ${v} === null || Array.isArray(${v})) return false;`);
    out.push(`let ${seen} = 0;`, `for (const ${k} in ${v}) {`, `const ${x} = ${v}[${k}];`, `switch (${k}) {`);
    for (const [name, field] of Object.entries(def.shape as Record<string, unknown>)) {
      const optional = defOf(field).type === 'optional';
      const inner: string[] = [];
      this.emit(field, x, inner, prefix === null ? null : `${prefix}${name}.`);
      if (!optional) required++;
      out.push(`case ${JSON.stringify(name)}: {`, ...inner, ...(optional ? [] : [`${seen}++;`]), 'break;', '}');
    }
    out.push(
      prefix === null || open
        ? 'default:'
        : `default: if (unknown !== null) unknown.add(${JSON.stringify(prefix)} + ${k});`,
      '}',
      '}',
    );
    // Every required field present (an own key holds no undefined in JSON).
    out.push(`if (${seen} !== ${required}) return false;`);
    return true;
  }

  private emitUnion(def: Def, schema: unknown, v: string, out: string[], prefix: string | null): boolean {
    if (def.inclusive === false) return false;
    const options = (def.options as unknown[]).map((o) => this.constant(compileFastCheck(o)));
    out.push(`if (!(${options.map((o) => `${o}(${v}, null)`).join(' || ')})) return false;`);
    // Drift over a union is what no option declares: the interpreted walk knows how.
    const tree = driftTree(schema as z.ZodType);
    if (prefix !== null && tree) {
      out.push(
        `if (unknown !== null) ${this.constant(collectDrift)}(${this.constant(tree)}, ${v}, ${JSON.stringify(prefix)}, unknown);`,
      );
    }
    return true;
  }
}

function isSafeInt(check: { check?: string; format?: string }): boolean {
  return check.check === 'number_format' && check.format === 'safeint';
}

/** The compiled check of one model (see the module comment). */
export function compileFastCheck(model: z.ZodType | unknown): FastCheck {
  const c = new Compiler();
  const body: string[] = [];
  c.emit(model, 'input', body, '');
  const names = c.constants.map((_, i) => `c${i}`);
  const source = `return function fastCheck(input, unknown) {\n${body.join('\n')}\nreturn true;\n};`;
  const factory = new Function(...names, source) as (...args: unknown[]) => FastCheck;
  return factory(...c.constants);
}
