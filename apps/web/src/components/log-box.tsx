import { useRef } from 'react';
import { useFollowTail } from '../hooks/use-follow-tail.ts';

/** A run's stdout or stderr in a scrolling box that follows its newest lines (unless scrolled up). */
export function LogBox({ text, stream }: { text: string; stream: 'stdout' | 'stderr' }) {
  const box = useRef<HTMLPreElement>(null);
  const lines = useRef<HTMLSpanElement>(null);
  useFollowTail(lines, box);
  return (
    // A log, but not read aloud line by line as it grows.
    <pre
      ref={box}
      className={stream === 'stderr' ? 'log log-stderr' : 'log'}
      role="log"
      aria-live="off"
      aria-label={stream}
    >
      <span ref={lines} className="log-lines">
        {text}
      </span>
    </pre>
  );
}
