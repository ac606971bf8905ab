import { defineCommand } from '../command.ts';
import { addRemoteOptions, EXIT, parsePids, type RemoteOptions, runRemote, UsageError } from '../remote.ts';

interface SkillOptions extends RemoteOptions {
  name?: string;
  description?: string;
}

/**
 * `mci skill save PID --name NAME [--description TEXT]`: saves the code of process PID as a skill
 * (docs/sessions.md, "Skills"; a new version when the name exists) and prints the saved version as
 * JSON. The code must be a module whose default export is a function; code that does not compile is
 * refused (exit 1) with the check's finding. `mci skill list` prints the skills, `mci skill rm NAME`
 * deletes one.
 */
export default defineCommand<SkillOptions, [action: string, target: string | undefined]>({
  configure(command) {
    command
      .argument('<action>', 'save, list or rm')
      .argument('[target]', 'save: the process id whose code to save; rm: the skill name')
      .option('--name <name>', 'save: the skill name (a JavaScript identifier)')
      .option('--description <text>', 'save: what the skill does (default: the skill name)');
    addRemoteOptions(command);
  },
  run({ args: [action, target], options }, io) {
    return runRemote('skill', options, io, async (client) => {
      if (action === 'list') {
        for (let cursor: string | undefined, first = true; first || cursor !== undefined; first = false) {
          const page = await client.listSkills(
            cursor === undefined ? { limit: 100 } : { limit: 100, cursor },
          );
          for (const skill of page.items)
            io.stdout.write(`${skill.name}\tv${skill.version}\t${skill.description.split('\n')[0]}\n`);
          cursor = page.nextCursor;
        }
        return EXIT.OK;
      }
      if (action === 'rm') {
        if (target === undefined) throw new UsageError('mci skill rm NAME: the skill name is missing');
        await client.deleteSkill(target);
        io.stderr.write(`deleted skill ${target}\n`);
        return EXIT.OK;
      }
      if (action !== 'save')
        throw new UsageError(`action must be save, list or rm, got ${JSON.stringify(action)}`);
      if (target === undefined) throw new UsageError('mci skill save PID --name NAME: the pid is missing');
      if (options.name === undefined)
        throw new UsageError('mci skill save PID --name NAME: --name is missing');
      const [pid] = parsePids([target]);
      const code = await client.getCode(pid!);
      const saved = await client.saveSkill({
        name: options.name,
        description: options.description ?? options.name,
        code,
      });
      io.stdout.write(`${JSON.stringify(saved)}\n`);
      return EXIT.OK;
    });
  },
});
