import type { PrincipalUse, ProcessStats } from '../processes/process-manager-types.ts';

/** Counters the transports keep beside the manager's. */
export interface TransportStats {
  wsConnections: number;
  /** Live events not delivered because a connection read too slowly. */
  wsEventsDropped: number;
}

/** This server's node and the nodes with a row in its PostgreSQL database (see docs/cluster.md). */
export interface ClusterStats {
  node: string;
  nodes: ReadonlyArray<{ name: string; live: boolean }>;
  /** In cluster mode: the processes that are not idle, by the node that runs them and state. */
  processes?: ReadonlyArray<{ node: string; state: string; count: number }>;
}

/**
 * Renders the Prometheus text exposition format (version 0.0.4): processes by state and by status,
 * queue length, run durations (seconds histogram), tool calls, WebSocket connections, the process's
 * memory (resident, V8 heap, external; bytes), the use of the quotas by principal (those named in
 * `quotas.principals`, then `other`: running, queued, runs and CPU ms in the current window,
 * refusals), and on a
 * PostgreSQL store this node's name and the database's nodes by lease state (in cluster mode also
 * the cluster's processes that are not idle, by node and state).
 * @see https://prometheus.io/docs/instrumenting/exposition_formats/
 */
export function renderMetrics(
  stats: ProcessStats,
  transport: TransportStats,
  cluster?: ClusterStats,
): string {
  const lines: string[] = [];
  const metric = (name: string, type: string, help: string, samples: Array<[string, number]>) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
  };
  metric(
    'mci_processes',
    'gauge',
    'Processes by state.',
    Object.entries(stats.byState).map(([state, n]) => [`{state="${state}"}`, n]),
  );
  metric(
    'mci_processes_by_status',
    'gauge',
    'Processes by the status of their latest run (none: not run yet or not finished).',
    Object.entries(stats.byStatus).map(([status, n]) => [`{status="${status}"}`, n]),
  );
  metric('mci_queue_length', 'gauge', 'Processes waiting for a sandbox.', [['', stats.queueLength]]);
  metric('mci_processes_running', 'gauge', 'Processes running now.', [['', stats.running]]);
  metric('mci_concurrency', 'gauge', 'Processes that may run at once (sandbox slots).', [
    ['', stats.concurrency],
  ]);
  metric('mci_processes_created_total', 'counter', 'Processes created.', [['', stats.processesCreated]]);
  metric('mci_runs_started_total', 'counter', 'Runs started.', [['', stats.runsStarted]]);
  metric('mci_tool_calls_total', 'counter', 'Tool calls made by programs.', [['', stats.toolCalls]]);
  metric('mci_tool_errors_total', 'counter', 'Tool calls that returned an error result.', [
    ['', stats.toolErrors],
  ]);
  const histogram = stats.runDurationsMs;
  const name = 'mci_run_duration_seconds';
  lines.push(`# HELP ${name} Wall time of finished runs.`, `# TYPE ${name} histogram`);
  histogram.buckets.forEach((bucketMs, i) => {
    lines.push(`${name}_bucket{le="${bucketMs / 1000}"} ${histogram.counts[i] ?? 0}`);
  });
  lines.push(
    `${name}_bucket{le="+Inf"} ${histogram.count}`,
    `${name}_sum ${histogram.sum / 1000}`,
    `${name}_count ${histogram.count}`,
  );
  metric('mci_ws_connections', 'gauge', 'Open WebSocket connections.', [['', transport.wsConnections]]);
  // The server process's memory, under the names Prometheus client libraries use for them.
  const memory = process.memoryUsage();
  metric('process_resident_memory_bytes', 'gauge', 'Resident memory of the server process.', [
    ['', memory.rss],
  ]);
  metric('nodejs_heap_size_total_bytes', 'gauge', 'V8 heap size.', [['', memory.heapTotal]]);
  metric('nodejs_heap_size_used_bytes', 'gauge', 'V8 heap in use.', [['', memory.heapUsed]]);
  metric('nodejs_external_memory_bytes', 'gauge', 'Memory of objects outside the V8 heap (buffers).', [
    ['', memory.external],
  ]);
  metric('mci_ws_events_dropped_total', 'counter', 'Live events dropped for slow WebSocket readers.', [
    ['', transport.wsEventsDropped],
  ]);
  // One sample per principal named in `quotas.principals` and one `other`: a bounded label count.
  const byPrincipal = (value: (use: PrincipalUse) => number): Array<[string, number]> =>
    stats.quotas.map((use) => [`{principal="${escapeLabel(use.principal)}"}`, value(use)]);
  metric(
    'mci_principal_running',
    'gauge',
    'Processes running on this node, by principal.',
    byPrincipal((use) => use.running),
  );
  metric(
    'mci_principal_queued',
    'gauge',
    'Processes waiting on this node, by principal.',
    byPrincipal((use) => use.queued),
  );
  metric(
    'mci_principal_window_runs',
    'gauge',
    'Runs started in the current one-minute quota window, by principal.',
    byPrincipal((use) => use.runs),
  );
  metric(
    'mci_principal_window_cpu_ms',
    'gauge',
    'Sandbox CPU milliseconds of runs that ended in the current one-minute quota window, by principal.',
    byPrincipal((use) => use.cpuMs),
  );
  metric(
    'mci_quota_refusals_total',
    'counter',
    'Creates and run signals refused with QUOTA_EXCEEDED, by principal.',
    byPrincipal((use) => use.refused),
  );
  if (cluster) {
    metric('mci_node_info', 'gauge', 'The node this server runs as (its lease in the nodes table).', [
      [`{node="${escapeLabel(cluster.node)}"}`, 1],
    ]);
    const live = cluster.nodes.filter((node) => node.live).length;
    metric('mci_cluster_nodes', 'gauge', 'Nodes of the database: holding a live lease, or stopped.', [
      ['{state="live"}', live],
      ['{state="stopped"}', cluster.nodes.length - live],
    ]);
    if (cluster.processes)
      metric(
        'mci_cluster_processes',
        'gauge',
        'Processes of the cluster that are not idle, by the node that runs them and state.',
        cluster.processes.map(({ node, state, count }) => [
          `{node="${escapeLabel(node)}",state="${state}"}`,
          count,
        ]),
      );
  }
  return `${lines.join('\n')}\n`;
}

/** A label value with `\`, `"` and newlines escaped, as the exposition format requires. */
function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}
