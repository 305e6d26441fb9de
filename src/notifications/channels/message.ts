/** The payload's `data` (notification-payload.ts) as the human-readable channels (Slack, email) read it. */
export interface PayloadData {
  task_id: string;
  agent_id: string;
  agent_name: string | null;
  status: string;
  result: string | null;
  error: string | null;
  duration_ms: number | null;
  finished_at: string | null;
  tokens: { total_tokens: number };
  console_url: string;
}

export interface Described {
  icon: string;
  agent: string;
  statusWord: string;
  headline: string;
  outcome: string | null;
  timing: string;
}

export function describe(data: PayloadData): Described {
  const ok = data.status === 'completed';
  const agent = data.agent_name ?? data.agent_id;
  const statusWord = ok ? 'completed' : data.status === 'failed' ? 'failed' : 'ended with an error';
  const seconds = data.duration_ms === null ? null : (data.duration_ms / 1000).toFixed(1);
  return {
    icon: ok ? '✅' : '❌',
    agent,
    statusWord,
    headline: `${agent}: task ${statusWord}`,
    outcome: ok ? data.result : data.error,
    timing: `${seconds === null ? '' : `${seconds} s, `}${data.tokens.total_tokens} tokens`,
  };
}
