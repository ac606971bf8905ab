import { describe, expect, it } from 'vitest';
import { imagesIn, isFileOutput, isImageOutput, runFileUri, withoutMediaData } from './media-outputs.ts';

describe('pictures and files as output values', () => {
  it('recognizes the image and file shapes', () => {
    expect(isImageOutput({ type: 'image', mimeType: 'image/png', data: 'AQID' })).toBe(true);
    expect(isImageOutput({ type: 'image', mimeType: 'image/png' })).toBe(false);
    expect(isFileOutput({ type: 'file', name: 'a', mimeType: 'text/plain', size: 1, uri: '/x' })).toBe(true);
    expect(isFileOutput({ type: 'file', name: 'a' })).toBe(false);
    expect(isFileOutput(null)).toBe(false);
  });

  it('makes file paths with the name encoded', () => {
    expect(runFileUri(7, 2, 'a b#.txt')).toBe('/processes/7/runs/2/files/a%20b%23.txt');
  });

  it('replaces the base64 of pictures and sounds, at any depth, by a note of their type and size', () => {
    const toolResult = {
      isError: false,
      content: [
        { type: 'text', text: 'here' },
        { type: 'image', mimeType: 'image/png', data: 'AQID' },
        { type: 'audio', mimeType: 'audio/wav', data: 'AQIDBA==' },
      ],
    };
    expect(withoutMediaData(toolResult)).toEqual({
      isError: false,
      content: [
        { type: 'text', text: 'here' },
        { type: 'image', mimeType: 'image/png', data: '[image/png, 3 bytes]' },
        { type: 'audio', mimeType: 'audio/wav', data: '[audio/wav, 4 bytes]' },
      ],
    });
    expect(toolResult.content[1]).toEqual({ type: 'image', mimeType: 'image/png', data: 'AQID' });
    const plain = { a: [1, { b: 'c' }] };
    expect(withoutMediaData(plain)).toBe(plain);
    expect(withoutMediaData('text')).toBe('text');
  });

  it('finds the pictures of an output value in order, as deep as a tool result holds them', () => {
    const png = { type: 'image', mimeType: 'image/png', data: 'AQID' };
    const toolResult = {
      content: [
        { type: 'text', text: 'x' },
        { type: 'image', mimeType: 'image/gif', data: 'R0' },
      ],
    };
    expect(imagesIn([png, toolResult])).toEqual([
      { mimeType: 'image/png', data: 'AQID' },
      { mimeType: 'image/gif', data: 'R0' },
    ]);
    expect(imagesIn({ type: 'image', mimeType: 'image/png' })).toEqual([]);
    let deep: unknown = png;
    for (let i = 0; i < 9; i++) deep = [deep];
    expect(imagesIn(deep)).toEqual([]);
    expect(imagesIn('text')).toEqual([]);
  });
});
