import type { StatusPoint } from '../hooks/use-server-status.ts';

const SERIES = ['success', 'failed', 'timeout', 'canceled', 'none'] as const;
const WIDTH = 600;
const HEIGHT = 160;

/** Processes by status over the last minutes, one line per status (SVG, scales to its box). */
export function StatusChart({ history }: { history: StatusPoint[] }) {
  const max = Math.max(1, ...history.flatMap((point) => SERIES.map((key) => point[key])));
  const x = (index: number) =>
    6 + (history.length < 2 ? WIDTH - 12 : (index / (history.length - 1)) * (WIDTH - 12));
  const y = (value: number) => HEIGHT - (value / max) * (HEIGHT - 8) - 4;
  const latest = history.at(-1);
  return (
    <figure className="status-chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        preserveAspectRatio="none"
        role="img"
        aria-label="Processes by status over the last minutes"
      >
        {SERIES.map((key) => (
          <polyline
            key={key}
            className={`series series-${key}`}
            fill="none"
            points={history.map((point, index) => `${x(index)},${y(point[key])}`).join(' ')}
          />
        ))}
        {latest !== undefined &&
          SERIES.map((key) => (
            <circle
              key={key}
              className={`series series-${key}`}
              cx={x(history.length - 1)}
              cy={y(latest[key])}
              r={3}
            />
          ))}
      </svg>
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
