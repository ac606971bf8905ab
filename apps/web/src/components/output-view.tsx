import { isFileOutput } from '@mci/protocol';
import { FileLink } from './file-link.tsx';
import { JsonTree } from './json-tree.tsx';
import { MediaItem } from './media-item.tsx';
import { findMedia } from './output-media.ts';

/**
 * One output of a run: a JSON tree; the pictures and sounds it holds (`output.image()`, a tool
 * result's image or audio content) shown as themselves, a tool's web links as links; a file
 * (`output.file()`) as a download link. `label` names it (@default `Output <index + 1>`).
 */
export function OutputView({ value, index, label }: { value: unknown; index: number; label?: string }) {
  const name = label ?? `Output ${index + 1}`;
  return (
    <div className="output">
      <JsonTree value={value} label={name} />
      {isFileOutput(value) && <FileLink file={value} />}
      {findMedia(value).map((item, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: media are positional
        <MediaItem key={i} item={item} label={`${name}, item ${i + 1}`} />
      ))}
    </div>
  );
}
