import type { CheckDiagnostic } from '@mci/protocol';
import { type FormEvent, useState } from 'react';
import { useClient } from '../connection/connection-context.ts';

/**
 * "Save as skill" for a process: asks a name and a description, saves the process's code as a skill
 * (`POST /skills`), and says which version was saved, or lists the check's findings when the server
 * refuses code that does not compile.
 */
export function SaveSkillForm({ code }: { code: string }) {
  const client = useClient();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState<string>();
  const [error, setError] = useState<{ message: string; diagnostics: CheckDiagnostic[] }>();
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Save as skill
      </button>
    );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaving(true);
    setSaved(undefined);
    setError(undefined);
    client
      .saveSkill({ name, description: description || name, code })
      .then((skill) =>
        setSaved(
          `Saved skill ${skill.name}, version ${skill.version}: call it as skills.${skill.name}(input).`,
        ),
      )
      .catch((caught: Error & { diagnostics?: CheckDiagnostic[] }) =>
        setError({ message: caught.message, diagnostics: caught.diagnostics ?? [] }),
      )
      .finally(() => setSaving(false));
  };
  return (
    <form className="skill-form" aria-label="Save as skill" onSubmit={submit}>
      <label>
        Name
        <input
          value={name}
          required
          pattern="[A-Za-z_$][A-Za-z0-9_$]*"
          onChange={(e) => setName(e.target.value)}
        />
      </label>
      <label>
        Description
        <input value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <button type="submit" disabled={saving || name === ''}>
        Save skill
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
      {saved !== undefined && <output className="muted">{saved}</output>}
      {error !== undefined && (
        <div role="alert" className="error-text">
          {error.message}
          {error.diagnostics.length > 0 && (
            <ul aria-label="Findings">
              {error.diagnostics.map((d) => (
                <li key={`${d.line}:${d.column}:${d.message}`}>
                  line {d.line}, column {d.column}: {d.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </form>
  );
}
