// Public API of @mci/test-support (private: what the test suites share).

// The `mci` command line: in-process, or as a real program
export { mciArgv, mciInProcess, mciMain, modulesLoadedBy, spawnMci, startMci } from './mci.ts';
// A real terminal for the tests that need one
export { hasScript } from './terminal.ts';
// The WebSocket test client
export { openTestSocket, TestSocket } from './test-socket.ts';
// A real server process
export { spawnServerProcess, startServerProcess } from './server-process.ts';
// Debian's Chromium, headless, for the browser tests
export { CHROMIUM, launchBrowser } from './chromium.ts';
// Fake model providers speaking the OpenAI and Anthropic streaming wire formats
export { answer, FAKE_PROVIDERS, startFakeAnthropic, startFakeOpenAi } from './fake-providers.ts';
// fast-check arbitraries
export { cloneableValue } from './arbitraries.ts';
// A program that draws a PNG in the sandbox (pictures as run results)
export { DRAW_PNG_PROGRAM, PNG_SIGNATURE } from './tiny-png.ts';
// The repository's files
export { examplePath, repoRoot } from './paths.ts';

// Types
export type { MciOptions, MciRun, RunMci, TestIo } from './mci.ts';
export type { ServerProcess, ServerProcessOptions, SpawnedServer } from './server-process.ts';
export type { TestSocketOptions } from './test-socket.ts';
export type { FakeProvider, RecordedRequest, ScriptedReply } from './fake-providers.ts';
