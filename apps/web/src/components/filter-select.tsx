/**
 * A labelled `<select>` over a fixed list of values, with an `any` choice first that stands for no
 * value (`undefined`).
 */
export function FilterSelect<Value extends string>({
  label,
  options,
  value,
  onChange,
}: {
  label: string;
  options: readonly Value[];
  value: Value | undefined;
  onChange: (value: Value | undefined) => void;
}) {
  return (
    <label>
      {label}
      <select
        aria-label={label}
        value={value ?? ''}
        onChange={(event) => onChange((event.target.value || undefined) as Value | undefined)}
      >
        <option value="">any</option>
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </label>
  );
}
