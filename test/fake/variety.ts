/**
 * What makes a real site's responses harder to read than the generator's
 * plain ones (issue: a realistic dataset measured up to 2× slower per MB):
 * names and descriptions in many scripts, text full of characters JSON must
 * escape, optional fields absent at random, and nested settings objects. A
 * pass over a generated dataset, deterministic for its seed; it changes only
 * what the models allow (no validation issue, no drift), so the exports of a
 * site with variety are as complete as without.
 */
import type { Rng } from './prng.js';
import type { Dataset } from './types.js';

/** Text as users type it: accents, other scripts, emoji (outside the BMP: surrogate pairs in JavaScript). */
const WORDS = [
  'Génomique',
  'Бioинформатика',
  '生物情報学',
  'بيانات',
  'Ωmega',
  'façade',
  'naïve',
  'Zürich',
  'São Paulo',
  'Łódź',
  '데이터',
  '🧬',
  '📊',
  'ß-Test',
  'Ærø',
];

/** What JSON must escape: quotes, backslashes (Windows paths), tabs, newlines, control characters. */
const AWKWARD = [
  '"quoted"',
  'C:\\data\\raw\\',
  'tab\tseparated',
  'line one\nline two',
  'bell\u0007',
  'nul-less \u001f unit',
  '</script>',
  "it's",
];

function phrase(rng: Rng, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(rng.chance(0.3) ? rng.pick(AWKWARD) : rng.pick(WORDS));
  return out.join(' ');
}

/** A settings object as front ends leave them: nested, with lists and mixed values. */
function settings(rng: Rng): Record<string, unknown> {
  return {
    ui: {
      theme: rng.pick(['dark', 'light', 'système']),
      columns: rng.sample(['name', 'size', 'owner', 'état', 'créé'], rng.int(1, 4)),
      density: rng.int(1, 3),
    },
    labels: Object.fromEntries(
      rng.sample(['projet', 'cost-center', 'owner', 'data-class'], rng.int(0, 3)).map((k) => [k, phrase(rng, 2)]),
    ),
    limits: { maxSnapshots: rng.int(0, 20), retention: { days: rng.int(1, 365), keepLast: rng.chance(0.5) } },
    ...(rng.chance(0.3) ? { note: phrase(rng, 4) } : {}),
  };
}

/** Drops each of `keys` that the record has, with probability p (only fields the models mark optional). */
function dropSome(rng: Rng, rec: object, keys: readonly string[], p: number): void {
  const r = rec as Record<string, unknown>;
  for (const k of keys) if (k in r && rng.chance(p)) delete r[k];
}

export function addVariety(d: Dataset, rng: Rng): void {
  for (const u of d.users) {
    if (rng.chance(0.4)) u.comment = phrase(rng, rng.int(3, 12));
    if (rng.chance(0.3)) u.department = phrase(rng, 2);
    if (rng.chance(0.2)) u.position = phrase(rng, 1);
    dropSome(rng, u, ['contactEmail', 'lastLogin', 'passChanged', 'tosAccepted', 'lastEscrow', 'neverEscrow'], 0.3);
  }
  for (const t of d.teams) {
    t.desc = phrase(rng, rng.int(0, 10));
    if (rng.chance(0.7)) t.settings = settings(rng);
  }
  for (const p of d.projects) {
    p.desc = rng.chance(0.6) ? `# ${phrase(rng, 2)}\n\n${phrase(rng, rng.int(5, 20))}` : p.desc;
    if (rng.chance(0.7)) p.settings = settings(rng);
  }
  for (const drive of d.drives) {
    if (rng.chance(0.3)) drive.name = `${drive.name} ${phrase(rng, 2)}`;
    if (rng.chance(0.6)) drive.settings = settings(rng);
    dropSome(rng, drive, ['noBackup', 'changed', 'poolID', 'diskType', 'cache', 'io', 'stateChange', 'writable'], 0.3);
  }
  for (const realm of d.perRealm.values()) {
    for (const c of realm.configs) {
      if (rng.chance(0.5)) c.name = `${c.name} ${phrase(rng, 2)}`;
      if (rng.chance(0.5)) c.description = phrase(rng, rng.int(2, 12));
      if (rng.chance(0.5)) c.settings = settings(rng);
    }
  }
}
