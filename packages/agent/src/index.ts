// Public API of @mci/agent: the model in the loop, on OpenAI-compatible, Anthropic and replayed models.

// Agent types
export type { AgentOptions, CreateAgentOptions } from './agent.ts';
// The agent: a conversation whose exec blocks run on an MCI server
export { Agent, createAgent } from './agent.ts';
export type { AgentEvent, DoneEvent, ErrorEvent, StepEvent, TokenEvent } from './agent-events.ts';
export type { AnthropicModelSettings } from './anthropic-model.ts';
export { createAnthropicModel } from './anthropic-model.ts';
export type { ModelOptions } from './create-model.ts';
// Models
export { createModel } from './create-model.ts';
export type { HistoryMessage } from './history.ts';
export { toModelMessages } from './history.ts';
// Model types
export type { ChatModel, ModelAnswer, ModelImage, ModelMessage, ModelRequest } from './model.ts';
export type { ModelErrorCode } from './model-error.ts';
// Errors (keys cut out)
export { ModelError, redact, toModelError } from './model-error.ts';
export type { OpenAiModelSettings } from './openai-model.ts';
export { createOpenAiModel } from './openai-model.ts';
export type { ModelName, ProviderSpec } from './providers.ts';
export { PROVIDERS, parseModelName } from './providers.ts';
export type { ReplayModelSettings } from './replay-model.ts';
export { createReplayModel, parseTranscript, splitTokens } from './replay-model.ts';
export type { TurnMessage, TurnOptions, TurnResult } from './run-turn.ts';
// One turn of the loop
export { RESULTS_PREFIX, runTurn } from './run-turn.ts';
export type { StreamHost, TurnStream, TurnStreamResult } from './stream-host.ts';
export type { SystemPrompt, SystemPromptOptions, SystemPromptReport } from './system-prompt.ts';
// The system prompt
export {
  buildSystemPrompt,
  DEFAULT_TOOL_PROMPT_BUDGET,
  fetchToolDeclarations,
  formatSystemPromptReport,
  measureSystemPrompt,
} from './system-prompt.ts';
