/**
 * zod models of the management REST API resources (spec section 2), the
 * single source of the TypeScript types. Plain `z.object`s: unknown keys are
 * stripped on parse, and the drift is found by comparing keys with `shape`.
 * Fields added in backend 3.14.1 are optional even where the spec marks them
 * required, because a 3.13.8 backend does not send them (SINCE_3_14_1).
 */
import { z } from 'zod';

/**
 * Every schema made by `ts()`: the spec's `ts` type, as data. The spreadsheet
 * forms write these columns as date-times (src/sheets/columns.ts), so which
 * columns are timestamps is declared here once, never guessed from names.
 */
export const TIMESTAMPS = z.registry<{ unit: 'epoch-ms' }>();

/** Epoch milliseconds, an integer. */
const ts = () => z.number().int().register(TIMESTAMPS, { unit: 'epoch-ms' });
/** A free-form JSON object. */
const jsonObject = () => z.record(z.string(), z.unknown());

// ---------------------------------------------------------------- tokens

export const TokenType = z.enum(['Drive', 'VM', 'Team', 'Project', 'User']);

export const APITokenInfo = z.object({
  id: z.string(),
  /** Since 3.14.1: every type the token reaches. */
  tokenTypes: z.array(TokenType).optional(),
  /** Deprecated since 3.14.1: only the first type, `tokenTypes[0]`. */
  tokenType: TokenType,
  description: z.string().optional(),
  created: ts(),
  expires: ts(),
  lastUse: ts().optional(),
  owner: z.string(),
  readOnly: z.boolean(),
});

// ---------------------------------------------------------------- drives

export const DriveInfo = z.object({
  id: z.string(),
  name: z.string(),
  owner: z.string(),
  capacity: z.number(),
  /** Open list, e.g. `ext4`, `ntfs`. */
  format: z.string(),
  /** Deprecated, defaults to true, to be removed. */
  noBackup: z.boolean().optional(),
  settings: jsonObject().optional(),
  writer: z.string().optional(),
  readers: z.array(z.string()),
  created: ts(),
  changed: ts().optional(),
  attached: ts().optional(),
  writable: z.boolean().optional(),
  poolID: z.string().optional(),
  team: z.string().optional(),
  project: z.string().optional(),
  realmID: z.string(),
  diskType: z.string().optional(),
  cache: z.string().optional(),
  io: z.string().optional(),
  state: z.enum(['Ready', 'ReadOnly', 'ReadWrite', 'Transferring', 'Initializing']),
  stateChange: ts().optional(),
  hasSnapshot: z.boolean(),
  /**
   * Since 3.14.1. Bytes actually consumed; absent until measured. Not bounded
   * by `capacity` (snapshots and metadata count).
   */
  sizeOnDisk: z.number().optional(),
  keys: z.number().optional(),
  snapshotPool: z.string().optional(),
  hasMessage: z.boolean().optional(),
});
export type DriveInfo = z.infer<typeof DriveInfo>;

// ---------------------------------------------------------------- realms

export const RealmInfo = z.object({
  /** Used as `<realmID>` in paths. */
  id: z.string(),
  name: z.string(),
  driver: z.string(),
});

/** GET /api/realms: the only route answering an object rather than an array. */
export const RealmsResponse = z.object({
  defaultRealm: z.string(),
  realms: z.record(z.string(), RealmInfo),
});
export type RealmsResponse = z.infer<typeof RealmsResponse>;

// ---------------------------------------------------------------- images

export const LibvirtExtraInfo = z.object({
  pool: z.string(),
  volume: z.string(),
  deviceBusType: z.enum(['scsi', 'virtio']),
});

export const AltvirtExtraInfo = z.object({
  sourceType: z.enum(['NDFS', 'VolumeGroup', 'VMDisk']),
  timezone: z.string().optional(),
});

/** Drive formats an image's `settings.driveFormats` draws from (Create VM Image body). */
export const DriveFormat = z.enum(['ext4', 'ntfs', 'btrfs', 'xfs', 'zfs']);

export const ImageInfo = z.object({
  id: z.string(),
  name: z.string().optional(),
  description: z.string().optional(),
  size: z.number().optional(),
  imageType: z.enum(['windows', 'linux']).optional(),
  /** Realm-specific. */
  info: z.union([LibvirtExtraInfo, AltvirtExtraInfo]),
  created: ts().optional(),
  modified: ts().optional(),
  /** Absent for a base image (version 0). */
  version: z.number().optional(),
  /** Absent for a base image. */
  parent: z.string().optional(),
  /** Max concurrent VMs; absent = no limit. */
  limit: z.number().optional(),
  /**
   * Frontend-only, except the one key the create-image route documents:
   * `driveFormats`, the formats allowed for drives attached to VMs running
   * the image. Open: other keys are kept, and are not drift.
   */
  settings: z.looseObject({ driveFormats: z.array(DriveFormat).optional() }).optional(),
  /** Since 3.14.1; absent on images that predate the field. */
  secureBoot: z.boolean().optional(),
});
export type ImageInfo = z.infer<typeof ImageInfo>;

