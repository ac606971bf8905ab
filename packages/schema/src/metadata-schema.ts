import { z } from 'zod';

/**
 * Descriptive metadata of a tool file. Toolset files may carry it too, but it is never merged.
 * @see MCI schema reference, "Metadata"
 */
export const MetadataSchema = z.strictObject({
  name: z.string().optional(),
  description: z.string().optional(),
  /** Version of the tool collection (SemVer recommended). */
  version: z.string().optional(),
  /** License identifier, e.g. `MIT`. */
  license: z.string().optional(),
  authors: z.array(z.string()).optional(),
});

/** Descriptive metadata of a tool file. */
export type Metadata = z.infer<typeof MetadataSchema>;
