/**
 * The names a person reads beside a finding's exact keys (its `display`,
 * docs/findings.md), looked up in the snapshot's own exports. A name the
 * snapshot cannot give is said as such with the id: a user the users export
 * does not list, or lists with no name and no e-mail, is a "deleted user <id>".
 */
import type { ExportRecord } from '../exports/types.js';
import { keyText, type FindingAbout, type RuleInput } from './define.js';

/** What the names are read from: each export's key and name columns. */
export const DISPLAY_READS: readonly RuleInput[] = [
  { export: 'users', columns: ['id', 'firstName', 'lastName', 'email'] },
  { export: 'projects', columns: ['id', 'name'] },
  { export: 'teams', columns: ['id', 'name'] },
  { export: 'security_requirements', columns: ['id', 'name'] },
  { export: 'security_levels', columns: ['id', 'name'] },
  { export: 'active_vms', columns: ['realmID', 'id', 'name'] },
];

/** `display` of `_findings.json`: each member present when the finding is about one. */
export interface FindingDisplay {
  readonly user?: string;
  readonly email?: string;
  readonly project?: string;
  readonly team?: string;
  readonly requirement?: string;
  readonly level?: string;
  readonly vms?: string;
}

const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

/** Names by id, made once per export from the records the evaluation loaded. */
export class DisplayNames {
  private readonly maps = new Map<string, Map<string, ExportRecord>>();

  constructor(private readonly records: (exportName: string) => readonly ExportRecord[] | undefined) {}

  private find(exportName: string, id: string): ExportRecord | undefined {
    let map = this.maps.get(exportName);
    if (!map) {
      map = new Map();
      for (const r of this.records(exportName) ?? []) {
        const key = exportName === 'active_vms' ? `${keyText(r.realmID)}\u0000${keyText(r.id)}` : keyText(r.id);
        if (!map.has(key)) map.set(key, r);
      }
      this.maps.set(exportName, map);
    }
    return map.get(id);
  }

  private named(exportName: string, kind: string, id: string): string {
    const name = text(this.find(exportName, id)?.name);
    if (name !== '') return name;
    return this.records(exportName) === undefined ? id : `${id} (no ${kind} of that id listed)`;
  }

  private vm(realm: string, id: string): string {
    const name = text(this.find('active_vms', `${realm}\u0000${id}`)?.name);
    return name !== '' ? name : `VM ${realm}/${id}`;
  }

  private user(id: string): { user: string; email?: string } {
    const u = this.find('users', id);
    const full = `${text(u?.firstName)} ${text(u?.lastName)}`.trim();
    const email = text(u?.email);
    if (full === '' && email === '') return { user: this.records('users') === undefined ? id : `deleted user ${id}` };
    return email !== '' ? { user: full !== '' ? full : email, email } : { user: full };
  }

  of(about: FindingAbout | undefined): FindingDisplay {
    // Members in FindingDisplay's order, the order `_findings.json` writes them in.
    const d: { -readonly [K in keyof FindingDisplay]: FindingDisplay[K] } = {};
    if (!about) return d;
    if (about.user !== undefined) {
      const { user, email } = this.user(about.user);
      d.user = user;
      if (email !== undefined) d.email = email;
    }
    if (about.project !== undefined) d.project = this.named('projects', 'project', about.project);
    if (about.team !== undefined) d.team = this.named('teams', 'team', about.team);
    if (about.requirement !== undefined)
      d.requirement = this.named('security_requirements', 'requirement', about.requirement);
    if (about.level !== undefined) d.level = this.named('security_levels', 'level', about.level);
    if (about.vms !== undefined && about.vms.length > 0)
      d.vms = about.vms.map(([realm, id]) => this.vm(realm, id)).join(', ');
    return d;
  }
}
