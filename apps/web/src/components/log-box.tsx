import { useRef } from 'react';
import { useFollowTail } from '../hooks/use-follow-tail.ts';

/** A run's stdout or stderr in a scrolling box that follows its newest lines (unless scrolled up). */
export function LogBox({ text, stream }: { text: string; stream: 'stdout' | 'stderr' }) {
  const box = useRef<HTMLPreElement>(null);
  const lines = useRef<HTMLSpanElement>(null);
  useFollowTail(lines, box);
  return (
    <pre ref={box} className={stream === 'stderr' ? 'log log-stderr' : 'log'} aria-label={stream}>
      <span ref={lines} className="log-lines">
        {text}
      </span>
    </pre>
  );
}
