import { useMemo, useState } from 'react';
import { defaultStyles, JsonView } from 'react-json-view-lite';
import 'react-json-view-lite/dist/index.css';
import { countJsonNodes } from './count-json-nodes.ts';
import { limitArrays } from './limit-arrays.ts';

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

/** Items of a long array shown at first, and added by each "Show more". */
const PAGE_ITEMS = 100;

/** A value with fewer nodes than this is drawn fully open. */
const SMALL_NODES = 200;

/** All open; for a larger value its top two levels (deeper ones open on a click, drawing nothing before). */
const expandAll = () => true;
const expandTwoLevels = (level: number) => level < 2;

/**
 * A JSON value as an expandable tree, fully open when small, else open two levels deep; arrays longer
 * than a page show their first items and a "Show more" button. A scalar shows as one line.
 */
export function JsonTree({ value, label = 'Output' }: { value: unknown; label?: string }) {
  const [limit, setLimit] = useState(PAGE_ITEMS);
  const shown = useMemo(() => limitArrays(value, limit), [value, limit]);
  const small = useMemo(() => countJsonNodes(value, SMALL_NODES) < SMALL_NODES, [value]);
  if (value === null || typeof value !== 'object') {
    return (
      <pre className="json-scalar" title={label}>
        {value === undefined ? 'undefined' : JSON.stringify(value)}
      </pre>
    );
  }
  return (
    <div className="json-tree-box" title={label}>
      <JsonView
        data={shown.value as object}
        style={STYLES}
        shouldExpandNode={small ? expandAll : expandTwoLevels}
      />
      {shown.longest > 0 && (
        <p className="json-more">
          <span className="muted">
            {shown.longest.toLocaleString('en')} items, the first {limit.toLocaleString('en')} shown
          </span>{' '}
          <button
            type="button"
            className="link-button"
            aria-label={`Show ${PAGE_ITEMS} more items of ${label}`}
            onClick={() => setLimit((current) => current + PAGE_ITEMS)}
          >
            Show {PAGE_ITEMS} more
          </button>
        </p>
      )}
    </div>
  );
}
