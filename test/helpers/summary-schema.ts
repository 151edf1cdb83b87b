import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import { REPO_ROOT } from './run-cli.js';

let ajv: Ajv2020 | undefined;

/** `$defs.<name>` of the committed docs/summary-schema.json, as a JSON Schema validator (not the zod schema it is made from). */
export function publishedValidator(name: string): ValidateFunction {
  if (ajv === undefined) {
    ajv = new Ajv2020({ allErrors: true, strict: false });
    ajv.addSchema(
      JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'summary-schema.json'), 'utf8')) as object,
      'summary',
    );
  }
  const validate = ajv.getSchema(`summary#/$defs/${name}`);
  if (!validate) throw new Error(`docs/summary-schema.json has no $defs.${name}`);
  return validate;
}

/** Expects `value` to be of `$defs.<name>` of docs/summary-schema.json. */
export function expectPublishedShape(name: string, value: unknown): void {
  const validate = publishedValidator(name);
  expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
}
