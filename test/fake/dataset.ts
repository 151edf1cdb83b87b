import { Rng } from './prng.js';
import type {
  AltvirtExtraInfo,
  BrickInfoListed,
  Dataset,
  DriveInfo,
  ExternalServerInfo,
  FakeRelease,
  ImageInfo,
  LibvirtExtraInfo,
  ManagedObjectInfo,
  ProjectInfo,
  ProjectMembershipInfo,
  QuotasTyped,
  RealmData,
  RealmSpec,
  RealmsResponse,
  SecurityLevelInfo,
  SecurityRequirementInfo,
  TeamInfo,
  TeamMemberInfo,
  UsageInfo,
  UserCertificationInfo,
  UserInfo,
  VirtualMachine,
  VMConfigInfo,
} from './types.js';

export type * from './types.js';
import { addVariety } from './variety.js';

/** How many records of each list to generate. Per-realm lists are per realm. */
export interface DatasetSizes {
  users: number;
  teams: number;
  membersPerTeam: number;
  drives: number;
  projects: number;
  projectMemberships: number;
  securityRequirements: number;
  securityLevels: number;
  certifications: number;
  managedObjects: number;
  bricks: number;
  externalServers: number;
  imagesPerRealm: number;
  configsPerRealm: number;
  activeVmsPerRealm: number;
}

/** The default: a handful of each, enough to exercise every branch. */
const SMALL_SITE: Readonly<DatasetSizes> = Object.freeze({
  users: 12,
  teams: 3,
  membersPerTeam: 4,
  drives: 12,
  projects: 5,
  projectMemberships: 12,
  securityRequirements: 3,
  securityLevels: 2,
  certifications: 8,
  managedObjects: 4,
  bricks: 4,
  externalServers: 3,
  imagesPerRealm: 4,
  configsPerRealm: 5,
  activeVmsPerRealm: 3,
});

/** The benchmark site (with LARGE_SITE_REALMS: 10 realms). */
export const LARGE_SITE: Readonly<DatasetSizes> = Object.freeze({
  users: 50_000,
  teams: 2_000,
  membersPerTeam: 25,
  drives: 100_000,
  projects: 5_000,
  projectMemberships: 60_000,
  securityRequirements: 20,
  securityLevels: 10,
  certifications: 20_000,
  managedObjects: 1_000,
  bricks: 2_000,
  externalServers: 500,
  imagesPerRealm: 1_000,
  configsPerRealm: 5_000,
  activeVmsPerRealm: 2_000,
});

const DEFAULT_REALMS: readonly RealmSpec[] = Object.freeze([{ id: 'libvirt', driver: 'libvirt' as const }]);

/** `count` realms alternating the two drivers: `libvirt`, `altvirt`, `realm-03`, … */
export function siteRealms(count: number): RealmSpec[] {
  return Array.from({ length: count }, (_, i): RealmSpec => {
    const driver = i % 2 === 0 ? 'libvirt' : 'altvirt';
    return { id: i < 2 ? driver : `realm-${String(i + 1).padStart(2, '0')}`, driver };
  });
}

/** Ten realms for LARGE_SITE, both drivers. */
export const LARGE_SITE_REALMS: readonly RealmSpec[] = Object.freeze(siteRealms(10));

export interface DatasetOptions {
  /** Default '3.14.1'. '3.13.8' omits every field added in 3.14.1. */
  release?: FakeRelease;
  /** Default 1. */
  seed?: number | string;
  /** Default one libvirt realm `libvirt`. */
  realms?: readonly RealmSpec[];
  /** Overrides of SMALL_SITE. */
  sizes?: Partial<DatasetSizes>;
  /**
   * Text and shapes as a real site has them (variety.ts): non-ASCII and
   * escaped characters in names and descriptions, optional fields absent at
   * random, nested settings. The benchmark's sites use it; default off, so
   * that the tests' data stays as the recordings were made from.
   */
  variety?: boolean;
}

// Fixed clock: every timestamp lies between START and FUTURE, "now" is NOW.
const START = Date.UTC(2023, 0, 1);
const NOW = Date.UTC(2026, 10, 1);
const FUTURE = Date.UTC(2028, 0, 1);
const DAY = 86_400_000;
const GIB = 1024 ** 3;

