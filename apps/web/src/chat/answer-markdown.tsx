import type { ComponentProps } from 'react';
import Markdown from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { CodeView } from '../components/code-view.tsx';
import { ExecBlock } from './exec-block.tsx';
import { codeOf, rehypeExecBlocks } from './exec-blocks.ts';

/**
 * A message as markdown (GitHub flavour). Code blocks get syntax highlighting; exec blocks also show
 * the live card of the process block N became (`pids[N]`).
 */
export function AnswerMarkdown({ text, pids }: { text: string; pids: ReadonlyArray<number | undefined> }) {
  return (
    <div className="markdown">
      <Markdown
        remarkPlugins={[remarkGfm]}
        rehypePlugins={[rehypeExecBlocks]}
        components={{
          pre: ({ node, ...props }: ComponentProps<'pre'> & { node?: unknown }) => {
            const { text: code, language } = codeOf(node as Parameters<typeof codeOf>[0]);
            const index = (props as { 'data-exec-index'?: number })['data-exec-index'];
            if (index === undefined) return <CodeView code={code} language={language} label="Code block" />;
            return (
              <ExecBlock code={code} language={language} pid={pids[Number(index)]} index={Number(index)} />
            );
          },
        }}
      >
        {text}
      </Markdown>
    </div>
  );
}
