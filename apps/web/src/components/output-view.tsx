import { JsonTree } from './json-tree.tsx';
import { findImages } from './output-images.ts';

/** One output of a run: a JSON tree, and the images a tool result carries shown as images. */
export function OutputView({ value, index }: { value: unknown; index: number }) {
  const images = findImages(value);
  return (
    <div className="output">
      <JsonTree value={value} label={`Output ${index + 1}`} />
      {images.map((image, i) => (
        <img
          // biome-ignore lint/suspicious/noArrayIndexKey: images are positional
          key={i}
          className="output-image"
          src={image.src}
          alt={`Output ${index + 1}, item ${i + 1} (${image.mimeType})`}
        />
      ))}
    </div>
  );
}
