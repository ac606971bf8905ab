/** The part of a hast node the exec-block plugin reads. */
interface HastNode {
  type: string;
  tagName?: string;
  properties?: Record<string, unknown>;
  data?: { meta?: string | null };
  children?: HastNode[];
  value?: string;
}

/** An info string that marks an exec intent: `exec=true` among its attributes. */
const EXEC = /(?:^|\s)exec=(?:true|"true"|'true')(?:\s|$)/;

/**
 * A rehype plugin numbering the exec blocks of an answer in order (`data-exec-index` on their `pre`),
 * the same order the server counts intents in, so block N shows the process of intent N.
 * @see docs/intent-extraction.md
 */
export function rehypeExecBlocks() {
  return (tree: HastNode) => {
    let index = 0;
    const walk = (node: HastNode) => {
      if (node.type === 'element' && node.tagName === 'pre') {
        const code = node.children?.find((child) => child.type === 'element' && child.tagName === 'code');
        if (code !== undefined && EXEC.test(code.data?.meta ?? '')) {
          node.properties = { ...node.properties, dataExecIndex: index++ };
        }
      }
      for (const child of node.children ?? []) walk(child);
    };
    walk(tree);
  };
}

/** The text and language of the `code` element inside a `pre` node. */
export function codeOf(pre: HastNode | undefined): { text: string; language: string } {
  const code = pre?.children?.find((child) => child.type === 'element' && child.tagName === 'code');
  const classes = code?.properties?.className;
  const language =
    (Array.isArray(classes) ? classes : [])
      .map(String)
      .find((name) => name.startsWith('language-'))
      ?.slice('language-'.length) ?? 'ts';
  const text = (code?.children ?? []).map((child) => child.value ?? '').join('');
  return { text, language };
}