// ---------------------------------------------------------------- VM configs

export const VMConfigInfo = z.object({
  id: z.string(),
  vmID: z.string().optional(),
  state: z.enum(['Stopped', 'Starting', 'Running', 'Suspended', 'Stopping']),
  owners: z.array(z.string()),
  name: z.string(),
  description: z.string(),
  /** Hardware setup (brick) id. */
  brick: z.string(),
  team: z.string().optional(),
  project: z.string().optional(),
  rwDrives: z.array(z.string()),
  roDrives: z.array(z.string()),
  mac: z.string().optional(),
  host: z.string().optional(),
  controllerID: z.string().optional(),
  /** Drive id to slot number. */
  driveSlots: z.record(z.string(), z.number()),
  macOptions: z.array(z.string()),
  settings: jsonObject().optional(),
  /** Absent for a config never launched; set once the spawned VM first contacts the backend. */
  lastPing: ts().optional(),
  /** Absent for a config never launched; set on first launch. */
  lastLaunched: ts().optional(),
  services: jsonObject(),
  slurmAccount: z.string().optional(),
});
export type VMConfigInfo = z.infer<typeof VMConfigInfo>;

// ---------------------------------------------------------------- active VMs

export const PublicKey = z.object({
  /** Hex RSA modulus. */
  modulus: z.string(),
  /** Hex. */
  publicExponent: z.string(),
});

export const HostUsage = z.object({
  vms: z.number(),
  vcpus: z.number(),
  memory: z.number(),
  devices: z.record(z.string(), z.number()),
});

export const HostAndPort = z.object({
  host: z.string(),
  port: z.number(),
});

export const VMCInfo = z.object({
  /** Typed `number` in the spec, not `ts`. */
  timestamp: z.number(),
  info: jsonObject(),
});

export const VirtualMachine = z.object({
  id: z.string(),
  name: z.string(),
  owner: z.string(),
  /** Hardware setup (brick) id. */
  brick: z.string(),
  active: z.boolean(),
  pubkey: PublicKey.optional(),
  /** Device name to drive id. */
  drives: z.record(z.string(), z.string()),
  ip: z.string(),
  team: z.string().optional(),
  project: z.string().optional(),
  protocolVer: z.number(),
  /** All authorized users, owner excluded. */
  authedUsers: z.array(z.string()),
  /** Subset of `authedUsers`. */
  managers: z.array(z.string()),
  realmID: z.string(),
  resources: HostUsage.optional(),
  ownerType: z.enum(['User', 'VM']).optional(),
  /** Absent until the VM reports its endpoints. */
  vpn: HostAndPort.optional(),
  /** Absent until the VM reports its endpoints. */
  ssh: HostAndPort.optional(),
  services: jsonObject(),
  lastPing: ts().optional(),
  start: ts().optional(),
  shutDown: ts().optional(),
  /** VM config id. */
  config: z.string().optional(),
  vmcInfo: z.array(VMCInfo),
  systemInfo: jsonObject().optional(),
});
export type VirtualMachine = z.infer<typeof VirtualMachine>;

// ---------------------------------------------------------------- bricks

export const LibvirtBrickConfig = z.object({
  image: z.object({ pool: z.string(), volume: z.string() }),
  /** Default none. */
  video: z.enum(['vnc', 'spice']).optional(),
  pty: z.boolean().optional(),
  /** Default `localtime` for Windows, `utc` otherwise. */
  clockOffset: z.enum(['utc', 'localtime']).optional(),
  /** Open list: default `virtio`, also `rtl8139`. */
  nic: z.string().optional(),
  devices: z.record(z.string(), z.number()).optional(),
  extraXML: z.string().optional(),
  headfullGPU: z.string().optional(),
  /** Typed `string` here without listed values (unlike LibvirtExtraInfo). */
  deviceBusType: z.string().optional(),
});

export const AltvirtBrickConfig = z.object({
  imageID: z.string(),
  timezone: z.string().optional(),
  /** GPU type to count. */
  devices: z.record(z.string(), z.number()).optional(),
  osType: z.enum(['linux', 'windows']).optional(),
  debug: z.boolean().optional(),
});

export const BrickWhitelist = z.object({
  teamIDs: z.array(z.string()),
  userIDs: z.array(z.string()),
});

