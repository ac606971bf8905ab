/**
 * A failure message, announced to screen readers (`role="alert"`); nothing while `error` is
 * undefined. `inline` renders a `<span>`, for a message beside buttons in a row of controls.
 */
export function ErrorText({ error, inline = false }: { error: string | undefined; inline?: boolean }) {
  if (error === undefined) return null;
  const Tag = inline ? 'span' : 'p';
  return (
    <Tag role="alert" className="error-text">
      {error}
    </Tag>
  );
}
