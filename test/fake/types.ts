/**
 * Record shapes of the fake backend, written from spec/management-api.md
 * section 2 rather than imported from src/api/models.ts, so that the fake is
 * an independent check of the models: test/unit/fake-backend.test.ts parses
 * every generated record with the catalog's zod model.
 */

type Ts = number;
export type FakeRelease = '3.13.8' | '3.14.1';
type RealmDriver = 'libvirt' | 'altvirt';

export interface RealmSpec {
  id: string;
  driver: RealmDriver;
}

interface RealmInfo {
  id: string;
  name: string;
  driver: string;
}

export interface RealmsResponse {
  defaultRealm: string;
  realms: Record<string, RealmInfo>;
}

export interface UserInfo {
  id: string;
  firstName: string;
  lastName: string;
  email: string;
  contactEmail?: string;
  joined: Ts;
  lastLogin?: Ts;
  role: string;
  permissions: string[];
  state: string;
  stateReason?: string;
  deactivationType?: 'Admin' | 'FailedPassword' | 'Timeout' | 'XSS' | 'Registration';
  department?: string;
  position?: string;
  comment?: string;
  neverEscrow?: boolean;
  passChanged?: Ts;
  expiration?: Ts;
  tosAccepted?: Ts;
  deactivatedUntil?: Ts;
  lastEscrow?: Ts;
}

export interface QuotasTyped {
  cores?: number;
  memory?: number;
  storage?: Record<string, number>;
  devices?: Record<string, number>;
}

export interface TeamMemberInfo {
  id: string;
  firstName: string;
  lastName: string;
  email?: string;
  lastLogin?: Ts;
  /** since 3.14.1 */
  joined?: Ts;
  /** since 3.14.1 */
  modified?: Ts;
  /** since 3.14.1 */
  perm?: number;
}

export interface TeamInfo {
  id: string;
  name: string;
  desc: string;
  created: Ts;
  modified: Ts;
  quotas: Record<string, number>;
  teamQuotas?: QuotasTyped;
  perUserQuotas?: QuotasTyped;
  settings: Record<string, unknown>;
  startDate?: Ts;
  endDate?: Ts;
  members: TeamMemberInfo[];
}

export interface UsageInfo {
  id: string;
  exists: boolean;
  files?: { cnt: number; size: number };
  vms?: { cnt: number; mem: number; cores: number };
  drives?: { cnt: number; size: number; used: number };
}

export interface DriveInfo {
  id: string;
  name: string;
  owner: string;
  capacity: number;
  format: string;
  noBackup?: boolean;
  settings?: Record<string, unknown>;
  writer?: string;
  readers: string[];
  created: Ts;
  changed?: Ts;
  attached?: Ts;
  writable?: boolean;
  poolID?: string;
  team?: string;
  project?: string;
  realmID: string;
  diskType?: string;
  cache?: string;
  io?: string;
  state: 'Ready' | 'ReadOnly' | 'ReadWrite' | 'Transferring' | 'Initializing';
  stateChange?: Ts;
  hasSnapshot: boolean;
  /** since 3.14.1 */
  sizeOnDisk?: number;
  /** since 3.14.1 (required there) */
  keys?: number;
  /** since 3.14.1 */
  snapshotPool?: string;
  /** since 3.14.1 (required there) */
  hasMessage?: boolean;
}

export interface ProjectInfo {
  id: string;
  name: string;
  desc: string;
  securityLevel?: string;
  parent?: string;
  settings: Record<string, unknown>;
  created: Ts;
  modified: Ts;
}

export interface ProjectMembershipInfo {
  id: string;
  projectID: string;
  userID: string;
  added: Ts;
  modified: Ts;
  canManage: boolean;
  duplicate: boolean;
  expires?: Ts;
}

export interface SecurityRequirementInfo {
  id: string;
  name: string;
  desc: string;
  type: string;
  created: Ts;
  modified: Ts;
  data: { type: string; expires: boolean; defaultExpiration: number; maxExpiration: number };
}

export interface SecurityLevelInfo {
  id: string;
  name: string;
  desc: string;
  created: Ts;
  modified: Ts;
  requirements: string[];
}

export interface UserCertificationInfo {
  id: string;
  requirementID: string;
  userID: string;
  expires?: Ts;
  created: Ts;
  modified: Ts;
  modifiedBy: string;
}

export interface ManagedObjectInfo {
  managerID: string;
  objectType: 'Team' | 'Project';
  objectID: string;
}

export interface LibvirtExtraInfo {
  pool: string;
  volume: string;
  deviceBusType: 'scsi' | 'virtio';
}

