/**
 * FAST PATH: the compiled record checker. Equivalent to
 * `model.safeParse(value).success` (plus collectDrift for the unknown field
 * names) wherever it answers true; it reads zod's private `_zod.def` and
 * generates code with `new Function`, so zod is pinned to an exact version in
 * package.json while this file exists. Held by the mutation test
 * test/unit/bench-fast-check.test.ts (every record of the fake site, each
 * value replaced by odd ones, against zod) and by
 * test/unit/fast-paths.test.ts. Switch: `recordCheck` (src/fast-paths.ts);
 * differential test: test/unit/fast-paths.test.ts. What it earns:
 * docs/architecture.md (measured by bench/fast-paths.ts).
 *
 * A compiled yes/no check of a record against its route's zod model, for the
 * common case: `true` only where `model.safeParse(value)` would succeed, so a
 * valid record (nearly every record) never reaches zod, which would copy it
 * while validating. `false` means "ask zod": the build then runs `safeParse`
 * for the issues, exactly as before. Anything the compiler does not model
 * (a refinement, a transform, a schema type the route models do not use)
 * compiles to `false`, i.e. always zod.
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
    const def = defOf(schema);
    const checks = def.checks ?? [];
    const onlyChecks = (allowed: (c: { check?: string; format?: string }) => boolean) => checks.every((c) => allowed(c._zod.def));
    switch (def.type) {
      case 'string':
        if (!onlyChecks(() => false)) break;
        out.push(`if (typeof ${v} !== 'string') return false;`);
        return;
      case 'boolean':
        if (!onlyChecks(() => false)) break;
        out.push(`if (typeof ${v} !== 'boolean') return false;`);
        return;
      case 'number': {
        if (!onlyChecks((c) => c.check === 'number_format' && c.format === 'safeint')) break;
        out.push(`if (typeof ${v} !== 'number' || !Number.isFinite(${v})) return false;`);
        if (checks.length > 0) out.push(`if (!Number.isSafeInteger(${v})) return false;`);
        return;
      }
      case 'enum': {
        if (!onlyChecks(() => false)) break;
        const values = Object.values(def.entries as Record<string, unknown>);
        if (!values.every((x) => typeof x === 'string')) break;
        out.push(`if (!${this.constant(new Set(values))}.has(${v})) return false;`);
        return;
      }
      case 'unknown':
      case 'any':
        if (!onlyChecks(() => false)) break;
        return;
      case 'optional':
      case 'nullable': {
        if (!onlyChecks(() => false)) break;
        const inner: string[] = [];
        this.emit(def.innerType, v, inner, prefix);
        out.push(`if (${v} !== ${def.type === 'optional' ? 'undefined' : 'null'}) {`, ...inner, '}');
        return;
      }
      case 'array': {
        if (!onlyChecks(() => false)) break;
        const i = this.fresh();
        const el = this.fresh();
        const inner: string[] = [];
        this.emit(def.element, el, inner, prefix);
        out.push(`if (!Array.isArray(${v})) return false;`);
        if (inner.length > 0) out.push(`for (let ${i} = 0; ${i} < ${v}.length; ${i}++) {`, `const ${el} = ${v}[${i}];`, ...inner, '}');
        return;
      }
      case 'record': {
        const key = defOf(def.keyType);
        if (!onlyChecks(() => false) || key.type !== 'string' || (key.checks ?? []).length > 0) break;
        const k = this.fresh();
        const el = this.fresh();
        const inner: string[] = [];
        this.emit(def.valueType, el, inner, prefix === null ? null : `${prefix}*.`);
        out.push(`if (typeof ${v} !== 'object' || ${v} === null || Array.isArray(${v}) || Object.hasOwn(${v}, '__proto__')) return false;`);
        if (inner.length > 0) out.push(`for (const ${k} in ${v}) {`, `const ${el} = ${v}[${k}];`, ...inner, '}');
        return;
      }
      case 'object': {
        // A catchall of unknown (an open object) accepts any other key, and such keys are not drift.
        const open = def.catchall !== undefined && defOf(def.catchall).type === 'unknown';
        if (!onlyChecks(() => false) || (def.catchall !== undefined && !open)) break;
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
        out.push(prefix === null || open ? 'default:' : `default: if (unknown !== null) unknown.add(${JSON.stringify(prefix)} + ${k});`, '}', '}');
        // Every required field present (an own key holds no undefined in JSON).
        out.push(`if (${seen} !== ${required}) return false;`);
        return;
      }
      case 'union': {
        if (!onlyChecks(() => false) || def.inclusive === false) break;
        const options = (def.options as unknown[]).map((o) => this.constant(compileFastCheck(o)));
        out.push(`if (!(${options.map((o) => `${o}(${v}, null)`).join(' || ')})) return false;`);
        // Drift over a union is what no option declares: the interpreted walk knows how.
        const tree = driftTree(schema as z.ZodType);
        if (prefix !== null && tree) out.push(`if (unknown !== null) ${this.constant(collectDrift)}(${this.constant(tree)}, ${v}, ${JSON.stringify(prefix)}, unknown);`);
        return;
      }
    }
    // Not modelled here: always ask zod.
    out.push('return false;');
  }
}

/** The compiled check of one model (see the module comment). */
export function compileFastCheck(model: z.ZodType | unknown): FastCheck {
  const c = new Compiler();
  const body: string[] = [];
  c.emit(model, 'input', body, '');
  const names = c.constants.map((_, i) => `c${i}`);
  const factory = new Function(...names, `return function fastCheck(input, unknown) {\n${body.join('\n')}\nreturn true;\n};`) as (...args: unknown[]) => FastCheck;
  return factory(...c.constants);
}
