import type { OutputMedia } from './output-media.ts';

/** A picture, a sound or a web link found in an output, shown as itself; `label` names it. */
export function MediaItem({ item, label }: { item: OutputMedia; label: string }) {
  switch (item.kind) {
    case 'image':
      return <img className="output-image" src={item.src} alt={`${label} (${item.mimeType})`} />;
    case 'audio':
      return (
        // biome-ignore lint/a11y/useMediaCaption: a tool's sound comes with no captions to offer.
        <audio className="output-audio" controls src={item.src} aria-label={`${label} (${item.mimeType})`} />
      );
    case 'link':
      return (
        <p className="output-file">
          <a href={item.href} target="_blank" rel="noopener noreferrer">
            {item.name}
          </a>
        </p>
      );
  }
}
