import { describe, expect, it } from 'vitest';
import { renderTemplate } from '../index.ts';

const render = (
  template: string,
  props: Record<string, unknown> = { on: true, off: false, list: ['a', 'b'] },
) => renderTemplate(template, { props, env: {} });

describe('a directive alone on its line produces no line', () => {
  it('drops the directive line with its newline', () => {
    expect(render('before\n@if(props.on)\ninside\n@endif\nafter\n')).toBe('before\ninside\nafter\n');
    expect(render('before\n@if(props.off)\ninside\n@endif\nafter\n')).toBe('before\nafter\n');
  });

  it('drops leading indentation and trailing spaces or tabs of the directive line', () => {
    expect(render('x\n    @if(props.on)  \n  y\n\t@endif\t\nz')).toBe('x\n  y\nz');
  });

  it('handles CRLF line endings', () => {
    expect(render('a\r\n@foreach(x in props.list)\r\n- {{x}}\r\n@endforeach\r\nb\r\n')).toBe(
      'a\r\n- a\r\n- b\r\nb\r\n',
    );
  });

  it('treats a directive at the very start or end of the template as standalone', () => {
    expect(render('@if(props.on)\nyes\n@endif')).toBe('yes\n');
    expect(render('@if(props.on)\nyes\n@endif   ')).toBe('yes\n');
  });

  it('keeps blank lines and indentation of the body', () => {
    expect(render('@if(props.on)\n\n  indented\n\n@endif\n')).toBe('\n  indented\n\n');
  });

  it('applies to @elseif and @else lines too', () => {
    const template = '@if(props.off)\nA\n  @elseif(props.off)\nB\n  @else\nC\n@endif\n';
    expect(render(template)).toBe('C\n');
  });

  it('applies to consecutive directive lines', () => {
    expect(render('@foreach(x in props.list)\n@if(props.on)\n{{x}}\n@endif\n@endforeach\n')).toBe('a\nb\n');
  });
});

describe('inline directives keep their bodies verbatim', () => {
  it('keeps text, spaces and newlines around inline directives', () => {
    expect(render('a @if(props.on)b@endif c')).toBe('a b c');
    expect(render('a @if(props.off)b@endif c')).toBe('a  c');
    expect(render('[@foreach(x in props.list) {{x}} @endforeach]')).toBe('[ a  b ]');
  });

  it('treats a line with two directives as inline', () => {
    expect(render('@if(props.on)@endif\nnext')).toBe('\nnext');
  });

  it('treats a line with a directive and text as inline, even if the other directive is alone', () => {
    expect(render('@for(i in range(0, 3))Item {{i}}\n@endfor\n')).toBe('Item 0\nItem 1\nItem 2\n');
  });

  it('does not apply the rule to placeholders', () => {
    expect(render('{{props.on}}\n{{props.off}}\n')).toBe('true\nfalse\n');
  });

  it('keeps a directive with a placeholder before it on its line inline', () => {
    expect(render('{{props.on}} @if(props.on)\ny\n@endif\n')).toBe('true \ny\n');
    expect(render('{{props.on}}\n  @if(props.on)\ny\n@endif\n')).toBe('true\ny\n');
  });

  it('renders a long line of many inline blocks (scanned without looking back per directive)', () => {
    const line = '<@if(props.on)a@else b@endif|@foreach(x in props.list){{x}}@endforeach>'.repeat(3000);
    expect(render(line)).toBe('<a|ab>'.repeat(3000));
  });

  it('keeps a directive with text before it on its line inline', () => {
    expect(render('x @if(props.on)\ny\n@endif\n')).toBe('x \ny\n');
  });
});
