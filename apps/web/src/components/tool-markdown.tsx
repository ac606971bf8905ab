import Markdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';

// Links leave the console in a new tab, telling the target nothing about it.
const COMPONENTS: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noopener noreferrer" />,
};
const REMARK = [remarkGfm];

/**
 * A tool's description as markdown (GitHub flavour). Raw HTML in it is shown as text, not run, and
 * link and image URLs other than http(s), mailto and relative ones are dropped (react-markdown's
 * defaults: `skipHtml` off but no `rehype-raw`, `defaultUrlTransform`).
 */
export default function ToolMarkdown({ text }: { text: string }) {
  return (
    <div className="markdown tool-description">
      <Markdown remarkPlugins={REMARK} components={COMPONENTS}>
        {text}
      </Markdown>
    </div>
  );
}
