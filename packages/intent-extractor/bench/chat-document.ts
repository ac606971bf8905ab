// A deterministic generator of realistic chat output for the extractor benchmarks: prose with
// inline code and links, headings, lists, block quotes, ordinary code blocks, and now and then an
// exec block (some inside list items).

/** A small seeded PRNG (mulberry32), so every run measures the same text. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = (
  'the user wants a list of open orders so we call the orders endpoint and filter by status then ' +
  'format each row with its total and date which gives a compact table for the answer below'
).split(' ');

/** Builds about `size` characters of chat output (always whole sections). */
export function chatDocument(size: number, seed = 42): string {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const sentence = () => {
    const n = 8 + Math.floor(next() * 14);
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = next();
      const word = pick(words);
      out.push(
        r < 0.05
          ? `\`${word}()\``
          : r < 0.08
            ? `**${word}**`
            : r < 0.1
              ? `[${word}](https://example.com/${word})`
              : word,
      );
    }
    const text = out.join(' ');
    return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
  };
  const paragraph = () => Array.from({ length: 2 + Math.floor(next() * 4) }, sentence).join(' ');
  const codeLines = (n: number) =>
    Array.from(
      { length: n },
      (_, i) => `  const v${i} = await tools.${pick(words)}({ id: ${i} }); // ${pick(words)}`,
    ).join('\n');

  const sections: string[] = [];
  let length = 0;
  let counter = 0;
  while (length < size) {
    counter++;
    const r = next();
    let section: string;
    if (r < 0.35) section = paragraph();
    else if (r < 0.45) section = `${'#'.repeat(1 + Math.floor(next() * 3))} ${sentence()}`;
    else if (r < 0.6)
      section = Array.from({ length: 3 + Math.floor(next() * 4) }, () => `- ${sentence()}`).join('\n');
    else if (r < 0.67) section = `> ${sentence()}\n> ${sentence()}`;
    else if (r < 0.85)
      section = `\`\`\`${pick(['ts', 'js', 'python', 'bash', 'json'])}\n${codeLines(3 + Math.floor(next() * 12))}\n\`\`\``;
    else if (r < 0.95)
      section = `\`\`\`ts exec=true id=step-${counter} timeout=5000\n${codeLines(2 + Math.floor(next() * 10))}\noutput(v0);\n\`\`\``;
    else
      section = `1. ${sentence()}\n\n   \`\`\`js exec title="Step ${counter}"\n   const r = await fetch("https://api.example.com/${counter}");\n   output(await r.json());\n   \`\`\``;
    sections.push(section);
    length += section.length + 2;
  }
  return `${sections.join('\n\n')}\n`;
}
