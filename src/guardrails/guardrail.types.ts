/**
 * The guard stage of a run: every piece of text on its way to the LLM (the user input, the additional context,
 * uploaded-file text, knowledge passages, tool results, the replayed history) passes through the agent's guards
 * first. A guard may rewrite the piece (PII masking), let it pass with a trace warning, or refuse the task.
 */

/** Where a piece of text comes from; decides which guards look at it and how strictly. */
export type ContentOrigin = 'input' | 'context' | 'user' | 'file' | 'history' | 'knowledge' | 'tool' | 'feedback';

/** Written by the caller of the task (as opposed to content: files, passages and tool results from elsewhere). */
export const CALLER_ORIGINS: ReadonlySet<ContentOrigin> = new Set(['input', 'context', 'user']);

export const ORIGIN_LABELS: Record<ContentOrigin, string> = {
  input: 'the user input',
  context: 'the additional context',
  user: "the invocation's user fields (the system prompt's \"About the user\"; agno_settings.add_user_to_context false leaves them out)",
  file: 'an uploaded file',
  history: 'the conversation history',
  knowledge: 'the knowledge-base passages',
  tool: 'a tool result',
  feedback: "the run's correction of the model's answer",
};

export interface ContentPiece {
  origin: ContentOrigin;
  /** Names the piece in messages and the trace: a file's name, a tool's name. */
  name?: string;
}

export type GuardName = 'pii' | 'prompt_injection' | 'moderation';

/** The task cannot go on: its result is this message (never the offending values themselves). */
export class GuardrailRefusal extends Error {
  constructor(
    readonly guard: GuardName,
    message: string,
  ) {
    super(message);
    this.name = 'GuardrailRefusal';
  }
}

/** What the guards of one run report: the `guardrail` events of the task's trace. */
export interface GuardEvent {
  guard: GuardName;
  /** masked: values replaced; warning: passed on with a warning; refused: the task ends; passed: checked, clean. */
  action: 'masked' | 'warning' | 'refused' | 'passed';
  origin?: ContentOrigin;
  name?: string;
  [detail: string]: unknown;
}

export interface GuardContext {
  signal: AbortSignal;
  report(event: GuardEvent): Promise<void>;
}

export interface Guard {
  readonly name: GuardName;
  /** Looks at one piece on its way to the model; returns it (possibly rewritten) or throws GuardrailRefusal. */
  screen?(text: string, piece: ContentPiece, ctx: GuardContext): Promise<string> | string;
  /** Looks at the caller's whole input once, before the first LLM call (one moderation call per run). */
  screenInput?(texts: string[], ctx: GuardContext): Promise<void>;
  /** Puts back what screen() replaced, in text the model wrote (its answer, its tool-call arguments). */
  restore?(text: string): string;
  restoreDeep?(value: unknown): unknown;
}

export function pieceLabel(piece: ContentPiece): string {
  if (piece.origin === 'file' && piece.name) return `the uploaded file ${JSON.stringify(piece.name)}`;
  if (piece.origin === 'tool' && piece.name) return `the result of the tool ${JSON.stringify(piece.name)}`;
  return ORIGIN_LABELS[piece.origin];
}