export const BrickInfo = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  /** Markdown setup instructions. */
  setup: z.string().optional(),
  vcores: z.number(),
  maxMemBytes: z.number(),
  realmID: z.string(),
  /** Required when the realm driver is libvirt. */
  libvirt: LibvirtBrickConfig.optional(),
  /** Required when the realm driver is the alternative driver. */
  altvirt: AltvirtBrickConfig.optional(),
  /** Absent = the brick is publicly accessible. */
  whitelist: BrickWhitelist.optional(),
  creatorID: z.string(),
  externalServers: z.array(z.string()),
  format: z.enum(['linux', 'windows']).optional(),
  imageID: z.string().optional(),
  created: ts(),
  modified: ts().optional(),
  /** Exempt from team quotas; default false. */
  noQuota: z.boolean(),
  params: z.string().optional(),
  /** A string here, unlike the `settings` objects of other resources. */
  settings: z.string().optional(),
  vmType: z.enum(['Secure', 'Service', 'Data', 'Worker']),
  debug: z.boolean().optional(),
});
export type BrickInfo = z.infer<typeof BrickInfo>;

/** GET /api/vms/bricks: a reduced projection without `externalServers` and `vmType`. */
export const BrickInfoListed = BrickInfo.omit({ externalServers: true, vmType: true });
export type BrickInfoListed = z.infer<typeof BrickInfoListed>;

export const ExternalServerInfo = z.object({
  id: z.string(),
  /** Hostname or IP. */
  server: z.string(),
  /** One port or a comma-separated list. */
  ports: z.string(),
  protocol: z.enum(['tcp', 'udp']),
  owner: z.string(),
  created: ts(),
  /** Whether VMs may currently reach it. */
  active: z.boolean(),
  group: z.string().optional(),
  /** Scheduled deactivation. */
  deactivation: ts().optional(),
});
export type ExternalServerInfo = z.infer<typeof ExternalServerInfo>;

// ---------------------------------------------------------------- teams

export const TeamMemberInfo = z.object({
  id: z.string(),
  /** Empty string when the user no longer exists. */
  firstName: z.string(),
  /** Empty string when the user no longer exists. */
  lastName: z.string(),
  email: z.string().optional(),
  lastLogin: ts().optional(),
  joined: ts().optional(),
  /** Since 3.14.1: last membership change. */
  modified: ts().optional(),
  /** Since 3.14.1: per-team permission level. */
  perm: z.number().optional(),
});
export type TeamMemberInfo = z.infer<typeof TeamMemberInfo>;

/** Absent numbers mean no limit; an empty map means no limits. */
export const QuotasTyped = z.object({
  cores: z.number().optional(),
  /** Bytes. */
  memory: z.number().optional(),
  /** Storage type to bytes. */
  storage: z.record(z.string(), z.number()).optional(),
  /** Device type to count. */
  devices: z.record(z.string(), z.number()).optional(),
});

export const TeamInfo = z.object({
  id: z.string(),
  name: z.string(),
  desc: z.string(),
  created: ts(),
  modified: ts(),
  /** Legacy representation of the quotas. */
  quotas: z.record(z.string(), z.number()),
  /** Absent when no team quota is set. */
  teamQuotas: QuotasTyped.optional(),
  /** Absent when no per-user quota is set. */
  perUserQuotas: QuotasTyped.optional(),
  settings: jsonObject(),
  startDate: ts().optional(),
  endDate: ts().optional(),
  members: z.array(TeamMemberInfo),
});
export type TeamInfo = z.infer<typeof TeamInfo>;

// ---------------------------------------------------------------- usage

export const UsageGroupFiles = z.object({
  /** Number of vault files. */
  cnt: z.number(),
  /** Bytes. */
  size: z.number(),
});

export const UsageGroupVms = z.object({
  cnt: z.number(),
  /** Bytes. */
  mem: z.number(),
  cores: z.number(),
});

export const UsageGroupDrives = z.object({
  cnt: z.number(),
  /** Provisioned bytes. */
  size: z.number(),
  /** Consumed bytes. */
  used: z.number(),
});

/**
 * One row of team usage. One row has id `no-team` (untagged resources), so the
 * rows sum to system totals; `exists` is false for a deleted team still holding
 * resources. Groups with no resources may be absent.
 */
export const UsageInfo = z.object({
  id: z.string(),
  exists: z.boolean(),
  files: UsageGroupFiles.optional(),
  vms: UsageGroupVms.optional(),
  drives: UsageGroupDrives.optional(),
});
export type UsageInfo = z.infer<typeof UsageInfo>;

// ---------------------------------------------------------------- projects

