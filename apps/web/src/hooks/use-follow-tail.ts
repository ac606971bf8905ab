import { type RefObject, useEffect } from 'react';

/** How close to the end (px) still counts as at the end: a rounding scroll position, a last line. */
const AT_END_PX = 24;

/**
 * Keeps a scroll container at its end while `content` grows (a streaming answer, a log's new lines),
 * as long as the reader is at the end: scrolling up stops the following, scrolling back to the end
 * resumes it. It starts at the end, and again whenever `resetKey` changes (another conversation).
 * `scroller` is an element with `overflow: auto`, or `'page'` for the document's own scroll.
 */
export function useFollowTail(
  content: RefObject<HTMLElement | null>,
  scroller: RefObject<HTMLElement | null> | 'page',
  resetKey?: unknown,
): void {
  // biome-ignore lint/correctness/useExhaustiveDependencies: resetKey starts over at the end
  useEffect(() => {
    const watched = content.current;
    const box = scroller === 'page' ? document.scrollingElement : scroller.current;
    if (watched === null || box === null) return;
    const events: HTMLElement | Window = scroller === 'page' ? window : (box as HTMLElement);
    let atEnd = true;
    // Where the last follow put the box: its scroll event arrives a frame later, when the content
    // may have grown again, and must not read as the reader leaving the end.
    let followedTo = -1;
    const onScroll = () => {
      if (box.scrollTop === followedTo) return;
      atEnd = box.scrollHeight - box.scrollTop - box.clientHeight <= AT_END_PX;
    };
    const follow = () => {
      if (!atEnd) return;
      box.scrollTop = box.scrollHeight;
      followedTo = box.scrollTop;
    };
    events.addEventListener('scroll', onScroll, { passive: true });
    const observer = new ResizeObserver(follow);
    observer.observe(watched);
    follow();
    return () => {
      observer.disconnect();
      events.removeEventListener('scroll', onScroll);
    };
  }, [content, scroller, resetKey]);
}
