import { type ComponentProps, useContext } from 'react';
import { CodeView } from '../components/code-view.tsx';
import { ExecBlock } from './exec-block.tsx';
import { codeOf } from './exec-blocks.ts';
import { PidsContext } from './pids-context.ts';

/**
 * A code block of an answer (react-markdown's `pre`): highlighted code, and for an exec block the
 * live card of its process. Declared once (not inside a render), so a re-render of the answer, at
 * every streamed token, keeps each block's component and its card in place.
 */
export function CodeBlock({ node, ...props }: ComponentProps<'pre'> & { node?: unknown }) {
  const pids = useContext(PidsContext);
  const { text: code, language } = codeOf(node as Parameters<typeof codeOf>[0]);
  const index = (props as { 'data-exec-index'?: number })['data-exec-index'];
  if (index === undefined) return <CodeView code={code} language={language} label="Code block" />;
  return <ExecBlock code={code} language={language} pid={pids[Number(index)]} index={Number(index)} />;
}
