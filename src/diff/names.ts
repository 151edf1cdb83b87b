/**
 * The names a person reads for the user and team ids of a diff's text:
 * from the users and teams exports of the snapshots compared (the newer
 * first), where they have them. A raw collection, or a snapshot without
 * those exports, gives none: its ids are shown as they are.
 */
import { openSnapshotOrCollection } from '../snapshot/dir.js';

/** Id → `First Last` (else the e-mail) for users, id → name for teams; a name two ids share with the id after it. */
export async function readableNames(dirs: readonly string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (const dir of dirs) {
    const snapshot = await openSnapshotOrCollection(dir, '').catch(() => undefined);
    if (snapshot === undefined) continue;
    for (const exportName of ['users', 'teams'] as const) {
      const entry = snapshot.entry(exportName);
      if (entry === undefined || !entry.available) continue;
      const records = await snapshot.records(entry, ['id', 'firstName', 'lastName', 'email', 'name']);
      for (const r of records) {
        const id = r.id;
        if (typeof id !== 'string' || names.has(id)) continue;
        const person = [r.firstName, r.lastName].filter((v) => typeof v === 'string' && v !== '').join(' ');
        const name = exportName === 'teams' ? r.name : person !== '' ? person : r.email;
        if (typeof name === 'string' && name !== '') names.set(id, name);
      }
    }
  }
  // Two ids of one name would read as one person: each is told apart by its id.
  const seen = new Map<string, number>();
  for (const name of names.values()) seen.set(name, (seen.get(name) ?? 0) + 1);
  for (const [id, name] of names) if (seen.get(name)! > 1) names.set(id, `${name} (${id})`);
  return names;
}
