import { docComment, schemaToType } from '../tools-dts/json-schema-to-ts.ts';
import type { SkillVersion } from './skill-store.ts';

/** The declaration of `skills` itself (its `save`), merged with each principal's skills. */
export const SKILLS_DTS = `
/** A skill as skills.save answers it. */
interface SavedSkill {
  name: string;
  version: number;
  description: string;
  inputSchema: Record<string, unknown>;
  createdAt: string;
}

/**
 * The saved skills of the caller, one async function each (declared below when there are any): a
 * skill runs inside this run, with its tools and limits; its input is checked against its schema.
 */
interface Skills {
  /**
   * Saves a skill (a new version when the name exists): code is TypeScript whose default export is
   * an async function taking one object input. Later runs call it as skills.<name>(input). The input
   * schema is taken from the parameter type unless inputSchema is given. Rejects with code
   * CHECK_FAILED and the diagnostics when the code does not compile.
   */
  save(skill: {
    name: string;
    description: string;
    code: string;
    inputSchema?: Record<string, unknown>;
  }): Promise<SavedSkill>;
}

declare const skills: Skills;
`;

/**
 * The declarations of one principal's skills: an `interface Skills` that merges with
 * {@link SKILLS_DTS}, one member per skill typed from its input schema; '' without skills.
 */
export function renderSkillDeclarations(
  skills: readonly Pick<SkillVersion, 'name' | 'description' | 'inputSchema'>[],
): string {
  if (skills.length === 0) return '';
  let body = '';
  for (const skill of [...skills].sort((a, b) => a.name.localeCompare(b.name))) {
    const required = Array.isArray(skill.inputSchema.required) && skill.inputSchema.required.length > 0;
    body += `${docComment([skill.description], '  ')}  ${skill.name}(input${required ? '' : '?'}: ${schemaToType(skill.inputSchema, '  ')}): Promise<any>;\n`;
  }
  return `/** The saved skills of this principal. */\ninterface Skills {\n${body}}\n`;
}
