/**
 * Builds RawCollection objects in memory for the export tests: every planned
 * route present (200 with an empty list unless given records), 3.14.1 routes
 * skipped with 404 on a '3.13.8' collection, and small record factories that
 * fill a valid record around the fields a test cares about.
 */
import { createHash } from 'node:crypto';
import { REALMS_ROUTE, planRoute, planRoutes, routeById } from '../../src/api/catalog.js';
import type * as m from '../../src/api/models.js';
import type { RouteRecord } from '../../src/api/route-record.js';
import type { RawCollection } from '../../src/collect/types.js';

export const SKIP_3141 = 'route added in backend 3.14.1; not served here';

export interface BuilderOptions {
  /** Default '3.14.1'. '3.13.8': every 3.14.1 route answered 404 and is skipped. */
  release?: '3.14.1' | '3.13.8';
  /** Default ['libvirt']. */
  realms?: string[];
  /** Default '2026-11-21'. */
  date?: string;
}

export class CollectionBuilder {
  private readonly entries = new Map<string, RouteRecord>();
  private readonly bodies = new Map<string, Buffer>();
  private readonly order: string[] = [];
  readonly realms: string[];
  readonly release: '3.14.1' | '3.13.8';
  private readonly date: string;

  constructor(opts: BuilderOptions = {}) {
    this.release = opts.release ?? '3.14.1';
    this.realms = opts.realms ?? ['libvirt'];
    this.date = opts.date ?? '2026-11-21';
    for (const p of [planRoute(REALMS_ROUTE), ...planRoutes(this.realms)]) {
      this.order.push(p.label);
      if (this.release === '3.13.8' && p.def.since !== null) {
        this.entries.set(p.label, {
          route: p.label,
          tokenType: p.def.tokenType,
          status: 404,
          file: null,
          skipped: true,
          reason: SKIP_3141,
        });
      } else if (p.def === REALMS_ROUTE) {
        const realms = Object.fromEntries(
          this.realms.map((id) => [id, { id, name: id.toUpperCase(), driver: 'libvirt' }]),
        );
        this.setBody(p.label, Buffer.from(JSON.stringify({ defaultRealm: this.realms[0] ?? '', realms })));
      } else {
        this.setBody(p.label, Buffer.from('[]'));
      }
    }
  }

  private label(routeId: string, realm?: string): string {
    const def = routeById(routeId);
    return planRoute(def, def.perRealm ? (realm ?? this.realms[0]) : undefined).label;
  }

  private setBody(label: string, body: Buffer): void {
    const def = planRouteByLabel(label, this.realms);
    this.bodies.set(label, body);
    this.entries.set(label, {
      route: label,
      tokenType: def.def.tokenType,
      status: 200,
      file: def.file,
      bytes: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
      attempts: 1,
      durationMs: 1,
    });
  }

  /** The route answers these records (JSON, as a backend would send them). */
  with(routeId: string, records: readonly unknown[], realm?: string): this {
    return this.raw(routeId, JSON.stringify(records), realm);
  }

  /** The route answers these exact bytes. */
  raw(routeId: string, body: string, realm?: string): this {
    this.setBody(this.label(routeId, realm), Buffer.from(body));
    return this;
  }

  skip(routeId: string, reason: string, realm?: string, status: number | null = 404): this {
    const label = this.label(routeId, realm);
    this.bodies.delete(label);
    this.entries.set(label, {
      route: label,
      tokenType: routeById(routeId).tokenType,
      status,
      file: null,
      skipped: true,
      reason,
    });
    return this;
  }

  fail(routeId: string, error: string, realm?: string, status: number | null = 500): this {
    const label = this.label(routeId, realm);
    this.bodies.delete(label);
    this.entries.set(label, {
      route: label,
      tokenType: routeById(routeId).tokenType,
      status,
      file: null,
      attempts: 4,
      error,
    });
    return this;
  }

