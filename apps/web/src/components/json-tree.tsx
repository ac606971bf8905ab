import { allExpanded, defaultStyles, JsonView } from 'react-json-view-lite';
import 'react-json-view-lite/dist/index.css';

// Structure (indents, expand icons) from the library; colours from our stylesheet, light or dark.
const STYLES = {
  ...defaultStyles,
  container: 'json-tree',
  label: 'json-label',
  nullValue: 'json-null',
  undefinedValue: 'json-null',
  numberValue: 'json-number',
  stringValue: 'json-string',
  booleanValue: 'json-boolean',
  otherValue: 'json-other',
  punctuation: 'json-punctuation',
};

/** A JSON value as an expandable tree; a scalar shows as one line. */
export function JsonTree({ value, label = 'Output' }: { value: unknown; label?: string }) {
  if (value === null || typeof value !== 'object') {
    return (
      <pre className="json-scalar" title={label}>
        {value === undefined ? 'undefined' : JSON.stringify(value)}
      </pre>
    );
  }
  return (
    <div className="json-tree-box" title={label}>
      <JsonView data={value} style={STYLES} shouldExpandNode={allExpanded} />
    </div>
  );
}
