/**
 * The skills of one execution: saved functions the program calls as `skills.<name>(input)`, run
 * inside the same sandbox (same tools, limits and policies), and `skills.save(skill)`.
 */
export interface SkillHost {
  /**
   * The skills the program can call, by name (identifiers), each as the body of a JavaScript function
   * of `exports` that sets `exports.default` to the skill's function (TypeScript's CommonJS output of
   * the skill module). Read once, when the execution starts.
   */
  readonly sources: Readonly<Record<string, string>>;
  /**
   * Checks the input of `skills.<name>(input)` before the skill runs (a copy of what the program
   * passed). A throw rejects the call with the error's message (and its string `code`, if any).
   */
  checkInput(name: string, input: unknown): void | Promise<void>;
  /**
   * Answers `skills.save(skill)` (`skill` as the program passed it, unchecked): what it resolves to
   * is what the program's promise resolves to; a throw rejects it with the message and `code`.
   */
  save(skill: unknown): Promise<unknown>;
}

/** The operations a program's `skills` global asks the host for. */
export type SkillOp = 'input' | 'save';
