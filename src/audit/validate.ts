import type { z } from 'zod';

/** A record that does not have its documented shape: where, never the value (CONTRACT section 5). */
export interface ValidationIssue {
  route: string;
  /** Array index, or the key of a map entry. */
  index: number | string;
  path: string;
  message: string;
}

/** Validates every element of an array, or every value of a map, with `model`. Unknown fields are tolerated. */
export function validateItems<T>(route: string, model: z.ZodType<T>, body: unknown) {
  const entries: Array<[number | string, unknown]> = Array.isArray(body)
    ? body.map((v, i): [number, unknown] => [i, v])
    : Object.entries(body as Record<string, unknown>);
  const valid: Array<{ index: number | string; value: T }> = [];
  const issues: ValidationIssue[] = [];
  for (const [index, value] of entries) {
    const r = model.safeParse(value);
    if (r.success) valid.push({ index, value: r.data });
    else
      for (const i of r.error.issues)
        issues.push({ route, index, path: i.path.map(String).join('.'), message: i.message });
  }
  return { valid, issues };
}
