import { isFileOutput } from '@mci/protocol';
import { FileLink } from './file-link.tsx';
import { JsonTree } from './json-tree.tsx';
import { findImages } from './output-images.ts';

/**
 * One output of a run: a JSON tree; the pictures it holds (`output.image()`, a tool result's image
 * content) shown as images; a file (`output.file()`) as a download link.
 */
export function OutputView({ value, index }: { value: unknown; index: number }) {
  const images = findImages(value);
  return (
    <div className="output">
      <JsonTree value={value} label={`Output ${index + 1}`} />
      {isFileOutput(value) && <FileLink file={value} />}
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