const FIRST = [
  'Ada',
  'Bo',
  'Chen',
  'Dara',
  'Eve',
  'Femi',
  'Gus',
  'Hana',
  'Ivo',
  'José',
  'Kai',
  'Lena',
  'Mia',
  'Noor',
  'Øyvind',
  'Priya',
  'Quinn',
  'Rosa',
  'Sami',
  'Zoë',
];
const LAST = [
  'Abe',
  'Berg',
  'Costa',
  'Diallo',
  'Eriksen',
  'Fischer',
  'García',
  'Huang',
  'Ito',
  'Jansen',
  'Kowalski',
  "O'Neill",
  'Müller',
  'Nakamura',
  'Okafor',
  'Petrov',
  'Rossi',
  'Singh',
  'Tanaka',
  'Weiß',
];
const ROLES = ['User', 'User', 'User', 'Admin', 'SubAdmin', 'SuperAdmin'];
const DEACTIVATION = ['Admin', 'FailedPassword', 'Timeout', 'XSS', 'Registration'] as const;
const DEPARTMENTS = ['Genomics', 'Imaging', 'Finance', 'IT', 'Epidemiology'];
const POSITIONS = ['Researcher', 'Engineer', 'Student', 'Lead'];
const DRIVE_STATES = ['Ready', 'Ready', 'Ready', 'ReadOnly', 'ReadWrite', 'Transferring', 'Initializing'] as const;
const CONFIG_STATES_IDLE = ['Stopped', 'Stopped', 'Stopped', 'Suspended'] as const;
const CONFIG_STATES_ACTIVE = ['Running', 'Running', 'Running', 'Starting', 'Stopping'] as const;
const VM_TYPES_NOTE = ['Secure', 'Service', 'Data', 'Worker'];

/** A copy without the keys whose value is undefined (so absent fields are really absent). */
function compact<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const k in o) {
    const v = o[k];
    if (v !== undefined) out[k] = v;
  }
  return out as T;
}

/** `make()` with probability p, else undefined (absent). */
function maybe<T>(rng: Rng, p: number, make: () => T): T | undefined {
  return rng.chance(p) ? make() : undefined;
}

function opaqueId(prefix: string, ...parts: number[]): string {
  return Buffer.from(`${prefix}:${parts.join(':')}`).toString('base64');
}

/** A multiplier coprime with n, so `(k * step) % n` visits every index once per n steps. */
function coprimeStep(n: number, primes: readonly number[] = [7919, 7927]): number {
  return primes.find((p) => n % p !== 0) ?? 1;
}

function resolveSizes(sizes: Partial<DatasetSizes> | undefined): DatasetSizes {
  const out: DatasetSizes = { ...SMALL_SITE, ...sizes };
  for (const [k, v] of Object.entries(out)) {
    if (!Number.isInteger(v) || v < 0)
      throw new Error(`dataset size ${k} must be a non-negative integer, got ${String(v)}`);
  }
  return out;
}

