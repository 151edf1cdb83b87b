/** How the build reads bodies; every command takes the default. */
export interface BuildOptions {
  /** The size an array body is cut into slices of (src/body/slices.ts): its own unless a test asks for others. */
  readonly sliceBytes?: number;
}

/** A flat export record: scalar values or arrays of scalars, never nested objects. */
export type ExportRecord = Record<string, unknown>;

export interface ExportResult {
  /** The export's name, e.g. `users`, `sub-admin_managed_objects`. */
  readonly export: string;
  /** Sorted by the export's key; every record has the catalog's columns in order. */
  readonly records: ExportRecord[];
  readonly available: boolean;
  readonly reason?: string;
  readonly proposedRoute?: string;
}

export interface NullField {
  readonly export: string;
  readonly field: string;
  readonly reason: string;
  readonly proposedRoute?: string;
}

export interface ValidationSample {
  readonly route: string;
  readonly index: number;
  readonly path: string;
  readonly message: string;
}

/** What reading every route found, beside the records. */
export interface LoadReport {
  readonly validation: { issues: number; samples: ValidationSample[] };
  readonly drift: Array<{ route: string; unknownFields: string[] }>;
  /**
   * Bodies the manifest lists as read but that are not JSON of their route's
   * shape (only a replay can hold one: a live run fails such a route before
   * the build), in catalog order. Not in the snapshot manifest: their routes
   * are marked failed.
   */
  readonly bodyFailures: Array<{ route: string; detail: string }>;
}

/** The exports, and what reading the routes found beside them. */
export interface BuildResult extends LoadReport {
  /** The 15, then those of the --include groups, in catalog order. */
  readonly exports: ExportResult[];
  readonly nullFields: NullField[];
}
