import { type ComponentProps, createContext, useContext } from 'react';
import Markdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { CodeView } from '../components/code-view.tsx';
import { ExecBlock } from './exec-block.tsx';
import { codeOf, rehypeExecBlocks } from './exec-blocks.ts';

/** The pid of each exec block of the answer being rendered. */
const PidsContext = createContext<ReadonlyArray<number | undefined>>([]);

/**
 * A code block of an answer. Declared once (not inside a render), so a re-render of the answer, at
 * every streamed token, keeps each block's component and its live process card in place.
 */
function CodeBlock({ node, ...props }: ComponentProps<'pre'> & { node?: unknown }) {
  const pids = useContext(PidsContext);
  const { text: code, language } = codeOf(node as Parameters<typeof codeOf>[0]);
  const index = (props as { 'data-exec-index'?: number })['data-exec-index'];
  if (index === undefined) return <CodeView code={code} language={language} label="Code block" />;
  return <ExecBlock code={code} language={language} pid={pids[Number(index)]} index={Number(index)} />;
}

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
