const UNITS = ['KiB', 'MiB', 'GiB'] as const;

/** `bytes` as `812 B`, `3.4 KiB` or `1.2 MiB` (binary units, as the server's limits are set). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${UNITS[unit]}`;
}
