import { Highlight, type PrismTheme } from 'prism-react-renderer';
import type { CodeMark } from './code-marks.ts';

// Colours come from the stylesheet (`.token.keyword`, ...), which follows the system's light/dark setting.
const CLASS_ONLY_THEME: PrismTheme = { plain: {}, styles: [] };

/** Props of {@link CodeView}. */
export interface CodeViewProps {
  code: string;
  /** Prism language: `ts`, `js`, `json`, ... @default 'tsx' */
  language?: string;
  /** Lines to mark, each with a note shown under it (errors and check warnings; see `marksOf`). */
  marks?: readonly CodeMark[];
  /** Accessible name of the code region. */
  label?: string;
}

/** Code with syntax highlighting and line numbers; lines can be marked with notes (errors, warnings). */
export function CodeView({ code, language = 'tsx', marks = [], label = 'Code' }: CodeViewProps) {
  const grammar = language === 'ts' || language === 'typescript' ? 'tsx' : language;
  return (
    <Highlight code={code.replace(/\n$/, '')} language={grammar} theme={CLASS_ONLY_THEME}>
      {({ tokens, getLineProps, getTokenProps }) => (
        <figure className="code-figure" aria-label={label}>
          <pre className="code-view">
            {tokens.map((line, index) => {
              const number = index + 1;
              const notes = marks.filter((mark) => mark.line === number);
              const kind = notes.some((mark) => mark.kind === 'error')
                ? 'error'
                : notes.length > 0
                  ? 'warning'
                  : undefined;
              const { style: _style, ...lineProps } = getLineProps({ line });
              return (
                <div
                  key={number}
                  {...lineProps}
                  className={kind ? `code-line code-line-${kind}` : 'code-line'}
                  data-line={number}
                  aria-current={kind === 'error' ? 'true' : undefined}
                >
                  <span className="line-number" aria-hidden="true">
                    {number}
                  </span>
                  <span className="line-text">
                    {line.map((token, position) => {
                      const key = `${number}:${position}`;
                      const { style: _tokenStyle, ...tokenProps } = getTokenProps({ token });
                      return <span key={key} {...tokenProps} />;
                    })}
                  </span>
                  {notes.map((mark, n) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: the notes of a line keep their order.
                    <span key={n} className={`line-note line-note-${mark.kind}`} role="note">
                      {mark.note}
                    </span>
                  ))}
                </div>
              );
            })}
          </pre>
        </figure>
      )}
    </Highlight>
  );
}
