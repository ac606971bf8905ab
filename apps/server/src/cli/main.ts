#!/usr/bin/env node
// The `mci` command line: runs the command named in argv with the real process's streams,
// environment and signals, then exits with the command's exit code.
import { processIo } from './io.ts';
import { runMci } from './program.ts';

process.exitCode = await runMci(process.argv.slice(2), processIo());