  build(): RawCollection {
    return {
      manifest: {
        kind: 'collection',
        tool: { name: 'svc-snapshot', version: '1.0.0' },
        baseUrl: 'https://platform.example.org',
        time: `${this.date}T02:00:00.000Z`,
        date: this.date,
        authMode: 'token',
        realms: { source: this.release === '3.14.1' ? 'GET /api/realms' : '--realms', ids: [...this.realms] },
        routes: this.order.map((l) => this.entries.get(l)!),
      },
      bodies: new Map(this.bodies),
    };
  }
}

function planRouteByLabel(label: string, realms: readonly string[]) {
  const all = [planRoute(REALMS_ROUTE), ...planRoutes(realms)];
  const p = all.find((x) => x.label === label);
  if (!p) throw new Error(`no planned route ${label}`);
  return p;
}

// ---------------------------------------------------------------- record factories

export const T = 1_700_000_000_000;

export function user(o: Partial<m.UserInfo> & { id: string }): m.UserInfo {
  return {
    firstName: 'Ada',
    lastName: 'Abe',
    email: `${o.id}@example.org`,
    joined: T,
    role: 'User',
    permissions: [],
    state: 'Active',
    ...o,
  };
}

export function member(
  o: Partial<m.TeamMemberInfo> & { id: string },
  release: '3.14.1' | '3.13.8' = '3.14.1',
): m.TeamMemberInfo {
  const base = { firstName: 'Bo', lastName: 'Berg' };
  return release === '3.14.1' ? { ...base, joined: T, modified: T + 1, perm: 1, ...o } : { ...base, ...o };
}

export function team(o: Partial<m.TeamInfo> & { id: string }): m.TeamInfo {
  return { name: `Team ${o.id}`, desc: '', created: T, modified: T + 1, quotas: {}, settings: {}, members: [], ...o };
}

export function usage(id: string, o: Partial<m.UsageInfo> = {}): m.UsageInfo {
  return {
    id,
    exists: true,
    files: { cnt: 1, size: 10 },
    vms: { cnt: 2, mem: 20, cores: 4 },
    drives: { cnt: 3, size: 30, used: 15 },
    ...o,
  };
}

export function drive(o: Partial<m.DriveInfo> & { id: string }, release: '3.14.1' | '3.13.8' = '3.14.1'): m.DriveInfo {
  const base: m.DriveInfo = {
    id: o.id,
    name: `drive ${o.id}`,
    owner: 'u1',
    capacity: 1024,
    format: 'ext4',
    readers: [],
    created: T,
    realmID: 'libvirt',
    state: 'Ready',
    hasSnapshot: false,
  };
  return release === '3.14.1' ? { ...base, sizeOnDisk: 512, keys: 1, hasMessage: false, ...o } : { ...base, ...o };
}

export function project(o: Partial<m.ProjectInfo> & { id: string }): m.ProjectInfo {
  return { name: `Project ${o.id}`, desc: '', settings: {}, created: T, modified: T + 1, ...o };
}

export function image(o: Partial<m.ImageInfo> & { id: string }): m.ImageInfo {
  return {
    name: `image ${o.id}`,
    info: { pool: 'default', volume: `${o.id}.qcow2`, deviceBusType: 'virtio' },
    secureBoot: false,
    ...o,
  };
}

export function config(o: Partial<m.VMConfigInfo> & { id: string; brick: string }): m.VMConfigInfo {
  return {
    state: 'Stopped',
    owners: ['u1'],
    name: `config ${o.id}`,
    description: '',
    rwDrives: [],
    roDrives: [],
    driveSlots: {},
    macOptions: [],
    services: {},
    ...o,
  };
}

export function brick(o: Partial<m.BrickInfoListed> & { id: string }): m.BrickInfoListed {
  return {
    name: `brick ${o.id}`,
    description: '',
    vcores: 4,
    maxMemBytes: 8 * 1024 ** 3,
    realmID: 'libvirt',
    creatorID: 'u1',
    created: T,
    noQuota: false,
    debug: false,
    ...o,
  };
}
