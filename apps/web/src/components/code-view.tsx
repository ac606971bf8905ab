import { Highlight, type PrismTheme } from 'prism-react-renderer';

// Colours come from the stylesheet (`.token.keyword`, ...), which follows the system's light/dark setting.
const CLASS_ONLY_THEME: PrismTheme = { plain: {}, styles: [] };

/** Props of {@link CodeView}. */
export interface CodeViewProps {
  code: string;
  /** Prism language: `ts`, `js`, `json`, ... @default 'tsx' */
  language?: string;
  /** 1-based line to highlight (an error's line). */
  highlightLine?: number;
  /** A note shown under the highlighted line (the error message). */
  highlightNote?: string;
  /** Accessible name of the code region. */
  label?: string;
}

/** Code with syntax highlighting and line numbers; one line can be marked (an error's line). */
export function CodeView({
  code,
  language = 'tsx',
  highlightLine,
  highlightNote,
  label = 'Code',
}: CodeViewProps) {
  const grammar = language === 'ts' || language === 'typescript' ? 'tsx' : language;
  return (
    <Highlight code={code.replace(/\n$/, '')} language={grammar} theme={CLASS_ONLY_THEME}>
      {({ tokens, getLineProps, getTokenProps }) => (
        <figure className="code-figure" aria-label={label}>
          <pre className="code-view">
            {tokens.map((line, index) => {
              const number = index + 1;
              const marked = number === highlightLine;
              const { style: _style, ...lineProps } = getLineProps({ line });
              return (
                <div
                  key={number}
                  {...lineProps}
                  className={marked ? 'code-line code-line-error' : 'code-line'}
                  data-line={number}
                  aria-current={marked ? 'true' : undefined}
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
                  {marked && highlightNote !== undefined && (
                    <span className="line-note" role="note">
                      {highlightNote}
                    </span>
                  )}
                </div>
              );
            })}
          </pre>
        </figure>
      )}
    </Highlight>
  );
}
