import Markdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { CodeBlock } from './code-block.tsx';
import { rehypeExecBlocks } from './exec-blocks.ts';
import { PidsContext } from './pids-context.ts';

const COMPONENTS: Components = { pre: CodeBlock };
const REMARK = [remarkGfm];
const REHYPE = [rehypeExecBlocks];

/**
 * A message as markdown (GitHub flavour). Code blocks get syntax highlighting; exec blocks also show
 * the live card of the process block N became (`pids[N]`).
 */
export function AnswerMarkdown({ text, pids }: { text: string; pids: ReadonlyArray<number | undefined> }) {
  return (
    <PidsContext.Provider value={pids}>
      <div className="markdown">
        <Markdown remarkPlugins={REMARK} rehypePlugins={REHYPE} components={COMPONENTS}>
          {text}
        </Markdown>
      </div>
    </PidsContext.Provider>
  );
}
