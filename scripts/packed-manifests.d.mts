export interface PackedPackage {
  readonly dir: string;
  // biome-ignore lint/suspicious/noExplicitAny: a package.json as read from a tarball, any shape
  readonly manifest: Record<string, any>;
  readonly files: string[];
  readonly readme: string;
  /** The tarball (removed already unless `keepIn` was given). */
  readonly tarball: string;
}
export function publicPackageDirs(): string[];
export function packPublicPackages(keepIn?: string): PackedPackage[];
export function manifestProblems(packed: Pick<PackedPackage, 'manifest' | 'files' | 'readme'>): string[];
