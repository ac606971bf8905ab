/**
 * Cuts text into token-sized pieces, roughly as a model's tokenizer would: a word with its leading
 * space, a run of punctuation with its leading space (a fence's three backticks come out whole), or
 * one whitespace character. Joining the pieces gives the text back exactly.
 */
export function splitTokens(text: string): string[] {
  return text.match(/ ?[\p{L}\p{N}_]+| ?[^\s\p{L}\p{N}_]+|\s/gu) ?? [];
}
