import { describe, expect, it } from 'vitest';
import { renderTemplate } from '../index.ts';

const render = (template: string, props: Record<string, unknown> = {}) =>
  renderTemplate(template, { props, env: {} });

// Real mci-py tool files carry e-mail addresses, domains and prose with directive words in them.
describe('directive words inside ordinary text are text', () => {
  it.each([
    ['write to me@if.com', 'write to me@if.com'],
    ['host x@endif.io', 'host x@endif.io'],
    ['see @for details', 'see @for details'],
    ['a@foreach b, c@else d, e@endforeach, f@endfor', 'a@foreach b, c@else d, e@endforeach, f@endfor'],
    ['ask @elseif you must', 'ask @elseif you must'],
  ])('%j renders unchanged', (template, expected) => {
    expect(render(template)).toBe(expected);
  });

  it('keeps directive words as text inside a block body and next to real directives', () => {
    expect(render('@if(props.on)\nmail me@if.com, see @for details\n@endif\n', { on: true })).toBe(
      'mail me@if.com, see @for details\n',
    );
  });

  it('still reads a directive at the start of a line (after whitespace) as a directive', () => {
    expect(() => render('  @if props.on\nx\n@endif')).toThrow(/must be followed by parentheses/);
    expect(() => render('x\n@endif')).toThrow(/closes nothing/);
    expect(render('  @for(i in range(0, 2))\n{{i}}\n  @endfor\n')).toBe('0\n1\n');
  });

  it('still reads inline blocks (the MCI docs write them on one line)', () => {
    expect(render('Numbers: @for(i in range(0, 3)){{i}} @endfor')).toBe('Numbers: 0 1 2 ');
  });
});

describe('an inline @else', () => {
  it('drops the spaces that separate it from its body (the MCI docs status_check example)', () => {
    const text =
      '@if(props.online)Server is online and responding@else Server is offline or not responding@endif';
    expect(render(text, { online: false })).toBe('Server is offline or not responding');
    expect(render('@if(props.on)a@else\tb @endif', { on: false })).toBe('b ');
  });
});