export interface AltvirtExtraInfo {
  sourceType: 'NDFS' | 'VolumeGroup' | 'VMDisk';
  timezone?: string;
}

export interface ImageInfo {
  id: string;
  name?: string;
  description?: string;
  size?: number;
  imageType?: 'windows' | 'linux';
  info: LibvirtExtraInfo | AltvirtExtraInfo;
  created?: Ts;
  modified?: Ts;
  version?: number;
  parent?: string;
  limit?: number;
  settings?: Record<string, unknown>;
  /** since 3.14.1 */
  secureBoot?: boolean;
}

export interface VMConfigInfo {
  id: string;
  vmID?: string;
  state: 'Stopped' | 'Starting' | 'Running' | 'Suspended' | 'Stopping';
  owners: string[];
  name: string;
  description: string;
  brick: string;
  team?: string;
  project?: string;
  rwDrives: string[];
  roDrives: string[];
  mac?: string;
  host?: string;
  controllerID?: string;
  driveSlots: Record<string, number>;
  macOptions: string[];
  settings?: Record<string, unknown>;
  lastPing?: Ts;
  lastLaunched?: Ts;
  services: Record<string, unknown>;
  slurmAccount?: string;
}

interface HostAndPort {
  host: string;
  port: number;
}

export interface VirtualMachine {
  id: string;
  name: string;
  owner: string;
  brick: string;
  active: boolean;
  pubkey?: { modulus: string; publicExponent: string };
  drives: Record<string, string>;
  ip: string;
  team?: string;
  project?: string;
  protocolVer: number;
  authedUsers: string[];
  managers: string[];
  realmID: string;
  resources?: { vms: number; vcpus: number; memory: number; devices: Record<string, number> };
  ownerType?: 'User' | 'VM';
  vpn?: HostAndPort;
  ssh?: HostAndPort;
  services: Record<string, unknown>;
  lastPing?: Ts;
  start?: Ts;
  shutDown?: Ts;
  config?: string;
  vmcInfo: Array<{ timestamp: number; info: Record<string, unknown> }>;
  systemInfo?: Record<string, unknown>;
}

interface LibvirtBrickConfig {
  image: { pool: string; volume: string };
  video?: 'vnc' | 'spice';
  pty?: boolean;
  clockOffset?: 'utc' | 'localtime';
  nic?: string;
  devices?: Record<string, number>;
  extraXML?: string;
  headfullGPU?: string;
  deviceBusType?: string;
}

interface AltvirtBrickConfig {
  imageID: string;
  timezone?: string;
  devices?: Record<string, number>;
  osType?: 'linux' | 'windows';
  debug?: boolean;
}

/** BrickInfo as GET /api/vms/bricks lists it: no `externalServers`, no `vmType`. */
export interface BrickInfoListed {
  id: string;
  name: string;
  description: string;
  setup?: string;
  vcores: number;
  maxMemBytes: number;
  realmID: string;
  libvirt?: LibvirtBrickConfig;
  altvirt?: AltvirtBrickConfig;
  whitelist?: { teamIDs: string[]; userIDs: string[] };
  creatorID: string;
  format?: 'linux' | 'windows';
  imageID?: string;
  created: Ts;
  modified?: Ts;
  noQuota: boolean;
  params?: string;
  settings?: string;
  /** since 3.14.1 (required there) */
  debug?: boolean;
}

export interface ExternalServerInfo {
  id: string;
  server: string;
  ports: string;
  protocol: 'tcp' | 'udp';
  owner: string;
  created: Ts;
  active: boolean;
  group?: string;
  deactivation?: Ts;
}

export interface RealmData {
  images: ImageInfo[];
  activeVms: VirtualMachine[];
  configs: VMConfigInfo[];
}

export interface Dataset {
  release: FakeRelease;
  seed: number | string;
  realmSpecs: RealmSpec[];
  realms: RealmsResponse;
  users: UserInfo[];
  teams: TeamInfo[];
  teamUsage: UsageInfo[];
  drives: DriveInfo[];
  projects: ProjectInfo[];
  projectMemberships: ProjectMembershipInfo[];
  projectUsage: UsageInfo[];
  securityRequirements: SecurityRequirementInfo[];
  securityLevels: SecurityLevelInfo[];
  userCertifications: UserCertificationInfo[];
  managedObjects: ManagedObjectInfo[];
  bricks: BrickInfoListed[];
  externalServers: ExternalServerInfo[];
  /** Keyed by realm id; a Map so hostile ids such as `__proto__` are plain keys. */
  perRealm: Map<string, RealmData>;
}
