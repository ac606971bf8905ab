import { parentPort, workerData } from 'node:worker_threads';
import type { CheckDeclarations } from './check-types.ts';
import type { CheckerReply, CheckerRequest } from './checker-protocol.ts';
import { ProgramChecker } from './program-checker.ts';

// The worker thread of a `Checker`: one warm language service, one request at a time.
const port = parentPort!;
const checker = new ProgramChecker(workerData as CheckDeclarations);
// Parse the standard library and the declarations now, before the first program arrives.
checker.check('');
port.postMessage({ ready: true } satisfies CheckerReply);

port.on('message', (request: CheckerRequest) => {
  if (request.type === 'declarations') {
    checker.setDeclarations(request.declarations);
    return;
  }
  let reply: CheckerReply;
  try {
    reply = {
      id: request.id,
      report:
        request.type === 'skill'
          ? checker.checkSkill(request.code, request.principal)
          : checker.check(request.code, request.lang, request.principal),
    };
  } catch (error) {
    reply = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});