export function generateDataset(opts: DatasetOptions = {}): Dataset {
  const release = opts.release ?? '3.14.1';
  const seed = opts.seed ?? 1;
  const realmSpecs = [...(opts.realms ?? DEFAULT_REALMS)];
  if (realmSpecs.length === 0) throw new Error('generateDataset: at least one realm is needed');
  if (new Set(realmSpecs.map((r) => r.id)).size !== realmSpecs.length)
    throw new Error('generateDataset: duplicate realm id');
  const sizes = resolveSizes(opts.sizes);
  const v14 = release === '3.14.1';
  /** A 3.14.1 field: its value on 3.14.1, absent on 3.13.8. */
  const since14 = <T>(value: T): T | undefined => (v14 ? value : undefined);
  const rngFor = (stream: string) => new Rng(seed, stream);

  // ---- users -------------------------------------------------------------
  const users: UserInfo[] = [];
  {
    const rng = rngFor('users');
    for (let i = 0; i < sizes.users; i++) {
      const firstName = rng.pick(FIRST);
      const lastName = rng.pick(LAST);
      const joined = rng.ts(START, NOW - 30 * DAY);
      const state = rng.chance(0.85) ? 'Active' : rng.chance(0.5) ? 'Disabled' : 'Pending';
      const deactivationType =
        state === 'Active' ? undefined : state === 'Pending' ? 'Registration' : rng.pick(DEACTIVATION);
      const login = rng.ts(joined, NOW);
      users.push(
        compact<UserInfo>({
          id: rng.uuid(),
          firstName,
          lastName,
          email: `${firstName}.${lastName}.${i}@example.org`.toLowerCase().replace(/[^a-z0-9.@]/g, ''),
          contactEmail: maybe(rng, 0.2, () => `${lastName.toLowerCase().replace(/[^a-z]/g, '')}${i}@mail.example.net`),
          joined,
          lastLogin: maybe(rng, 0.8, () => login),
          role: rng.pick(ROLES),
          permissions: rng.sample(['1001', '1002', '2010', '2011', '3100', '4000'], rng.int(0, 3)),
          state,
          stateReason: deactivationType && rng.chance(0.7) ? `Deactivated (${deactivationType})` : undefined,
          deactivationType,
          department: maybe(rng, 0.6, () => rng.pick(DEPARTMENTS)),
          position: maybe(rng, 0.5, () => rng.pick(POSITIONS)),
          comment: maybe(rng, 0.1, () => `Note for "${firstName}":\nsee ticket #${rng.int(100, 999)}`),
          neverEscrow: maybe(rng, 0.3, () => rng.chance(0.2)),
          passChanged: maybe(rng, 0.7, () => rng.ts(joined, NOW)),
          expiration: maybe(rng, 0.2, () => rng.ts(NOW, FUTURE)),
          tosAccepted: maybe(rng, 0.9, () => joined + rng.int(0, DAY)),
          deactivatedUntil:
            deactivationType === 'Timeout' || deactivationType === 'FailedPassword'
              ? maybe(rng, 0.5, () => rng.ts(NOW, FUTURE))
              : undefined,
          lastEscrow: maybe(rng, 0.3, () => rng.ts(joined, NOW)),
        }),
      );
    }
  }
  const userIds = users.map((u) => u.id);
  const anyUser = (rng: Rng): string => (userIds.length ? rng.pick(userIds) : rng.uuid());

  // ---- security requirements and levels ------------------------------------
  const securityRequirements: SecurityRequirementInfo[] = [];
  {
    const rng = rngFor('security-requirements');
    for (let i = 0; i < sizes.securityRequirements; i++) {
      const created = rng.ts(START, NOW - 60 * DAY);
      // The first requirement never expires, so certifications without `expires` exist.
      const expires = i > 0 && rng.chance(0.8);
      securityRequirements.push({
        id: `sreq|${rng.uuid()}`,
        name: `Requirement ${i + 1}: ${rng.pick(['Data protection training', 'Export control', 'Clinical data course', 'NDA'])}`,
        desc: `Users must hold **certification ${i + 1}**.`,
        type: 'UserCert',
        created,
        modified: rng.ts(created, NOW),
        data: {
          type: 'UserCert',
          expires,
          defaultExpiration: expires ? 365 * DAY : 0,
          maxExpiration: expires ? 730 * DAY : 0,
        },
      });
    }
  }
  const requirementIds = securityRequirements.map((r) => r.id);
  const securityLevels: SecurityLevelInfo[] = [];
  {
    const rng = rngFor('security-levels');
    for (let i = 0; i < sizes.securityLevels; i++) {
      const created = rng.ts(START, NOW - 60 * DAY);
      securityLevels.push({
        id: `slvl|${rng.uuid()}`,
        name: `Level ${i + 1}`,
        desc: `Security level ${i + 1}`,
        created,
        modified: rng.ts(created, NOW),
        requirements: rng.sample(requirementIds, rng.int(i === 0 ? 0 : 1, Math.min(3, requirementIds.length))),
      });
    }
  }
  const levelIds = securityLevels.map((l) => l.id);

  // ---- teams ----------------------------------------------------------------
  const teams: TeamInfo[] = [];
  {
    const rng = rngFor('teams');
    const quotas = (): QuotasTyped =>
      compact<QuotasTyped>({
        cores: maybe(rng, 0.7, () => rng.int(4, 256)),
        memory: maybe(rng, 0.7, () => rng.int(8, 1024) * GIB),
        storage: rng.chance(0.5) ? { ssd: rng.int(1, 100) * 100 * GIB, hdd: rng.int(1, 50) * 1000 * GIB } : {},
        devices: rng.chance(0.3) ? { gpu: rng.int(1, 8) } : {},
      });
    for (let t = 0; t < sizes.teams; t++) {
      const created = rng.ts(START, NOW - 60 * DAY);
      const members: TeamMemberInfo[] = [];
      for (let j = 0; j < Math.min(sizes.membersPerTeam, users.length); j++) {
        // Consecutive users per team: members of one team are distinct.
        const user = users[(t * sizes.membersPerTeam + j) % users.length] as UserInfo;
        const joined = rng.ts(created, NOW);
        const perm = rng.pick([0, 0, 1, 2]);
        const hideEmail = rng.chance(0.1);
        members.push(
          compact<TeamMemberInfo>({
            id: user.id,
            firstName: user.firstName,
            lastName: user.lastName,
            email: hideEmail ? undefined : user.email,
            lastLogin: user.lastLogin,
            joined: since14(joined),
            modified: since14(rng.ts(joined, NOW)),
            perm: since14(perm),
          }),
        );
      }
      const hasDates = rng.chance(0.3);
      const startDate = rng.ts(created, NOW);
      teams.push(
        compact<TeamInfo>({
          id: `team|${rng.uuid()}`,
          name: `Team ${t + 1} ${rng.pick(DEPARTMENTS)}`,
          desc: rng.chance(0.8) ? `Research group ${t + 1}` : '',
          created,
          modified: rng.ts(created, NOW),
          quotas: rng.chance(0.6) ? { cores: rng.int(4, 128), memory: rng.int(8, 512) * GIB } : {},
          teamQuotas: maybe(rng, 0.6, quotas),
          perUserQuotas: maybe(rng, 0.3, quotas),
          settings: rng.chance(0.3) ? { color: `#${rng.hex(3)}` } : {},
          startDate: hasDates ? startDate : undefined,
          endDate: hasDates && rng.chance(0.7) ? rng.ts(NOW, FUTURE) : undefined,
          members,
        }),
      );
    }
  }
  const teamIds = teams.map((t) => t.id);
  // The last team owns nothing (its usage row has no groups), as on real sites.
  const owningTeams = teamIds.length > 1 ? teamIds.slice(0, -1) : teamIds;

  // ---- projects and memberships ---------------------------------------------
  const projects: ProjectInfo[] = [];
  {
    const rng = rngFor('projects');
    for (let p = 0; p < sizes.projects; p++) {
      const created = rng.ts(START, NOW - 30 * DAY);
      // Parents come earlier in the list, so there are no cycles.
      const parent = p > 0 && rng.chance(0.3) ? (projects[rng.int(0, p - 1)] as ProjectInfo).id : undefined;
      projects.push(
        compact<ProjectInfo>({
          id: `proj|${rng.uuid()}`,
          name: `Project ${p + 1}`,
          desc: rng.chance(0.5) ? `# Project ${p + 1}\n\nStudy of *things* & stuff.` : '',
          securityLevel: levelIds.length && rng.chance(0.35) ? rng.pick(levelIds) : undefined,
          parent,
          settings: rng.chance(0.2) ? { archived: false } : {},
          created,
          modified: rng.ts(created, NOW),
        }),
      );
    }
  }
  const projectIds = projects.map((p) => p.id);

  const projectMemberships: ProjectMembershipInfo[] = [];
  if (projects.length && users.length) {
    const rng = rngFor('project-memberships');
    const maxSlots = users.length; // slots beyond this would repeat a user within a project
    const step = coprimeStep(users.length, [104729, 104723]);
    for (let k = 0; k < sizes.projectMemberships; k++) {
      const p = k % projects.length;
      const slot = Math.floor(k / projects.length);
      if (slot >= maxSlots) break;
      // step is coprime with the user count: distinct slots give distinct users of one project.
      const u = (p * 7919 + slot * step) % users.length;
      const project = projects[p] as ProjectInfo;
      const added = rng.ts(project.created, NOW);
      projectMemberships.push(
        compact<ProjectMembershipInfo>({
          id: opaqueId('pm', p, u),
          projectID: project.id,
          userID: userIds[u] as string,
          added,
          modified: rng.ts(added, NOW),
          canManage: rng.chance(0.15),
          duplicate: project.parent !== undefined && rng.chance(0.3),
          expires: maybe(rng, 0.2, () => rng.ts(NOW, FUTURE)),
        }),
      );
    }
  }

  // ---- external servers -------------------------------------------------------
  const externalServers: ExternalServerInfo[] = [];
  {
    const rng = rngFor('external-servers');
    for (let i = 0; i < sizes.externalServers; i++) {
      const active = rng.chance(0.8);
      externalServers.push(
        compact<ExternalServerInfo>({
          id: rng.uuid(),
          server: rng.chance(0.5) ? `license${i + 1}.example.org` : `10.20.${rng.int(0, 255)}.${rng.int(1, 254)}`,
          ports: rng.chance(0.6) ? String(rng.int(1024, 65535)) : `${rng.int(1024, 30000)},${rng.int(30001, 65535)}`,
          protocol: rng.chance(0.8) ? 'tcp' : 'udp',
          owner: anyUser(rng),
          created: rng.ts(START, NOW),
          active,
          group: maybe(rng, 0.5, () => rng.pick(['matlab', 'ansys', 'comsol'])),
          deactivation: active ? maybe(rng, 0.2, () => rng.ts(NOW, FUTURE)) : undefined,
        }),
      );
    }
  }

  // ---- per realm: images, bricks, configs, active VMs --------------------------
  // Drive ids exist before the VMs that attach them; the drives themselves are
  // generated afterwards, with writer/readers taken from those attachments.
  const driveIds: string[] = [];
  {
    const rng = rngFor('drive-ids');
    for (let i = 0; i < sizes.drives; i++) driveIds.push(rng.uuid());
  }
  const driveRealm: Array<string | undefined> = new Array(sizes.drives);
  const driveWriter: Array<string | undefined> = new Array(sizes.drives);
  const driveReaders = new Map<number, string[]>();

  const perRealm = new Map<string, RealmData>();
  const bricks: BrickInfoListed[] = [];
  const bricksByRealm = new Map<string, BrickInfoListed[]>();
  const brickById = new Map<string, BrickInfoListed>();
  const activeVmsAll: VirtualMachine[] = [];

  // Bricks are dealt to the realms in turn.
  const brickCount = (realmIndex: number) =>
    Math.floor(sizes.bricks / realmSpecs.length) + (realmIndex < sizes.bricks % realmSpecs.length ? 1 : 0);

  realmSpecs.forEach((realm, realmIndex) => {
    const rng = rngFor(`realm:${realm.id}`);
    const images: ImageInfo[] = [];
    for (let i = 0; i < sizes.imagesPerRealm; i++) {
      const base = i === 0 || rng.chance(0.4) ? undefined : (images[rng.int(0, i - 1)] as ImageInfo);
      const created = rng.ts(START, NOW);
      const info: LibvirtExtraInfo | AltvirtExtraInfo =
        realm.driver === 'libvirt'
          ? {
              pool: rng.pick(['default', 'ssd-pool']),
              volume: `image-${i + 1}.qcow2`,
              deviceBusType: rng.chance(0.7) ? 'virtio' : 'scsi',
            }
          : compact<AltvirtExtraInfo>({
              sourceType: rng.pick(['NDFS', 'VolumeGroup', 'VMDisk'] as const),
              timezone: maybe(rng, 0.5, () => 'Europe/Berlin'),
            });
      const secureBoot = maybe(rng, 0.6, () => rng.chance(0.5));
      images.push(
        compact<ImageInfo>({
          id: rng.uuid(),
          name: maybe(
            rng,
            0.95,
            () => `${rng.pick(['Ubuntu 24.04', 'Windows Server 2022', 'Rocky 9', 'Debian 12'])} #${i + 1}`,
          ),
          description: maybe(rng, 0.6, () => 'Base image with analysis tools'),
          size: maybe(rng, 0.9, () => rng.int(10, 200) * GIB),
          imageType: maybe(rng, 0.9, () => (rng.chance(0.3) ? 'windows' : 'linux') as 'windows' | 'linux'),
          info,
          created: maybe(rng, 0.95, () => created),
          modified: maybe(rng, 0.5, () => rng.ts(created, NOW)),
          version: base ? rng.int(1, 9) : maybe(rng, 0.5, () => 0),
          parent: base?.id,
          limit: maybe(rng, 0.2, () => rng.int(1, 50)),
          settings: maybe(rng, 0.3, () => ({ driveFormats: rng.sample(['ext4', 'ntfs', 'btrfs', 'xfs', 'zfs'], 2) })),
          secureBoot: since14(secureBoot),
        }),
      );
    }

    const realmBricks: BrickInfoListed[] = [];
    for (let b = 0; b < brickCount(realmIndex); b++) {
      const image = images.length ? rng.pick(images) : undefined;
      const created = rng.ts(START, NOW);
      const windows = rng.chance(0.3);
      const debug = rng.chance(0.1);
      const brick = compact<BrickInfoListed>({
        id: rng.uuid(),
        name: `${rng.pick(VM_TYPES_NOTE)} ${rng.pick(['small', 'medium', 'large', 'gpu'])} ${bricks.length + 1}`,
        description: rng.chance(0.7) ? `Hardware setup **${bricks.length + 1}**` : '',
        setup: maybe(rng, 0.3, () => '1. Start the VM\n2. Open the browser'),
        vcores: rng.pick([1, 2, 4, 8, 16, 32]),
        maxMemBytes: rng.pick([2, 4, 8, 16, 64, 256]) * GIB,
        realmID: realm.id,
        libvirt:
          realm.driver === 'libvirt'
            ? compact({
                image: {
                  pool: image ? (image.info as LibvirtExtraInfo).pool : 'default',
                  volume: image ? (image.info as LibvirtExtraInfo).volume : 'missing.qcow2',
                },
                video: maybe(rng, 0.5, () => (rng.chance(0.5) ? 'vnc' : 'spice') as 'vnc' | 'spice'),
                pty: maybe(rng, 0.3, () => rng.chance(0.5)),
                clockOffset: maybe(rng, 0.4, () => (windows ? 'localtime' : 'utc') as 'utc' | 'localtime'),
                nic: maybe(rng, 0.3, () => rng.pick(['virtio', 'rtl8139'])),
                devices: maybe(rng, 0.2, () => ({ gpu: rng.int(1, 4) })),
                extraXML: maybe(rng, 0.05, () => '<memoryBacking><hugepages/></memoryBacking>'),
                headfullGPU: maybe(rng, 0.05, () => 'nvidia-a100'),
                deviceBusType: maybe(rng, 0.3, () => rng.pick(['virtio', 'scsi'])),
              })
            : undefined,
        altvirt:
          realm.driver === 'altvirt'
            ? compact({
                imageID: image ? image.id : rng.uuid(),
                timezone: maybe(rng, 0.4, () => 'UTC'),
                devices: maybe(rng, 0.2, () => ({ 'gpu-a40': rng.int(1, 2) })),
                osType: maybe(rng, 0.6, () => (windows ? 'windows' : 'linux') as 'linux' | 'windows'),
                debug: maybe(rng, 0.1, () => true),
              })
            : undefined,
        whitelist: maybe(rng, 0.3, () => ({ teamIDs: rng.sample(teamIds, 2), userIDs: rng.sample(userIds, 2) })),
        creatorID: anyUser(rng),
        format: maybe(rng, 0.8, () => (windows ? 'windows' : 'linux') as 'linux' | 'windows'),
        imageID: image && rng.chance(0.8) ? image.id : undefined,
        created,
        modified: maybe(rng, 0.5, () => rng.ts(created, NOW)),
        noQuota: rng.chance(0.1),
        params: maybe(rng, 0.1, () => '--cpu host'),
        settings: maybe(rng, 0.1, () => '{"icon":"gpu"}'),
        debug: since14(debug),
      });
      realmBricks.push(brick);
      bricks.push(brick);
      brickById.set(brick.id, brick);
    }
    bricksByRealm.set(realm.id, realmBricks);
    const brickPool = realmBricks.length ? realmBricks : bricks;

    // Active VM i is spawned from config i, so there are at most as many VMs as configs.
    const vmIds: string[] = [];
    const vmCount = Math.min(sizes.activeVmsPerRealm, sizes.configsPerRealm);
    for (let i = 0; i < vmCount; i++) vmIds.push(rng.uuid());

    const configs: VMConfigInfo[] = [];
    for (let c = 0; c < sizes.configsPerRealm; c++) {
      const running = c < vmIds.length;
      const launched = running || rng.chance(0.6);
      const lastLaunched = rng.ts(START, NOW);
      const rw: number[] = driveIds.length ? [rng.int(0, driveIds.length - 1)] : [];
      const roPick = rng.int(0, Math.max(0, driveIds.length - 1));
      const ro: number[] = driveIds.length && rng.chance(0.3) && !rw.includes(roPick) ? [roPick] : [];
      const vmID = running ? vmIds[c] : undefined;
      const state = running ? rng.pick(CONFIG_STATES_ACTIVE) : rng.pick(CONFIG_STATES_IDLE);
      for (const d of [...rw, ...ro]) driveRealm[d] ??= realm.id;
      if (vmID) {
        for (const d of rw) driveWriter[d] = vmID;
        for (const d of ro) {
          const list = driveReaders.get(d) ?? [];
          if (!list.includes(vmID)) list.push(vmID);
          driveReaders.set(d, list);
        }
      }
      const driveSlots: Record<string, number> = {};
      [...rw, ...ro].forEach((d, slot) => (driveSlots[driveIds[d] as string] = slot));
      const brick = brickPool.length ? rng.pick(brickPool).id : rng.uuid();
      configs.push(
        compact<VMConfigInfo>({
          id: rng.uuid(),
          vmID,
          state,
          owners: rng.sample(userIds, rng.int(1, 2)),
          name: `vm-config-${c + 1}`,
          description: rng.chance(0.5) ? 'Analysis workstation' : '',
          brick,
          team: maybe(rng, 0.6, () => (owningTeams.length ? rng.pick(owningTeams) : undefined)),
          project: maybe(rng, 0.4, () => (projectIds.length ? rng.pick(projectIds) : undefined)),
          rwDrives: rw.map((d) => driveIds[d] as string),
          roDrives: ro.map((d) => driveIds[d] as string),
          mac: maybe(rng, 0.5, () => `52:54:00:${rng.hex(1)}:${rng.hex(1)}:${rng.hex(1)}`),
          host: maybe(rng, 0.1, () => `host-${rng.int(1, 40)}`),
          controllerID: maybe(rng, 0.1, () => rng.uuid()),
          driveSlots,
          macOptions: rng.chance(0.2) ? ['static'] : [],
          settings: maybe(rng, 0.3, () => ({ autostart: rng.chance(0.5) })),
          // A VM that is still starting has not contacted the backend yet.
          lastPing:
            launched && state !== 'Starting' && (running || rng.chance(0.8)) ? rng.ts(lastLaunched, NOW) : undefined,
          lastLaunched: launched ? lastLaunched : undefined,
          services: rng.chance(0.3) ? { jupyter: { port: 8888 } } : {},
          slurmAccount: maybe(rng, 0.1, () => `acct${rng.int(1, 99)}`),
        }),
      );
    }

    const activeVms: VirtualMachine[] = [];
    for (let i = 0; i < vmIds.length; i++) {
      const config = configs[i] as VMConfigInfo;
      const owner = config.owners[0] as string;
      const drives: Record<string, string> = {};
      [...config.rwDrives, ...config.roDrives].forEach(
        (d, slot) => (drives[`vd${String.fromCharCode(97 + slot)}`] = d),
      );
      const authedUsers = rng.sample(userIds, rng.int(0, 3)).filter((u) => u !== owner);
      const brick = brickById.get(config.brick);
      const start = config.lastLaunched ?? rng.ts(START, NOW);
      const reported = rng.chance(0.8);
      activeVms.push(
        compact<VirtualMachine>({
          id: vmIds[i] as string,
          name: config.name,
          owner,
          brick: config.brick,
          active: config.state === 'Running',
          pubkey: maybe(rng, 0.7, () => ({ modulus: rng.hex(64), publicExponent: '10001' })),
          drives,
          ip: `10.${realmIndex % 256}.${rng.int(0, 255)}.${rng.int(1, 254)}`,
          team: config.team,
          project: config.project,
          protocolVer: rng.pick([2, 3]),
          authedUsers,
          managers: authedUsers.filter(() => rng.chance(0.3)),
          realmID: realm.id,
          resources: maybe(rng, 0.5, () => ({
            vms: 1,
            vcpus: brick?.vcores ?? 1,
            memory: brick?.maxMemBytes ?? GIB,
            devices: (rng.chance(0.2) ? { gpu: 1 } : {}) as Record<string, number>,
          })),
          ownerType: maybe(rng, 0.7, () => (rng.chance(0.9) ? 'User' : 'VM') as 'User' | 'VM'),
          vpn: reported ? { host: `vpn-${rng.int(1, 4)}.example.org`, port: rng.int(20000, 30000) } : undefined,
          ssh: reported && rng.chance(0.5) ? { host: `ssh.example.org`, port: rng.int(30001, 40000) } : undefined,
          services: config.services,
          lastPing: config.lastPing,
          start: rng.chance(0.9) ? start : undefined,
          shutDown: maybe(rng, 0.1, () => rng.ts(NOW, FUTURE)),
          // VMs spawned directly (not from a saved config) have none.
          config: rng.chance(0.95) ? config.id : undefined,
          vmcInfo: rng.chance(0.5)
            ? [{ timestamp: rng.ts(start, NOW), info: { cpu: Math.round(rng.next() * 100) / 100 } }]
            : [],
          systemInfo: maybe(rng, 0.4, () => ({ os: 'Ubuntu 24.04', kernel: '6.8.0' })),
        }),
      );
    }
    activeVmsAll.push(...activeVms);
    perRealm.set(realm.id, { images, activeVms, configs });
  });

  // ---- drives ------------------------------------------------------------------
  const drives: DriveInfo[] = [];
  {
    const rng = rngFor('drives');
    const realmIds = realmSpecs.map((r) => r.id);
    for (let i = 0; i < sizes.drives; i++) {
      const created = rng.ts(START, NOW);
      const capacity = rng.pick([10, 50, 100, 500, 1000, 4000]) * GIB;
      // Usage is measured independently of capacity: it may exceed it (snapshots).
      const sizeOnDisk = maybe(rng, 0.85, () => Math.floor(capacity * rng.next() * 1.3));
      const keys = rng.int(0, 3);
      const snapshotPool = maybe(rng, 0.2, () => 'snap-pool');
      const hasMessage = rng.chance(0.05);
      const writer = driveWriter[i];
      drives.push(
        compact<DriveInfo>({
          id: driveIds[i] as string,
          name: `drive-${i + 1}`,
          owner: anyUser(rng),
          capacity,
          format: rng.pick(['ext4', 'ext4', 'ntfs', 'xfs']),
          noBackup: maybe(rng, 0.3, () => true),
          settings: maybe(rng, 0.2, () => ({ label: `Data ${i + 1}` })),
          writer,
          readers: driveReaders.get(i) ?? [],
          created,
          changed: maybe(rng, 0.6, () => rng.ts(created, NOW)),
          attached: writer ? rng.ts(created, NOW) : maybe(rng, 0.3, () => rng.ts(created, NOW)),
          writable: maybe(rng, 0.7, () => rng.chance(0.8)),
          poolID: maybe(rng, 0.2, () => 'pool-ssd'),
          team: maybe(rng, 0.6, () => (owningTeams.length ? rng.pick(owningTeams) : undefined)),
          project: maybe(rng, 0.4, () => (projectIds.length ? rng.pick(projectIds) : undefined)),
          realmID: driveRealm[i] ?? rng.pick(realmIds),
          diskType: maybe(rng, 0.7, () => rng.pick(['qcow2', 'raw'])),
          cache: maybe(rng, 0.3, () => rng.pick(['none', 'writeback'])),
          io: maybe(rng, 0.3, () => rng.pick(['native', 'threads'])),
          state: writer ? 'ReadWrite' : rng.pick(DRIVE_STATES),
          stateChange: maybe(rng, 0.5, () => rng.ts(created, NOW)),
          hasSnapshot: rng.chance(0.2),
          sizeOnDisk: since14(sizeOnDisk),
          keys: since14(keys),
          snapshotPool: since14(snapshotPool),
          hasMessage: since14(hasMessage),
        }),
      );
    }
  }

  // ---- usage: sums of the generated resources, plus untagged and deleted rows ----
  const usageRows = (
    stream: string,
    ids: readonly string[],
    noneId: string,
    key: 'team' | 'project',
    prefix: string,
  ): UsageInfo[] => {
    const rng = rngFor(stream);
    interface Acc {
      files: { cnt: number; size: number };
      vms: { cnt: number; mem: number; cores: number };
      drives: { cnt: number; size: number; used: number };
    }
    const acc = new Map<string, Acc>();
    const get = (id: string): Acc => {
      let a = acc.get(id);
      if (!a)
        acc.set(
          id,
          (a = { files: { cnt: 0, size: 0 }, vms: { cnt: 0, mem: 0, cores: 0 }, drives: { cnt: 0, size: 0, used: 0 } }),
        );
      return a;
    };
    for (const d of drives) {
      const a = get(d[key] ?? noneId);
      a.drives.cnt++;
      a.drives.size += d.capacity;
      a.drives.used += d.sizeOnDisk ?? 0;
    }
    for (const vm of activeVmsAll) {
      const a = get(vm[key] ?? noneId);
      const brick = brickById.get(vm.brick);
      a.vms.cnt++;
      a.vms.mem += brick?.maxMemBytes ?? 0;
      a.vms.cores += brick?.vcores ?? 0;
    }
    // A group with no resources is usually absent, sometimes present with zeros.
    const group = <G extends { cnt: number }>(g: G | undefined, zero: G): G | undefined =>
      g && g.cnt ? g : rng.chance(0.3) ? zero : undefined;
    const row = (id: string, exists: boolean, a: Acc | undefined): UsageInfo => {
      const files = rng.chance(0.7) ? { cnt: rng.int(1, 5000), size: rng.int(1, 10_000) * 1024 * 1024 } : undefined;
      return compact<UsageInfo>({
        id,
        exists,
        files: group(files, { cnt: 0, size: 0 }),
        vms: group(a?.vms, { cnt: 0, mem: 0, cores: 0 }),
        drives: group(a?.drives, { cnt: 0, size: 0, used: 0 }),
      });
    };
    const rows: UsageInfo[] = ids.map((id) => row(id, true, acc.get(id)));
    const deletedId = `${prefix}|${rng.uuid()}`;
    rows.push(
      compact<UsageInfo>({
        id: deletedId,
        exists: false,
        vms: rng.chance(0.5) ? { cnt: 1, mem: 4 * GIB, cores: 2 } : undefined,
        drives: { cnt: rng.int(1, 3), size: 100 * GIB, used: rng.int(1, 90) * GIB },
      }),
    );
    rows.push(row(noneId, true, acc.get(noneId)));
    return rows;
  };
  const teamUsage = usageRows('teams-usage', teamIds, 'no-team', 'team', 'team');
  const projectUsage = usageRows('projects-usage', projectIds, 'no-project', 'project', 'proj');

  // ---- certifications and managed objects ------------------------------------------
  const userCertifications: UserCertificationInfo[] = [];
  if (requirementIds.length && users.length) {
    const rng = rngFor('users-certifications');
    const max = requirementIds.length * users.length;
    const step = coprimeStep(users.length);
    for (let k = 0; k < Math.min(sizes.certifications, max); k++) {
      // Walk users first, then requirements: (user, requirement) pairs are distinct.
      const u = (k * step) % users.length;
      const r = (Math.floor(k / users.length) + u) % requirementIds.length;
      const created = rng.ts(START, NOW);
      const req = securityRequirements[r] as SecurityRequirementInfo;
      userCertifications.push(
        compact<UserCertificationInfo>({
          id: opaqueId('uc', u, r),
          requirementID: req.id,
          userID: userIds[u] as string,
          expires: req.data.expires ? created + req.data.defaultExpiration : undefined,
          created,
          modified: rng.ts(created, NOW),
          modifiedBy: anyUser(rng),
        }),
      );
    }
  }
  const managedObjects: ManagedObjectInfo[] = [];
  {
    const rng = rngFor('users-managed-objects');
    const admins = users.filter((u) => u.role === 'SubAdmin').map((u) => u.id);
    const managers = admins.length ? admins : userIds;
    // A manager manages an object once: draw until the list is full or the draws run out.
    const seen = new Set<string>();
    for (
      let draw = 0;
      managedObjects.length < sizes.managedObjects && managers.length && draw < sizes.managedObjects * 20;
      draw++
    ) {
      const team = rng.chance(0.5);
      const pool = team ? teamIds : projectIds;
      if (!pool.length) continue;
      const mo: ManagedObjectInfo = {
        managerID: rng.pick(managers),
        objectType: team ? 'Team' : 'Project',
        objectID: rng.pick(pool),
      };
      const key = `${mo.managerID} ${mo.objectType} ${mo.objectID}`;
      if (seen.has(key)) continue;
      seen.add(key);
      managedObjects.push(mo);
    }
  }

  const realms: RealmsResponse = {
    defaultRealm: (realmSpecs[0] as RealmSpec).id,
    realms: Object.fromEntries(
      realmSpecs.map((r) => [
        r.id,
        { id: r.id, name: `${r.driver === 'libvirt' ? 'Libvirt' : 'Altvirt'} realm ${r.id}`, driver: r.driver },
      ]),
    ),
  };

  const dataset: Dataset = {
    release,
    seed,
    realmSpecs,
    realms,
    users,
    teams,
    teamUsage,
    drives,
    projects,
    projectMemberships,
    projectUsage,
    securityRequirements,
    securityLevels,
    userCertifications,
    managedObjects,
    bricks,
    externalServers,
    perRealm,
  };
  if (opts.variety) addVariety(dataset, new Rng(seed, 'variety'));
  return dataset;
}
