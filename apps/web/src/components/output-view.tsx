import { isFileOutput } from '@mci/protocol';
import { FileLink } from './file-link.tsx';
import { JsonTree } from './json-tree.tsx';
import { MediaItem } from './media-item.tsx';
import { findMedia } from './output-media.ts';

/**
 * One output of a run: a JSON tree; the pictures and sounds it holds (`output.image()`, a tool
 * result's image or audio content) shown as themselves, a tool's web links as links; a file
 * (`output.file()`) as a download link.
 */
export function OutputView({ value, index }: { value: unknown; index: number }) {
  return (
    <div className="output">
      <JsonTree value={value} label={`Output ${index + 1}`} />
      {isFileOutput(value) && <FileLink file={value} />}
      {findMedia(value).map((item, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: media are positional
        <MediaItem key={i} item={item} label={`Output ${index + 1}, item ${i + 1}`} />
      ))}
    </div>
  );
}
