import type { ToolCatalog, ToolHost } from '@mci/sandbox';

/** `host`, with `catalog` answering `tools.search` and `tools.describe` in its runs. */
export function withCatalog(host: ToolHost, catalog: ToolCatalog): ToolHost {
  return {
    list: () => host.list(),
    execute: (name, props, options) => host.execute(name, props, options),
    catalog,
  };
}
