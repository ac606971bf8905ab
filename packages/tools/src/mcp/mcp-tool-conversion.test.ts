import { describe, expect, it } from 'vitest';
import { mcpToolToMciTool } from './mcp-tool-conversion.ts';

describe('mcpToolToMciTool', () => {
  it('tags hints that are true, and each audience role as audience_<role> (as mci-py does)', () => {
    const converted = mcpToolToMciTool('srv', {
      name: 'lookup',
      inputSchema: { type: 'object' },
      annotations: { readOnlyHint: true, destructiveHint: false, audience: ['user', 'assistant'] },
    } as Parameters<typeof mcpToolToMciTool>[1]);
    expect(converted.tags).toEqual(['readOnly', 'audience_user', 'audience_assistant']);
    expect(converted.execution).toEqual({ type: 'mcp', serverName: 'srv', toolName: 'lookup' });
  });
});