export const ProjectInfo = z.object({
  id: z.string(),
  name: z.string(),
  /** Markdown. */
  desc: z.string(),
  /** Id of the required SecurityLevelInfo, if set. */
  securityLevel: z.string().optional(),
  /** Parent project id. */
  parent: z.string().optional(),
  settings: jsonObject(),
  created: ts(),
  modified: ts(),
});
export type ProjectInfo = z.infer<typeof ProjectInfo>;

export const ProjectMembershipInfo = z.object({
  /** Opaque, base64. */
  id: z.string(),
  projectID: z.string(),
  userID: z.string(),
  added: ts(),
  modified: ts(),
  canManage: z.boolean(),
  /** The membership is also inherited. */
  duplicate: z.boolean(),
  expires: ts().optional(),
});
export type ProjectMembershipInfo = z.infer<typeof ProjectMembershipInfo>;

/**
 * Same shape as UsageInfo; `id` is a project id or `no-project`, and `exists`
 * is false for a deleted project.
 */
export const ProjectUsageInfo = z.object(UsageInfo.shape);

// ---------------------------------------------------------------- security

export const SecurityRequirementData = z.object({
  type: z.string(),
  expires: z.boolean(),
  /** Milliseconds (a duration). */
  defaultExpiration: z.number(),
  /** Milliseconds (a duration). */
  maxExpiration: z.number(),
});

export const SecurityRequirementInfo = z.object({
  /** `sreq|<uuid>`. */
  id: z.string(),
  name: z.string(),
  desc: z.string(),
  /** Open list, e.g. `UserCert`. */
  type: z.string(),
  created: ts(),
  modified: ts(),
  data: SecurityRequirementData,
});
export type SecurityRequirementInfo = z.infer<typeof SecurityRequirementInfo>;

export const SecurityLevelInfo = z.object({
  /** `slvl|<uuid>`. */
  id: z.string(),
  name: z.string(),
  desc: z.string(),
  created: ts(),
  modified: ts(),
  /** Requirement ids making up the level. */
  requirements: z.array(z.string()),
});
export type SecurityLevelInfo = z.infer<typeof SecurityLevelInfo>;

// ---------------------------------------------------------------- users

export const DeactivationType = z.enum(['Admin', 'FailedPassword', 'Timeout', 'XSS', 'Registration']);

export const UserInfo = z.object({
  id: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  /** Login email / username. */
  email: z.string(),
  /** Only when different from the login email. */
  contactEmail: z.string().optional(),
  joined: ts(),
  lastLogin: ts().optional(),
  /** Allowed values not documented. */
  role: z.string(),
  /** Raw permission codes; the API does not resolve them to names. */
  permissions: z.array(z.string()),
  /** Allowed values not documented. */
  state: z.string(),
  stateReason: z.string().optional(),
  deactivationType: DeactivationType.optional(),
  department: z.string().optional(),
  position: z.string().optional(),
  comment: z.string().optional(),
  neverEscrow: z.boolean().optional(),
  passChanged: ts().optional(),
  expiration: ts().optional(),
  tosAccepted: ts().optional(),
  deactivatedUntil: ts().optional(),
  lastEscrow: ts().optional(),
});
export type UserInfo = z.infer<typeof UserInfo>;

export const UserCertificationInfo = z.object({
  /** Opaque, base64. */
  id: z.string(),
  /** `sreq|<uuid>`. */
  requirementID: z.string(),
  userID: z.string(),
  /** Absent = no expiry. */
  expires: ts().optional(),
  created: ts(),
  modified: ts(),
  /** User id. */
  modifiedBy: z.string(),
});
export type UserCertificationInfo = z.infer<typeof UserCertificationInfo>;

export const ManagedObjectInfo = z.object({
  managerID: z.string(),
  objectType: z.enum(['Team', 'Project']),
  objectID: z.string(),
});
export type ManagedObjectInfo = z.infer<typeof ManagedObjectInfo>;

// ---------------------------------------------------------------- versions

/**
 * Fields added to existing resources in backend 3.14.1, by model name. They
 * are optional in the models because a 3.13.8 backend does not send them.
 * Resources that are entirely new in 3.14.1 (realms, usage, ...) are not listed.
 */
export const SINCE_3_14_1: Readonly<Record<string, readonly string[]>> = Object.freeze({
  APITokenInfo: Object.freeze(['tokenTypes']),
  DriveInfo: Object.freeze(['sizeOnDisk', 'keys', 'snapshotPool', 'hasMessage']),
  ImageInfo: Object.freeze(['secureBoot']),
  BrickInfo: Object.freeze(['debug']),
  BrickInfoListed: Object.freeze(['debug']),
  TeamMemberInfo: Object.freeze(['joined', 'modified', 'perm']),
});
