import type { ModelImage, ModelMessage } from './model.ts';

/**
 * Picture types both OpenAI and Anthropic take as image input; other pictures go as a text note.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/vision
 */
const MODEL_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Most pictures sent with one results message (later ones are named in the note). */
export const MAX_IMAGES_PER_RESULTS = 8;

/**
 * Splits a step's pictures into those sent to the model (when it takes images: the first
 * {@link MAX_IMAGES_PER_RESULTS} of the types it reads) and a note for the results text naming the
 * rest, `''` when every picture is sent.
 */
export function imagesForModel(
  images: readonly ModelImage[],
  acceptsImages: boolean,
): { sent: ModelImage[]; note: string } {
  if (images.length === 0) return { sent: [], note: '' };
  if (!acceptsImages) {
    const n = images.length;
    return {
      sent: [],
      note: `\n\n(${n} picture${n === 1 ? '' : 's'} in the outputs (${typesOf(images)}) not shown: this model takes no image input.)`,
    };
  }
  const readable = images.filter((image) => MODEL_IMAGE_TYPES.has(image.mimeType.toLowerCase()));
  const sent = readable.slice(0, MAX_IMAGES_PER_RESULTS);
  const left = images.length - sent.length;
  if (left === 0)
    return {
      sent,
      note: `\n\n(The ${sent.length === 1 ? 'picture in the outputs follows' : 'pictures in the outputs follow'}.)`,
    };
  return {
    sent,
    note: `\n\n(${sent.length} picture${sent.length === 1 ? '' : 's'} in the outputs follow; ${left} not shown: past ${MAX_IMAGES_PER_RESULTS} a step, or of a type other than PNG, JPEG, GIF and WebP.)`,
  };
}

function typesOf(images: readonly ModelImage[]): string {
  return [...new Set(images.map((image) => image.mimeType))].join(', ');
}

/**
 * `message` in a provider's message form: its text as it is, or for a user message with pictures, a
 * text part followed by `imagePart(image)` for each picture.
 */
export function withImageParts<Part>(
  message: ModelMessage,
  imagePart: (image: ModelImage) => Part,
):
  | { role: 'user' | 'assistant'; content: string }
  | { role: 'user'; content: ({ type: 'text'; text: string } | Part)[] } {
  if (message.role === 'assistant' || !message.images?.length)
    return { role: message.role, content: message.content };
  return {
    role: 'user',
    content: [{ type: 'text', text: message.content }, ...message.images.map(imagePart)],
  };
}
