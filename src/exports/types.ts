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

export interface BuildResult {
  /** The 15, then those of the --include groups, in catalog order. */
  readonly exports: ExportResult[];
  readonly nullFields: NullField[];
  readonly validation: { readonly issues: number; readonly samples: ValidationSample[] };
  readonly drift: Array<{ readonly route: string; readonly unknownFields: string[] }>;
  /**
   * Bodies listed as read that are not JSON of their route's shape (a replay only; see LoadedCollection).
   * Not in the manifest: their routes are marked failed.
   */
  readonly bodyFailures: ReadonlyArray<{ readonly route: string; readonly detail: string }>;
}
