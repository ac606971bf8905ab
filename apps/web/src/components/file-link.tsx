import type { FileOutput } from '@mci/protocol';
import { useState } from 'react';
import { apiGet } from '../connection/api-fetch.ts';
import { useConnection } from '../connection/connection-context.ts';

/** The size of a file for people: `120 B`, `3.4 KB`, `1.2 MB`. */
function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * A file a run made (`output.file()`), as a download link. The file route needs the sign-in token
 * when the server has tokens, which a plain link cannot send: a click fetches the file with it and
 * saves what came back.
 */
export function FileLink({ file }: { file: FileOutput }) {
  const { token } = useConnection();
  const [error, setError] = useState<string>();
  const download = async (event: React.MouseEvent<HTMLAnchorElement>) => {
    event.preventDefault();
    setError(undefined);
    try {
      const blob = await apiGet<Blob>(file.uri, token, 'blob');
      const url = URL.createObjectURL(blob);
      const anchor = document.createElement('a');
      anchor.href = url;
      anchor.download = file.name;
      anchor.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <p className="output-file">
      <a href={file.uri} download={file.name} onClick={download}>
        Download {file.name}
      </a>{' '}
      <span className="muted">
        ({file.mimeType}, {formatSize(file.size)})
      </span>
      {error !== undefined && (
        <span role="alert" className="error-text">
          {' '}
          {error}
        </span>
      )}
    </p>
  );
}
