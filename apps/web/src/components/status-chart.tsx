import type { StatusPoint } from '../hooks/use-server-status.ts';
import { formatTime } from './duration.ts';

const SERIES = ['success', 'failed', 'timeout', 'canceled', 'none'] as const;
const WIDTH = 600;
const HEIGHT = 160;
/** Line widths in px, widest first: a line drawn over an equal one leaves the wider one showing at its edges. */
const STROKE_PX = [7, 5.5, 4, 2.5, 1.5] as const;
/** Room above the largest value and under 0, in viewBox units, so the widest line is not cut. */
const PAD = 6;

/** Where the y axis has a labelled tick: 0, the middle (whole numbers only) and `max`. */
function yTicks(max: number): number[] {
  const middle = max / 2;
  return Number.isInteger(middle) && middle > 0 ? [0, middle, max] : [0, max];
}

/**
 * Processes by status over the last minutes, one line per status (SVG, scales to its box), with a
 * y axis (processes, 0 to the largest count) and an x axis (the first and last sample's time).
 * Lines with equal values lie on each other as nested stripes, so each stays visible.
 */
export function StatusChart({ history }: { history: StatusPoint[] }) {
  const max = Math.max(1, ...history.flatMap((point) => SERIES.map((key) => point[key])));
  const x = (index: number) =>
    6 + (history.length < 2 ? WIDTH - 12 : (index / (history.length - 1)) * (WIDTH - 12));
  const y = (value: number) => HEIGHT - PAD - (value / max) * (HEIGHT - 2 * PAD);
  const first = history[0];
  const latest = history.at(-1);
  return (
    <figure className="status-chart">
      <div className="chart">
        <ul className="chart-y-axis" aria-label="Processes (y axis)">
          {yTicks(max).map((tick) => (
            <li key={tick} style={{ top: `${(y(tick) / HEIGHT) * 100}%` }}>
              {tick}
            </li>
          ))}
        </ul>
        <svg
          viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
          preserveAspectRatio="none"
          role="img"
          aria-label="Processes by status over the last minutes"
        >
          {yTicks(max).map((tick) => (
            <line key={tick} className="chart-grid" x1={0} x2={WIDTH} y1={y(tick)} y2={y(tick)} />
          ))}
          <line className="chart-axis" x1={0.5} x2={0.5} y1={0} y2={HEIGHT} />
          <line className="chart-axis" x1={0} x2={WIDTH} y1={HEIGHT - 0.5} y2={HEIGHT - 0.5} />
          {SERIES.map((key, index) => (
            <polyline
              key={key}
              className={`series series-${key}`}
              style={{ strokeWidth: STROKE_PX[index] }}
              fill="none"
              points={history.map((point, at) => `${x(at)},${y(point[key])}`).join(' ')}
            />
          ))}
          {latest !== undefined &&
            SERIES.map((key, index) => (
              <circle
                key={key}
                className={`series series-${key}`}
                cx={x(history.length - 1)}
                cy={y(latest[key])}
                r={(STROKE_PX[index] ?? 2) / 2 + 1}
              />
            ))}
        </svg>
        <ul className="chart-x-axis" aria-label="Time (x axis)">
          {first !== undefined && (
            <li>
              <time>{formatTime(new Date(first.at).toISOString())}</time>
            </li>
          )}
          {latest !== undefined && history.length > 1 && (
            <li>
              <time>{formatTime(new Date(latest.at).toISOString())}</time>
            </li>
          )}
        </ul>
      </div>
      <figcaption>
        <ul className="legend">
          {SERIES.map((key) => (
            <li key={key}>
              <span className={`swatch series-${key}`} aria-hidden="true" /> {key}: {latest?.[key] ?? 0}
            </li>
          ))}
        </ul>
        <span className="muted">
          max {max}, {history.length} samples
        </span>
      </figcaption>
    </figure>
  );
}
